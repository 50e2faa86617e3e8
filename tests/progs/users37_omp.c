/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two OpenMP parallel regions of one function, which gcc outlines as
 * work._omp_fn.0 and work._omp_fn.1: the first does 2 units of spinning
 * for each 1 of the second, round after round, for SECONDS of CPU time
 * (OMP_NUM_THREADS as the test sets it). Prints the truth (each region's
 * CPU seconds) and exits 0. Built with -fopenmp. Usage: users37_omp SECONDS
 */
#include <stdlib.h>

#include "truth.h"

/*
 * Each region's block is 4 ticks of CPU and more (64 calls), not one:
 * a thread preempted at a block's clock read resumes at another task's
 * tick, and its next tick-driven sample falls one tick of CPU later. With
 * the second region's block one tick long (16 calls), that sample fell at
 * its end, into the first region's next block: on a busy machine the
 * first region got 0.77 to 0.87 of the samples against a truth of 0.67.
 */
#define OMP_BLOCK (4 * TRUTH_BLOCK)

static volatile uint64_t sink;

__attribute__((noinline)) void
work(double *first, double *second)
{
	double a = 0, b = 0;

#pragma omp parallel reduction(+:a)
	{
		uint64_t x = sink;

		TIMED_CALLS(a, OMP_BLOCK, x = spin(x, 2 * SPIN_UNIT));
		sink = x;
	}
#pragma omp parallel reduction(+:b)
	{
		uint64_t x = sink;

		TIMED_CALLS(b, OMP_BLOCK, x = spin(x, SPIN_UNIT));
		sink = x;
	}
	*first += a;
	*second += b;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.6, first = 0, second = 0;
	double t0 = process_cpu();

	while (process_cpu() - t0 < seconds)
		work(&first, &second);
	printf("truth: {\"work._omp_fn.0\": %.6f, \"work._omp_fn.1\": %.6f}\n", first, second);
	return 0;
}
