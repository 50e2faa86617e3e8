/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wall sampler's signal mask during a walk (wall_unwind.c), for
 * libpc's sigprocmask and pthread_sigmask (sigcalls.c), which a handler
 * may call: AS-safe, a leaf, calling nothing of libpc's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "pc.h"
#include "wall.h"
#include "banned.h"

/*
 * libunwind's cache of the rules found for a pc is global (Debian's build
 * has no per-thread cache), behind a lock that blocks every signal while
 * it is held: two sigprocmask calls a frame, each through libpc's own
 * (sigcalls.c, which keeps the program's view of its mask, and asks the
 * kernel and getpid): 40 % of a walk's time. The wall sampler's thread
 * blocks every signal from its start, so during a walk its calls are
 * answered here, from the mask the kernel holds for it, and reach the
 * kernel only if they would change it.
 */
static int walking;
static pthread_t walker;
static sigset_t walker_mask;	/* the kernel's mask for the walker */

/* what the kernel cannot block, or glibc keeps for itself */
static void
settable(sigset_t *m)
{
	sigdelset(m, SIGKILL);
	sigdelset(m, SIGSTOP);
	sigdelset(m, SIGRTMIN - 2);	/* glibc's SIGCANCEL, SIGSETXID */
	sigdelset(m, SIGRTMIN - 1);
}

int
pc_wall_walker_mask(int (*real)(int, const sigset_t *, sigset_t *), int how,
		    const sigset_t *set, sigset_t *old, int *r)
{
	sigset_t now = walker_mask;

	/* glibc's sigfillset fills all 1,024 bits */
	if (!__atomic_load_n(&walking, __ATOMIC_RELAXED) ||
	    !pthread_equal(pthread_self(), walker))
		return 0;
	if (set && how == SIG_SETMASK)
		now = *set;
	else if (set && how == SIG_BLOCK)
		sigorset(&now, &now, set);
	else if (set && how == SIG_UNBLOCK) {
		for (int i = 1; i < NSIG; i++)
			if (sigismember(set, i) == 1)
				sigdelset(&now, i);
	} else if (set)
		return *r = real(how, set, old), 1;
	settable(&now);
	if (old)
		*old = walker_mask;
	*r = 0;
	/* the kernel's mask is 64 bits; a sigset_t, 1,024 */
	if (memcmp(&now, &walker_mask, _NSIG / 8)) {
		if ((*r = real(SIG_SETMASK, &now, NULL)) == 0)
			walker_mask = now;
	}
	return 1;
}

/* The calling thread (the wall sampler's) walks from now (on: 1) or no
 * longer (0); its mask as the kernel has it (libpc's sigprocmask gives
 * the program's view). */
void
pc_wall_walking(int on)
{
	if (!on) {
		__atomic_store_n(&walking, 0, __ATOMIC_RELAXED);
		return;
	}
	sigemptyset(&walker_mask);
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &walker_mask,
		    (size_t)(_NSIG / 8)))
		return;
	settable(&walker_mask);
	walker = pthread_self();
	__atomic_store_n(&walking, 1, __ATOMIC_RELAXED);
}

