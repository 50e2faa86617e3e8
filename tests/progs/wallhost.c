/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the wall sampler's thread must not change (test_offcpu.py):
 *   wallhost pthread-exit  main calls pthread_exit; a worker ends after
 *                          about 0.3 s: the process must end then, status
 *                          0, as glibc ends it when its last thread does
 *   wallhost exec-fail     40 threads asleep while main calls a failing
 *                          execv 200 times: prints the seconds it took
 *   wallhost userns        unshare(CLONE_NEWUSER) in a process of one
 *                          thread: prints what it returned
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *
worker(void *arg)
{
	struct timespec t = { 0, 300000000 };

	(void)arg;
	nanosleep(&t, NULL);
	printf("worker done\n");
	fflush(stdout);
	return NULL;
}

static void *
sleeper(void *arg)
{
	(void)arg;
	for (;;) {
		struct timespec t = { 0, 300000 + (long)(random() % 400000) };

		nanosleep(&t, NULL);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pthread_t t;

	if (!strcmp(mode, "pthread-exit")) {
		pthread_create(&t, NULL, worker, NULL);
		pthread_exit(NULL);
	}
	if (!strcmp(mode, "exec-fail")) {
		char *args[] = { "nothing", NULL };
		double t0;

		for (int i = 0; i < 40; i++)
			pthread_create(&t, NULL, sleeper, NULL);
		t0 = now();
		for (int i = 0; i < 200; i++) {
			struct timespec d = { 0, 2000000 };

			execv("/nonexistent/nothing", args);
			nanosleep(&d, NULL);
		}
		printf("exec-fail: %.3f s\n", now() - t0);
		return 0;
	}
	if (!strcmp(mode, "userns")) {
		int r = unshare(CLONE_NEWUSER);

		printf("unshare(CLONE_NEWUSER): %s\n", r ? strerror(errno) : "0");
		return r ? 1 : 0;
	}
	fprintf(stderr, "usage: wallhost pthread-exit|exec-fail|userns\n");
	return 2;
}
