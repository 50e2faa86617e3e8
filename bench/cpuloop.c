/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench: a CPU-bound loop with a fixed amount of work, for the overhead
 * benchmark. No calls in the hot loop, no system calls: what a sampler adds
 * here is the cost of its signals alone.
 * Usage: cpuloop ITERATIONS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t
crunch(uint64_t x, long n)
{
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		x ^= x >> 29;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000L;

	sink = crunch(1, n);
	printf("cpuloop: %ld iterations, %llu\n", n, (unsigned long long)sink);
	return 0;
}
