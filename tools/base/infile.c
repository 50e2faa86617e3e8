/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one way pcprof opens a file it reads: a regular file, never through
 * a symbolic link, never waiting on a FIFO. Calls nothing in pcprof.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

/* Refuse the file that fd (an O_PATH descriptor or an open one) names,
 * unless it is a regular file: -1 with *why and errno set, fd closed. */
static int
refuse_unless_regular(int fd, const struct stat *sb, const char **why)
{
	int e = S_ISLNK(sb->st_mode)	? ELOOP :
		S_ISDIR(sb->st_mode)	? EISDIR :
		!S_ISREG(sb->st_mode) ? EINVAL :
					      0;

	if (!e)
		return fd;
	*why = e == ELOOP ? "a symbolic link" :
	       e == EISDIR ? "is a directory" :
			     "not a regular file";
	close(fd);
	errno = e;
	return -1;
}

static int
fail(int fd, const char **why)
{
	int e = errno;

	*why = e == ELOOP ? "a symbolic link" : strerror(e);
	if (fd >= 0)
		close(fd);
	errno = e;
	return -1;
}

int
pc_reopen_read(int fd)
{
	char self[40];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
}

/* The name is looked up once, with O_PATH, which opens no device and
 * waits on no FIFO; a regular file alone is then opened, through that
 * descriptor (or by its name again, never through a symlink, where /proc
 * is not mounted, and its kind checked again). */
int
pc_open_regular(const char *path, struct stat *sb, const char **why)
{
	struct stat own;
	int pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC), fd;

	if (!sb)
		sb = &own;
	if (pfd < 0 || fstat(pfd, sb))
		return fail(pfd, why);
	if (refuse_unless_regular(pfd, sb, why) < 0)
		return -1;
	fd = pc_reopen_read(pfd);
	if (fd < 0 && errno == ENOENT)
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW |
					O_NOCTTY);
	if (fd < 0 || fstat(fd, sb)) {
		fail(fd, why);
		close(pfd);
		return -1;
	}
	close(pfd);
	return refuse_unless_regular(fd, sb, why);
}
