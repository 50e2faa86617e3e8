/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench: run a command and print its resource usage on stderr as one line
 * "rusage: maxrss_kb=N utime=S stime=S status=N".
 *
 * Why not os.wait4 in run.py: on exec, Linux folds the peak RSS of the
 * memory the process had before exec into its ru_maxrss, so a child forked
 * from the Python interpreter reports at least the interpreter's RSS. This
 * launcher is small; the command it forks inherits only its few pages.
 *
 * BENCH_LD_PRELOAD becomes the command's LD_PRELOAD: the launcher itself
 * must not load the profiler, or its own (empty) profile, written when it
 * exits after the command, would replace the command's.
 * Usage: rusage CMD [ARGS...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: rusage CMD [ARGS...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("rusage: fork");
		return 2;
	}
	if (pid == 0) {
		const char *preload = getenv("BENCH_LD_PRELOAD");

		if (preload && setenv("LD_PRELOAD", preload, 1)) {
			perror("rusage: setenv");
			_exit(127);
		}
		unsetenv("BENCH_LD_PRELOAD");
		execvp(argv[1], argv + 1);
		perror("rusage: exec");
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("rusage: wait4");
		return 2;
	}
	fprintf(stderr, "rusage: maxrss_kb=%ld utime=%ld.%06ld stime=%ld.%06ld status=%d\n",
		ru.ru_maxrss, (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
		(long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec,
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}
