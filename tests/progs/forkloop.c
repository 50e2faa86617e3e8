/* SPDX-License-Identifier: BSD-2-Clause */
#define _GNU_SOURCE
/*
 * One thread walks the loaded objects with dl_iterate_phdr in a loop while
 * the main thread forks COUNT children that exit at once. glibc does not
 * reset the loader's lock in a fork child: a child whose fork caught the
 * walker inside dl_iterate_phdr must not call it again, or it hangs.
 * Usage: forkloop COUNT
 */
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;
static volatile long walks;

static int
count(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	(*(long *)data)++;
	return 0;
}

static void *
walker(void *arg)
{
	long n = 0;

	(void)arg;
	while (!stop) {
		dl_iterate_phdr(count, &n);
		walks++;
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, ok = 0;
	pthread_t t;

	if (pthread_create(&t, NULL, walker, NULL))
		return 1;
	for (int i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid == 0)
			exit(0);
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return 1;
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("children exited: %d of %d\n", ok, n);
	return ok == n ? 0 : 1;
}
