/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Threads that stay on after libpc's thread-exit hook (issue 35): each of
 * N threads naps A seconds, returns, and then a destructor of the
 * program's own (a thread-specific key made after libpc's, so run after
 * its hook) naps D seconds more, as a thread that flushes a log at its
 * end does. Each thread's life, from its start to the end of that
 * destructor, by its own clock, is printed as the truth; then N brief
 * threads that nap B seconds each, begun and ended between two of the
 * sampler's rounds at PC_WALL_HZ=1. Usage: wall35c N A D [B]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/prctl.h>

#define MAXT 16

static pthread_key_t key;
static double nap_a, nap_d;
static double start_of[MAXT], end_of[MAXT];

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void
nap(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&t, &t))
		;
}

static void
at_end(void *arg)
{
	long i = (long)arg - 1;

	nap(nap_d);
	end_of[i] = now();
}

static void *
linger(void *arg)
{
	long i = (long)arg;
	char name[16];

	start_of[i] = now();
	snprintf(name, sizeof(name), "linger%ld", i);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	pthread_setspecific(key, (void *)(i + 1));
	nap(nap_a);
	return NULL;
}

static void *
brief(void *arg)
{
	prctl(PR_SET_NAME, "brief", 0, 0, 0);
	nap(*(double *)arg);
	return NULL;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	double b = argc > 4 ? atof(argv[4]) : 0;
	pthread_t t[MAXT];

	if (argc < 4 || n < 1 || n > MAXT) {
		fprintf(stderr, "usage: wall35c N A D [B]\n");
		return 2;
	}
	nap_a = atof(argv[2]);
	nap_d = atof(argv[3]);
	if (pthread_key_create(&key, at_end))
		return 1;
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, linger, (void *)i))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; b > 0 && i < n; i++)
		if (pthread_create(&t[i], NULL, brief, &b))
			return 1;
	for (int i = 0; b > 0 && i < n; i++)
		pthread_join(t[i], NULL);
	printf("truth: {");
	for (int i = 0; i < n; i++)
		printf("%s\"linger%d\": %.6f", i ? ", " : "", i,
		       end_of[i] - start_of[i]);
	printf("}\n");
	return 0;
}
