/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A preloaded library whose constructor starts a thread before libpc's
 * constructor runs (LD_PRELOAD=early.so:libpc.so): the thread spins in
 * early_worker until told to stop, and must be sampled all the same.
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

static volatile int stop;
static volatile uint64_t sink;
static pthread_t worker;

__attribute__((noinline)) void *
early_worker(void *arg)
{
	uint64_t x = 1;

	while (!stop)
		for (int i = 0; i < 100000; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			__asm__ volatile("" : "+r"(x));
		}
	sink = x;
	return arg;
}

__attribute__((constructor)) static void
early_start(void)
{
	pthread_create(&worker, NULL, early_worker, NULL);
}

__attribute__((destructor)) static void
early_stop(void)
{
	stop = 1;
	pthread_join(worker, NULL);
}
