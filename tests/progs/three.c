/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Three hot functions with shares of the work of about 5:3:2, each call's
 * size varied by spin() (truth.h) so that the loop has no fixed period.
 * Each block of TRUTH_BLOCK calls is timed with the thread CPU clock; the
 * totals are printed as the truth. Built with -DTRUTH_BLOCK=1 as
 * tests/progs/three-percall, each call is timed, and the clock reads between
 * calls are where a shared CPU switches (truth.h).
 * Built with -DPERIODIC as tests/progs/periodic: periodic on purpose, every
 * cycle exactly the same work (about 1 ms), so that a timer that fires on
 * the kernel tick (4 ms at 250 Hz) can keep sampling the same phase of the
 * cycle for as long as the ratio of the two periods holds still;
 * test_timers.py documents that aliasing with it. It is the only test
 * program with a fixed period.
 * Usage: three SECONDS
 */
#include <stdlib.h>

#if PERIODIC
#define TRUTH_BLOCK 1	/* the 1 ms cycle is the point */
#endif
#include "truth.h"

#if PERIODIC
#define WORK spin_exact
#else
#define WORK spin
#endif

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t
work_alpha(uint64_t x)
{
	return WORK(x, 5 * SPIN_UNIT);
}

__attribute__((noinline)) uint64_t
work_beta(uint64_t x)
{
	return WORK(x ^ 0x5555, 3 * SPIN_UNIT);
}

__attribute__((noinline)) uint64_t
work_gamma(uint64_t x)
{
	return WORK(x + 7, 2 * SPIN_UNIT);
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double t[3] = { 0, 0, 0 }, start = process_cpu();
	uint64_t x = 1;

	while (process_cpu() - start < seconds) {
		TIMED_BLOCK(t[0], x = work_alpha(x));
		TIMED_BLOCK(t[1], x = work_beta(x));
		TIMED_BLOCK(t[2], x = work_gamma(x));
	}
	sink = x;
	printf("truth: {\"work_alpha\": %.6f, \"work_beta\": %.6f, "
	       "\"work_gamma\": %.6f, \"cpu\": %.6f}\n",
	       t[0], t[1], t[2], process_cpu());
	return 0;
}
