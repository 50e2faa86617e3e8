/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An AddressSanitizer program: built with -fsanitize=address, it links the
 * ASan runtime (libasan.so.N), which refuses to start unless it comes
 * first among the libraries. It works on the heap in asan_work for
 * SECONDS of CPU time, then exits with status 3.
 * Usage: asanexit [SECONDS]
 */
#include <stdlib.h>

#include "truth.h"

static volatile uint64_t sink;

__attribute__((noinline)) void
asan_work(double seconds)
{
	uint64_t *v = calloc(1024, sizeof(*v));
	double t0 = process_cpu();

	if (!v)
		exit(2);
	while (process_cpu() - t0 < seconds)
		for (int i = 0; i < 1024; i++)
			v[i] = spin_exact(v[i] + (uint64_t)i, 200);
	sink = v[7];
	free(v);
}

int
main(int argc, char **argv)
{
	asan_work(argc > 1 ? atof(argv[1]) : 0.3);
	printf("asan_work done\n");
	return 3;
}
