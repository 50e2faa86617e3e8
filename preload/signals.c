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
 * When the program takes the sampling signal for its own (a handler or
 * SIG_IGN for it, a mask that names it, a wait or a signalfd on a set that
 * names it), libpc moves to another real-time signal that the program
 * has not touched, for every thread at once (timer.c aims each thread's
 * timer at it), and the old one is the program's from then on: its
 * disposition installed for real (a handler through a thin filter, with
 * the program's flags and mask, that drops the late signals of libpc's
 * old timers), its masks real, its waits untouched. Each thread's view
 * of the old signal's mask is made real the next time it runs code of
 * libpc's (an interposed call, a sample, the filter). With no free
 * signal left, libpc stops sampling and says so.
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
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
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

int pc_sampling_sig;

/* The signal libpc samples on now. AS-safe. */
static int
cur_sig(void)
{
	return __atomic_load_n(&pc_sampling_sig, __ATOMIC_SEQ_CST);
}

/* Handlers the program installed with SA_ONSTACK, and the sampling signal
 * libpc added to their mask: their view leaves it out again. */
static int mask_added[NSIG];

/* Signals the program named (never libpc's again), and those libpc once
 * sampled on and left to the program (whose late signals of libpc's
 * timers are dropped). */
static unsigned char named[NSIG], moved_off[NSIG];

/* The moves so far: move k left move_from[k] for move_to[k] (0: for none,
 * sampling stopped); each thread's view is as of its own count. */
#define MOVES_MAX	64
static int move_from[MOVES_MAX], move_to[MOVES_MAX];
static int moves;		/* atomic */
static PC_TLS int my_moves;
static int move_lock;

static void view_sync(void);

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
	move_lock = 0;
	for (int sig = 0; sig < NSIG; sig++)
		act_seq[sig] = (act_seq[sig] + 1) & ~1u;
}

/* ------------------------------------------------ fatal signals */

/* Write the profile, then die of sig as the program would have: the
 * handler was installed with SA_RESETHAND | SA_NODEFER, so the default
 * action is back and raise() delivers at once. AS-safe. */
static int moved_late_from_handler(int sig, siginfo_t *si, void *ucv);
static void fatal_action(struct sigaction *sa);

static void
fatal_from_handler(int sig, siginfo_t *si, void *uc)
{
	if (moved_off[sig] && moved_late_from_handler(sig, si, uc)) {
		/* SA_RESETHAND put the default back: ours again */
		struct sigaction sa;

		fatal_action(&sa);
		pc_real_sigaction(sig, &sa, NULL);
		return;
	}
	pc_finish_signal(sig);	/* on a stack of its own */
	pc_raise_raw(sig);
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
		if (!is_fatal(sig) || sig == cur_sig() || sig == pc_cfg->snapshot_sig)
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
	if (real_pthread_sigmask(SIG_SETMASK, NULL, &cur) || !sigismember(&cur, cur_sig()))
		return;
	prog_blocked |= HIDE_SAMPLE;
	sigemptyset(&one);
	sigaddset(&one, cur_sig());
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
	int s = cur_sig(), n = pc_cfg->snapshot_sig;
	int ignored, ignored_n = 0, masked = 0, unmasked = 0;
	struct sigaction saved, saved_n;
	sigset_t one;

	if (pc->owned[s] != PC_OWN_SAMPLING)
		return;
	/* an ignored signal stays ignored across exec: make it so; a
	 * handler is reset to the default by exec itself */
	ignored = ignore_if_ignored(s, &saved);
	if (n && pc->owned[n] == PC_OWN_SNAPSHOT)
		ignored_n = ignore_if_ignored(n, &saved_n);
	if (prog_blocked & HIDE_SAMPLE) {
		sigemptyset(&one);
		sigaddset(&one, s);
		masked = real_pthread_sigmask(SIG_BLOCK, &one, NULL) == 0;
	}
	if (n && pc->owned[n] == PC_OWN_SNAPSHOT && !(prog_blocked & HIDE_SNAPSHOT)) {
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
		real_sigaction(cur_sig(), &exec_saved, NULL);
	if (exec_ignored_n)
		real_sigaction(pc_cfg->snapshot_sig, &exec_saved_n, NULL);
	if (exec_masked) {
		sigemptyset(&one);
		sigaddset(&one, cur_sig());
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
	int s = cur_sig();

	if (!act || !(act->sa_flags & SA_ONSTACK) || pc->owned[s] != PC_OWN_SAMPLING ||
	    (!(act->sa_flags & SA_SIGINFO) &&
	     (act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN))) {
		if (act)
			mask_added[sig] = 0;
		return act;
	}
	*copy = *act;
	mask_added[sig] = sigismember(&copy->sa_mask, s) ? 0 : s;
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
		  sigismember(&installed->sa_mask, cur_sig()) == 1;

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

static int
is_handler(const struct sigaction *act)
{
	return (act->sa_flags & SA_SIGINFO) ||
	       (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN);
}

static void moved_from_handler(int sig, siginfo_t *si, void *ucv);

/* What is installed for the program's act on sig: its own, with the
 * sampling signal in its mask if it runs on an alternate stack; on a
 * signal libpc left, a handler goes through the filter (into *filt). */
static const struct sigaction *
programs_installed(int sig, const struct sigaction *act, struct sigaction *copy,
		   struct sigaction *filt)
{
	const struct sigaction *installed = onstack_masked(sig, act, copy);

	if (!installed || !moved_off[sig] || !is_handler(installed))
		return installed;
	*filt = *installed;
	filt->sa_sigaction = moved_from_handler;
	filt->sa_flags |= SA_SIGINFO;
	return filt;
}

/* The program sets act for a signal libpc owns (pc->owned[sig]): what it
 * believes is installed changes, or it takes the signal back. 0 or -1. */
static int
take_owned(int sig, const struct sigaction *act)
{
	const struct sigaction *installed;
	struct sigaction copy, filt;
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
		if (moved_off[sig])
			pc_prog_action_store(sig, act);
		installed = programs_installed(sig, act, &copy, &filt);
		r = real_sigaction(sig, installed, NULL);
		if (r == 0) {
			pc->owned[sig] = 0;
			note_restart_mask(sig, installed);
		}
		break;
	}
	return r;
}

/* sigaction for a signal libpc does not hold: the program's, installed
 * for real (through the filter on one libpc left). */
static int
programs_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction copy, filt, view;
	const struct sigaction *installed = act;
	int added = sig > 0 && sig < NSIG ? mask_added[sig] : 0, r, moved;

	if (sig <= 0 || sig >= NSIG)
		return real_sigaction(sig, act, old);
	moved = moved_off[sig];
	if (moved)
		prog_action_load(sig, &view);
	if (act) {
		installed = programs_installed(sig, act, &copy, &filt);
		if (moved)
			pc_prog_action_store(sig, act);
	}
	r = real_sigaction(sig, installed, old);
	if (r)
		return r;
	if (old && moved && (old->sa_flags & SA_SIGINFO) &&
	    old->sa_sigaction == moved_from_handler)
		*old = view;
	else if (old && added)
		sigdelset(&old->sa_mask, added);
	if (act)
		note_restart_mask(sig, installed);
	return 0;
}

static void move_off(int s, const sigset_t *avoid);

PC_EXPORT int
sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction was, ours;
	int r = 0;

	resolve();
	/* the program takes the sampling signal for its own: libpc moves */
	if (sig > 0 && sig < NSIG && act && sig == cur_sig() &&
	    pc->owned[sig] == PC_OWN_SAMPLING && (is_handler(act) || act->sa_handler == SIG_IGN))
		move_off(sig, NULL);
	/* a fatal signal the program handled and now puts back to its
	 * default (to die of it, as sort(1) does on SIGPIPE): take it again,
	 * so that the profile is written before the process goes */
	if (sig > 0 && sig < NSIG && !pc->owned[sig] && pc_on() && act &&
	    !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL &&
	    is_fatal(sig) && sig != cur_sig() && sig != pc_cfg->snapshot_sig) {
		if (moved_off[sig] && old)
			programs_sigaction(sig, NULL, &was);
		fatal_action(&ours);
		r = real_sigaction(sig, &ours, moved_off[sig] && old ? NULL : &was);
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
	if (sig <= 0 || sig >= NSIG || !pc->owned[sig])
		return programs_sigaction(sig, act, old);
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

/* ------------------------------------------------------------ moving */

/* A real-time signal libpc may sample on instead of s: from the top down,
 * one the program never named, left at its default (libpc may hold it
 * for a fatal end), outside avoid (the set the program names now) and
 * not the snapshot signal; one unblocked in this thread if there is one.
 * 0 for none. */
static int
free_signal(int s, const sigset_t *avoid)
{
	sigset_t mask;
	int blocked = 0;

	real_pthread_sigmask(SIG_SETMASK, NULL, &mask);
	for (int k = SIGRTMAX; k >= SIGRTMIN; k--) {
		struct sigaction act;

		if (k == s || k == pc_cfg->snapshot_sig || named[k] || moved_off[k] ||
		    (avoid && sigismember(avoid, k) == 1))
			continue;
		if (pc->owned[k] == PC_OWN_FATAL)
			prog_action_load(k, &act);
		else if (pc->owned[k] || real_sigaction(k, NULL, &act))
			continue;
		if (is_handler(&act) || act.sa_handler != SIG_DFL)
			continue;
		if (sigismember(&mask, k) != 1)
			return k;
		if (!blocked)
			blocked = k;
	}
	return blocked;
}

/* Signal s, which libpc sampled on, made the program's: what it set is
 * installed for real (a handler through the filter). */
static void
make_real(int s)
{
	struct sigaction act, copy, filt, ours;
	const struct sigaction *installed;

	prog_action_load(s, &act);
	moved_off[s] = 1;
	if (!is_handler(&act) && act.sa_handler == SIG_DFL) {
		/* its default ends the process: libpc holds it for that */
		fatal_action(&ours);
		if (real_sigaction(s, &ours, NULL) == 0) {
			note_restart_mask(s, &ours);
			pc->owned[s] = PC_OWN_FATAL;
			return;
		}
	}
	installed = programs_installed(s, &act, &copy, &filt);
	real_sigaction(s, installed, NULL);
	note_restart_mask(s, installed);
	pc->owned[s] = 0;
}

/* Handlers on an alternate stack hold the sampling signal in their mask:
 * the old one leaves it (it is the program's), the new one joins. */
static void
remask_onstack(int from, int to)
{
	for (int k = 1; k < NSIG; k++) {
		struct sigaction act;

		if (pc->owned[k] || k == from || real_sigaction(k, NULL, &act) || !is_handler(&act))
			continue;
		if (mask_added[k] == from)
			sigdelset(&act.sa_mask, from);
		mask_added[k] = 0;
		if ((act.sa_flags & SA_ONSTACK) && to && sigismember(&act.sa_mask, to) != 1) {
			sigaddset(&act.sa_mask, to);
			mask_added[k] = to;
		}
		real_sigaction(k, &act, NULL);
		note_restart_mask(k, &act);
	}
}

/*
 * The program took s, the sampling signal, for its own: libpc moves to a
 * free one (or, with none, stops sampling), for every thread, and s is
 * the program's from here on. The handler is installed on the new signal
 * first, the timers are aimed at it next, and only then is s made the
 * program's (the late signals of the old timers are known by their tag
 * or descriptor, and dropped). Every signal is blocked meanwhile, and
 * one thread moves at a time. Not AS-safe.
 */
static void
move_off(int s, const sigset_t *avoid)
{
	sigset_t all, prev;
	struct sigaction was;
	int to, k;

	/* a vfork child shares the parent's memory, not its signals */
	if (getpid() != pc->pid || !pc->ntext)
		return;
	sigfillset(&all);
	real_pthread_sigmask(SIG_SETMASK, &all, &prev);
	while (__atomic_exchange_n(&move_lock, 1, __ATOMIC_ACQUIRE))
		;
	k = __atomic_load_n(&moves, __ATOMIC_RELAXED);
	if (pc->owned[s] != PC_OWN_SAMPLING || cur_sig() != s || k >= MOVES_MAX)
		goto out;
	named[s] = 1;
	to = free_signal(s, avoid);
	if (to) {
		if (pc->owned[to] == PC_OWN_FATAL)
			prog_action_load(to, &was);
		if (pc_sample_install_on(to, pc->owned[to] == PC_OWN_FATAL ? NULL : &was))
			to = 0;
		else {
			pc_prog_action_store(to, &was);
			pc->owned[to] = PC_OWN_SAMPLING;
		}
	}
	move_from[k] = s;
	move_to[k] = to;
	if (to) {
		__atomic_store_n(&pc_sampling_sig, to, __ATOMIC_SEQ_CST);
		pc_timers_move(to);
	} else {
		pc_timers_stop();
	}
	__atomic_store_n(&moves, k + 1, __ATOMIC_SEQ_CST);
	make_real(s);
	remask_onstack(s, to);
	if (!to)
		pc_say("the program uses every real-time signal libpc could sample on; "
		       "sampling stops here", "", "");
out:
	__atomic_store_n(&move_lock, 0, __ATOMIC_RELEASE);
	real_pthread_sigmask(SIG_SETMASK, &prev, NULL);
	view_sync();
}

/*
 * This thread's view of the program's mask, brought up to the moves made
 * since it last looked: a signal libpc left and the program believed
 * blocked is blocked for real, and the new sampling signal, where it is
 * blocked for real, is let through with the view keeping it blocked. In
 * a handler the mask is the interrupted one, in *uc_mask (it comes back
 * with sigreturn); otherwise the thread's own. 1 when sig (a signal libpc
 * left) was blocked so: the program believed it blocked. AS-safe.
 */
static int
sync_mask(sigset_t *uc_mask, int sig)
{
	int n = __atomic_load_n(&moves, __ATOMIC_SEQ_CST), hit = 0;

	while (my_moves < n) {
		int from = move_from[my_moves], to = move_to[my_moves];
		sigset_t one, mask;

		if (prog_blocked & HIDE_SAMPLE) {
			hit |= from == sig;
			if (uc_mask) {
				sigaddset(uc_mask, from);
			} else {
				sigemptyset(&one);
				sigaddset(&one, from);
				real_pthread_sigmask(SIG_BLOCK, &one, NULL);
			}
		}
		prog_blocked &= ~HIDE_SAMPLE;
		if (to) {
			if (!uc_mask)
				real_pthread_sigmask(SIG_SETMASK, NULL, &mask);
			if (sigismember(uc_mask ? uc_mask : &mask, to) == 1) {
				prog_blocked |= HIDE_SAMPLE;
				if (uc_mask) {
					sigdelset(uc_mask, to);
				} else {
					sigemptyset(&one);
					sigaddset(&one, to);
					real_pthread_sigmask(SIG_UNBLOCK, &one, NULL);
				}
			}
		}
		my_moves++;
	}
	return hit;
}

static void
view_sync(void)
{
	if (my_moves != __atomic_load_n(&moves, __ATOMIC_RELAXED))
		sync_mask(NULL, 0);
}

void
pc_signals_sync_from_handler(void *ucv)
{
	ucontext_t *uc = ucv;

	if (my_moves != __atomic_load_n(&moves, __ATOMIC_RELAXED))
		sync_mask(&uc->uc_sigmask, 0);
}

void
pc_signals_sync(void)
{
	view_sync();
}

int
pc_signals_moves(void)
{
	return my_moves;
}

/* A signal of the program's on sig, which the program believed blocked
 * in this thread when it came (its view was not yet made real here):
 * blocked now, it is queued again, for a thread that has it unblocked or
 * for the program's wait. AS-safe. */
static void
queue_again(int sig, const siginfo_t *si)
{
	sigset_t one;
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);

	sigemptyset(&one);
	sigaddset(&one, sig);
	real_pthread_sigmask(SIG_BLOCK, &one, NULL);
	if (si->si_code == SI_TKILL) {
		syscall(SYS_tgkill, pid, tid, sig);
		return;
	}
	if (syscall(SYS_rt_sigqueueinfo, pid, sig, si))
		kill(pid, sig);	/* the kernel lets only the main thread
				 * queue a signal with the sender's info */
}

/* What a signal on sig, one libpc left to the program, is before the
 * program's disposition sees it: 1 when it is not the program's to see
 * (a late signal of libpc's old timers, dropped, or one the program
 * believed blocked here, queued again). AS-safe. */
static int
moved_late_from_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	if (pc_timers_late_from_handler(si))
		return 1;
	if (my_moves != __atomic_load_n(&moves, __ATOMIC_RELAXED) &&
	    sync_mask(&uc->uc_sigmask, sig)) {
		queue_again(sig, si);
		return 1;
	}
	return 0;
}

/* The filter in front of the program's handler on a signal libpc left,
 * installed with the program's flags and mask, so that the kernel
 * restarts, interrupts, masks and queues as it would plain. AS-safe. */
static void
moved_from_handler(int sig, siginfo_t *si, void *ucv)
{
	struct sigaction act;
	int saved = errno;

	if (moved_late_from_handler(sig, si, ucv) || pc_prog_action_from_handler(sig, &act) ||
	    !is_handler(&act)) {
		errno = saved;
		return;
	}
	if (act.sa_flags & SA_SIGINFO)
		act.sa_sigaction(sig, si, ucv);
	else
		act.sa_handler(sig);
}

/* ------------------------------------------------------------ masks */

/* What the program believes of sig in this thread, for the handler: 1
 * when it blocked it (then a forwarded signal is held back, and counted). */
int
pc_prog_blocked_from_handler(int sig)
{
	unsigned bit = sig == cur_sig() ? HIDE_SAMPLE : HIDE_SNAPSHOT;

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
pc_signals_inherit_block(unsigned blocked, int moves_seen)
{
	prog_blocked = blocked;
	my_moves = moves_seen;
	view_sync();
}

unsigned
pc_signals_view_bit(int sig)
{
	return sig == cur_sig() ? HIDE_SAMPLE : sig == pc_cfg->snapshot_sig ? HIDE_SNAPSHOT : 0;
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
	int s = cur_sig(), n = pc_cfg->snapshot_sig;

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

/* set names sig: holds it, but not every real-time signal (a full set
 * asks for no signal in particular, and no other would be free of it). */
static int
names(const sigset_t *set, int sig)
{
	if (!set || sigismember(set, sig) != 1)
		return 0;
	for (int k = SIGRTMIN; k <= SIGRTMAX; k++)
		if (sigismember(set, k) != 1)
			return 1;
	return 0;
}

static int
filter_mask(sigmask_fn real, int how, const sigset_t *set, sigset_t *old)
{
	unsigned was, now;
	int s, n = pc_cfg->snapshot_sig, r;
	sigset_t copy;

	view_sync();
	/* a mask that blocks the sampling signal by name: the program's */
	if (set && (how == SIG_BLOCK || how == SIG_SETMASK) && names(set, cur_sig()) &&
	    pc->owned[cur_sig()] == PC_OWN_SAMPLING)
		move_off(cur_sig(), set);
	was = now = prog_blocked;
	s = cur_sig();
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
	prog_blocked = now;
	if (old)
		view_of(old, was);
	if (!(now & HIDE_SAMPLE) && deferred) {
		/* what arrived for the program while it had it blocked */
		deferred = 0;
		if (pc->owned[s] == PC_OWN_SAMPLING)
			pc_raise_raw(s);
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

/* The program waits for the signals of set (or opens a signalfd on
 * them): one that names the sampling signal takes it for the program's. */
static void
waits_for(const sigset_t *set)
{
	resolve();
	view_sync();
	if (names(set, cur_sig()) && pc->owned[cur_sig()] == PC_OWN_SAMPLING)
		move_off(cur_sig(), set);
}

/* set without libpc's signals, into copy; set itself when it holds none. */
static const sigset_t *
without_ours(const sigset_t *set, sigset_t *copy)
{
	int s = cur_sig(), n = pc_cfg->snapshot_sig;

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
	waits_for(set);
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
	waits_for(set);
	return real(without_ours(set, &copy), sig);
}

PC_EXPORT int
signalfd(int fd, const sigset_t *mask, int flags)
{
	static signalfd_fn real;
	sigset_t copy;

	if (!real)
		real = (signalfd_fn)pc_next("signalfd");
	waits_for(mask);
	return real(fd, without_ours(mask, &copy), flags);
}

/* ------------------------------------------------- longjmp out of a handler */

/*
 * A handler of the program's that leaves by longjmp (or siglongjmp
 * without a saved mask) leaves its mask in force, and every handler on an
 * alternate stack has the sampling signal in its mask (libpc puts it
 * there, or the program's sigfillset does): the thread would never be
 * sampled again. The signal is let through here instead; the program's
 * view keeps it blocked where the mask left in force blocks every
 * real-time signal (as a sigfillset mask does), as it would plain.
 */
typedef void (*jump_fn)(struct __jmp_buf_tag *, int);

static void
leaving_handler(void)
{
	sigset_t cur, one;
	int s = cur_sig(), full = 1;

	resolve();
	if (!pc || pc->owned[s] != PC_OWN_SAMPLING ||
	    real_pthread_sigmask(SIG_SETMASK, NULL, &cur) || sigismember(&cur, s) != 1)
		return;
	/* blocked for real: only a handler's mask does that here */
	for (int k = SIGRTMIN; k <= SIGRTMAX; k++)
		if (k != s && k != pc_cfg->snapshot_sig && sigismember(&cur, k) != 1)
			full = 0;
	if (full)
		prog_blocked |= HIDE_SAMPLE;
	sigemptyset(&one);
	sigaddset(&one, s);
	real_pthread_sigmask(SIG_UNBLOCK, &one, NULL);
}

#define JUMP(name)							\
	PC_EXPORT void							\
	name(struct __jmp_buf_tag env[1], int val)			\
	{								\
		static jump_fn real;					\
		int saved = errno;					\
									\
		if (!real)						\
			real = (jump_fn)pc_next(#name);			\
		leaving_handler();					\
		errno = saved;						\
		real(env, val);						\
		__builtin_unreachable();				\
	}
JUMP(longjmp)
JUMP(_longjmp)
JUMP(siglongjmp)
void __longjmp_chk(struct __jmp_buf_tag env[1], int val);
JUMP(__longjmp_chk)

/* ------------------------------------------------- small stacks */

/*
 * A thread the program starts on a small stack (under PC_SMALL_STACK)
 * may use nearly all of it, and the kernel's frame for a sample (1 to 4
 * KiB with the vector registers) would not fit beside it: such a thread,
 * when it has no alternate stack of its own, gets one of libpc's for the
 * sampling handler (which runs SA_ONSTACK). sigaltstack shows the program
 * none, and one the program sets replaces libpc's. A handler of the
 * program's with SA_ONSTACK would run on it too, where plain it runs on
 * the thread's stack.
 */
#define OWN_ALT_SIZE	(64 * 1024)
static PC_TLS void *own_alt;

typedef int (*sigaltstack_fn)(const stack_t *, stack_t *);
static sigaltstack_fn real_sigaltstack;

static int
alt_real(const stack_t *ss, stack_t *old)
{
	if (!real_sigaltstack)
		real_sigaltstack = (sigaltstack_fn)pc_next("sigaltstack");
	return real_sigaltstack ? real_sigaltstack(ss, old) :
	       (int)syscall(SYS_sigaltstack, ss, old);
}

static int
own_alt_install(void)
{
	stack_t ss;

	ss.ss_sp = own_alt;
	ss.ss_size = OWN_ALT_SIZE;
	ss.ss_flags = 0;
	return alt_real(&ss, NULL);
}

int
pc_signals_small_stack(void)
{
	stack_t cur;
	void *m;

	if (alt_real(NULL, &cur))
		return -1;
	if (!(cur.ss_flags & SS_DISABLE))
		return 0;	/* the program's own is there */
	m = mmap(NULL, OWN_ALT_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	own_alt = m;
	if (own_alt_install() == 0)
		return 0;
	munmap(m, OWN_ALT_SIZE);
	own_alt = NULL;
	return -1;
}

void
pc_signals_small_stack_end(void)
{
	stack_t off = { .ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0 };
	stack_t cur;

	if (!own_alt)
		return;
	if (alt_real(NULL, &cur) == 0 && cur.ss_sp == own_alt && !(cur.ss_flags & SS_ONSTACK))
		alt_real(&off, NULL);
	else if (cur.ss_sp == own_alt)
		return;		/* on it (cannot be): left as it is */
	munmap(own_alt, OWN_ALT_SIZE);
	own_alt = NULL;
}

PC_EXPORT int
sigaltstack(const stack_t *ss, stack_t *old)
{
	int r, saved;

	if (!own_alt)
		return alt_real(ss, old);
	r = alt_real(ss, old);
	if (r)
		return r;
	if (old && old->ss_sp == own_alt) {
		old->ss_sp = NULL;
		old->ss_size = 0;
		old->ss_flags = SS_DISABLE;
	}
	if (ss && (ss->ss_flags & SS_DISABLE)) {
		/* the program believed it had none: libpc's stays */
		saved = errno;
		own_alt_install();
		errno = saved;
	} else if (ss) {
		/* the program's own replaces libpc's */
		saved = errno;
		munmap(own_alt, OWN_ALT_SIZE);
		own_alt = NULL;
		errno = saved;
	}
	return 0;
}

/* ------------------------------------------------- sent to itself */

void
pc_raise_raw(int sig)
{
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}

/* The program sends the sampling signal to itself: it is the program's. */
static void
sends(int sig, int to_self)
{
	int saved = errno;

	resolve();
	if (to_self && sig > 0 && sig < NSIG && sig == cur_sig() &&
	    pc->owned[sig] == PC_OWN_SAMPLING) {
		view_sync();
		move_off(sig, NULL);
	}
	errno = saved;
}

typedef int (*kill_fn)(pid_t, int);
typedef int (*raise_fn)(int);
typedef int (*sigqueue_fn)(pid_t, int, const union sigval);
typedef int (*pthread_kill_fn)(pthread_t, int);
typedef int (*pthread_sigqueue_fn)(pthread_t, int, const union sigval);

PC_EXPORT int
kill(pid_t pid, int sig)
{
	static kill_fn real;

	if (!real)
		real = (kill_fn)pc_next("kill");
	sends(sig, pid == 0 || pid == getpid());
	return real(pid, sig);
}

PC_EXPORT int
raise(int sig)
{
	static raise_fn real;

	if (!real)
		real = (raise_fn)pc_next("raise");
	sends(sig, 1);
	return real(sig);
}

PC_EXPORT int
sigqueue(pid_t pid, int sig, const union sigval value)
{
	static sigqueue_fn real;

	if (!real)
		real = (sigqueue_fn)pc_next("sigqueue");
	sends(sig, pid == getpid());
	return real(pid, sig, value);
}

PC_EXPORT int
pthread_kill(pthread_t t, int sig)
{
	static pthread_kill_fn real;

	if (!real)
		real = (pthread_kill_fn)pc_next("pthread_kill");
	sends(sig, 1);
	return real(t, sig);
}

PC_EXPORT int
pthread_sigqueue(pthread_t t, int sig, const union sigval value)
{
	static pthread_sigqueue_fn real;

	if (!real)
		real = (pthread_sigqueue_fn)pc_next("pthread_sigqueue");
	sends(sig, 1);
	return real(t, sig, value);
}
