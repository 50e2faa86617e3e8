/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Four worker threads, created after main starts, each spinning in its own
 * function for 1, 2, 3 and 4 units of work while the main thread waits in
 * pthread_join. Each worker's thread CPU time is the truth.
 * Usage: threads SECONDS_OF_TOTAL_CPU
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "truth.h"

static double cpu[4];
static long units;
static volatile uint64_t sink;

#define WORKER(name, k)							\
	__attribute__((noinline)) void *name(void *arg)			\
	{								\
		uint64_t x = (uint64_t)(k);				\
		for (long i = 0; i < (k) * units; i++)			\
			x = spin(x, SPIN_UNIT / 10);			\
		sink = x;						\
		cpu[(k) - 1] = thread_cpu();				\
		return arg;						\
	}

WORKER(thread_one, 1)
WORKER(thread_two, 2)
WORKER(thread_three, 3)
WORKER(thread_four, 4)

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	void *(*fn[4])(void *) = { thread_one, thread_two, thread_three, thread_four };
	pthread_t t[4];

	/* a unit of SPIN_UNIT/10 is about 10 us; 10 shares in all */
	units = (long)(seconds / 10 / 10e-6);
	usleep(10000);	/* the threads start well after main */
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL))
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("truth: {\"thread_one\": %.6f, \"thread_two\": %.6f, "
	       "\"thread_three\": %.6f, \"thread_four\": %.6f, \"cpu\": %.6f}\n",
	       cpu[0], cpu[1], cpu[2], cpu[3], process_cpu());
	return 0;
}
