/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wall sampler's reading of a thread's /proc lines (wall_acct.c): its
 * schedstat and syscall lines parsed by hand (sscanf took a tenth of the
 * sampler's CPU at 16 threads), and what a call's number says of its
 * wait.
 *
 * Pure functions: no state, no allocation.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>
#include <sys/syscall.h>

#include "pc.h"
#include "wall.h"

/* An unsigned number in base (10, or 16 after "0x") at *p; *p past it.
 * 0: none there. */
static int
number(const char **p, int base, unsigned long *v)
{
	const char *s = *p;
	unsigned long x = 0;
	int d, n = 0;

	if (base == 16 && s[0] == '0' && s[1] == 'x')
		s += 2;
	for (;; s++, n++) {
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else
			break;
		x = x * (unsigned long)base + (unsigned long)d;
	}
	*p = s;
	*v = x;
	return n > 0;
}

/* "RUN RUNQ SWITCHES\n": 0, or -1. */
int
pc_wall_parse_schedstat(const char *buf, uint64_t v[3])
{
	unsigned long x;

	for (int i = 0; i < 3; i++) {
		while (*buf == ' ')
			buf++;
		if (!number(&buf, 10, &x))
			return -1;
		v[i] = x;
	}
	return 0;
}

/* "NR ARG1..ARG6 SP PC": the fields read in order, as sscanf's "%ld
 * %lx..." would count them (NR may be -1, the rest hexadecimal). */
int
pc_wall_parse_syscall(const char *line, long *nr, unsigned long arg[6],
		      unsigned long *sp, unsigned long *ip)
{
	unsigned long *to[9] = { NULL, &arg[0], &arg[1], &arg[2], &arg[3],
				 &arg[4], &arg[5], sp, ip };
	unsigned long x;
	int neg, i;

	memset(arg, 0, 6 * sizeof(*arg));
	*sp = *ip = 0;
	for (i = 0; i < 9; i++) {
		while (*line == ' ')
			line++;
		neg = i == 0 && *line == '-';
		line += neg;
		if (!number(&line, i ? 16 : 10, &x))
			break;
		if (i)
			*to[i] = x;
		else
			*nr = neg ? -(long)x : (long)x;
	}
	return i;
}

/* The calls whose first argument is the descriptor they wait on. */
int
pc_wall_takes_fd(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_pread64: case SYS_pwrite64:
	case SYS_readv: case SYS_writev: case SYS_preadv: case SYS_pwritev:
	case SYS_preadv2: case SYS_pwritev2: case SYS_sendto: case SYS_recvfrom:
	case SYS_sendmsg:
	case SYS_recvmsg:
	case SYS_sendmmsg:
	case SYS_recvmmsg:
	case SYS_accept: case SYS_accept4: case SYS_connect: case SYS_fsync:
	case SYS_fdatasync: case SYS_flock: case SYS_ioctl: case SYS_splice:
	case SYS_sync_file_range: case SYS_fallocate: case SYS_ftruncate:
		return 1;
	default:
		return 0;
	}
}

/* The calls a thread times itself (wall_io.c's interposers). */
int
pc_wall_timed_call(long nr)
{
	switch (nr) {
	case SYS_fsync:
	case SYS_fdatasync:
	case SYS_unlink:
	case SYS_unlinkat:
	case SYS_rename:
		return 1;
	default:
		return 0;
	}
}

/*
 * Calls that wait for the disk: the kernel wakes the thread for each I/O,
 * and its waits for a CPU between are the call's time (runqueue_time).
 * Not those the thread times itself.
 */
int
pc_wall_is_io(long nr, unsigned fd)
{
	if (pc_wall_timed_call(nr))
		return 0;
	switch (nr) {
	case SYS_sync:
	case SYS_syncfs:
	case SYS_sync_file_range:
	case SYS_msync:
		return 1;
	default:
		return nr < 0 || (pc_wall_takes_fd(nr) && fd == GMON_FD_FILE);
	}
}
