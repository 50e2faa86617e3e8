/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A loop calling a tiny libc function through the PLT: some samples land in
 * the PLT stub, which pcprof names labs@plt (gprof credits it to _init).
 * Usage: libcall ITERATIONS
 */
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000000, s = 0;

	for (long i = 0; i < n; i++)
		s += labs(i - 5);
	printf("%ld\n", s);
	return 0;
}
