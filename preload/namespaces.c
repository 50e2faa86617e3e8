/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unshare(2) and setns(2), for the calls that the kernel refuses to a
 * process of more than one thread: a new user namespace (unshare
 * CLONE_NEWUSER, and CLONE_THREAD, CLONE_SIGHAND or CLONE_VM), and setns
 * into a user namespace (a threaded process) or a mount namespace (one
 * whose filesystem context threads share). libpc's wall sampler is a
 * thread, so a single-threaded program under PC_CLOCK=wall would get
 * EINVAL where it gets 0 plain: the sampler ends for the call and starts
 * again after it, and the call sees the process as the program made it.
 * The live file's grower (livegrow.c) is a thread too, and does the same.
 * Neither call is made from a handler; nothing here is AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>

#include "pc.h"
#include "live.h"

typedef int (*unshare_fn)(int);
typedef int (*setns_fn)(int, int);

/* the flags that need a process of one thread */
#define ONE_THREAD	(CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)

PC_EXPORT int
unshare(int flags)
{
	static unshare_fn real;
	int paused, grower, r, saved;

	if (!real)
		real = (unshare_fn)pc_next("unshare");
	paused = flags & ONE_THREAD ? pc_wall_pause() : 0;
	grower = flags & ONE_THREAD ? pc_live_grower_pause() : 0;
	r = real(flags);
	saved = errno;
	if (paused)
		pc_wall_resume();
	if (grower)
		pc_live_grower_start();
	errno = saved;
	return r;
}

/* setns's type 0 takes any namespace, a user or a mount one among them */
PC_EXPORT int
setns(int fd, int nstype)
{
	static setns_fn real;
	int paused, grower, r, saved;

	if (!real)
		real = (setns_fn)pc_next("setns");
	paused = !nstype || (nstype & (CLONE_NEWUSER | CLONE_NEWNS)) ? pc_wall_pause() : 0;
	grower = !nstype || (nstype & (CLONE_NEWUSER | CLONE_NEWNS)) ?
		 pc_live_grower_pause() : 0;
	r = real(fd, nstype);
	saved = errno;
	if (paused)
		pc_wall_resume();
	if (grower)
		pc_live_grower_start();
	errno = saved;
	return r;
}
