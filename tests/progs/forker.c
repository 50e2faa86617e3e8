/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A parent and a forked child each spin in a function of their own; each
 * process must write its own profile with only its own work in it.
 * Usage: forker SECONDS
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "truth.h"

static volatile uint64_t sink;

__attribute__((noinline)) void
parent_work(double seconds)
{
	uint64_t x = 1;
	double t0 = thread_cpu();

	while (thread_cpu() - t0 < seconds)
		x = spin(x, TRUTH_BLOCK * SPIN_UNIT);
	sink = x;
}

__attribute__((noinline)) void
child_work(double seconds)
{
	uint64_t x = 2;
	double t0 = thread_cpu();

	while (thread_cpu() - t0 < seconds)
		x = spin(x, TRUTH_BLOCK * SPIN_UNIT);
	sink = x;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5;
	int status;
	pid_t pid;

	parent_work(seconds);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		child_work(seconds);
		printf("child: %ld\n", (long)getpid());
		exit(0);
	}
	parent_work(seconds);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}
