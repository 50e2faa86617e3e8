/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Threads that wait at one site again and again, out of it briefly in
 * between (test_reuse35.py): each of THREADS threads naps in napper() for
 * a random 20 to 120 us, at a random depth of napper()'s own frames (0 to
 * DEPTHS - 1: a few waits a thread, each met again and again), then reads
 * the clock in stamper() for a random 5 to 40 us of CPU, whose frames take
 * the place of napper()'s, ROUNDS times.
 * A walk of a napping thread that it woke during and that read
 * stamper()'s frames must not be taken for the wait's stack. The times
 * are random so that no period can phase-lock with a sampler's.
 * Usage: reuse35 THREADS ROUNDS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef DEPTHS
#define DEPTHS 4
#endif

static long rounds;
static volatile double sink;
static volatile int depth_sink;

static double
clock_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* naps at depth d (napper's own frames above the call): a few waits a
 * thread, each found again and again */
__attribute__((noinline)) void
napper(unsigned *seed, int d)
{
	struct timespec ts = { 0, (20 + rand_r(seed) % 100) * 1000L };

	if (d) {
		napper(seed, d - 1);
		depth_sink += d;	/* not a tail call */
		return;
	}
	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noinline)) void
stamper(unsigned *seed)
{
	double end = clock_s() + (5 + rand_r(seed) % 35) / 1e6, t;

	while ((t = clock_s()) < end)
		sink += t;
}

static void *
thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;

	for (long r = 0; r < rounds; r++) {
		napper(&seed, DEPTHS > 1 ? (int)(rand_r(&seed) % DEPTHS) : 0);
		stamper(&seed);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t th[64];

	rounds = argc > 2 ? atol(argv[2]) : 2000;
	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, thread,
				   (void *)(uintptr_t)(i + 1)))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("%d threads, %ld rounds each\n", n, rounds);
	return 0;
}
