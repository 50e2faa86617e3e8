/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Spins in before_exec_work, then replaces itself with another program by
 * the exec function its argument names; the profile of the first image
 * must be written before it goes, and the new image's beside it.
 * Usage: execer HOW PROGRAM [ARGS...]   (HOW: execv execvp execve execl
 *        execlp execle fexecve fail)
 * EXECER_SECONDS: the seconds of CPU before the exec (0.3); a plain run
 * that is compared by its status and output alone needs little.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "truth.h"

extern char **environ;
static volatile uint64_t sink;
static double before_seconds = 0.3;

__attribute__((noinline)) void
before_exec_work(void)
{
	double t0 = thread_cpu();

	while (thread_cpu() - t0 < before_seconds)
		sink = spin(sink, TRUTH_BLOCK * SPIN_UNIT);
}

int
main(int argc, char **argv)
{
	const char *how = argv[1];
	char *prog = argv[2];
	char **args = argv + 2;

	if (argc < 3)
		return 2;
	if (getenv("EXECER_SECONDS"))
		before_seconds = atof(getenv("EXECER_SECONDS"));
	before_exec_work();
	if (!strcmp(how, "execv"))
		execv(prog, args);
	else if (!strcmp(how, "execvp"))
		execvp(prog, args);
	else if (!strcmp(how, "execve"))
		execve(prog, args, environ);
	else if (!strcmp(how, "execl"))
		execl(prog, prog, argc > 3 ? argv[3] : NULL, (char *)NULL);
	else if (!strcmp(how, "execlp"))
		execlp(prog, prog, argc > 3 ? argv[3] : NULL, (char *)NULL);
	else if (!strcmp(how, "execle"))
		execle(prog, prog, argc > 3 ? argv[3] : NULL, (char *)NULL, environ);
	else if (!strcmp(how, "fexecve"))
		fexecve(open(prog, O_RDONLY | O_CLOEXEC), args, environ);
	else if (!strcmp(how, "fail")) {
		execv("/nonexistent/program", args);
		/* the exec failed: this image runs on and ends normally */
		before_exec_work();
		return 7;
	}
	return 1;
}
