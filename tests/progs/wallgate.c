/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program that waits, for the wall gate's tests (test_wall.py): a fixed
 * number of rounds, as a CI job does fixed work; each round sleeps in sleeper() (a random 1 to 3 ms, plus EXTRA_MS: built
 * with -DEXTRA_MS=2 as tests/progs/wallgate-slow, the wall gate's
 * regression), reads a pipe that a helper thread fills after a random 0.5
 * to 1.5 ms in piper(), and spins in worker() for about 1 ms of CPU. The
 * sleeps are random so that no period can phase-lock with a sampler's.
 * Each phase is timed with the monotonic clock; the totals are printed as
 * the truth.
 * Usage: wallgate ROUNDS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "truth.h"

#ifndef EXTRA_MS
#define EXTRA_MS 0
#endif

static int fds[2], go[2];
static volatile uint64_t sink;
static unsigned seed = 12345;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* microseconds in [lo, hi), from the program's own generator */
static long
random_us(long lo, long hi)
{
	return lo + (long)(rand_r(&seed) % (unsigned)(hi - lo));
}

static void
nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noinline)) void
sleeper(void)
{
	nap_us(random_us(1000, 3000) + EXTRA_MS * 1000);
}

__attribute__((noinline)) void
piper(void)
{
	char c;

	if (write(go[1], "g", 1) != 1 || read(fds[0], &c, 1) != 1)
		exit(1);
}

__attribute__((noinline)) void
worker(void)
{
	sink = spin(sink, 5 * SPIN_UNIT);
}

static void *
filler(void *arg)
{
	unsigned s = 777;
	char c;

	(void)arg;
	while (read(go[0], &c, 1) == 1) {
		nap_us(500 + rand_r(&s) % 1000);
		if (write(fds[1], "x", 1) != 1)
			break;
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100;
	double start = now(), t;
	double sleep_s = 0, pipe_s = 0, work_s = 0;
	pthread_t th;

	if (pipe(fds) || pipe(go) || pthread_create(&th, NULL, filler, NULL))
		return 1;
	for (long r = 0; r < rounds; r++) {
		t = now();
		sleeper();
		sleep_s += now() - t;
		t = now();
		piper();
		pipe_s += now() - t;
		t = now();
		worker();
		work_s += now() - t;
	}
	close(go[1]);
	pthread_join(th, NULL);
	printf("truth: {\"sleeper\": %.6f, \"piper\": %.6f, \"worker\": %.6f, "
	       "\"wall\": %.6f}\n", sleep_s, pipe_s, work_s, now() - start);
	return 0;
}
