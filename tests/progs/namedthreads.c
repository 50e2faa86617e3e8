/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Four named worker threads doing 1, 2, 3 and 4 units of work (each call's
 * size varied, truth.h): "pc-one" and "pc-two" are named by main through
 * pthread_setname_np after it creates them, as programs often name their
 * workers; "pc-three" and "pc-four" name themselves. Each thread's CPU time
 * and tid are the truth, printed with its name as
 *   truth: {"pc-one": {"cpu": S, "tid": T}, ..., "cpu": S}
 * Usage: namedthreads SECONDS_OF_TOTAL_CPU
 */
#define _GNU_SOURCE		/* pthread_setname_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "truth.h"

static const char *const names[4] = { "pc-one", "pc-two", "pc-three", "pc-four" };
static double cpu[4];
static long tids[4];
static long units;
static volatile uint64_t sink;
static pthread_barrier_t named;

static void *
worker(void *arg)
{
	long k = (long)(intptr_t)arg;
	uint64_t x = (uint64_t)k;

	tids[k] = syscall(SYS_gettid);
	if (k >= 2)
		prctl(PR_SET_NAME, names[k], 0, 0, 0);
	pthread_barrier_wait(&named);	/* main has named the others */
	for (long i = 0; i < (k + 1) * units; i++)
		x = spin(x, SPIN_UNIT / 10);
	sink = x;
	cpu[k] = thread_cpu();
	return NULL;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	pthread_t t[4];

	units = (long)(seconds / 10 / 10e-6);
	pthread_barrier_init(&named, NULL, 5);
	for (long i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i))
			return 1;
	pthread_setname_np(t[0], names[0]);
	pthread_setname_np(t[1], names[1]);
	pthread_barrier_wait(&named);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("truth: {");
	for (int i = 0; i < 4; i++)
		printf("\"%s\": {\"cpu\": %.6f, \"tid\": %ld}, ", names[i], cpu[i], tids[i]);
	printf("\"cpu\": %.6f}\n", process_cpu());
	return 0;
}
