/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Work split between the executable and its own shared library (libhot.so,
 * linked normally): main_work 3 units, lib_hot 5, lib_warm (through its
 * static helper lib_inner) 2, and read_clock about 1, nearly all of it in
 * the vDSO's clock_gettime. Each block of calls is timed with the thread CPU clock (truth.h).
 * Usage: uselib SECONDS
 */
#include <stdlib.h>

#include "truth.h"

uint64_t lib_hot(uint64_t x);
uint64_t lib_warm(uint64_t x);

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t
main_work(uint64_t x)
{
	return spin(x + 3, 3 * SPIN_UNIT);
}

/* About 100 us of CLOCK_MONOTONIC readings: the vDSO, no system call. */
__attribute__((noinline)) uint64_t
read_clock(uint64_t x)
{
	struct timespec ts;

	for (long i = vary(8000); i > 0; i--) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		x += (uint64_t)ts.tv_nsec;
	}
	return x;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double t[4] = { 0, 0, 0, 0 }, start = process_cpu();
	uint64_t x = 1;

	while (process_cpu() - start < seconds) {
		TIMED_BLOCK(t[0], x = main_work(x));
		TIMED_BLOCK(t[1], x = lib_hot(x));
		TIMED_BLOCK(t[2], x = lib_warm(x));
		TIMED_BLOCK(t[3], x = read_clock(x));
	}
	sink = x;
	printf("truth: {\"main_work\": %.6f, \"lib_hot\": %.6f, "
	       "\"lib_inner\": %.6f, \"read_clock\": %.6f, \"cpu\": %.6f}\n",
	       t[0], t[1], t[2], t[3], process_cpu());
	return 0;
}
