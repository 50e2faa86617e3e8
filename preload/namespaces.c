/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unshare(2) and setns(2), for the calls that the kernel refuses to a
 * process of more than one thread: a new user namespace (unshare
 * CLONE_NEWUSER, and CLONE_THREAD, CLONE_SIGHAND or CLONE_VM), and setns
 * into a user namespace (a threaded process) or a mount namespace (one
 * whose filesystem context threads share). libpc's wall sampler is a
 * thread, and so are the snapshot writer (PC_SNAPSHOT_SIGNAL,
 * PC_SNAPSHOT_INTERVAL) and the live file's grower, so a single-threaded
 * program would get EINVAL
 * where it gets 0 plain: every thread of libpc's ends for the call
 * and starts again after it, and the call sees the process as the program
 * made it.
 * The calls that change a process's user or group ids (setuid(2) and the
 * like, setgroups(2)) are made by glibc in every thread, each with its own
 * capabilities: a thread of libpc's that did not keep the ones the
 * program kept (setpriv --reuid after PR_SET_KEEPCAPS) fails its part,
 * and glibc aborts the program. libpc's threads end for those calls too,
 * and start again after them with the ids and capabilities the program
 * then has.
 * No call here is made from a handler; nothing here is AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <unistd.h>

#include "pc.h"
#include "live.h"

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
	{ pc_live_grower_pause, pc_live_grower_start },	/* livegrower.c */
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
	paused = !nstype || (nstype & (CLONE_NEWUSER | CLONE_NEWNS)) ?
			 pause_all() :
			 0;
	r = real(fd, nstype);
	saved = errno;
	if (paused)
		resume_all(paused);
	errno = saved;
	return r;
}

/* ------------------------------------------------ user and group ids */

typedef int (*id1_fn)(unsigned int);
typedef int (*id2_fn)(unsigned int, unsigned int);
typedef int (*id3_fn)(unsigned int, unsigned int, unsigned int);
typedef int (*groups_fn)(size_t, const gid_t *);

/* The real function name, through pc_next once. */
static void *
real_of(void **slot, const char *name)
{
	if (!*slot)
		*slot = pc_next(name);
	return *slot;
}

/* libpc's threads paused for an id call: call it, start them again, and
 * give the call's result and errno. */
#define ID_CALL(call)							\
	do {								\
		int paused_ = pause_all(), r_, saved_;			\
									\
		r_ = (call);						\
		saved_ = errno;						\
		if (paused_)						\
			resume_all(paused_);				\
		errno = saved_;						\
		return r_;						\
	} while (0)

static void *id_real[9];

PC_EXPORT int
setuid(uid_t u)
{
	ID_CALL(((id1_fn)real_of(&id_real[0], "setuid"))(u));
}

PC_EXPORT int
setgid(gid_t g)
{
	ID_CALL(((id1_fn)real_of(&id_real[1], "setgid"))(g));
}

PC_EXPORT int
seteuid(uid_t u)
{
	ID_CALL(((id1_fn)real_of(&id_real[2], "seteuid"))(u));
}

PC_EXPORT int
setegid(gid_t g)
{
	ID_CALL(((id1_fn)real_of(&id_real[3], "setegid"))(g));
}

PC_EXPORT int
setreuid(uid_t r, uid_t e)
{
	ID_CALL(((id2_fn)real_of(&id_real[4], "setreuid"))(r, e));
}

PC_EXPORT int
setregid(gid_t r, gid_t e)
{
	ID_CALL(((id2_fn)real_of(&id_real[5], "setregid"))(r, e));
}

PC_EXPORT int
setresuid(uid_t r, uid_t e, uid_t s)
{
	ID_CALL(((id3_fn)real_of(&id_real[6], "setresuid"))(r, e, s));
}

PC_EXPORT int
setresgid(gid_t r, gid_t e, gid_t s)
{
	ID_CALL(((id3_fn)real_of(&id_real[7], "setresgid"))(r, e, s));
}

PC_EXPORT int
setgroups(size_t n, const gid_t *list)
{
	ID_CALL(((groups_fn)real_of(&id_real[8], "setgroups"))(n, list));
}
