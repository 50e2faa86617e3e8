/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Names that are not text, for the JSON and folded writers (test_writers.py):
 * a worker thread names itself "th" 0xFF ";\"\\x" (a byte that is no
 * UTF-8, a semicolon, a quote and a backslash), and spends its CPU time in
 * two functions whose symbols hold a semicolon, bytes of no valid UTF-8
 * (0xFF, an overlong C0 AF, a surrogate ED A0 80, U+110000 as F4 90 80 80,
 * a sequence cut short, E2 82) and DEL. The symbols are asm labels: gas
 * takes raw bytes in a quoted symbol name (no quote, and a backslash only
 * with a warning).
 * Usage: writers_names SECONDS_OF_CPU
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "truth.h"

#define THREAD_NAME	"th\xff;\"\\x"

uint64_t semi_work(uint64_t x) __asm__("\"semi;colon\xff\xc0\xaf\xed\xa0\x80work\"");
uint64_t cut_work(uint64_t x) __asm__("\"cut\x7f\xf4\x90\x80\x80\xe2\x82work\"");

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t
semi_work(uint64_t x)
{
	return spin(x, SPIN_UNIT / 10);
}

__attribute__((noinline)) uint64_t
cut_work(uint64_t x)
{
	return spin(x, SPIN_UNIT / 10);
}

static void *
worker(void *arg)
{
	double seconds = *(const double *)arg;
	uint64_t x = 1;

	prctl(PR_SET_NAME, THREAD_NAME, 0, 0, 0);
	while (thread_cpu() < seconds)
		for (int i = 0; i < 50; i++)
			x = semi_work(cut_work(x));
	sink = x;
	return NULL;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5;
	pthread_t t;

	if (pthread_create(&t, NULL, worker, &seconds))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
