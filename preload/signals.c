/*
 * libpc and the program's own signals. At start-up libpc takes the fatal
 * signals the program leaves at their default action, so that a program
 * killed by one writes its profile and then dies the same way. It also
 * interposes sigaction() and signal(): for the signals it holds, the
 * program sees and sets its own disposition (the sampling handler passes
 * the program's own SIGPROF ticks on to it), and a handler the program
 * installs for a fatal signal replaces libpc's, untouched.
 * pthread_sigmask() and sigprocmask() never block the sampling signal, so a
 * thread is still sampled while the program believes it blocked; signals
 * meant for the program wait until it unblocks them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "pc.h"


typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);

static sigaction_fn real_sigaction;
static sigmask_fn real_pthread_sigmask, real_sigprocmask;

/* what this thread's program code asked for the sampling signal */
static PC_TLS int prog_blocked;
static PC_TLS int deferred;

static const int fatal_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE,
	SIGILL, SIGPIPE, SIGXCPU, SIGXFSZ,
};

static void
resolve(void)
{
	if (!real_sigaction)
		real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	if (!real_pthread_sigmask)
		real_pthread_sigmask = (sigmask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
	if (!real_sigprocmask)
		real_sigprocmask = (sigmask_fn)dlsym(RTLD_NEXT, "sigprocmask");
}

int
pc_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	resolve();
	return real_sigaction(sig, act, old);
}

/* Write the profile, then die of sig as the program would have: the
 * handler was installed with SA_RESETHAND | SA_NODEFER, so the default
 * action is back and raise() delivers at once. AS-safe. */
static void
fatal_from_handler(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	pc_finish();
	raise(sig);
}

static void
snapshot_from_handler(int sig)
{
	(void)sig;
	pc_snapshot();
}

/* Whether the program wants the sampling signal blocked in this thread;
 * for the handler, which then holds the program's own signal back. */
int
pc_prog_blocked_from_handler(void)
{
	if (prog_blocked)
		deferred++;
	return prog_blocked;
}

void
pc_signals_inherit_block(int blocked)
{
	prog_blocked = blocked;
}

int
pc_signals_prog_blocked(void)
{
	return prog_blocked;
}

static void
start_interval_snapshots(void)
{
	struct sigevent sev;
	struct itimerspec its;
	timer_t t;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;	/* any thread will do */
	sev.sigev_signo = pc_cfg->sig;
	sev.sigev_value.sival_ptr = &pc_stats.snapshots;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t)) {
		pc_say("cannot create the PC_SNAPSHOT_INTERVAL timer; no periodic snapshots", "", "");
		return;
	}
	its.it_interval.tv_sec = pc_cfg->snapshot_interval_ms / 1000;
	its.it_interval.tv_nsec = pc_cfg->snapshot_interval_ms % 1000 * 1000000L;
	its.it_value = its.it_interval;
	timer_settime(t, 0, &its, NULL);
}

static int
is_fatal(int sig)
{
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		if (fatal_signals[i] == sig)
			return 1;
	return 0;
}

static void
fatal_action(struct sigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_sigaction = fatal_from_handler;
	sa->sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa->sa_mask);
}

void
pc_signals_init(void)
{
	struct sigaction sa, old;

	resolve();
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		int sig = fatal_signals[i];

		if (sig == pc_cfg->sig || sig == pc_cfg->snapshot_sig)
			continue;
		if (real_sigaction(sig, NULL, &old) || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler != SIG_DFL)
			continue;	/* ignored or handled: not ours to take */
		fatal_action(&sa);
		pc.prog_action[sig] = old;
		if (real_sigaction(sig, &sa, NULL) == 0)
			pc.owned[sig] = PC_OWN_FATAL;
	}
	if (pc_cfg->snapshot_sig) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = snapshot_from_handler;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (real_sigaction(pc_cfg->snapshot_sig, &sa, &pc.prog_action[pc_cfg->snapshot_sig]) == 0)
			pc.owned[pc_cfg->snapshot_sig] = PC_OWN_SNAPSHOT;
	}
	if (pc_cfg->snapshot_interval_ms)
		start_interval_snapshots();
}

/* ------------------------------------------------------------ sigaction */

/* The program sets act for a signal libpc owns (pc.owned[sig]): what it
 * believes is installed changes, or it takes the signal back. 0 or -1. */
static int
take_owned(int sig, const struct sigaction *act)
{
	int r = 0;

	switch (pc.owned[sig]) {
	case PC_OWN_SAMPLING:
		pc.prog_action[sig] = *act;
		break;
	case PC_OWN_FATAL:
		if (!(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL) {
			pc.prog_action[sig] = *act;
			break;
		}
		/* the program's own handler (or SIG_IGN) takes over */
		r = real_sigaction(sig, act, NULL);
		if (r == 0)
			pc.owned[sig] = 0;
		break;
	case PC_OWN_SNAPSHOT:
		r = real_sigaction(sig, act, NULL);
		if (r == 0) {
			pc.owned[sig] = 0;
			pc_say("the program took PC_SNAPSHOT_SIGNAL for itself; "
			       "no more snapshots on it", "", "");
		}
		break;
	}
	return r;
}

PC_EXPORT int
sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction was, ours;
	sigset_t one, prev;
	int r = 0;

	resolve();
	/* a fatal signal the program handled and now puts back to its
	 * default (to die of it, as sort(1) does on SIGPIPE): take it again,
	 * so that the profile is written before the process goes */
	if (sig > 0 && sig < NSIG && !pc.owned[sig] && pc_on() && act &&
	    !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL &&
	    is_fatal(sig) && sig != pc_cfg->sig && sig != pc_cfg->snapshot_sig) {
		fatal_action(&ours);
		r = real_sigaction(sig, &ours, &was);
		if (r)
			return r;
		pc.prog_action[sig] = *act;
		pc.owned[sig] = PC_OWN_FATAL;
		if (old)
			*old = was;
		return 0;
	}
	if (sig <= 0 || sig >= NSIG || !pc.owned[sig])
		return real_sigaction(sig, act, old);
	/* the handler reads prog_action: keep it out while it changes */
	sigemptyset(&one);
	sigaddset(&one, sig);
	real_pthread_sigmask(SIG_BLOCK, &one, &prev);
	was = pc.prog_action[sig];
	if (act)
		r = take_owned(sig, act);
	real_pthread_sigmask(SIG_SETMASK, &prev, NULL);
	if (r)
		return r;
	if (old)
		*old = was;
	return 0;
}

PC_EXPORT sighandler_t
signal(int sig, sighandler_t handler)
{
	struct sigaction sa, old;

	/* glibc's signal() has BSD semantics: SA_RESTART, handler kept */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	if (sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	if (sigaction(sig, &sa, &old))
		return SIG_ERR;
	return old.sa_handler;
}

/* ------------------------------------------------------------ masks */

static int
filter_mask(sigmask_fn real, int how, const sigset_t *set, sigset_t *old)
{
	int was = prog_blocked, r;
	sigset_t s;

	if (!pc_on() || !pc.owned[pc_cfg->sig] || !set)
		goto pass;
	s = *set;
	if (how == SIG_BLOCK && sigismember(&s, pc_cfg->sig))
		prog_blocked = 1;
	else if (how == SIG_UNBLOCK && sigismember(&s, pc_cfg->sig))
		prog_blocked = 0;
	else if (how == SIG_SETMASK)
		prog_blocked = sigismember(&s, pc_cfg->sig);
	/* never block the samples */
	if (how != SIG_UNBLOCK)
		sigdelset(&s, pc_cfg->sig);
	r = real(how, &s, old);
	if (r) {
		prog_blocked = was;
		return r;
	}
	if (old && was)
		sigaddset(old, pc_cfg->sig);
	if (!prog_blocked && deferred) {
		/* what arrived for the program while it had it blocked */
		deferred = 0;
		raise(pc_cfg->sig);
	}
	return 0;
pass:
	r = real(how, set, old);
	if (!r && old && was)
		sigaddset(old, pc_cfg->sig);
	return r;
}

PC_EXPORT int
pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	resolve();
	return filter_mask(real_pthread_sigmask, how, set, old);
}

PC_EXPORT int
sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	resolve();
	return filter_mask(real_sigprocmask, how, set, old);
}
