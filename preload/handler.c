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

static void
signal_from_handler(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	uint32_t weight;
	int perf_fd = -1;

	if (si->si_code == SI_TIMER && si->si_value.sival_ptr == &pc.snapshots) {
		pc_snapshot();		/* PC_SNAPSHOT_INTERVAL's timer */
		goto out;
	}
	if (si->si_code >= POLL_IN && si->si_code <= POLL_HUP &&
	    si->si_fd >= 0 && si->si_fd == (perf_fd = pc_thread_perf_fd_from_handler())) {
		/* a task-clock overflow: the periods since the last one */
		weight = pc_thread_perf_weight_from_handler(perf_fd);
		if (!weight)
			goto out;
	} else if (si->si_code >= POLL_IN && si->si_code <= POLL_HUP && si->si_fd >= 0 &&
		   si->si_fd == pc_thread_perf_retired_from_handler()) {
		goto out;	/* from this thread's event, stopped since */
	} else if (si->si_code == SI_TIMER && si->si_value.sival_ptr == &pc) {
		/* expirations the kernel folded into this one signal each
		 * stand for an interval of CPU time spent here: count them,
		 * or seconds shrink to the kernel tick's rate */
		weight = 1 + (si->si_overrun > 0 ? (uint32_t)si->si_overrun : 0);
	} else {
		pc_forward_from_handler(sig, si, ucv);
		goto out;
	}
	pc_sample_from_handler(ucv, weight);
out:
	errno = saved;
}


int
pc_sample_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = signal_from_handler;
	/* SA_RESTART: a read() interrupted by a sample resumes, as it would
	 * have without us */
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	/* Block the other signals while a sample is taken: a program's own
	 * ITIMER_PROF (or glibc's -pg profil) fires on the same kernel tick as
	 * our timers, and a handler nested on top of ours would see our code
	 * as the interrupted PC, and ours theirs. Faults stay unblocked. */
	sigfillset(&sa.sa_mask);
	sigdelset(&sa.sa_mask, SIGSEGV);
	sigdelset(&sa.sa_mask, SIGBUS);
	sigdelset(&sa.sa_mask, SIGILL);
	sigdelset(&sa.sa_mask, SIGFPE);
	if (pc_real_sigaction(pc.sig, &sa, &pc.prog_action[pc.sig]))
		return -errno;
	pc.owned[pc.sig] = PC_OWN_SAMPLING;
	return 0;
}
