/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wall-clock sampler (PC_CLOCK=wall): exact totals, sampled
 * attribution. A thread that runs is sampled by its CPU-time timer as
 * always; a thread that waits is never signalled, because a handler that
 * runs in a thread blocked in nanosleep, poll, select or epoll_wait makes
 * the call fail with EINTR whatever SA_RESTART says. Instead a thread of
 * libpc's looks at every thread from the outside, every round, PC_WALL_HZ
 * rounds a second (100 by default) at jittered intervals, so that no round
 * keeps step with a program's own period (wall_acct.c does the looks):
 *  - /proc/self/task/TID/schedstat gives, exactly, the thread's time on
 *    the CPU and its time waiting on a run queue since the last look; the
 *    rest of the interval was off the CPU. So a thread's CPU, run-queue
 *    and off-CPU time add up to its life by construction, at any number of
 *    threads: every thread is accounted every round (3 to 10 us a thread).
 *  - A thread not switched in since its last look is where it was: its
 *    time goes to the same wait, with nothing more read. One that ran is
 *    read again (/proc/self/task/TID/syscall): a call, its arguments, sp
 *    and pc the same as before are the same wait, whose stack is reused.
 *    A thread found running (or a CPU's wait: the same) keeps its time
 *    for the next wait found; one found in another wait gives half the
 *    interval to each, in a call it times itself all to the last wait.
 *  - Run-queue time is charged once, to what the thread was about to run:
 *    the wait it woke from (the call itself while it is still in a disk
 *    wait), or where it was preempted (its last CPU sample).
 *  - fsync and fdatasync are timed by the thread that calls them
 *    (wall_io.c): the kernel shows a thread inside them as running a
 *    third of the time, so their time off the CPU goes to the call
 *    exactly, not by sampling.
 *  - Off-CPU time is counted at once under the call alone, and moved
 *    under the thread's stack once it is walked (wall_unwind.c, 0.1 to 3
 *    ms a walk). Walks are what the budget is spent on: each round walks
 *    blocked threads in waits not yet walked, picked at random weighted
 *    by their time not yet under a stack, while the bucket holds any.
 *  - A thread's start and end are told by libpc's own thread start and
 *    exit paths (wall_events.c), so its first and last intervals are
 *    counted to the nanosecond; a thread that ends some other way is
 *    counted to halfway since its last look, and one still listed after
 *    its exit hook is looked at until it is gone (wall_round.c). At
 *    the end of the process (pc_finish) a last round counts every
 *    thread up to then.
 *
 * The sampler measures its own CPU time and keeps it under 1 % of one
 * CPU (PC_WALL_BUDGET), as a bucket: 1 % of the wall time, and 10 ms at
 * the start for libunwind's load and the first walks; its looks, walks and
 * wake-ups (30 to 300 us each on a VM) come out of it. A round waits until
 * the bucket holds it and a last round, and the sampler sleeps until it
 * will. With thousands of threads rounds are spaced out (1,000 threads:
 * about one a second; 10,000 in a short run: the last only): each
 * thread's totals stay exact, only where its time went is seen less often.
 * The summary and the stacks file say the rate at which a thread was
 * looked at, on average over the run.
 *
 * This thread is not the handler's: it reads files and may allocate. It
 * is started with every signal blocked and no CPU timer, so it appears
 * neither in the program's signals nor in the profile.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "pc.h"
#include "wall.h"

/* sorted by tid; in tables that grow with the threads (wall_mem.c) */
static struct pc_wthread *cur, *nxt;
static size_t ncur;
static int started;
static pthread_t thread;
static uint32_t my_tid;

static int first_round = 1;	/* no round has run yet */

static uint64_t last_round;	/* when the last round began (or libpc did) */
static pthread_mutex_t round_lock = PTHREAD_MUTEX_INITIALIZER;	/* held for a round */
static uint32_t stop_word;	/* 1: the thread is to end (pc_wall_pause) */
static uint64_t cpu_before;	/* CPU of the sampler's earlier threads */
static uint64_t looks_ns;	/* the last round's CPU, walks apart */
static uint64_t firsts_ns;	/* of which its first looks' */
static int afford(size_t left);
static double walk_ns = 300e3;	/* a walk's CPU, lately */
static double wake_ns = 100e3;	/* a wake-up's CPU, lately */

/* The listed threads nxt[0..n) given what the last round knew of them. */
static void
carry_over(size_t n, uint64_t now)
{
	/* a thread not there at the last round began, on average, halfway
	 * since (its start, when libpc saw it, says when); at the first, the
	 * threads are as old as libpc */
	uint64_t born = first_round ? last_round : last_round + (now - last_round) / 2;

	for (size_t i = 0; i < ncur; i++)
		cur[i].listed = 0;
	for (size_t i = 0; i < n; i++) {
		struct pc_wthread *old = pc_wall_find(cur, ncur, nxt[i].tid);

		if (old) {
			nxt[i] = *old;
			old->listed = 1;
		} else if ((nxt[i].seen_ns = pc_wall_begun(nxt[i].tid)) != 0) {
			nxt[i].told = 1;
		} else {
			/* the first round may come late: threads other than
			 * the main one may have started since libpc did */
			nxt[i].seen_ns = born;
			nxt[i].guessed = !pc_wall_base_give(&nxt[i]);
			/* never the main thread, whose start is libpc's */
			nxt[i].young = nxt[i].tid != (uint32_t)getpid();
		}
		nxt[i].listed = 1;
	}
}

/* Time the stacks table had no room for: its grower, woken, makes room
 * (10,000 threads' first waits at once fill its first slots): 400 ms at
 * most; what is left then is lost, and said to be. */
static void
place(size_t n)
{
	for (int k = 0; k < 200 && pc_wall_unplaced(); k++) {
		struct timespec t = { 0, 2000000 };

		nanosleep(&t, NULL);
		pc_wall_place(nxt, n);
		pc_wall_place(cur, ncur);
	}
	if (pc_wall_unplaced())
		pc_wall_count(GMON_WALL_DROPPED, 1);
}

/*
 * One round: the threads listed, their starts and ends since the last,
 * and each looked at; then walks of the blocked ones while more() allows.
 * Returns the threads listed.
 */
static size_t
round_all(int (*more)(void), uint64_t *seed, int how)
{
	uint64_t now = pc_clock_ns(CLOCK_MONOTONIC), c0 = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t in_walks = 0, in_first = 0;
	struct pc_wthread *t;
	size_t n, walks = 0;
	int dir;

	/* the first round waits for a thread of libpc's being started and
	 * for libpc's start-up to end: it counts threads from libpc's start */
	if ((first_round && (pc_own_starting() || !pc_wall_base_ready())) ||
	    (dir = pc_wall_task_dir()) < 0)
		return 0;
	pc_wall_acct_dir(dir);
	n = pc_wall_list(&nxt, cur, ncur, my_tid, first_round || how);
	/* what glibc's last thread does, which this one kept it from */
	if (pc_wall_program_ended(nxt, n))
		pc_own_end_process();
	carry_over(n, now);
	first_round = 0;
	last_round = now;
	pc_wall_events(nxt, n, cur, ncur);
	/* gone, its end not told */
	for (size_t i = 0; i < ncur; i++)
		if (!cur[i].listed) {
			pc_wall_ended(&cur[i], now, ~0ULL);
			pc_wall_forget(&cur[i]);
		}
	walks = pc_wall_looks(nxt, n, how, more, afford, &in_walks, &in_first);
	looks_ns = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0 - in_walks;
	firsts_ns = in_first;
	place(n);
	if ((walks += pc_wall_walks(nxt, n, more, seed)))
		walk_ns = walk_ns * 0.7 + 0.3 * (double)(pc_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0 -
							  looks_ns) / (double)walks;
	pc_wall_most(GMON_WALL_THREADS, n);
	for (size_t i = 0; how & PC_LOOK_LAST && i < n; i++)
		if (nxt[i].state != PC_W_ENDED)
			pc_wall_settle(&nxt[i].cur), pc_wall_settle(&nxt[i].prev),
				pc_wall_settle(&nxt[i].iow);
	t = cur;
	cur = nxt;
	nxt = t;
	ncur = n;
	pc_wall_count(GMON_WALL_TICKS, 1);
	return n;
}

/*
 * Descriptors of its own: the files this thread opens must never take a
 * number the program is about to get (a daemon that closes 0, 1 and 2 and
 * opens /dev/null expects 0), nor be closed or replaced by the program's
 * close or dup2. The copy of the program's table unshare makes is closed
 * at once, so that no file of the program's is held open here (a pipe's
 * write end would keep its reader from seeing the end). 0 or -1.
 */
static int
own_descriptors(void)
{
	return syscall(SYS_unshare, CLONE_FILES) || syscall(SYS_close_range, 0U, ~0U, 0U) ? -1 : 0;
}

/* Sleep until *at, or until pc_wall_pause or pc_wall_final wakes it, or
 * libpc's start-up ends (the first round, due then: pc_wall_start). */
static void
sleep_until(uint64_t at_ns)
{
	uint32_t w = pc_wall_wake_seq();
	struct timespec at = { (time_t)(at_ns / 1000000000u), (long)(at_ns % 1000000000u) };
	int before = first_round && !pc_wall_base_ready();

	while (!__atomic_load_n(&stop_word, __ATOMIC_ACQUIRE) && pc_wall_final_state() != 1 &&
	       !(before && pc_wall_base_ready()) && !pc_wall_wait(w, &at))
		w = pc_wall_wake_seq();
}

/*
 * libunwind, loaded by pc_wall_start, set up in the sampler's thread, in
 * its own table: its set-up opens a pipe it keeps, which would be two
 * descriptors of the program's for good (wall_unwind.c). Under the
 * round's lock: a fork waits for it to be done. Then the thread that
 * started this one goes on (ready_word).
 */
static uint32_t ready_word;

static void
ready(void)
{
	__atomic_store_n(&ready_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &ready_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void
init_unwinder(void)
{
	pthread_mutex_lock(&round_lock);
	pc_wall_unwind_init();
	pthread_mutex_unlock(&round_lock);
	ready();
}

/*
 * The budget, as a bucket of CPU nanoseconds: it fills at budget ns a ns
 * of wall time, up to half a second's worth beyond what two rounds cost,
 * and every ns of this thread's CPU comes out of it. A look at a thread
 * costs per_thread (learned; 3 to 10 us here), a first look NEW_NS (its
 * name, its syscall line, its schedstat opened). A round waits until the
 * bucket holds what it costs and what a last round would; walks go on
 * while the bucket holds any.
 */
#define START_NS	10e6	/* libunwind's load, the first walks */
#define NEW_NS		pc_wall_first_ns(0)	/* learned, wall_round.c */
#define ROUND_NS	20e3
#define EVENT_NS	3e3
static double budget, bucket, per_thread = 3000;
static uint64_t spent_at;	/* this thread's CPU when the bucket was last charged */
static int started_once;

/* A round of n threads, known of them followed already. */
static double
round_cost(size_t n, size_t known)
{
	return per_thread * (double)known + NEW_NS * (double)(n > known ? n - known : 0) +
		ROUND_NS;
}

/* What the next round costs, about: a look at each thread followed, and
 * the starts and ends told since (a thread that starts and ends between
 * two rounds costs no look; one that starts and stays costs its first
 * look, NEW_NS, which the bucket then pays back: counting every event as
 * one starved the rounds of a server that starts a thread a request). */
static double
next_round_cost(void)
{
	return round_cost(ncur, ncur) + EVENT_NS * (double)pc_wall_events_waiting() +
		NEW_NS * (double)pc_wall_events_staying();
}

static void
bucket_spend(void)
{
	uint64_t c = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID);

	bucket -= (double)(c - spent_at);
	spent_at = c;
	__atomic_store_n(&pc_stats->wall_cpu_ns, cpu_before + c, __ATOMIC_RELAXED);
}

/* A walk while the bucket is not deeper in debt than DEBT_NS: a wait's
 * stack can be walked only while the thread is in it, and the rounds
 * after a walk wait the longer until the debt is paid. Waiting for the
 * bucket to hold a walk's cost, 0.1 to 3 ms, left waits of 0.4 s
 * unwalked; walking only while it held any still left a fifth of a
 * frame-pointer program's wait time (nine waits of 0.12 s, a walk each)
 * under the call alone, as a walk costs 0.2 to 1.5 ms here and the bucket
 * fills by 10 us a ms. */
#define DEBT_NS		10e6
static int
may_walk(void)
{
	bucket_spend();
	return bucket > -DEBT_NS;
}

/* The last round's next 8 first looks in full, where the bucket holds
 * them and a look from the counters alone at each thread left. */
static int
afford(size_t left)
{
	bucket_spend();
	return bucket > 8 * pc_wall_first_ns(0) +
			(double)left * pc_wall_first_ns(1);
}

/* One round, under the lock; its cost a thread learned. */
static size_t
timed_round(uint64_t *seed, int last)
{
	size_t n, known = ncur;
	double each;

	pthread_mutex_lock(&round_lock);
	/* the last round, short of budget, reads the counters alone */
	n = round_all(may_walk, seed,
		      !last ? 0 : bucket < round_cost(ncur, ncur) ?
		      PC_LOOK_LAST | PC_LOOK_CHEAP : PC_LOOK_LAST);
	pthread_mutex_unlock(&round_lock);
	bucket_spend();
	/* learned from rounds of threads mostly known already */
	known = known < n ? known : n;
	if (known && known >= n / 2) {
		each = ((double)looks_ns - (double)firsts_ns - ROUND_NS) / (double)known;
		per_thread = per_thread * 0.8 + 0.2 * (each > 1000 ? each : 1000);
	}
	return n;
}

/* The end of the process: a last round, whatever the bucket holds. */
static void
last_round_asked(uint64_t *seed)
{
	pc_wall_acct_ending(pc_wall_final_tid());
	if (pc_on())
		timed_round(seed, 1);
	pc_wall_final_done();
}

static void
fill_bucket(uint64_t *prev, double cap)
{
	uint64_t now = pc_clock_ns(CLOCK_MONOTONIC);

	bucket += budget * (double)(now - *prev);
	*prev = now;
	if (bucket > cap + budget * 5e8)
		bucket = cap + budget * 5e8;
}

/* The sampler's schedule: when it wakes next, its random state, when the
 * bucket was last filled, when it started, its rounds. */
struct sched {
	uint64_t base, next, seed, filled, t0;
	double rounds;
	uint64_t moved;		/* pc_wall_moved at the last round */
	unsigned quiet;		/* rounds since one found a thread moved */
	int gap;		/* the next wake-up is a round's, owed or not */
};
#define QUIET		5

/* interval, jittered uniformly within [interval/2, 3*interval/2): the
 * mean stays, and no round keeps step with a program's own period */
static uint64_t
jittered(struct sched *z, uint64_t interval)
{
	return interval / 2 + pc_wall_random(&z->seed) % (interval + 1);
}

/*
 * A round comes GAP_NS after the last at most, whatever walks owe the
 * bucket, where a round costs at most 3/4 of what the budget gives in
 * that time (a few threads; a wake-up may cost 300 us): a frame-pointer build's walks, 0.2 to 1.5 ms
 * each, left the bucket in debt for some hundreds of ms, and a wait of
 * 0.12 s between two rounds was never seen, its time given to the next
 * (3 runs of 8 of its known waits at the default budget). Such rounds
 * take 3/4 of the budget at most; the walks keep the rest.
 */
#define GAP_NS		50000000u
static int
few_threads(void)
{
	/* the threads started since count: 1,000 started after a round of
	 * one thread made a round due that cost 10 ms (34 ms in 1.1 s) */
	return next_round_cost() + wake_ns <= budget * GAP_NS * 0.75;
}

/* When to wake for the next round: when the bucket will hold owed ns
 * more, not sooner than base, not later than GAP_NS for a few threads;
 * jittered. */
static uint64_t
until_round(struct sched *z, double owed, uint64_t base)
{
	uint64_t t = owed / budget < (double)base ? base : (uint64_t)(owed / budget);

	z->gap = t > GAP_NS && few_threads();
	return jittered(z, z->gap ? GAP_NS : t);
}

/* A wake-up: a round if the bucket holds enough, and when to wake next. */
static void
woken(struct sched *z)
{
	/* this round and a last one */
	double need = 2 * next_round_cost();
	uint64_t now, base;
	int last;

	fill_bucket(&z->filled, need);
	bucket_spend();
	if ((last = pc_wall_final_state() == 1)) {
		last_round_asked(&z->seed);
		z->rounds += 1;
	}
	now = pc_clock_ns(CLOCK_MONOTONIC);
	/* the rate at which a thread is looked at, on average over the run
	 * (at its end whatever its length: a run of 10,000 threads whose
	 * only round was the last said nothing of it) */
	if ((now - z->t0 > 100000000u || last) && now > z->t0)
		pc_wall_set(GMON_WALL_HZ_LOW, (uint64_t)(z->rounds / (double)(now - z->t0) * 1e9 + 0.5));
	/* behind (a busy machine): start again from now */
	if (now > z->next + z->base)
		z->next = now;
	if (!pc_on() || pc_wall_final_state()) {
		z->next = now + z->base;
		return;
	}
	/* a round and the last one paid for (the wake-up is), or wait until
	 * the bucket holds them and the next wake-up; but a round that is
	 * due (below) */
	if (bucket < need && !(z->gap && few_threads())) {
		z->next = now + until_round(z, need + wake_ns - bucket, z->base);
		return;
	}
	timed_round(&z->seed, 0);
	/* every thread where it was for QUIET rounds (all asleep): rounds
	 * half as often until one moves (a wake-up costs 60 to 90 us here,
	 * more than a look); totals as exact, a new wait seen later by a
	 * base interval at most */
	z->quiet = pc_wall_moved() == z->moved ? z->quiet + 1 : 0;
	z->moved = pc_wall_moved();
	base = z->quiet >= QUIET ? 2 * z->base : z->base;
	/* the next wake-up when the bucket will hold a round and the wake-up
	 * itself (30 to 300 us here): one that finds too little costs as
	 * much again; never sooner than the rate asked for */
	need = round_cost(ncur, ncur) * 2 + wake_ns;
	now = pc_clock_ns(CLOCK_MONOTONIC);
	z->next = now + until_round(z, need - bucket, base);
	z->rounds += 1;
}

static void *
wall_thread(void *arg)
{
	struct sched z = { .base = 1000000000u / (uint64_t)pc_cfg->wall_hz };

	(void)arg;
	/* first: pc_wall_pause reads it once it has joined the thread */
	__atomic_store_n(&my_tid, (uint32_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	pc_wall_sampler_is(1, my_tid);
	prctl(PR_SET_NAME, "pc-wall", 0, 0, 0);
	if (own_descriptors()) {
		pc_say("cannot give the wall sampler descriptors of its own; CPU time only",
		       "", "");
		ready();
		return NULL;
	}
	budget = pc_cfg->wall_budget / 100.0;
	/* this thread's table is new: a paused sampler's descriptors are gone */
	pc_wall_forget_all(cur, ncur);
	pc_wall_task_dir_new();
	spent_at = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	/* a start: loading libunwind and the first walks, which read the
	 * programs' unwind tables, cost some 5 to 10 ms at once */
	if (!started_once++)
		bucket = START_NS;
	init_unwinder();
	z.next = z.filled = z.t0 = pc_clock_ns(CLOCK_MONOTONIC);
	z.seed = z.next ^ (uint64_t)getpid() << 32;
	for (;;) {
		uint64_t c0 = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID);

		sleep_until(z.next);
		wake_ns = wake_ns * 0.8 + 0.2 * (double)(pc_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
		if (__atomic_load_n(&stop_word, __ATOMIC_ACQUIRE)) {
			bucket_spend();
			pc_own_leave();
			return NULL;
		}
		woken(&z);
	}
	return NULL;
}

static void
start_thread(void)
{
	/* joinable: pc_wall_pause joins it */
	if (pc_own_thread(&thread, 1, wall_thread))
		pc_say("cannot start the wall-clock sampler's thread; CPU time only", "", "");
	else
		started = 1;
	pc_wall_sampler_is(started, 0);
}

/* A fork waits for a round under way to end: the child gets a copy of
 * memory in which this thread holds no lock (libunwind's caches, malloc's). */
static void
before_fork(void)
{
	if (started)
		pthread_mutex_lock(&round_lock);
}

static void
after_fork_parent(void)
{
	if (started)
		pthread_mutex_unlock(&round_lock);
}

/* A fork child has one thread, and none of libpc's: start again. */
static void
forked(void)
{
	if (!started)
		return;
	pthread_mutex_unlock(&round_lock);
	if (!pc_on())
		return;
	ncur = 0;
	my_tid = 0;
	first_round = 1;
	pc_wall_events_reset();
	pc_wall_final_reset();
	last_round = pc_clock_ns(CLOCK_MONOTONIC);
	pc_wall_reset((uint64_t)pc_cfg->wall_hz);
	start_thread();
}

/*
 * The first start waits (100 ms at most) for the thread's set-up, which
 * maps libunwind's pools: done before the program runs, it is never done
 * after the program locks its memory (mlockall with MCL_FUTURE).
 */
static void
wait_ready(void)
{
	struct timespec t = { 0, 100000000 };

	while (started && !__atomic_load_n(&ready_word, __ATOMIC_ACQUIRE) &&
	       syscall(SYS_futex, &ready_word, FUTEX_WAIT_PRIVATE, 0, &t, NULL, 0) &&
	       errno == EINTR)
		;
}

void
pc_wall_start(void)
{
	int saved = errno;

	if (!pc_cfg->clock_wall || !pc_cfg->stacks)
		return;
	pc_wall_reset((uint64_t)pc_cfg->wall_hz);
	last_round = pc_clock_ns(CLOCK_MONOTONIC);
	if (access("/proc/self/task", R_OK)) {
		pc_say("cannot read /proc/self/task; CPU time only", "", "");
		return;
	}
	if (pc_wall_mem_start(&cur, &nxt) || pc_wall_events_on()) {
		pc_say("cannot map memory for the wall sampler; CPU time only", "", "");
		return;
	}
	pc_wall_io_start();
	start_thread();
	wait_ready();
	pc_wall_base_take();
	/* the first round now, not at the sampler's next wake-up (5 to 15
	 * ms, 35 beside two CPU hogs): its first look at the program's
	 * first wait is all that says where the time before went */
	pc_wall_wake();
	pthread_atfork(before_fork, after_fork_parent, forked);
	errno = saved;
}

int
pc_wall_pause(void)
{
	char name[48];
	uint32_t tid;

	/* a vfork child shares this memory but not the thread: leave it */
	if (!started || getpid() != pc->pid)
		return 0;
	__atomic_store_n(&stop_word, 1, __ATOMIC_RELEASE);
	pc_wall_wake();
	pthread_join(thread, NULL);
	/* read after the join, which the thread's first store precedes: read
	 * before it, a pause at the top of main found no id yet, waited for
	 * nothing, and unshare(CLONE_NEWUSER) saw two threads (EINVAL, once
	 * in make check under load) */
	tid = __atomic_load_n(&my_tid, __ATOMIC_SEQ_CST);
	started = 0;
	pc_wall_sampler_is(0, 0);
	cpu_before = __atomic_load_n(&pc_stats->wall_cpu_ns, __ATOMIC_RELAXED);
	/* the kernel takes an ended thread out of its group a moment after
	 * pthread_join returns: wait for that, 100 ms at most */
	snprintf(name, sizeof(name), "/proc/self/task/%u", tid);
	for (int i = 0; tid && i < 1000 && access(name, F_OK) == 0; i++) {
		struct timespec t = { 0, 100000 };

		nanosleep(&t, NULL);
	}
	return 1;
}

void
pc_wall_resume(void)
{
	__atomic_store_n(&stop_word, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&my_tid, 0, __ATOMIC_RELAXED);
	start_thread();
}

