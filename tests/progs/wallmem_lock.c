/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program that locks its memory and then starts threads, for the tests
 * of the wall sampler's memory (tests/e2e/test_mem34.py); run as a user
 * that is not root, whose RLIMIT_MEMLOCK weighs everything mapped.
 *   wallmem_lock LIMIT_KIB FLAGS THREADS SECONDS
 *       sets RLIMIT_MEMLOCK (soft) to LIMIT_KIB, calls mlockall(FLAGS: cur,
 *       fut joined by '+': MCL_FUTURE alone locks only what is mapped
 *       after, so that libpc's 64 KiB alternate stack a thread fits),
 *       starts THREADS threads (16 KiB stacks) that sleep
 *       1 to 4 ms at a time (at random) until the main thread has spun
 *       SECONDS of CPU in lock_work, then joins them; prints what each
 *       step gave. Exit 0, or 1 when mlockall failed, 2 when a thread
 *       could not be started.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "truth.h"

static volatile uint64_t sink;
static volatile int stop;

__attribute__((noinline)) void
lock_work(double seconds)
{
	double t0 = process_cpu();

	while (process_cpu() - t0 < seconds)
		sink = spin(sink, TRUTH_BLOCK * SPIN_UNIT);
}

static void *
sleeper(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u;

	while (!stop) {
		struct timespec t = { 0, 1000000 + (long)(rand_r(&seed) % 3000000) };

		nanosleep(&t, NULL);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t *t;
	pthread_attr_t attr;
	struct rlimit rl;
	int n, r;

	if (argc != 5) {
		fprintf(stderr, "usage: wallmem_lock LIMIT_KIB FLAGS THREADS SECONDS\n");
		return 3;
	}
	getrlimit(RLIMIT_MEMLOCK, &rl);
	rl.rlim_cur = (rlim_t)atol(argv[1]) << 10;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		printf("setrlimit: %s\n", strerror(errno));
	if (mlockall((strstr(argv[2], "cur") ? MCL_CURRENT : 0) |
		     (strstr(argv[2], "fut") ? MCL_FUTURE : 0))) {
		printf("mlockall: %s\n", strerror(errno));
		return 1;
	}
	printf("mlockall: ok\n");
	fflush(stdout);
	n = atoi(argv[3]);
	t = calloc((size_t)n, sizeof(*t));
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 16384);
	for (int i = 0; i < n; i++)
		if ((r = pthread_create(&t[i], &attr, sleeper, (void *)(uintptr_t)(i + 1)))) {
			printf("thread %d: %s\n", i, strerror(r));
			return 2;
		}
	printf("threads %d: ok\n", n);
	lock_work(atof(argv[4]));
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("spun\n");
	return 0;
}
