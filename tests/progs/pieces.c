/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A function that GCC splits: the branch that calls a cold function goes to
 * split_work.cold, which gprof credits to whatever symbol precedes it and
 * pcprof folds back into split_work. The truth is split_work's own time,
 * cold part included. Usage: pieces SECONDS
 */
#include <stdlib.h>

#include "truth.h"

static volatile int rare_calls;

__attribute__((cold, noinline)) void
note_rare(void)
{
	rare_calls++;
}

/* The rare branch is taken on every other call: a cold piece that runs. */
__attribute__((noinline)) uint64_t
split_work(uint64_t x, int rare)
{
	if (rare) {
		note_rare();
		return spin(x, 3 * SPIN_UNIT);
	}
	return spin(x, SPIN_UNIT);
}

__attribute__((noinline)) uint64_t
plain_work(uint64_t x)
{
	return spin(x, 2 * SPIN_UNIT);
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double t[2] = { 0, 0 }, start = process_cpu();
	uint64_t x = 1;

	while (process_cpu() - start < seconds) {
		TIMED_BLOCK(t[0], x = split_work(split_work(x, 1), 0));
		TIMED_BLOCK(t[1], x = plain_work(x));
	}
	printf("truth: {\"split_work\": %.6f, \"plain_work\": %.6f, \"cpu\": %.6f, \"x\": %llu}\n",
	       t[0], t[1], process_cpu(), (unsigned long long)x);
	return 0;
}
