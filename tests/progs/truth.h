/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ground truth for the end-to-end tests: the programs measure their own
 * per-function CPU time with the thread CPU clock and print it on stdout as
 * one "truth:" line of JSON that tests/e2e compares with the profile.
 */
#ifndef PC_TRUTH_H
#define PC_TRUTH_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

static inline double
thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double
process_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Calls that are timed for the truth are timed in blocks of calls of one
 * function, not one by one, and loops that run for a time read the clock
 * once per block of work. Reading a CPU clock is a system call that brings
 * the task's runtime up to date, and on a shared CPU the scheduler (EEVDF,
 * Linux 6.6 and later) preempts the task right there once its slice is
 * spent. The task then resumes at another task's kernel tick, so the next
 * tick-driven sample falls one tick of CPU time after that call, not at a
 * random point. With a clock read around every call, CPU-time POSIX timers
 * (and gprof -pg's ITIMER_PROF) gave one of three functions 5 to 15 points
 * too much on a CPU shared with one busy process; blocks of 16 calls and
 * more left about 1 point (three.c, with `yes`, both pinned with taskset).
 * test_timers.py's test_clock_reads_on_a_shared_cpu_and_the_two_timers
 * keeps the per-call form, built as three-percall, to document it.
 */
#ifndef TRUTH_BLOCK
#define TRUTH_BLOCK 16
#endif

/*
 * Runs stmt n times and adds the thread CPU time it took to acc. A block
 * must be long against the 4 ms tick too, or the sample after a switch at
 * its start falls past its end: 16 calls of a unit (SPIN_UNIT) or more.
 */
#define TIMED_CALLS(acc, n, stmt)					\
	do {								\
		double t0_ = thread_cpu();				\
		for (long k_ = 0; k_ < (n); k_++) {			\
			stmt;						\
		}							\
		(acc) += thread_cpu() - t0_;				\
	} while (0)

#define TIMED_BLOCK(acc, stmt) TIMED_CALLS(acc, TRUTH_BLOCK, stmt)

/* Integer work that cannot be folded, per unit: about 0.25 ms of CPU on
 * the 2-core VM the tests run on (one round of three.c, its three
 * 16-call blocks of 5, 3 and 2 units, is 40 ms). */
#define SPIN_UNIT 150000

/*
 * n varied by up to 25 % either way, drawn from a sequence that is the same
 * in every run (each thread has its own, from the same seed). Work of a
 * fixed size repeats with a fixed period, and a sampling timer that fires
 * on the kernel tick can stay in phase with it for a whole run and see the
 * same part of the loop every time; real programs' work varies. truth.h's
 * spin() varies every call; spin_exact() is for the one program that is
 * periodic on purpose (three.c built -DPERIODIC) and for work varied by
 * its caller.
 */
static __thread uint64_t truth_vary_state;

static inline long
vary(long n)
{
	uint64_t r = truth_vary_state ? truth_vary_state : 0x9e3779b97f4a7c15ULL;

	/* xorshift64*: cheap, and plenty for spreading work sizes */
	r ^= r >> 12;
	r ^= r << 25;
	r ^= r >> 27;
	truth_vary_state = r;
	r *= 0x2545f4914f6cdd1dULL;
	/* 0.75 n + [0, 0.5 n] */
	return n - n / 4 + (long)((r >> 11) % (uint64_t)(n / 2 + 1));
}

/* always_inline: at -O0 too, the work is done inside the caller */
static inline __attribute__((always_inline)) uint64_t
spin_exact(uint64_t x, long n)
{
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* About n steps of work, varied from call to call (vary()). */
static inline __attribute__((always_inline)) uint64_t
spin(uint64_t x, long n)
{
	return spin_exact(x, vary(n));
}

#endif
