/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Work for test_users37.py: "burn SECONDS" spins in burn_work for SECONDS
 * of CPU time (run through hard links of this file, as git runs its
 * subcommands); "recurse SECONDS" spins at the bottom of rec_work calling
 * itself 5 deep, every level a frame of its own. The test of background
 * processes starts "burn" behind a shell that ends at once. Prints "done"
 * and exits 0. Usage: users37 burn|recurse SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "truth.h"

static volatile uint64_t sink;

__attribute__((noinline)) void
burn_work(double seconds)
{
	double t0 = process_cpu();

	while (process_cpu() - t0 < seconds)
		sink = spin(sink, TRUTH_BLOCK * SPIN_UNIT / 4);
}

__attribute__((noinline)) uint64_t
rec_work(uint64_t x, int depth)
{
	uint64_t r;

	if (depth == 0)
		return spin(x, SPIN_UNIT);
	r = rec_work(x + 1, depth - 1);
	__asm__ volatile("" : "+r"(r));	/* not a tail call */
	return r;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 2 ? atof(argv[2]) : 0.5;

	if (argc > 1 && !strcmp(argv[1], "recurse")) {
		double t0 = process_cpu();

		while (process_cpu() - t0 < seconds)
			for (int i = 0; i < TRUTH_BLOCK; i++)
				sink = rec_work(sink, 5);
	} else {
		burn_work(seconds);
	}
	printf("done\n");
	return 0;
}
