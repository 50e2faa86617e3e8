/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unshare(2) and setns(2), for the calls that the kernel refuses to a
 * process of more than one thread: a new user namespace (unshare
 * CLONE_NEWUSER, and CLONE_THREAD, CLONE_SIGHAND or CLONE_VM), and setns
 * into a user namespace (a threaded process) or a mount namespace (one
 * whose filesystem context threads share). libpc's wall sampler is a
 * thread, and so is the snapshot writer (PC_SNAPSHOT_SIGNAL,
 * PC_SNAPSHOT_INTERVAL), so a single-threaded program would get EINVAL
 * where it gets 0 plain: every thread of libpc's ends for the call
 * and starts again after it, and the call sees the process as the program
 * made it.
 * Neither call is made from a handler; nothing here is AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>

#include "pc.h"

typedef int (*unshare_fn)(int);
typedef int (*setns_fn)(int, int);

/* the flags that need a process of one thread */
#define ONE_THREAD	(CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)

/* Every kind of thread of libpc's, each ended and started again as one;
 * pause returns 1 when it ended a thread that resume must start again. */
static const struct {
	int (*pause)(void);
	void (*resume)(void);
} kinds[] = {
	{ pc_wall_pause, pc_wall_resume },
	{ pc_snapshot_pause, pc_snapshot_resume },
};

/* A mask of the kinds ended. */
static int
pause_all(void)
{
	int paused = 0;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].pause())
			paused |= 1 << i;
	return paused;
}

static void
resume_all(int paused)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (paused & 1 << i)
			kinds[i].resume();
}

PC_EXPORT int
unshare(int flags)
{
	static unshare_fn real;
	int paused, r, saved;

	if (!real)
		real = (unshare_fn)pc_next("unshare");
	paused = flags & ONE_THREAD ? pause_all() : 0;
	r = real(flags);
	saved = errno;
	if (paused)
		resume_all(paused);
	errno = saved;
	return r;
}

/* setns's type 0 takes any namespace, a user or a mount one among them */
PC_EXPORT int
setns(int fd, int nstype)
{
	static setns_fn real;
	int paused, r, saved;

	if (!real)
		real = (setns_fn)pc_next("setns");
	paused = !nstype || (nstype & (CLONE_NEWUSER | CLONE_NEWNS)) ? pause_all() : 0;
	r = real(fd, nstype);
	saved = errno;
	if (paused)
		resume_all(paused);
	errno = saved;
	return r;
}
