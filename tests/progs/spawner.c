/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Starts children every way a program does: fork, system(), popen(),
 * posix_spawn and vfork+exec, each running PROGRAM (a profiled program);
 * spins in spawner_work meanwhile. Every process must leave its own file.
 * Usage: spawner PROGRAM ARG
 */
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "truth.h"

extern char **environ;
static volatile uint64_t sink;

__attribute__((noinline)) void
spawner_work(void)
{
	double t0 = thread_cpu();

	while (thread_cpu() - t0 < 0.2)
		sink = spin(sink, TRUTH_BLOCK * SPIN_UNIT);
}

__attribute__((noinline)) void
forked_work(void)
{
	double t0 = thread_cpu();

	while (thread_cpu() - t0 < 0.2)
		sink = spin(sink, TRUTH_BLOCK * SPIN_UNIT);
}

int
main(int argc, char **argv)
{
	char cmd[4096], buf[256];
	char *args[] = { argv[1], argv[2], NULL };
	pid_t pid;
	int status, failed = 0;
	FILE *p;

	if (argc < 3)
		return 2;
	snprintf(cmd, sizeof(cmd), "%s %s", argv[1], argv[2]);
	spawner_work();
	/* fork, with work in the child */
	if ((pid = fork()) == 0) {
		forked_work();
		exit(0);
	}
	waitpid(pid, &status, 0);
	failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	failed |= system(cmd) != 0;
	if (!(p = popen(cmd, "r")))
		return 3;
	while (fgets(buf, sizeof(buf), p))
		;
	failed |= pclose(p) != 0;
	if (posix_spawn(&pid, argv[1], NULL, NULL, args, environ))
		return 4;
	waitpid(pid, &status, 0);
	failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	if ((pid = vfork()) == 0) {
		execv(argv[1], args);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	spawner_work();
	printf("spawner: %s\n", failed ? "a child failed" : "all children ok");
	return failed;
}
