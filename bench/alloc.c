/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A malloc/free churn benchmark for PC_ALLOC's overhead (bench/alloc.py):
 * N operations, each freeing one of 1024 live blocks at random and
 * allocating another of 8 to 4096 bytes (sizes skewed small), in one
 * thread; "alloc N small": N pairs of malloc(32) and its free, the fast
 * path alone. Prints the ns a malloc/free pair took and a checksum.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LIVE	1024

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	static char *live[LIVE];
	uint64_t s = 88172645463325252ull, sum = 0;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; argc > 2 && i < n; i++) {
		char *volatile p = malloc(32);

		p[0] = (char)i;
		sum += (uint64_t)(unsigned char)p[0];
		free(p);
	}
	for (long i = 0; argc <= 2 && i < n; i++) {
		unsigned k, sz;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		k = (unsigned)(s % LIVE);
		sz = 16u << (unsigned)((s >> 20) % 9);	/* 16 .. 4096 */
		sz += (unsigned)((s >> 32) % sz);
		free(live[k]);
		live[k] = malloc(sz / 2);
		live[k][0] = (char)i;
		sum += (uint64_t)(unsigned char)live[k][0];
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	for (int k = 0; k < LIVE; k++)
		free(live[k]);
	printf("%.1f ns per malloc/free, checksum %llu\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n,
	       (unsigned long long)sum);
	return 0;
}
