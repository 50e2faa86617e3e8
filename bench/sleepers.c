/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wall-clock sampler's cost (bench/wall.py): N threads that sleep in
 * pause() for the whole run beside the main thread, which does a fixed
 * amount of work (LOOPS blocks of 100,000 steps), then exits: the run's
 * CPU time is the work's and the profiler's, whatever else the machine
 * runs. Usage: sleepers N LOOPS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

static void *
sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	long loops = argc > 2 ? atol(argv[2]) : 10000;
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, sleeper, NULL)) {
			fprintf(stderr, "sleepers: thread %d: cannot create\n", i);
			return 1;
		}
	}
	for (long k = 0; k < loops; k++)
		for (int i = 0; i < 100000; i++)
			sink = sink * 31 + (unsigned long)i;
	return 0;
}
