/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A process that makes itself non-dumpable (prctl PR_SET_DUMPABLE 0), as
 * ssh-agent and sandboxed browsers do, which leaves its /proc/PID/maps
 * unreadable to other processes of its user: it burns argv[1] seconds of
 * CPU in readers_work, says "ready", then blocks on its standard input
 * until it is closed, and exits 0 with its truth line.
 * test_readers.py reports its run directory while it waits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "truth.h"

static volatile unsigned long sink;

__attribute__((noinline)) static void
readers_work(double seconds)
{
	double t0 = thread_cpu();

	while (thread_cpu() - t0 < seconds)
		for (int i = 0; i < 200000; i++)
			sink += (unsigned long)i * 2654435761u;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5, t0;
	char c;

	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
		perror("prctl");
		return 1;
	}
	t0 = thread_cpu();
	readers_work(seconds);
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	printf("truth: {\"readers_work\": %f, \"cpu\": %f, \"dumpable\": %d}\n",
	       thread_cpu() - t0, process_cpu(), prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
	return 0;
}
