/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two pools of threads asleep at the same pc from the same depth, each
 * under a function of its own (tests/e2e/test_wall35.py): pool_a's NA
 * threads and pool_b's NB nap in nanosleep through nap(), for random
 * spans of 2 to 20 ms (no period to keep step with a sampler's) until
 * SECS seconds have passed. A walk kept for one pool's thread at that pc
 * must never be reused for the other's. Prints "done" and exits 0.
 * Usage: wall35pool NA NB SECS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double secs = 1.0;
static volatile unsigned naps_a, naps_b;	/* the two pools differ */

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline, noclone)) static void
nap(unsigned *seed)
{
	struct timespec t = { 0, 2000000 + (long)(rand_r(seed) % 18000) * 1000 };

	nanosleep(&t, NULL);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, noclone)) static void
pool_a(unsigned seed, double end)
{
	while (now() < end)
		nap(&seed), naps_a++;
}

__attribute__((noinline, noclone)) static void
pool_b(unsigned seed, double end)
{
	while (now() < end)
		nap(&seed), naps_b++;
}

static void *
worker(void *arg)
{
	long i = (long)arg;
	double end = now() + secs;

	if (i < 0)
		pool_b((unsigned)-i, end);
	else
		pool_a((unsigned)i + 1, end);
	return NULL;
}

int
main(int argc, char **argv)
{
	int na = argc > 1 ? atoi(argv[1]) : 12, nb = argc > 2 ? atoi(argv[2]) : 4;
	pthread_t t[256];
	int n = 0;

	secs = argc > 3 ? atof(argv[3]) : 1.0;
	if (na < 0 || nb < 0 || na + nb > 256) {
		fprintf(stderr, "wall35pool: 0 to 256 threads\n");
		return 2;
	}
	for (long i = 0; i < na + nb; i++) {
		if (pthread_create(&t[n], NULL, worker,
				   (void *)(i < na ? i : -(i - na + 1)))) {
			fprintf(stderr, "wall35pool: cannot create a thread\n");
			return 1;
		}
		n++;
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	puts("done");
	return 0;
}
