/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A marker's cost (pcprof/marker.h): N begin/end pairs, an instant and a
 * counter each round, timed with CLOCK_MONOTONIC; prints ns a call. Run
 * plain (each call one test of a null pointer), under libpc without
 * PC_TIMELINE (one more test) and with it (the marker recorded).
 *   cc -O2 -I include -o markers bench/markers.c
 *   ./markers 1000000; PC_TIMELINE=1 LD_PRELOAD=build/libpc.so ./markers 1000000
 * The marker ring keeps the first 65536 markers: past them a call costs
 * what a lost marker costs, so the figure of kept markers is of the first
 * 60000 calls (the median of 12 rounds of 5000: a busy machine's
 * preemptions fall in a few).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pcprof/marker.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double
rounds(long n)
{
	double t = now();

	for (long i = 0; i < n; i++) {
		pcprof_mark_begin("request");
		pcprof_mark_instant("step");
		pcprof_count("queue", i);
		pcprof_mark_end("request");
	}
	return (now() - t) / (double)n / 4;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	double kept[12], rest;

	rounds(25);	/* the calls bound, libpc's pages in */
	/* 12 rounds of 5000 markers: all kept (the ring holds 65536) */
	for (int i = 0; i < 12; i++)
		kept[i] = rounds(1250);
	qsort(kept, 12, sizeof(kept[0]), cmp);
	rest = rounds(n);
	printf("markers: %.1f ns a call kept (median of 12 rounds; fastest %.1f), "
	       "%.1f ns past the ring (%ld calls)\n", kept[6], kept[0], rest, 4 * n);
	return 0;
}
