/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench: call-heavy code with a fixed amount of work, for the overhead
 * benchmark: a loop making ITERATIONS calls to a tiny function that is
 * neither inlined, cloned nor recognised as pure, so every call is a real
 * call (and, in a -pg build, a real mcount call).
 * Usage: calls ITERATIONS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile uint64_t sink;

__attribute__((noinline, noclone)) uint64_t
leaf(uint64_t x, uint64_t i)
{
	x += i * 0x9e3779b97f4a7c15ULL;
	__asm__ volatile("" : "+r"(x));
	return x ^ (x >> 31);
}

__attribute__((noinline, noclone)) uint64_t
caller(uint64_t x, long n)
{
	for (long i = 0; i < n; i++)
		x = leaf(x, (uint64_t)i);
	return x;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000L;

	sink = caller(1, n);
	printf("calls: %ld calls, %llu\n", n, (unsigned long long)sink);
	return 0;
}
