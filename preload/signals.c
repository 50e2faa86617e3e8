/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpc and the program's own signals.
 *
 * libpc samples on a signal of its own: by default a real-time signal that
 * the program left at its default action and unblocked when libpc started
 * (start.c chooses it). Every other signal, SIGPROF included, stays the
 * program's: its dispositions, flags, masks, sigsuspend, the sigwait
 * family, and what exec hands on are the kernel's business, untouched.
 *
 * For libpc's own signals (the sampling signal, and PC_SNAPSHOT_SIGNAL
 * when it is set), this file keeps the program's view apart from what is
 * installed, the way glibc keeps its own SIGCANCEL out of the program's
 * reach:
 *  - sigaction() and signal() show and set the program's disposition; its
 *    handler gets what arrives on the signal that is not libpc's, with the
 *    flags it asked for (handler.c);
 *  - pthread_sigmask() and sigprocmask() never block the sampling signal
 *    (a thread is sampled while the program believes it blocked it) and
 *    never unblock the snapshot signal (only libpc's thread takes it, so
 *    that no call of the program's is interrupted); the program sees the
 *    mask it set;
 *  - the sigwait family and signalfd never take them;
 *  - before an exec the program's view is made real, so that the next
 *    image inherits what the program set: SIG_IGN and a blocked mask.
 *
 * Handlers the program installs with SA_ONSTACK get the sampling signal
 * added to their mask: alternate stacks are small, and a sample nested on
 * top of such a handler could overflow one.
 *
 * At start-up libpc also takes the fatal signals the program leaves at
 * their default action, so that a program killed by one writes its
 * profile and then dies the same way; a handler the program installs for
 * one replaces libpc's, untouched.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>

#include "pc.h"
#include "banned.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
typedef int (*sigtimedwait_fn)(const sigset_t *, siginfo_t *, const struct timespec *);
typedef int (*sigwait_fn)(const sigset_t *, int *);
typedef int (*signalfd_fn)(int, const sigset_t *, int);

static sigaction_fn real_sigaction;
static sigmask_fn real_pthread_sigmask, real_sigprocmask;

/* The program's view, in this thread, of libpc's signals: PC_HIDE_* bits
 * for "blocked". */
#define HIDE_SAMPLE	1u
#define HIDE_SNAPSHOT	2u
static PC_TLS unsigned prog_blocked;
static PC_TLS int deferred;

/* Handlers the program installed with SA_ONSTACK, whose mask libpc gave
 * the sampling signal: their view leaves it out again. */
static unsigned char mask_added[NSIG];

/* prog_action's writers take turns (pc_prog_action_store); readers in
 * handlers copy an entry under its sequence number. */
static unsigned act_seq[NSIG];
static int act_lock;

/* Every signal whose default action ends the process and that a program
 * may meet: dying of one writes the profile first. Not SIGTRAP (a
 * debugger's) nor SIGSYS (a seccomp filter's, which may refuse the very
 * calls that write). The real-time signals are taken too (start-up). */
static const int fatal_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE,
	SIGILL, SIGPIPE, SIGXCPU, SIGXFSZ, SIGUSR1, SIGUSR2, SIGALRM,
	SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSTKFLT,
};

static void
resolve(void)
{
	if (!real_sigaction)
		real_sigaction = (sigaction_fn)pc_next("sigaction");
	if (!real_pthread_sigmask)
		real_pthread_sigmask = (sigmask_fn)pc_next("pthread_sigmask");
	if (!real_sigprocmask)
		real_sigprocmask = (sigmask_fn)pc_next("sigprocmask");
}

int
pc_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	resolve();
	return real_sigaction(sig, act, old);
}

int
pc_real_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	resolve();
	return real_pthread_sigmask(how, set, old);
}

/* ------------------------------------------------ the program's actions */

/* The writers' turn, with every signal blocked: a handler of this thread
 * never finds the lock taken by the code it interrupted. */
static void
act_lock_take(sigset_t *prev)
{
	sigset_t all;

	resolve();
	sigfillset(&all);
	real_pthread_sigmask(SIG_SETMASK, &all, prev);
	while (__atomic_exchange_n(&act_lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void
act_lock_give(const sigset_t *prev)
{
	__atomic_store_n(&act_lock, 0, __ATOMIC_RELEASE);
	real_pthread_sigmask(SIG_SETMASK, prev, NULL);
}

void
pc_prog_action_store(int sig, const struct sigaction *act)
{
	sigset_t prev;
	unsigned s;

	act_lock_take(&prev);
	s = __atomic_load_n(&act_seq[sig], __ATOMIC_RELAXED);
	__atomic_store_n(&act_seq[sig], s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	pc->prog_action[sig] = *act;
	__atomic_store_n(&act_seq[sig], s + 2, __ATOMIC_RELEASE);
	act_lock_give(&prev);
}

/* A copy outside handlers when the lock-free read gave up (a writer on
 * another CPU stalled half-way): as a writer, it waits its turn. */
static void
prog_action_load(int sig, struct sigaction *out)
{
	sigset_t prev;

	act_lock_take(&prev);
	*out = pc->prog_action[sig];
	act_lock_give(&prev);
}

int
pc_prog_action_from_handler(int sig, struct sigaction *out)
{
	for (int tries = 0; tries < 100000; tries++) {
		unsigned s = __atomic_load_n(&act_seq[sig], __ATOMIC_ACQUIRE);
		const volatile unsigned char *src;
		unsigned char *dst = (unsigned char *)out;

		if (s & 1)
			continue;	/* a writer on another CPU is half-way */
		src = (const volatile unsigned char *)&pc->prog_action[sig];
		for (size_t i = 0; i < sizeof(*out); i++)
			dst[i] = src[i];
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&act_seq[sig], __ATOMIC_RELAXED) == s)
			return 0;
	}
	return -1;
}

void
pc_signals_forked(void)
{
	/* a fork that caught another thread storing an action: the child
	 * has no such thread */
	act_lock = 0;
	for (int sig = 0; sig < NSIG; sig++)
		act_seq[sig] = (act_seq[sig] + 1) & ~1u;
}

/* ------------------------------------------------ fatal signals */

/* Write the profile, then die of sig as the program would have: the
 * handler was installed with SA_RESETHAND | SA_NODEFER, so the default
 * action is back and raise() delivers at once. AS-safe. */
static void
fatal_from_handler(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	pc_finish_signal(sig);	/* on a stack of its own */
	raise(sig);
}

static int
is_fatal(int sig)
{
	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		return 1;
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

static int
hidden_sig(int sig)
{
	return sig > 0 && sig < NSIG &&
	       (pc->owned[sig] == PC_OWN_SAMPLING || pc->owned[sig] == PC_OWN_SNAPSHOT);
}

void
pc_signals_init(void)
{
	struct sigaction sa, old;

	resolve();
	for (int sig = 1; sig < NSIG; sig++) {
		if (!is_fatal(sig) || sig == pc_cfg->sig || sig == pc_cfg->snapshot_sig)
			continue;
		if (real_sigaction(sig, NULL, &old) || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler != SIG_DFL)
			continue;	/* ignored or handled: not ours to take */
		fatal_action(&sa);
		pc_prog_action_store(sig, &old);
		if (real_sigaction(sig, &sa, NULL) == 0)
			pc->owned[sig] = PC_OWN_FATAL;
	}
}

/* The sampling signal was blocked in the thread that ran the constructor
 * (inherited through exec): the program's view keeps it blocked, while
 * the samples are let through. */
void
pc_signals_take_sampling(void)
{
	sigset_t cur, one;

	resolve();
	if (real_pthread_sigmask(SIG_SETMASK, NULL, &cur) || !sigismember(&cur, pc_cfg->sig))
		return;
	prog_blocked |= HIDE_SAMPLE;
	sigemptyset(&one);
	sigaddset(&one, pc_cfg->sig);
	real_pthread_sigmask(SIG_UNBLOCK, &one, NULL);
}

/* The snapshot signal is blocked in this thread for real (and so in every
 * thread it starts); the program's view keeps what it was. */
void
pc_signals_take_snapshot(void)
{
	sigset_t cur, one;

	resolve();
	real_pthread_sigmask(SIG_SETMASK, NULL, &cur);
	if (sigismember(&cur, pc_cfg->snapshot_sig))
		prog_blocked |= HIDE_SNAPSHOT;
	sigemptyset(&one);
	sigaddset(&one, pc_cfg->snapshot_sig);
	real_pthread_sigmask(SIG_BLOCK, &one, NULL);
}

/* ------------------------------------------------ exec */

static struct sigaction exec_saved, exec_saved_n;
static int exec_ignored, exec_ignored_n, exec_masked, exec_unmasked;

/* sig as the program believes it is: ignored, made so for real (saving
 * what was installed into *saved); 1 when it was. */
static int
ignore_if_ignored(int sig, struct sigaction *saved)
{
	struct sigaction view, ign;

	if (pc_prog_action_from_handler(sig, &view) || (view.sa_flags & SA_SIGINFO) ||
	    view.sa_handler != SIG_IGN)
		return 0;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	return real_sigaction(sig, &ign, saved) == 0;
}

void
pc_signals_before_exec(int vfork_child)
{
	int s = pc_cfg->sig, n = pc_cfg->snapshot_sig;
	int ignored, ignored_n = 0, masked = 0, unmasked = 0;
	struct sigaction saved, saved_n;
	sigset_t one;

	if (pc->owned[s] != PC_OWN_SAMPLING)
		return;
	/* an ignored signal stays ignored across exec: make it so; a
	 * handler is reset to the default by exec itself */
	ignored = !pc_vfork_set(s) && ignore_if_ignored(s, &saved);
	if (n && pc->owned[n] == PC_OWN_SNAPSHOT && !pc_vfork_set(n))
		ignored_n = ignore_if_ignored(n, &saved_n);
	if (pc_vfork_view(prog_blocked) & HIDE_SAMPLE) {
		sigemptyset(&one);
		sigaddset(&one, s);
		masked = real_pthread_sigmask(SIG_BLOCK, &one, NULL) == 0;
	}
	if (n && pc->owned[n] == PC_OWN_SNAPSHOT && !(pc_vfork_view(prog_blocked) & HIDE_SNAPSHOT)) {
		sigemptyset(&one);
		sigaddset(&one, n);
		unmasked = real_pthread_sigmask(SIG_UNBLOCK, &one, NULL) == 0;
	}
	/* a vfork child has its own dispositions and mask but shares the
	 * parent's memory: it must not write what the parent will read */
	if (vfork_child)
		return;
	exec_saved = saved;
	exec_saved_n = saved_n;
	exec_ignored = ignored;
	exec_ignored_n = ignored_n;
	exec_masked = masked;
	exec_unmasked = unmasked;
}

void
pc_signals_exec_failed(void)
{
	sigset_t one;

	if (exec_ignored)
		real_sigaction(pc_cfg->sig, &exec_saved, NULL);
	if (exec_ignored_n)
		real_sigaction(pc_cfg->snapshot_sig, &exec_saved_n, NULL);
	if (exec_masked) {
		sigemptyset(&one);
		sigaddset(&one, pc_cfg->sig);
		real_pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	}
	if (exec_unmasked) {
		sigemptyset(&one);
		sigaddset(&one, pc_cfg->snapshot_sig);
		real_pthread_sigmask(SIG_BLOCK, &one, NULL);
	}
	exec_ignored = exec_ignored_n = exec_masked = exec_unmasked = 0;
}

/* ------------------------------------------------------------ sigaction */

/* A handler on an alternate stack gets the sampling signal in its mask,
 * remembered so that the program's view leaves it out. */
static const struct sigaction *
onstack_masked(int sig, const struct sigaction *act, struct sigaction *copy)
{
	int s = pc_cfg->sig;

	if (!act || !(act->sa_flags & SA_ONSTACK) || pc->owned[s] != PC_OWN_SAMPLING ||
	    (!(act->sa_flags & SA_SIGINFO) &&
	     (act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN))) {
		if (act)
			mask_added[sig] = 0;
		return act;
	}
	*copy = *act;
	mask_added[sig] = !sigismember(&copy->sa_mask, s);
	sigaddset(&copy->sa_mask, s);
	return copy;
}

/* Signals whose handler restarts calls and blocks the sampling signal,
 * and how many: a sample one held comes out of its sigreturn on a call set
 * to restart, which keep_programs_eintr cannot tell from its own. */
static unsigned char restart_masks[NSIG];
static int restart_masks_n;

static void
note_restart_mask(int sig, const struct sigaction *installed)
{
	int now = installed && (installed->sa_flags & SA_RESTART) &&
		  ((installed->sa_flags & SA_SIGINFO) ||
		   (installed->sa_handler != SIG_DFL && installed->sa_handler != SIG_IGN)) &&
		  sigismember(&installed->sa_mask, pc_cfg->sig) == 1;

	if (now == restart_masks[sig])
		return;
	restart_masks[sig] = (unsigned char)now;
	__atomic_add_fetch(&restart_masks_n, now ? 1 : -1, __ATOMIC_RELAXED);
}

int
pc_signals_restart_masks_sampling(void)
{
	return __atomic_load_n(&restart_masks_n, __ATOMIC_RELAXED) > 0;
}

/* The program sets act for a signal libpc owns (pc->owned[sig]): what it
 * believes is installed changes, or it takes the signal back. 0 or -1. */
static int
take_owned(int sig, const struct sigaction *act)
{
	const struct sigaction *installed;
	struct sigaction copy;
	int r = 0;

	switch (pc->owned[sig]) {
	case PC_OWN_SAMPLING:
	case PC_OWN_SNAPSHOT:
		pc_prog_action_store(sig, act);
		break;
	case PC_OWN_FATAL:
		if (!(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL) {
			pc_prog_action_store(sig, act);
			break;
		}
		/* the program's own handler (or SIG_IGN) takes over, with the
		 * sampling signal in its mask if it runs on an alternate
		 * stack, as any other */
		installed = onstack_masked(sig, act, &copy);
		r = real_sigaction(sig, installed, NULL);
		if (r == 0) {
			pc->owned[sig] = 0;
			note_restart_mask(sig, installed);
		}
		break;
	}
	return r;
}

PC_EXPORT int
sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction was, ours, copy;
	int r = 0, added;

	resolve();
	if (pc_vfork_sigaction(sig, act, old, real_sigaction, prog_blocked, &r))
		return r;	/* a vfork child's: vfork.c */
	/* a fatal signal the program handled and now puts back to its
	 * default (to die of it, as sort(1) does on SIGPIPE): take it again,
	 * so that the profile is written before the process goes */
	if (sig > 0 && sig < NSIG && !pc->owned[sig] && pc_on() && act &&
	    !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL &&
	    is_fatal(sig) && sig != pc_cfg->sig && sig != pc_cfg->snapshot_sig) {
		fatal_action(&ours);
		r = real_sigaction(sig, &ours, &was);
		if (r)
			return r;
		note_restart_mask(sig, &ours);
		pc_prog_action_store(sig, act);
		pc->owned[sig] = PC_OWN_FATAL;
		mask_added[sig] = 0;
		if (old)
			*old = was;
		return 0;
	}
	if (sig <= 0 || sig >= NSIG || !pc->owned[sig]) {
		added = sig > 0 && sig < NSIG && mask_added[sig];
		const struct sigaction *installed =
			sig > 0 && sig < NSIG ? onstack_masked(sig, act, &copy) : act;

		r = real_sigaction(sig, installed, old);
		if (r == 0 && old && added)
			sigdelset(&old->sa_mask, pc_cfg->sig);
		if (r == 0 && act)
			note_restart_mask(sig, installed);
		return r;
	}
	if (pc_prog_action_from_handler(sig, &was))
		prog_action_load(sig, &was);
	if (act)
		r = take_owned(sig, act);
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
	if (sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old))
		return SIG_ERR;
	return old.sa_handler;
}

/* ------------------------------------------------------------ masks */

/* What the program believes of sig in this thread, for the handler: 1
 * when it blocked it (then a forwarded signal is held back, and counted). */
int
pc_prog_blocked_from_handler(int sig)
{
	unsigned bit = sig == pc_cfg->sig ? HIDE_SAMPLE : HIDE_SNAPSHOT;

	if (!(prog_blocked & bit))
		return 0;
	if (bit == HIDE_SAMPLE)
		deferred++;
	return 1;
}

unsigned
pc_signals_prog_blocked(void)
{
	return prog_blocked;
}

void
pc_signals_inherit_block(unsigned blocked)
{
	prog_blocked = blocked;
}

unsigned
pc_signals_view_bit(int sig)
{
	return sig == pc_cfg->sig ? HIDE_SAMPLE : sig == pc_cfg->snapshot_sig ? HIDE_SNAPSHOT : 0;
}

unsigned
pc_signals_view_set(unsigned blocked)
{
	unsigned was = prog_blocked;

	prog_blocked = blocked;
	return was;
}

/* The program's view of its mask: libpc's signals as it set them. */
static void
view_of(sigset_t *set, unsigned blocked)
{
	int s = pc_cfg->sig, n = pc_cfg->snapshot_sig;

	if (pc->owned[s] == PC_OWN_SAMPLING) {
		if (blocked & HIDE_SAMPLE)
			sigaddset(set, s);
		else
			sigdelset(set, s);
	}
	if (n && pc->owned[n] == PC_OWN_SNAPSHOT) {
		if (blocked & HIDE_SNAPSHOT)
			sigaddset(set, n);
		else
			sigdelset(set, n);
	}
}

/* One of libpc's signals in the set the program passes: its view moves
 * as it asks; what is installed is libpc's (the sampling signal never
 * blocked, the snapshot signal always). */
static unsigned
hide(int how, sigset_t *s, int sig, unsigned bit, int keep_blocked, unsigned now)
{
	int member = sigismember(s, sig) == 1;

	if ((how == SIG_BLOCK && member) || (how == SIG_SETMASK && member))
		now |= bit;
	else if ((how == SIG_UNBLOCK && member) || how == SIG_SETMASK)
		now &= ~bit;
	if (keep_blocked) {
		if (how == SIG_SETMASK)
			sigaddset(s, sig);
		else if (how == SIG_UNBLOCK)
			sigdelset(s, sig);
	} else if (how != SIG_UNBLOCK) {
		sigdelset(s, sig);
	}
	return now;
}

static int
filter_mask(sigmask_fn real, int how, const sigset_t *set, sigset_t *old)
{
	unsigned was = pc_vfork_view(prog_blocked), now = was;
	int s = pc_cfg->sig, n = pc_cfg->snapshot_sig, r;
	sigset_t copy;

	if (!set) {
		r = real(how, set, old);
		if (r == 0 && old)
			view_of(old, was);
		return r;
	}
	if (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
		return real(how, set, old);	/* EINVAL, as the kernel says */
	copy = *set;
	if (pc->owned[s] == PC_OWN_SAMPLING)
		now = hide(how, &copy, s, HIDE_SAMPLE, 0, now);
	if (n && pc->owned[n] == PC_OWN_SNAPSHOT)
		now = hide(how, &copy, n, HIDE_SNAPSHOT, 1, now);
	r = real(how, &copy, old);
	if (r)
		return r;
	if (old)
		view_of(old, was);
	if (pc_vfork_keep(was, now, prog_blocked))
		return 0;	/* a vfork child's view: its own */
	prog_blocked = now;
	if (!(now & HIDE_SAMPLE) && deferred) {
		/* what arrived for the program while it had it blocked */
		deferred = 0;
		raise(s);
	}
	return 0;
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

/* --------------------------------------- the sigwait family and signalfd */

/* set without libpc's signals, into copy; set itself when it holds none. */
static const sigset_t *
without_ours(const sigset_t *set, sigset_t *copy)
{
	int s = pc_cfg->sig, n = pc_cfg->snapshot_sig;

	if (!set || (!(hidden_sig(s) && sigismember(set, s) == 1) &&
		     !(hidden_sig(n) && sigismember(set, n) == 1)))
		return set;
	*copy = *set;
	if (hidden_sig(s))
		sigdelset(copy, s);
	if (hidden_sig(n))
		sigdelset(copy, n);
	return copy;
}

PC_EXPORT int
sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	static sigtimedwait_fn real;
	sigset_t copy;

	if (!real)
		real = (sigtimedwait_fn)pc_next("sigtimedwait");
	return real(without_ours(set, &copy), info, timeout);
}

PC_EXPORT int
sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	return sigtimedwait(set, info, NULL);
}

PC_EXPORT int
sigwait(const sigset_t *set, int *sig)
{
	static sigwait_fn real;
	sigset_t copy;

	if (!real)
		real = (sigwait_fn)pc_next("sigwait");
	return real(without_ours(set, &copy), sig);
}

PC_EXPORT int
signalfd(int fd, const sigset_t *mask, int flags)
{
	static signalfd_fn real;
	sigset_t copy;

	if (!real)
		real = (signalfd_fn)pc_next("signalfd");
	return real(fd, without_ours(mask, &copy), flags);
}
