/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two hot loops in one function, a heavy one and a light one, and a third
 * loop whose body is an inlined helper: the test program of pcprof report
 * --lines and pcprof annotate. Each call of two_loops runs one of its
 * loops (the others get a count of 0), so that the program times each
 * loop's blocks of calls on its own (truth.h): the truth is each loop's
 * CPU time. The LOOP markers name the lines each loop's code is on; the
 * tests read them from this file. Built -DNO_INLINE, the helper is a
 * function of its own and nothing is inlined into two_loops.
 *
 * Usage: loops [SECONDS]
 */
#include <stdlib.h>

#include "truth.h"

#ifdef NO_INLINE
#define HELPER static __attribute__((noinline))
#else
#define HELPER static inline __attribute__((always_inline))
#endif

HELPER uint64_t
helper_mix(uint64_t x)
{
	x ^= x >> 29;					/* HELPER BEGIN */
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 32;					/* HELPER END */
	return x;
}

__attribute__((noinline)) uint64_t
two_loops(uint64_t x, long heavy, long light, long mixed)
{
	for (long i = 0; i < heavy; i++) {		/* HEAVY BEGIN */
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}						/* HEAVY END */
	for (long i = 0; i < light; i++) {		/* LIGHT BEGIN */
		x = (x ^ (x >> 7)) * 0x9e3779b97f4a7c15ULL;
		__asm__ volatile("" : "+r"(x));
	}						/* LIGHT END */
	for (long i = 0; i < mixed; i++) {		/* MIXED BEGIN */
		x = helper_mix(x + (uint64_t)i);
		__asm__ volatile("" : "+r"(x));
	}						/* MIXED END */
	return x;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double heavy = 0, light = 0, mixed = 0, start = thread_cpu();
	uint64_t x = 1;

	/* about 6 : 2 : 1.5 of the loops' time; one round is 16 calls of
	 * each, about 35 ms here */
	while (thread_cpu() - start < seconds) {
		TIMED_BLOCK(heavy, x = two_loops(x, vary(SPIN_UNIT), 0, 0));
		TIMED_BLOCK(light, x = two_loops(x, 0, vary(SPIN_UNIT / 3), 0));
		TIMED_BLOCK(mixed, x = two_loops(x, 0, 0, vary(SPIN_UNIT / 5)));
	}
	printf("truth: {\"heavy\": %f, \"light\": %f, \"mixed\": %f, \"cpu\": %f, "
	       "\"x\": %llu}\n", heavy, light, mixed, thread_cpu() - start,
	       (unsigned long long)x % 10);
	return 0;
}
