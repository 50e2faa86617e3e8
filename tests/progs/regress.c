/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A benchmark for pcprof diff: a fixed amount of work in four stages, done
 * by each of THREADS threads, so that a build that makes one stage slower
 * takes more seconds in it and nowhere else. Built three ways from this
 * file: regress-base; regress-slow (-DSLOW=1: stage_transform, 40 % of the
 * work, does 20 % more); regress-fast (-DFAST=1: it does 40 % less).
 * TARGET_PCT and SLOW_PCT change the target's share and the slowdown (for
 * bench/diff_power.py). Usage: regress [SCALE [THREADS]]; SCALE 1 is about
 * one second of CPU in each thread.
 */
#include <pthread.h>
#include <stdlib.h>

#include "truth.h"

#ifndef TARGET_PCT
#define TARGET_PCT 40		/* stage_transform's share of the base work */
#endif
#ifndef SLOW_PCT
#define SLOW_PCT 20		/* how much more work it does with SLOW */
#endif
#if defined(SLOW) && SLOW
#define TARGET_WORK (TARGET_PCT * (100 + SLOW_PCT))
#elif defined(FAST) && FAST
#define TARGET_WORK (TARGET_PCT * 60)
#else
#define TARGET_WORK (TARGET_PCT * 100)
#endif

/* the rest of the work, in the proportions 4:3:3 */
#define OTHER_WORK(k) ((100 - TARGET_PCT) * 100 * (k) / 10)

static long iterations;
static volatile uint64_t sink;

/*
 * Each call does between half and one and a half times its average work,
 * drawn from a fixed sequence: the runs of every build do the same work,
 * and no stage has a period the sampling timer could fall in step with.
 */
static long
units(uint64_t *r, long work)
{
	*r = *r * 6364136223846793005ULL + 1442695040888963407ULL;
	/* work is in 1/10000 of a 1 ms iteration: SPIN_UNIT is 100 us */
	return (long)((double)work * 10 / 10000 * SPIN_UNIT *
		      (0.5 + (double)(*r >> 11) / 9007199254740992.0));
}

__attribute__((noinline)) uint64_t
stage_parse(uint64_t x, uint64_t *r)
{
	return spin_exact(x, units(r, OTHER_WORK(4)));
}

__attribute__((noinline)) uint64_t
stage_transform(uint64_t x, uint64_t *r)
{
	return spin_exact(x ^ 0x5555, units(r, TARGET_WORK));
}

__attribute__((noinline)) uint64_t
stage_hash(uint64_t x, uint64_t *r)
{
	return spin_exact(x + 7, units(r, OTHER_WORK(3)));
}

__attribute__((noinline)) uint64_t
stage_emit(uint64_t x, uint64_t *r)
{
	return spin_exact(x * 3, units(r, OTHER_WORK(3)));
}

static void *
worker(void *arg)
{
	uint64_t x = 1, r = 42;

	for (long i = 0; i < iterations; i++) {
		x = stage_parse(x, &r);
		x = stage_transform(x, &r);
		x = stage_hash(x, &r);
		x = stage_emit(x, &r);
	}
	sink = x;
	return arg;
}

int
main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	int nthreads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t t[64];

	if (nthreads < 1 || nthreads > 64 || scale <= 0)
		return 2;
	iterations = (long)(scale * 560);	/* 1 to 2 ms each */
	for (int i = 1; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	worker(NULL);
	for (int i = 1; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("regress: %ld iterations in %d threads, %.3f s CPU\n",
	       iterations, nthreads, process_cpu());
	return 0;
}
