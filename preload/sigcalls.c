/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The program's calls about signals that libpc interposes besides
 * sigaction (signals.c): its masks and waits, which keep libpc's signals
 * out of its reach and, when they name the sampling signal, take it for
 * the program's (libpc moves); the signals it sends itself; a longjmp
 * out of a handler; what an exec hands on; and close_range, which may
 * close libpc's task-clock events. Not AS-safe but where a call is (a
 * program's handler may longjmp, raise, or mask).
 */
/* longjmp and __longjmp_chk are both defined below: under _FORTIFY_SOURCE
 * (Debian's build flags), <setjmp.h> names longjmp __longjmp_chk */
#undef _FORTIFY_SOURCE
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pc.h"
#include "banned.h"

#define HIDE_SAMPLE	PC_HIDE_SAMPLE
#define HIDE_SNAPSHOT	PC_HIDE_SNAPSHOT

typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
typedef int (*sigtimedwait_fn)(const sigset_t *, siginfo_t *,
			       const struct timespec *);
typedef int (*sigwait_fn)(const sigset_t *, int *);
typedef int (*signalfd_fn)(int, const sigset_t *, int);

static sigmask_fn real_pthread_sigmask, real_sigprocmask;

static void
resolve(void)
{
	if (!real_pthread_sigmask)
		real_pthread_sigmask = (sigmask_fn)pc_next("pthread_sigmask");
	if (!real_sigprocmask)
		real_sigprocmask = (sigmask_fn)pc_next("sigprocmask");
}

/* The signal libpc samples on now. AS-safe. */
static int
cur_sig(void)
{
	return __atomic_load_n(&pc_sampling_sig, __ATOMIC_SEQ_CST);
}

static int
hidden_sig(int sig)
{
	return sig > 0 && sig < NSIG &&
	       (pc->owned[sig] == PC_OWN_SAMPLING ||
		pc->owned[sig] == PC_OWN_SNAPSHOT);
}

/* ------------------------------------------------------------ masks */

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
hide(int how, sigset_t *s, int sig, unsigned bit, int keep_blocked,
     unsigned now)
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

	if (pc_wall_walker_mask(real, how, set, old, &r))
		return r; /* libunwind's lock, in the wall sampler's walk */
	pc_signals_sync();
	/* a mask that blocks the sampling signal by name: the program's */
	if (set && (how == SIG_BLOCK || how == SIG_SETMASK) &&
	    names(set, cur_sig()) && pc->owned[cur_sig()] == PC_OWN_SAMPLING)
		pc_signals_move_off(cur_sig(), set);
	was = now = pc_vfork_view(pc_signals_prog_blocked());
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
	if (old)
		view_of(old, was);
	if (pc_vfork_keep(was, now, pc_signals_prog_blocked()))
		return 0;	/* a vfork child's view: its own */
	pc_signals_view_set(now);
	if (!(now & HIDE_SAMPLE) && pc_signals_take_deferred()) {
		/* what arrived for the program while it had it blocked */
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

/*
 * The BSD and System V mask calls: glibc makes them with its own
 * sigprocmask, past the interposer above, so libpc would not see the
 * program unblock (or block) its signal: dash's vfork child clears its
 * mask with sigsetmask(0), and libpc then made its stale view real before
 * the exec (the command ran with SIGRTMAX blocked). Each goes through
 * sigprocmask here, with glibc's meaning: a BSD mask names signals 1 to 32.
 */
static int
bsd_mask(int how, int mask)
{
	sigset_t set, old;

	sigemptyset(&set);
	for (int k = 1; k <= 32 && k < NSIG; k++)
		if (mask & (int)(1u << (k - 1)))
			sigaddset(&set, k);
	if (sigprocmask(how, &set, &old))
		return -1;
	mask = 0;
	for (int k = 1; k <= 32 && k < NSIG; k++)
		if (sigismember(&old, k) == 1)
			mask |= (int)(1u << (k - 1));
	return mask;
}

PC_EXPORT int
sigsetmask(int mask)
{
	return bsd_mask(SIG_SETMASK, mask);
}

PC_EXPORT int
sigblock(int mask)
{
	return bsd_mask(SIG_BLOCK, mask);
}

static int
one_mask(int how, int sig)
{
	sigset_t set;

	sigemptyset(&set);
	if (sigaddset(&set, sig))
		return -1;	/* EINVAL, as glibc says */
	return sigprocmask(how, &set, NULL);
}

PC_EXPORT int
sighold(int sig)
{
	return one_mask(SIG_BLOCK, sig);
}

PC_EXPORT int
sigrelse(int sig)
{
	return one_mask(SIG_UNBLOCK, sig);
}

/* System V's sigignore: SIG_IGN through the interposed sigaction. */
PC_EXPORT int
sigignore(int sig)
{
	struct sigaction act;

	memset(&act, 0, sizeof(act));
	act.sa_handler = SIG_IGN;
	return sigaction(sig, &act, NULL);
}

/* --------------------------------------- the sigwait family and signalfd */

/* The program waits for the signals of set (or opens a signalfd on
 * them): one that names the sampling signal takes it for the program's. */
static void
waits_for(const sigset_t *set)
{
	pc_signals_sync();
	if (names(set, cur_sig()) && pc->owned[cur_sig()] == PC_OWN_SAMPLING)
		pc_signals_move_off(cur_sig(), set);
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
sigtimedwait(const sigset_t *set, siginfo_t *info,
	     const struct timespec *timeout)
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

/* ------------------------------------------------ exec */

static struct sigaction exec_saved, exec_saved_n;
static int exec_ignored, exec_ignored_n, exec_masked, exec_unmasked;

/* sig as the program believes it is: ignored, made so for real (saving
 * what was installed into *saved); 1 when it was. */
static int
ignore_if_ignored(int sig, struct sigaction *saved)
{
	struct sigaction view, ign;

	if (pc_prog_action_from_handler(sig, &view) ||
	    (view.sa_flags & SA_SIGINFO) || view.sa_handler != SIG_IGN)
		return 0;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	return pc_real_sigaction(sig, &ign, saved) == 0;
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
	ignored = !pc_vfork_set(s) && ignore_if_ignored(s, &saved);
	if (n && pc->owned[n] == PC_OWN_SNAPSHOT && !pc_vfork_set(n))
		ignored_n = ignore_if_ignored(n, &saved_n);
	if (pc_vfork_view(pc_signals_prog_blocked()) & HIDE_SAMPLE) {
		sigemptyset(&one);
		sigaddset(&one, s);
		masked = pc_real_sigmask(SIG_BLOCK, &one, NULL) == 0;
	}
	if (n && pc->owned[n] == PC_OWN_SNAPSHOT &&
	    !(pc_vfork_view(pc_signals_prog_blocked()) & HIDE_SNAPSHOT)) {
		sigemptyset(&one);
		sigaddset(&one, n);
		unmasked = pc_real_sigmask(SIG_UNBLOCK, &one, NULL) == 0;
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
		pc_real_sigaction(cur_sig(), &exec_saved, NULL);
	if (exec_ignored_n)
		pc_real_sigaction(pc_cfg->snapshot_sig, &exec_saved_n, NULL);
	if (exec_masked) {
		sigemptyset(&one);
		sigaddset(&one, cur_sig());
		pc_real_sigmask(SIG_UNBLOCK, &one, NULL);
	}
	if (exec_unmasked) {
		sigemptyset(&one);
		sigaddset(&one, pc_cfg->snapshot_sig);
		pc_real_sigmask(SIG_BLOCK, &one, NULL);
	}
	exec_ignored = exec_ignored_n = exec_masked = exec_unmasked = 0;
}

/* ------------------------------------------------- sent to itself */

/* The program sends the sampling signal to itself: it is the program's. */
static void
sends(int sig, int to_self)
{
	int saved = errno;

	if (to_self && sig > 0 && sig < NSIG && sig == cur_sig() &&
	    pc->owned[sig] == PC_OWN_SAMPLING) {
		pc_signals_sync();
		pc_signals_move_off(sig, NULL);
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
/* ------------------------------------------------- longjmp out of a handler */

/*
 * A handler of the program's that leaves by longjmp (or siglongjmp
 * without a saved mask) leaves its mask in force, and every handler on an
 * alternate stack has the sampling signal in its mask (libpc puts it
 * there, or the program's sigfillset does): the thread would never be
 * sampled again. The signal is let through (sigview.c) before the jump.
 */
typedef void (*jump_fn)(struct __jmp_buf_tag *, int);

#define JUMP(name) \
	PC_EXPORT void name(struct __jmp_buf_tag env[1], int val) \
	{ \
		static jump_fn real; \
		int saved = errno; \
\
		if (!real) \
			real = (jump_fn)pc_next(#name); \
		pc_signals_leaving_handler(); \
		errno = saved; \
		real(env, val); \
		__builtin_unreachable(); \
	}
JUMP(longjmp)
JUMP(_longjmp)
JUMP(siglongjmp)
void __longjmp_chk(struct __jmp_buf_tag env[1], int val);
JUMP(__longjmp_chk)

/* ------------------------------------------------------------ close_range */

/*
 * A program that closes every descriptor above a number (close_range,
 * closefrom: daemons, shells, sandboxes) closes libpc's task-clock events
 * too, and their threads would never be sampled again: each gets a new
 * one, opened for it by thread id. A raw system call goes unseen.
 */
typedef int (*close_range_fn)(unsigned, unsigned, int);
typedef void (*closefrom_fn)(int);

PC_EXPORT int
close_range(unsigned first, unsigned last, int flags)
{
	static close_range_fn real;
	int r, saved;

	if (!real)
		real = (close_range_fn)pc_next("close_range");
	r = real ? real(first, last, flags) :
		   (int)syscall(SYS_close_range, first, last, flags);
	saved = errno;
	if (r == 0)
		pc_timers_rearm_closed();
	errno = saved;
	return r;
}

PC_EXPORT void
closefrom(int lowfd)
{
	static closefrom_fn real;
	int saved;

	if (!real)
		real = (closefrom_fn)pc_next("closefrom");
	if (real)
		real(lowfd);
	else
		syscall(SYS_close_range, (unsigned)lowfd, ~0u, 0);
	saved = errno;
	pc_timers_rearm_closed();
	errno = saved;
}
