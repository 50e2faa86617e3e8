/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Burns CPU in burn_work for the tests of how pcprof run passes signals
 * on. It prints "pid N" first, and ends after SECONDS of CPU time (a cap,
 * so that a command a test failed to stop does not burn on) with status 0.
 * With "count" it catches SIGINT and SIGHUP and prints "INT n HUP n" each
 * time the counts change, and at SIGTERM prints "end INT n HUP n" and
 * exits 0: a signal that reached it twice shows as 2.
 * Usage: burn SECONDS [count]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "truth.h"

static volatile uint64_t sink;
static volatile sig_atomic_t ints, hups, terms;

static void
on_signal(int sig)
{
	if (sig == SIGINT)
		ints++;
	else if (sig == SIGHUP)
		hups++;
	else
		terms++;
}

__attribute__((noinline)) void
burn_work(double seconds, int counting)
{
	double t0 = process_cpu();
	int seen = 0;

	while (process_cpu() - t0 < seconds && !terms) {
		sink = spin(sink, TRUTH_BLOCK * SPIN_UNIT);
		if (counting && ints + hups != seen) {
			seen = ints + hups;
			printf("INT %d HUP %d\n", (int)ints, (int)hups);
			fflush(stdout);
		}
	}
}

int
main(int argc, char **argv)
{
	int counting = argc > 2 && !strcmp(argv[2], "count");

	if (counting) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	burn_work(argc > 1 ? atof(argv[1]) : 1.0, counting);
	if (counting)
		printf("end INT %d HUP %d\n", (int)ints, (int)hups);
	return 0;
}
