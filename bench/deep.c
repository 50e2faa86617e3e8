/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench: deep stacks with a fixed amount of work, for the call-graph
 * overhead benchmark: REPS times, recurse 100 frames down and spin there,
 * so every sample walks a stack more than 100 frames deep.
 * Usage: deep REPS
 */
#include <stdint.h>
#include <stdlib.h>

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t
leafwork(uint64_t x, long n)
{
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) uint64_t
down(uint64_t x, int depth, long n)
{
	uint64_t r;

	if (!depth)
		return leafwork(x, n);
	r = down(x + 1, depth - 1, n);
	__asm__ volatile("" : "+r"(r));	/* not a tail call */
	return r;
}

int
main(int argc, char **argv)
{
	long reps = argc > 1 ? atol(argv[1]) : 60000;
	uint64_t x = 1;

	for (long i = 0; i < reps; i++)
		x = down(x, 100, 20000);
	sink = x;
	return 0;
}
