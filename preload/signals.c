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
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <time.h>

#include "pc.h"
#include "banned.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);

static sigaction_fn real_sigaction;
static sigmask_fn real_pthread_sigmask;

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

static int move_lock;	/* one thread moves at a time */

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
			continue; /* a writer on another CPU is half-way */
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
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]);
	     i++)
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
	for (int sig = 1; sig < NSIG; sig++) {
		if (!is_fatal(sig) || sig == cur_sig() ||
		    sig == pc_cfg->snapshot_sig)
			continue;
		if (real_sigaction(sig, NULL, &old) ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue; /* ignored or handled: not ours to take */
		fatal_action(&sa);
		pc_prog_action_store(sig, &old);
		if (real_sigaction(sig, &sa, NULL) == 0)
			pc->owned[sig] = PC_OWN_FATAL;
	}
}

/* ------------------------------------------------------------ sigaction */

/* A handler on an alternate stack gets the sampling signal in its mask,
 * remembered so that the program's view leaves it out. */
static const struct sigaction *
onstack_masked(int sig, const struct sigaction *act, struct sigaction *copy)
{
	int s = cur_sig();

	if (!act || !(act->sa_flags & SA_ONSTACK) ||
	    pc->owned[s] != PC_OWN_SAMPLING ||
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
		   (installed->sa_handler != SIG_DFL &&
		    installed->sa_handler != SIG_IGN)) &&
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
		if (!(act->sa_flags & SA_SIGINFO) &&
		    act->sa_handler == SIG_DFL) {
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


PC_EXPORT int
sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction was, ours;
	int r = 0;

	resolve();
	if (pc_vfork_sigaction(sig, act, old, real_sigaction,
			       pc_signals_prog_blocked(), &r))
		return r;	/* a vfork child's: vfork.c */
	/* the program takes the sampling signal for its own: libpc moves */
	if (sig > 0 && sig < NSIG && act && sig == cur_sig() &&
	    pc->owned[sig] == PC_OWN_SAMPLING &&
	    (is_handler(act) || act->sa_handler == SIG_IGN))
		pc_signals_move_off(sig, NULL);
	/* a fatal signal the program handled and now puts back to its
	 * default (to die of it, as sort(1) does on SIGPIPE): take it again,
	 * so that the profile is written before the process goes */
	if (sig > 0 && sig < NSIG && !pc->owned[sig] && pc_on() && act &&
	    !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL &&
	    is_fatal(sig) && sig != cur_sig() && sig != pc_cfg->snapshot_sig) {
		if (moved_off[sig] && old)
			programs_sigaction(sig, NULL, &was);
		fatal_action(&ours);
		r = real_sigaction(sig, &ours,
				   moved_off[sig] && old ? NULL : &was);
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

		if (k == s || k == pc_cfg->snapshot_sig || named[k] ||
		    moved_off[k] || (avoid && sigismember(avoid, k) == 1))
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

		if (pc->owned[k] || k == from ||
		    real_sigaction(k, NULL, &act) || !is_handler(&act))
			continue;
		if (mask_added[k] == from)
			sigdelset(&act.sa_mask, from);
		mask_added[k] = 0;
		if ((act.sa_flags & SA_ONSTACK) && to &&
		    sigismember(&act.sa_mask, to) != 1) {
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
void
pc_signals_move_off(int s, const sigset_t *avoid)
{
	sigset_t all, prev;
	struct sigaction was;
	int to;

	/* a vfork child shares the parent's memory, not its signals */
	if (getpid() != pc->pid || !pc->ntext)
		return;
	sigfillset(&all);
	real_pthread_sigmask(SIG_SETMASK, &all, &prev);
	while (__atomic_exchange_n(&move_lock, 1, __ATOMIC_ACQUIRE))
		;
	if (pc->owned[s] != PC_OWN_SAMPLING || cur_sig() != s ||
	    !pc_signals_can_move())
		goto out;
	named[s] = 1;
	to = free_signal(s, avoid);
	if (to) {
		if (pc->owned[to] == PC_OWN_FATAL)
			prog_action_load(to, &was);
		if (real_sigaction(to, &pc_sample_action,
				   pc->owned[to] == PC_OWN_FATAL ? NULL : &was))
			to = 0;
		else {
			pc_prog_action_store(to, &was);
			pc->owned[to] = PC_OWN_SAMPLING;
		}
	}
	if (to) {
		__atomic_store_n(&pc_sampling_sig, to, __ATOMIC_SEQ_CST);
		pc_timers_move(to);
	} else {
		pc_timers_stop();
	}
	pc_signals_note_move(s, to);
	make_real(s);
	remask_onstack(s, to);
	if (!to)
		pc_say("the program uses every real-time signal libpc could sample on; "
		       "sampling stops here", "", "");
out:
	__atomic_store_n(&move_lock, 0, __ATOMIC_RELEASE);
	real_pthread_sigmask(SIG_SETMASK, &prev, NULL);
	pc_signals_sync();
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
		syscall(SYS_kill, pid,
			sig); /* the kernel lets only the main thread
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

	if (pc_timers_late_from_handler(si)) {
		pc_thread_perf_late_from_handler(si, ucv);
		return 1;
	}
	if (pc_signals_sync_mask(&uc->uc_sigmask, sig)) {
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

	if (moved_late_from_handler(sig, si, ucv) ||
	    pc_prog_action_from_handler(sig, &act) || !is_handler(&act)) {
		errno = saved;
		return;
	}
	if (act.sa_flags & SA_SIGINFO)
		act.sa_sigaction(sig, si, ucv);
	else
		act.sa_handler(sig);
}


void
pc_raise_raw(int sig)
{
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}
