/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * leaf() is called equally often from caller_a, with expensive calls, and
 * from caller_b, with cheap ones: by call counts the split is 50:50, by
 * time it is what the program measures (about 85:15). Also sorts with qsort
 * and a comparator of its own, so that the edge sort_items -> by_key goes
 * through libc. Usage: callers SECONDS
 */
#include <stdlib.h>

#include "truth.h"

static volatile uint64_t sink;
static double leaf_in_a, leaf_in_b;

__attribute__((noinline)) uint64_t
leaf(uint64_t x, long n)
{
	return spin(x, n);
}

__attribute__((noinline)) uint64_t
caller_a(uint64_t x)
{
	x = leaf(x, 17 * SPIN_UNIT / 10);
	__asm__ volatile("" : "+r"(x));	/* no tail call: stay on the stack */
	return x;
}

__attribute__((noinline)) uint64_t
caller_b(uint64_t x)
{
	x = leaf(x, 3 * SPIN_UNIT / 10);
	__asm__ volatile("" : "+r"(x));	/* no tail call: stay on the stack */
	return x;
}

__attribute__((noinline)) int
by_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	x = spin(x, 20);	/* a comparator with some work in it */
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) void
sort_items(uint64_t seed)
{
	static uint64_t items[2000];

	for (size_t i = 0; i < 2000; i++)
		items[i] = seed = seed * 6364136223846793005ULL + 1;
	qsort(items, 2000, sizeof(items[0]), by_key);
	sink = items[0];
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	uint64_t x = 1;

	/*
	 * 128 calls a block, timed a block at a time (truth.h), so that even
	 * caller_b's block, of cheap calls, lasts several ticks
	 */
	while (process_cpu() < seconds) {
		TIMED_CALLS(leaf_in_a, 128, x = caller_a(x));
		TIMED_CALLS(leaf_in_b, 128, x = caller_b(x));
		/* one sort per 8 pairs of calls */
		for (int i = 0; i < 128 / 8; i++)
			sort_items(x + (uint64_t)i);
	}
	sink = x;
	printf("truth: {\"leaf_in_a\": %.6f, \"leaf_in_b\": %.6f, \"cpu\": %.6f}\n",
	       leaf_in_a, leaf_in_b, process_cpu());
	return 0;
}
