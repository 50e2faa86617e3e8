/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The handler of libpc's sampling signal: it tells what each signal is (a
 * POSIX timer's expirations, a task-clock overflow of this thread's event,
 * a late one of a retired event, PC_SNAPSHOT_INTERVAL's timer, or someone
 * else's signal to forward), weighs a sample, and hands it to sample.c.
 *
 * Rules for everything in this file:
 *  - only async-signal-safe calls (signal-safety(7)); no malloc, no stdio,
 *    no locks: banned.h turns the common ones into compile errors;
 *  - errno is saved and restored;
 *  - the same signal is blocked while the handler runs (no SA_NODEFER), so
 *    it never nests in one thread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "pc.h"
#include "banned.h"

/* Signals whose default action is to end the process. */
static int
default_kills(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
		return 0;
	}
	return 1;
}

/*
 * A signal on our signal that is not a sample (kill(1), or a program that
 * uses the signal libpc chose, or PC_SIGNAL gave it): hand it to the
 * disposition the program believes it has installed, as the kernel would
 * have: with its mask (the program's sa_mask, and the signal itself unless
 * SA_NODEFER) in force while its handler runs, and SA_RESETHAND putting the
 * default back first. AS-safe.
 */
static void
forward_from_handler(int sig, siginfo_t *si, ucontext_t *uc)
{
	struct sigaction act;
	sigset_t mask, entry;
	unsigned view;

	__atomic_fetch_add(&pc_stats->foreign, 1, __ATOMIC_RELAXED);
	if (pc_prog_blocked_from_handler(sig)) {
		/* the program has it blocked: it gets it when it unblocks */
		__atomic_fetch_add(&pc_stats->lost_blocked, 1, __ATOMIC_RELAXED);
		return;
	}
	if (pc_prog_action_from_handler(sig, &act))
		return;		/* a writer stalled half-way: lost */
	if (!(act.sa_flags & SA_SIGINFO) && act.sa_handler == SIG_IGN)
		return;
	if (!(act.sa_flags & SA_SIGINFO) && act.sa_handler == SIG_DFL) {
		if (default_kills(sig)) {
			/* the program dies of it: write the profile first */
			struct sigaction dfl;

			pc_finish();
			memset(&dfl, 0, sizeof(dfl));
			dfl.sa_handler = SIG_DFL;
			pc_real_sigaction(sig, &dfl, NULL);
			raise(sig);
		}
		return;
	}
	if (act.sa_flags & SA_RESETHAND) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		pc_prog_action_store(sig, &dfl);
	}
	/* the mask the kernel would have set for the program's handler; the
	 * program's view of libpc's own signals goes with it */
	pc_real_sigmask(SIG_SETMASK, NULL, &entry);
	mask = uc->uc_sigmask;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&act.sa_mask, s) == 1)
			sigaddset(&mask, s);
	view = pc_signals_prog_blocked();
	if (!(act.sa_flags & SA_NODEFER)) {
		sigaddset(&mask, sig);
		pc_signals_view_set(view | pc_signals_view_bit(sig));
	}
	pc_real_sigmask(SIG_SETMASK, &mask, NULL);
	if (act.sa_flags & SA_SIGINFO)
		act.sa_sigaction(sig, si, uc);
	else
		act.sa_handler(sig);
	pc_signals_view_set(view);
	/* back to the handler's own mask until it returns */
	pc_real_sigmask(SIG_SETMASK, &entry, NULL);
}

static void
signal_from_handler(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	uint32_t weight;
	int perf_fd = -1;

	if (si->si_code >= POLL_IN && si->si_code <= POLL_HUP &&
	    si->si_fd >= 0 && si->si_fd == (perf_fd = pc_thread_perf_fd_from_handler())) {
		/* a task-clock overflow: the periods since the last one */
		weight = pc_thread_perf_weight_from_handler(perf_fd);
		if (!weight)
			goto out;
	} else if (si->si_code >= POLL_IN && si->si_code <= POLL_HUP && si->si_fd >= 0 &&
		   si->si_fd == pc_thread_perf_retired_from_handler()) {
		goto out;	/* from this thread's event, stopped since */
	} else if (si->si_code == SI_TIMER && si->si_value.sival_ptr == &pc_timer_tag) {
		/* expirations the kernel folded into this one signal each
		 * stand for an interval of CPU time spent here: count them,
		 * or seconds shrink to the kernel tick's rate */
		weight = 1 + (si->si_overrun > 0 ? (uint32_t)si->si_overrun : 0);
	} else {
		forward_from_handler(sig, si, ucv);
		goto out;
	}
	pc_sample_from_handler(ucv, weight);
out:
	errno = saved;
}


int
pc_sample_install(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = signal_from_handler;
	/* SA_RESTART: a read() interrupted by a sample resumes, as it would
	 * have without us. SA_ONSTACK: where a thread has an alternate
	 * stack, the handler runs there (Go's runtime requires it of every
	 * handler, and a goroutine's stack is too small for it); sample.c
	 * measures the room it has either way. */
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	/* Block the other signals while a sample is taken: a program's own
	 * ITIMER_PROF (or glibc's -pg profil) fires on the same kernel tick as
	 * our timers, and a handler nested on top of ours would see our code
	 * as the interrupted PC, and ours theirs. Faults stay unblocked. */
	sigfillset(&sa.sa_mask);
	sigdelset(&sa.sa_mask, SIGSEGV);
	sigdelset(&sa.sa_mask, SIGBUS);
	sigdelset(&sa.sa_mask, SIGILL);
	sigdelset(&sa.sa_mask, SIGFPE);
	/* the program's action goes through the seqlock: the kernel's copy
	 * into it may not be read half-way by a signal that comes at once */
	if (pc_real_sigaction(pc_cfg->sig, &sa, &old))
		return -errno;
	pc_prog_action_store(pc_cfg->sig, &old);
	pc_signals_take_sampling();
	pc->owned[pc_cfg->sig] = PC_OWN_SAMPLING;
	return 0;
}
