/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Small files read whole, and their numbers (procread.h): the start-up
 * reads of /proc (the first thread's schedstat, the memory cgroup), the
 * memory cgroup's two numbers in a round that may run in the sampling
 * handler, a manifest's head and the timer cost's cache. No stdio, no
 * malloc, errno as found: every function here is AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procread.h"
#include "banned.h"

ssize_t
pc_read_small(const char *path, int flags, char *buf, size_t size,
	      struct stat *sb)
{
	int saved = errno, fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	size_t have = 0;
	ssize_t n = 0;

	buf[0] = 0;
	if (fd < 0) {
		errno = saved;
		return -1;
	}
	if (sb && (fstat(fd, sb) || !S_ISREG(sb->st_mode)))
		n = -1;
	/* a /proc file gives its text in one read; a regular file may take
	 * more, each ending short of the end only where a signal came */
	while (n >= 0 && have < size - 1) {
		n = read(fd, buf + have, size - 1 - have);
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n == 0)
			break;
		have += n > 0 ? (size_t)n : 0;
	}
	close(fd);
	errno = saved;
	if (n < 0) {
		buf[0] = 0;
		return -1;
	}
	buf[have] = 0;
	return (ssize_t)have;
}

int
pc_parse_u64(const char **p, uint64_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (d > max || x > (max - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*p = s;
	*v = x;
	return 0;
}
