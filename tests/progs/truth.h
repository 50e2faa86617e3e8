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

/* About 100 microseconds of integer work per unit that cannot be folded. */
#define SPIN_UNIT 150000

/* always_inline: at -O0 too, the work is done inside the caller */
static inline __attribute__((always_inline)) uint64_t
spin(uint64_t x, long n)
{
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

#endif
