/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A thread created through pthread_create@GLIBC_2.2.5, the version programs
 * built before glibc 2.34 reference, must be sampled like any other.
 * Usage: oldsym SECONDS
 */
#include <pthread.h>
#include <stdlib.h>

#include "truth.h"

__asm__(".symver pthread_create_old, pthread_create@GLIBC_2.2.5");
int pthread_create_old(pthread_t *, const pthread_attr_t *,
		       void *(*)(void *), void *);

static double seconds, cpu;
static volatile uint64_t sink;

__attribute__((noinline)) void *
old_worker(void *arg)
{
	uint64_t x = 3;

	while (thread_cpu() < seconds)
		x = spin(x, TRUTH_BLOCK * SPIN_UNIT);
	sink = x;
	cpu = thread_cpu();
	return arg;
}

int
main(int argc, char **argv)
{
	pthread_t t;

	seconds = argc > 1 ? atof(argv[1]) : 1.0;
	if (pthread_create_old(&t, NULL, old_worker, NULL))
		return 1;
	pthread_join(t, NULL);
	printf("truth: {\"old_worker\": %.6f, \"cpu\": %.6f}\n", cpu, process_cpu());
	return 0;
}
