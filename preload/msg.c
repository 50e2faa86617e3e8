/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpc's message channel: one "libpc: " line at a time to the program's
 * standard error. Everything here is AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pc.h"
#include "banned.h"

/*
 * libpc's messages go to the program's descriptor 2 as it is at the moment
 * libpc speaks, or nowhere where it is closed. libpc keeps no copy of
 * it: a copy would be a descriptor of the program's held open by libpc,
 * inherited by a daemon forked without exec, and a shell's `x=$(prog
 * 2>&1)` would wait for that daemon to end. Only the file's identity is
 * kept, taken at start-up: a program that closed descriptor 2 and opened
 * a file of its own there (coreutils' close_stdout closes it at exit)
 * gets nothing of libpc's in it. Nothing is written once the program
 * entered a sandbox (pc_sandboxed): a seccomp filter may kill on write.
 * AS-safe.
 */
static int err_known; /* 1: err_dev and err_ino are fd 2's; -1: it was closed */
static dev_t err_dev;
static ino_t err_ino;

void
pc_msg_init(void)
{
	struct stat st;

	if (fstat(STDERR_FILENO, &st)) {
		err_known = -1;
		return;
	}
	err_dev = st.st_dev;
	err_ino = st.st_ino;
	err_known = 1;
}

void
pc_write_err(const char *buf, size_t n)
{
	struct pc_xfsz h;
	struct stat st;
	size_t off = 0;
	int saved = errno, efbig = 0;

	if (pc_sandboxed())
		return;
	if (!err_known)
		pc_msg_init();
	if (err_known < 0 || fstat(STDERR_FILENO, &st) ||
	    st.st_dev != err_dev || st.st_ino != err_ino)
		return;
	/* a file under the program's RLIMIT_FSIZE, too */
	pc_xfsz_block(&h);
	while (off < n) {
		ssize_t k = write(STDERR_FILENO, buf + off, n - off);

		if (k < 0 && errno == EINTR)
			continue;
		efbig = k < 0 && errno == EFBIG;
		if (k <= 0)
			break;
		off += (size_t)k;
	}
	pc_xfsz_release(&h, efbig);
	errno = saved;
}

/*
 * SIGXFSZ held around one of libpc's writes (pc.h says why). The raw
 * calls: the sampling code's mask bookkeeping (signals.c) is not this
 * file's to call, and libpc's own sigtimedwait keeps its signals hidden.
 */
void
pc_xfsz_block(struct pc_xfsz *h)
{
	sigset_t one, pend;

	sigemptyset(&one);
	sigaddset(&one, SIGXFSZ);
	h->pending =
		syscall(SYS_rt_sigpending, &pend, (size_t)(_NSIG / 8)) == 0 &&
		sigismember(&pend, SIGXFSZ);
	h->blocked = syscall(SYS_rt_sigprocmask, SIG_BLOCK, &one, &h->prev,
			     (size_t)(_NSIG / 8)) == 0;
}

void
pc_xfsz_release(const struct pc_xfsz *h, int failed)
{
	struct timespec zero = { 0, 0 };
	sigset_t one;

	if (!h->blocked)
		return;
	sigemptyset(&one);
	sigaddset(&one, SIGXFSZ);
	if (failed && !h->pending)
		syscall(SYS_rt_sigtimedwait, &one, NULL, &zero,
			(size_t)(_NSIG / 8));
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &h->prev, NULL,
		(size_t)(_NSIG / 8));
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
