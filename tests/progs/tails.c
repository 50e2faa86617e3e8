/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hot code at the very ends of functions: tiny functions, called through
 * pointers in a loop, spend much of their time in their last instruction
 * (ret). GCC aligns each function's start to 16 bytes, so a function of an
 * odd size shares the 2-byte bin of its ret with the padding after it:
 * those samples are the function's, as gprof has it. The loop's trip count
 * varies (truth.h's vary()). Usage: tails SECONDS
 */
#include <stdlib.h>

#include "truth.h"

typedef uint64_t (*op)(uint64_t, uint64_t, uint64_t);

__attribute__((noinline)) uint64_t
tail_madd(uint64_t a, uint64_t b, uint64_t c)
{
	return a * b + c;
}

__attribute__((noinline)) uint64_t
tail_xor(uint64_t a, uint64_t b, uint64_t c)
{
	return (a ^ b) + (c >> 3);
}

__attribute__((noinline)) uint64_t
tail_rot(uint64_t a, uint64_t b, uint64_t c)
{
	return ((a << 7) | (a >> 57)) + b - c;
}

__attribute__((noinline)) uint64_t
tail_min(uint64_t a, uint64_t b, uint64_t c)
{
	return (a < b ? a : b) + c;
}

static volatile uint64_t sink;

int
main(int argc, char **argv)
{
	static op const ops[] = { tail_madd, tail_xor, tail_rot, tail_min };
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	volatile op const *vops = ops;	/* calls through memory: not inlined */
	uint64_t x = 1, y = 3;

	while (process_cpu() < seconds) {
		for (long i = vary(20000); i > 0; i--) {
			x = vops[i & 3](x, y, (uint64_t)i);
			y += x >> 11;
		}
	}
	sink = x + y;
	return 0;
}
