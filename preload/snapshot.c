/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Snapshots (PC_SNAPSHOT_SIGNAL, PC_SNAPSHOT_INTERVAL) are written by a
 * thread of libpc's own, so that no thread of the program is ever
 * signalled for one: a signal that ran a handler in a thread blocked in
 * nanosleep, poll or select would make the call fail with EINTR. The
 * interval is the thread's own sleep. The snapshot signal is blocked for
 * real in every thread of the program (signals.c keeps the program's view
 * of its mask), so the kernel leaves it pending for this thread, which
 * takes it with sigtimedwait. Where the program installed a handler of
 * its own for that signal, the thread runs it, with the program's mask.
 * The thread is started with the real pthread_create and has no timer:
 * the snapshots' cost is libpc's, not the program's profile.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "pc.h"
#include "banned.h"

static int started;
static uint32_t snapshot_tid;

uint32_t
pc_snapshot_tid(void)
{
	return __atomic_load_n(&snapshot_tid, __ATOMIC_RELAXED);
}

/* A stray snapshot signal, in a thread that ran before libpc's
 * constructor and so does not block it. AS-safe. */
static void
snapshot_from_handler(int sig)
{
	(void)sig;
	pc_snapshot();
}

static void
add_ns(struct timespec *t, long ns)
{
	t->tv_nsec += ns % 1000000000L;
	t->tv_sec += ns / 1000000000L + t->tv_nsec / 1000000000L;
	t->tv_nsec %= 1000000000L;
}

/* The program's own handler for the snapshot signal, run here. */
static int
run_programs_handler(int sig, siginfo_t *si)
{
	struct sigaction act;

	if (pc_prog_action_from_handler(sig, &act))
		return 0;
	if (!(act.sa_flags & SA_SIGINFO) &&
	    (act.sa_handler == SIG_DFL || act.sa_handler == SIG_IGN))
		return act.sa_handler == SIG_IGN;
	if (act.sa_flags & SA_RESETHAND) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		pc_prog_action_store(sig, &dfl);
	}
	/* every signal stays blocked in this thread while it runs: more
	 * than the program's sa_mask, and nothing the program can tell */
	if (act.sa_flags & SA_SIGINFO)
		act.sa_sigaction(sig, si, NULL);
	else
		act.sa_handler(sig);
	return 1;
}

/* Set to end the thread (pc_snapshot_pause); bumped to wake it. */
static uint32_t stop_word, wake_word;

/*
 * Until when the thread waits: the next snapshot, and while the main
 * thread has called pthread_exit, a second at most, for pc_own_watch's
 * look at threads libpc did not see start.
 */
static void
wait_until(struct timespec *at, const struct timespec *next, long every)
{
	if (every)
		*at = *next;
	else {
		clock_gettime(CLOCK_MONOTONIC, at);
		at->tv_sec += 3600;
	}
	if (pc_own_main_gone()) {
		struct timespec soon;

		clock_gettime(CLOCK_MONOTONIC, &soon);
		soon.tv_sec++;
		if (soon.tv_sec < at->tv_sec ||
		    (soon.tv_sec == at->tv_sec && soon.tv_nsec < at->tv_nsec))
			*at = soon;
	}
}

/* The snapshot signal, or a wake-up, or the time of at; 1 for the
 * signal, with the program's own handler run where it has one. */
static int
wait_signal(int sig, const struct timespec *at, const sigset_t *set)
{
	struct timespec now, left;
	siginfo_t si;

	clock_gettime(CLOCK_MONOTONIC, &now);
	left.tv_sec = at->tv_sec - now.tv_sec;
	left.tv_nsec = at->tv_nsec - now.tv_nsec;
	if (left.tv_nsec < 0) {
		left.tv_sec--;
		left.tv_nsec += 1000000000L;
	}
	if (left.tv_sec < 0)
		return 0;
	/* the raw call: libpc's own sigtimedwait hides this signal */
	if (syscall(SYS_rt_sigtimedwait, set, &si, &left,
		    (size_t)(_NSIG / 8)) != sig)
		return 0;
	/* a wake-up of libpc's own (pc_snapshot_wake), sent to this thread */
	if (si.si_code == SI_TKILL && si.si_pid == getpid())
		return 0;
	if (!run_programs_handler(sig, &si))
		pc_snapshot();
	return 1;
}

static int
past(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec ||
	       (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static void *
snapshot_thread(void *arg)
{
	const long every = pc_cfg->snapshot_interval_ms * 1000000L;
	const int sig = pc_cfg->snapshot_sig;
	struct timespec next, at;
	sigset_t set;

	(void)arg;
	prctl(PR_SET_NAME, "pc-snapshot", 0, 0, 0);
	/* a descriptor table of its own, empty, as the grower's: the files
	 * a snapshot opens never take a number that a thread of the
	 * program's expects from its own open (3 of 160,000 reopens of 0
	 * got another number at a snapshot every 10 ms), and no copy of the
	 * program's holds a pipe of its open */
	if (!syscall(SYS_unshare, CLONE_FILES))
		syscall(SYS_close_range, 0U, ~0U, 0U);
	/* the id before the first look at the stop word, and a pause's stop
	 * before its look at the id (both seq_cst): a pause that finds no id
	 * yet is seen by the loop's first look */
	__atomic_store_n(&snapshot_tid, (uint32_t)syscall(SYS_gettid),
			 __ATOMIC_SEQ_CST);
	sigemptyset(&set);
	if (sig)
		sigaddset(&set, sig);
	clock_gettime(CLOCK_MONOTONIC, &next);
	add_ns(&next, every);
	for (;;) {
		/* the word before the stop: a pause that stops after this
		 * load changes the word, and the wait below returns at once */
		uint32_t w = __atomic_load_n(&wake_word, __ATOMIC_ACQUIRE);

		if (__atomic_load_n(&stop_word, __ATOMIC_SEQ_CST))
			break;
		pc_own_watch();
		if (every && past(&next)) {
			pc_snapshot();
			add_ns(&next, every);
			continue;
		}
		wait_until(&at, &next, every);
		if (sig)
			wait_signal(sig, &at, &set);
		else
			/* FUTEX_WAIT_BITSET's timeout is absolute, on
			 * CLOCK_MONOTONIC; a wake-up changes the word */
			syscall(SYS_futex, &wake_word,
				FUTEX_WAIT_BITSET_PRIVATE, w, &at, NULL,
				FUTEX_BITSET_MATCH_ANY);
	}
	pc_own_leave();
	return NULL;
}

static pthread_t thread;

static void
start_thread(void)
{
	/* joinable: pc_snapshot_pause joins it */
	if (pc_own_thread(&thread, 1, snapshot_thread))
		pc_say("cannot start the snapshot thread; no snapshots", "",
		       "");
	else
		started = 1;
}

/* A fork child has no thread of libpc's: start it again. */
static void
forked(void)
{
	if (!started || !pc_on())
		return;
	stop_word = 0;
	snapshot_tid = 0;
	start_thread();
}

void
pc_snapshot_wake(void)
{
	uint32_t tid = __atomic_load_n(&snapshot_tid, __ATOMIC_SEQ_CST);

	if (!started || getpid() != pc->pid)
		return;
	__atomic_add_fetch(&wake_word, 1, __ATOMIC_RELEASE);
	if (!pc_cfg->snapshot_sig)
		syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
	else if (tid)
		syscall(SYS_tgkill, getpid(), tid, pc_cfg->snapshot_sig);
}

int
pc_snapshot_pause(void)
{
	/* a vfork child shares this memory but not the thread: leave it */
	if (!started || getpid() != pc->pid)
		return 0;
	__atomic_store_n(&stop_word, 1, __ATOMIC_SEQ_CST);
	pc_snapshot_wake();
	pthread_join(thread, NULL);
	started = 0;
	/* its id, which it wrote before it could stop, until it is gone */
	pc_own_gone(__atomic_load_n(&snapshot_tid, __ATOMIC_SEQ_CST));
	__atomic_store_n(&snapshot_tid, 0, __ATOMIC_RELAXED);
	return 1;
}

void
pc_snapshot_resume(void)
{
	__atomic_store_n(&stop_word, 0, __ATOMIC_RELEASE);
	start_thread();
}

void
pc_snapshots_start(void)
{
	struct sigaction sa, old;
	int sig = pc_cfg->snapshot_sig;

	if (!sig && !pc_cfg->snapshot_interval_ms)
		return;
	if (sig) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = snapshot_from_handler;
		sa.sa_flags = SA_RESTART | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		if (pc_real_sigaction(sig, &sa, &old) == 0) {
			pc_prog_action_store(sig, &old);
			pc->owned[sig] = PC_OWN_SNAPSHOT;
			pc_signals_take_snapshot();
		}
	}
	pc_own_waker(pc_snapshot_wake);
	start_thread();
	pthread_atfork(NULL, NULL, forked);
}
