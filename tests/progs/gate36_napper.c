/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program that naps, for the wall gate's disturbed runs
 * (test_gate36.py): a fixed number of rounds, each a nap in nap_stage()
 * (a random 0.9 to 1.1 times NAP_MS, 10 ms unless given, times
 * NAP_FACTOR: built with -DNAP_FACTOR=2 as gate36_napper-slow, the
 * regression: the nap doubled) and about 2 ms of CPU in work_stage(). The naps are random, the same in every run, so
 * that no period can phase-lock with a sampler's. A CPU hog beside it
 * on its CPU holds it in the run queue after each nap and through its
 * work: a disturbed run.
 * Usage: gate36_napper ROUNDS [NAP_MS]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "truth.h"

#ifndef NAP_FACTOR
#define NAP_FACTOR 1
#endif

static volatile uint64_t sink;
static unsigned seed = 4242;
static long nap_ms = 10;

__attribute__((noinline)) void
nap_stage(void)
{
	long us = NAP_FACTOR * (nap_ms * 900 + (long)(rand_r(&seed) % (unsigned)(nap_ms * 200)));
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noinline)) void
work_stage(void)
{
	sink = spin(sink, 8 * SPIN_UNIT);
}

int
main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 30;

	if (argc > 2 && atol(argv[2]) > 0)
		nap_ms = atol(argv[2]);

	for (long r = 0; r < rounds; r++) {
		nap_stage();
		work_stage();
	}
	printf("napped %ld rounds\n", rounds);
	return 0;
}
