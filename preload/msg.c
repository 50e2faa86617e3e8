/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpc's message channel: one "libpc: " line at a time to the standard
 * error the program was started with. Everything here is AS-safe; it calls
 * nothing else in libpc.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pc.h"
#include "banned.h"

/*
 * libpc's messages go to the standard error the program was started with,
 * through a copy of it taken at start-up: at exit the program may have
 * closed descriptor 2, or opened a file of its own there. The copy is used
 * only while it still is the same file (a daemon may have closed it and
 * reused the number). AS-safe.
 */
static int err_fd = -1;
static dev_t err_dev;
static ino_t err_ino;

void
pc_msg_init(void)
{
	struct stat st;
	int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 200);

	if (fd < 0)
		return;
	if (fstat(fd, &st)) {
		close(fd);
		return;
	}
	err_fd = fd;
	err_dev = st.st_dev;
	err_ino = st.st_ino;
}

void
pc_write_err(const char *buf, size_t n)
{
	struct stat st;
	size_t off = 0;
	int fd = err_fd;

	if (fd < 0 || fstat(fd, &st) || st.st_dev != err_dev || st.st_ino != err_ino)
		return;
	while (off < n) {
		ssize_t k = write(fd, buf + off, n - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		off += (size_t)k;
	}
}

/* Append s to line[*n..end), at most max bytes of it. AS-safe. */
static void
put(char *line, size_t *n, size_t end, const char *s, size_t max)
{
	for (; s && *s && max && *n < end; s++, max--)
		line[(*n)++] = *s;
}

void
pc_say(const char *a, const char *b, const char *c)
{
	char line[1024];
	const size_t end = sizeof(line) - 1;	/* room for the newline */
	size_t n = 0, tail = c ? strlen(c) : 0;
	int saved = errno;

	put(line, &n, end, "libpc: ", (size_t)-1);
	put(line, &n, end, a, (size_t)-1);
	/* b is the variable part (a value, a path): it gives way, so that
	 * the reason after it always fits */
	if (b && strlen(b) + tail > end - n && end - n > tail + 3) {
		put(line, &n, end, b, end - n - tail - 3);
		put(line, &n, end, "...", 3);
	} else {
		put(line, &n, end, b, (size_t)-1);
	}
	put(line, &n, end, c, (size_t)-1);
	line[n++] = '\n';
	if (err_fd < 0)
		pc_msg_init();
	pc_write_err(line, n);
	errno = saved;
}

/* Text built without stdio, for the manifest, the summary and names. */
void
pc_line_str(struct pc_line *l, const char *s)
{
	while (*s && l->len < l->size - 1)
		l->buf[l->len++] = *s++;
}

void
pc_line_u64(struct pc_line *l, uint64_t v)
{
	char t[24];
	int n = 0;

	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n > 0 && l->len < l->size - 1)
		l->buf[l->len++] = t[--n];
}
