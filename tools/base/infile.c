/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one way pcprof opens a file it reads: a regular file, never through
 * a symbolic link, never waiting on a FIFO. Calls nothing in pcprof.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

int
pc_open_regular(const char *path, struct stat *sb, const char **why)
{
	struct stat own;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW), e;

	if (!sb)
		sb = &own;
	if (fd < 0) {
		e = errno;
		/* O_NOFOLLOW's ELOOP is a symlink at the end of the path */
		*why = e == ELOOP ? "a symbolic link" : strerror(e);
		errno = e;
		return -1;
	}
	if (fstat(fd, sb)) {
		e = errno;
		*why = strerror(e);
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(sb->st_mode)) {
		*why = S_ISDIR(sb->st_mode) ? "is a directory" : "not a regular file";
		close(fd);
		errno = S_ISDIR(sb->st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	return fd;
}
