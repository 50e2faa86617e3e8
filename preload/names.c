/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which file each process of a run writes. The first profiled process (the
 * root) writes gmon.out (or PC_OUT); it puts PC_ROOT=<its pid> in its
 * environment, so that every process started under it, by fork, exec,
 * posix_spawn or system(), knows it is not the root and writes
 * gmon.out.<program>.<pid> instead. An image about to be replaced by exec
 * writes that longer name too, so the image after it (the same pid) can
 * take the root's name. With GMON_OUT_PREFIX every process writes
 * PREFIX.<pid> as glibc does, and PREFIX.<program>.<pid> before an exec.
 * Everything here but pc_names_init is AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pc.h"
#include "banned.h"

/* Set by pc_names_init, at start-up only. */
static char
	base_path[PATH_MAX]; /* PC_OUT, gmon.out or GMON_OUT_PREFIX, absolute */
static int prefix_mode;			/* base_path is GMON_OUT_PREFIX */
static char prog[64];			/* the program's file name, tamed */

/* Append s to dst (of size n) or fail. AS-safe. */
static int
cat(char *dst, size_t n, const char *s)
{
	size_t k = strlen(dst), m = strlen(s);

	if (k + m + 1 > n)
		return -ENAMETOOLONG;
	memcpy(dst + k, s, m + 1);
	return 0;
}

void
pc_decimal(char *buf, unsigned long v)
{
	char t[24];
	int n = 0;

	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	for (int i = 0; i < n; i++)
		buf[i] = t[n - 1 - i];
	buf[n] = 0;
}

int
pc_name(char *dst, size_t n, int kind)
{
	char pid[24];

	pc_decimal(pid, (unsigned long)getpid());
	dst[0] = 0;
	if (cat(dst, n, base_path))
		return -ENAMETOOLONG;
	if (kind == PC_NAME_OWN && pc->root && !prefix_mode)
		return 0;
	if (kind == PC_NAME_OTHER || !prefix_mode)
		if (cat(dst, n, ".") || cat(dst, n, prog))
			return -ENAMETOOLONG;
	if (cat(dst, n, ".") || cat(dst, n, pid))
		return -ENAMETOOLONG;
	return 0;
}

int
pc_name_taken(const char *path)
{
	struct stat st;

	/* a file written while we ran, by somebody else: a process started
	 * under us, or glibc's -pg writer in this very process */
	if (pc->wrote_own || lstat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	return st.st_mtim.tv_sec > pc->start.tv_sec ||
	       (st.st_mtim.tv_sec == pc->start.tv_sec &&
		st.st_mtim.tv_nsec >= pc->start.tv_nsec);
}

int
pc_open_new(const char *path, int flags)
{
	int fd = open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		      0666);

	if (fd < 0 && errno == EEXIST) {
		/* left by a process of this pid that died writing it */
		unlink(path);
		fd = open(path,
			  flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0666);
	}
	return fd;
}

/* The file name of the program, from /proc/self/exe, for names. */
static void
read_prog(void)
{
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *b = "program";
	size_t j = 0;

	if (k > 0) {
		exe[k] = 0;
		b = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	}
	/* keep names tame: no dots (they separate the parts), no oddities */
	for (; *b && j < sizeof(prog) - 1; b++)
		prog[j++] =
			(*b == '.' || *b == '/' || (unsigned char)*b < 0x21) ?
				'_' :
				*b;
	prog[j] = 0;
}

int
pc_names_init(const char *base, int prefix, const char *root)
{
	char pid[24];
	long r;

	clock_gettime(CLOCK_REALTIME, &pc->start);
	if (strlen(base) >= sizeof(base_path))
		return -ENAMETOOLONG;
	strcpy(base_path, base);
	prefix_mode = prefix;
	pc->pid = getpid();
	read_prog();
	pc_decimal(pid, (unsigned long)pc->pid);
	r = root ? strtol(root, NULL, 10) : 0;
	/* no root yet, or the root's own image after an exec */
	pc->root = !root || r == (long)pc->pid;
	if (!root)
		setenv("PC_ROOT", pid, 1);
	return pc_name(pc->path, sizeof(pc->path), PC_NAME_OWN);
}

void
pc_names_forked(void)
{
	pc->pid = getpid();
	pc->root = 0;
	pc->wrote_own = 0;
	clock_gettime(CLOCK_REALTIME, &pc->start);
	pc_name(pc->path, sizeof(pc->path), PC_NAME_OWN);
}
