/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Recursion 10,000 frames deep with the work at the bottom: the stack is far
 * deeper than the walk limit, and the recursive edge must be counted once
 * per sample, not once per frame. Usage: recurse SECONDS
 */
#include <stdlib.h>

#include "truth.h"

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t
bottom_work(uint64_t x)
{
	return spin(x, SPIN_UNIT);
}

__attribute__((noinline)) uint64_t
descend(uint64_t x, int depth)
{
	uint64_t r;

	if (depth == 0) {
		double t0 = process_cpu();

		while (process_cpu() - t0 < *(double *)&sink)
			x = bottom_work(x);
		return x;
	}
	r = descend(x + 1, depth - 1);
	__asm__ volatile("" : "+r"(r));	/* not a tail call */
	return r;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;

	*(double *)&sink = seconds;
	printf("%llu\n", (unsigned long long)descend(1, 10000));
	return 0;
}
