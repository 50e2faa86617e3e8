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
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/perf_event.h>

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
		__atomic_fetch_add(&pc_stats->lost_blocked, 1,
				   __ATOMIC_RELAXED);
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
			pc_raise_raw(sig);
		}
		return;
	}
	if (act.sa_flags & SA_RESETHAND) {
		/* the kernel puts back the default and keeps flags and mask */
		struct sigaction dfl = act;

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

#if defined(__x86_64__)
/* Calls that a handler without SA_RESTART cuts short with EINTR, and
 * that the kernel restarts for one with it (-ERESTARTSYS): not those
 * that may restart whatever the flags (-ERESTARTNOINTR: fork, exec,
 * futex's requeue), nor those that fail with EINTR whatever they say
 * (nanosleep, poll, select, msgrcv: the kernel already did). 1 for a
 * call on a descriptor (its first argument), 2 for another. */
static int
restarts_for_sa_restart_only(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_readv: case SYS_writev:
	case SYS_pread64: case SYS_pwrite64: case SYS_preadv: case SYS_pwritev:
	case SYS_recvfrom: case SYS_sendto: case SYS_recvmsg: case SYS_sendmsg:
	case SYS_accept: case SYS_accept4: case SYS_connect:
		return 1;
	/* locks: FUSE's restart (fuse_setlk), and fstatfs there would ask
	 * the daemon */
	case SYS_flock: case SYS_fcntl:
	case SYS_wait4: case SYS_waitid: case SYS_open: case SYS_openat:
		return 2;
	}
	return 0;
}

/* A descriptor on the kernel's own file systems, whose reads and writes
 * may restart themselves while a lock is taken (sysfs' device hotplug,
 * net-sysfs' rtnl_trylock, sysctls): -ERESTARTNOINTR, whatever the flags. */
static int
on_kernels_own_fs(long fd)
{
	struct statfs f;

	if (syscall(SYS_fstatfs, fd, &f))
		return 1;
	switch ((unsigned long)f.f_type) {
	case SYSFS_MAGIC: case PROC_SUPER_MAGIC: case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC: case DEBUGFS_MAGIC: case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC: case BPF_FS_MAGIC:
		return 1;
	}
	return 0;
}

/* Signals the kernel drops, unhandled, at delivery. */
static int
ignored_by_default(int sig)
{
	return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG ||
	       sig == SIGWINCH;
}

/*
 * A sample that arrives with one of the program's signals keeps that
 * signal's EINTR. A thread's CPU-time timer expires on a tick, and where
 * the tick finds the thread in the kernel, the signal is made only when
 * the thread next leaves it: when another signal wakes it from a call,
 * ours is made then, and, being the thread's own, is delivered first.
 * Its SA_RESTART sets the call to restart, and the program's handler,
 * delivered next, no longer turns it into EINTR: its read() goes on
 * waiting (3 % of such wake-ups here, with or without libpc, for any
 * SA_RESTART thread timer).
 *
 * Every other signal is blocked while this handler runs, so the
 * program's is still pending. Where the call was set to restart (a
 * 64-bit syscall, the pc back on its instruction, rcx and r11 the return
 * address and flags the instruction left), it is a call that restarts
 * only for SA_RESTART, and every signal the thread will take next is
 * handled without it (whichever the kernel takes first, the call ends
 * with EINTR), the first is taken here, so that no other thread can take
 * it after the call was ended for it; the call ends with EINTR, and the
 * program's handler runs as the kernel would have run it. Left: a tick
 * that stops the thread in user mode exactly on a syscall instruction
 * whose rcx and r11 still hold what the same instruction left last time,
 * with such a signal already pending, ends a call that never began.
 * Not done: where a handler of the program's restarts calls and blocks
 * the sampling signal (sigfillset, or SA_ONSTACK, which adds it), a
 * sample it held comes out of its sigreturn on a call set to restart,
 * which no register tells from ours, and ending it would be an EINTR
 * plain never gives; nor under FRED (Linux 6.9 and newer Intel CPUs),
 * whose syscall leaves rcx and r11 alone. AS-safe.
 */
/* The first signal the thread will take on leaving this handler, where
 * every one it will take is the program's, handled without SA_RESTART
 * (act: its action); 0 where not. AS-safe. */
static int
first_without_restart(const ucontext_t *uc, struct sigaction *first_act)
{
	struct sigaction act;
	sigset_t pending;
	int first = 0;

	if (sigpending(&pending))
		return 0;
	for (int s = 1; s < NSIG; s++) {
		if (sigismember(&pending, s) != 1 ||
		    sigismember(&uc->uc_sigmask, s) == 1)
			continue;
		/* libpc's own would not be there without it */
		if (pc->owned[s] == PC_OWN_SAMPLING ||
		    pc->owned[s] == PC_OWN_SNAPSHOT)
			continue;
		/* one that ends the process (libpc holds it for that) */
		if (pc->owned[s] || pc_real_sigaction(s, NULL, &act))
			return 0;
		if (!(act.sa_flags & SA_SIGINFO) && act.sa_handler == SIG_IGN)
			continue;
		if (!(act.sa_flags & SA_SIGINFO) && act.sa_handler == SIG_DFL) {
			if (ignored_by_default(s))
				continue;
			return 0;	/* it stops or ends the process */
		}
		if (act.sa_flags & SA_RESTART)
			return 0;
		if (!first) {
			first = s;
			*first_act = act;
		}
	}
	return first;
}

/* Signal sig's delivery, as the kernel makes it: SA_RESETHAND first,
 * then the handler under the interrupted mask, its sa_mask and itself
 * (unless SA_NODEFER); samples wait for it to return. AS-safe. */
static void
deliver_as_kernel(int sig, siginfo_t *si, ucontext_t *uc,
		  const struct sigaction *act)
{
	struct sigaction dfl;
	sigset_t mask, entry;

	if (act->sa_flags & SA_RESETHAND) {
		/* the kernel puts back the default and keeps flags and mask */
		dfl = *act;
		dfl.sa_handler = SIG_DFL;
		pc_real_sigaction(sig, &dfl, NULL);
	}
	mask = uc->uc_sigmask;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&act->sa_mask, s) == 1)
			sigaddset(&mask, s);
	if (!(act->sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	sigaddset(&mask, __atomic_load_n(&pc_sampling_sig, __ATOMIC_RELAXED));
	pc_real_sigmask(SIG_SETMASK, &mask, &entry);
	if (act->sa_flags & SA_SIGINFO)
		act->sa_sigaction(sig, si, uc);
	else
		act->sa_handler(sig);
	pc_real_sigmask(SIG_SETMASK, &entry, NULL);
}

static void
keep_programs_eintr(ucontext_t *uc)
{
	greg_t *r = uc->uc_mcontext.gregs;
	struct sigaction act;
	struct timespec zero = { 0, 0 };
	sigset_t one;
	siginfo_t si;
	int first, kind;

	if ((r[REG_CSGSFS] & 0xffff) != 0x33 || r[REG_RIP] + 2 != r[REG_RCX] ||
	    r[REG_R11] != r[REG_EFL] ||
	    !(kind = restarts_for_sa_restart_only((long)r[REG_RAX])) ||
	    pc_signals_restart_masks_sampling() ||
	    !(first = first_without_restart(uc, &act)) ||
	    (kind == 1 && on_kernels_own_fs((long)r[REG_RDI])))
		return;
	sigemptyset(&one);
	sigaddset(&one, first);
	if (syscall(SYS_rt_sigtimedwait, &one, &si, &zero,
		    (size_t)(_NSIG / 8)) != first)
		return;		/* another thread took it */
	r[REG_RAX] = -EINTR;
	r[REG_RIP] += 2;
	__atomic_fetch_add(&pc_stats->eintr_kept, 1, __ATOMIC_RELAXED);
	/* back to this thread, for the kernel to deliver when this handler
	 * returns: on the handler's own stack, with its frame, mask and
	 * flags, seen by a tracer; a timer's signal cannot be queued again
	 * (the kernel drops one it did not make), so it is delivered here */
	if (si.si_code == SI_TIMER ||
	    syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid),
		    first, &si))
		deliver_as_kernel(first, &si, uc, &act);
}
#else
static void
keep_programs_eintr(ucontext_t *uc)
{
	(void)uc;
}
#endif

/* A POLL signal's descriptor that is no thread's event now: closed
 * (EBADF), or a perf event this thread neither holds nor retired last.
 * Such a signal is libpc's, late: forwarded, its default action killed a
 * python3 client (one that starts a server with subprocess.Popen) under
 * --clock wall after its profile was written, with "1 foreign signals
 * passed on": twice in CI, 1 run in 8 by hand, then 0 in 34 with the
 * old handler. Which event sent it was not traced (a vfork child's exec
 * replacing one under the thread-local words it shares is a guess). A
 * program's own perf events aimed at libpc's signal are not told apart.
 * AS-safe (one ioctl); errno changed. */
static int
stale_event(int fd)
{
	uint64_t id;

	return fd >= 0 &&
	       (ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0 || errno == EBADF);
}

static void
signal_from_handler(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	uint32_t weight;
	int perf_fd = -1, ours;

	/* this thread's view of the program's mask, after a move */
	pc_signals_sync_from_handler(ucv);
	if (si->si_code >= POLL_IN && si->si_code <= POLL_HUP &&
	    si->si_fd >= 0 &&
	    si->si_fd == (perf_fd = pc_thread_perf_fd_from_handler())) {
		/* a task-clock overflow: the periods since the last one; the
		 * event waits for this sample (timer.c says why) */
		if (pc_sandboxed())
			goto out;	/* not granted the next: it stops */
		weight = pc_thread_perf_weight_from_handler(perf_fd, &ours);
		if (weight)
			pc_sample_from_handler(ucv, weight);
		pc_thread_perf_resume_from_handler(perf_fd, ours);
		if (weight) {
			keep_programs_eintr(ucv);
			pc_waits_deliver_from_handler(ucv);
		}
		goto out;
	} else if (si->si_code >= POLL_IN && si->si_code <= POLL_HUP &&
		   si->si_fd >= 0 &&
		   si->si_fd == pc_thread_perf_retired_from_handler()) {
		goto out;	/* from this thread's event, stopped since */
	} else if (si->si_code == SI_TIMER &&
		   si->si_value.sival_ptr == &pc_timer_tag) {
		/* expirations the kernel folded into this one signal each
		 * stand for an interval of CPU time spent here: count them,
		 * or seconds shrink to the kernel tick's rate */
		if (pc_sandboxed())
			goto out;	/* no system call in a sandbox */
		weight =
			1 + (si->si_overrun > 0 ? (uint32_t)si->si_overrun : 0);
	} else if (si->si_code >= POLL_IN && si->si_code <= POLL_HUP &&
		   stale_event(si->si_fd)) {
		goto out;	/* an event of libpc's gone since */
	} else {
		forward_from_handler(sig, si, ucv);
		goto out;
	}
	pc_sample_from_handler(ucv, weight);
	keep_programs_eintr(ucv);
	pc_waits_deliver_from_handler(ucv);
out:
	errno = saved;
}


struct sigaction pc_sample_action;

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
	/* the same, on the next signal, when libpc moves (signals.c) */
	pc_sample_action = sa;
	__atomic_store_n(&pc_sampling_sig, pc_cfg->sig, __ATOMIC_SEQ_CST);
	if (pc_real_sigaction(pc_cfg->sig, &sa, &old))
		return -errno;
	/* the program's action goes through the seqlock: the kernel's copy
	 * into it may not be read half-way by a signal that comes at once */
	pc_prog_action_store(pc_cfg->sig, &old);
	pc_signals_take_sampling();
	pc->owned[pc_cfg->sig] = PC_OWN_SAMPLING;
	return 0;
}
