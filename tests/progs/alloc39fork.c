/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fork child's allocation profile, for PC_ALLOC's tests
 * (tests/e2e/test_alloc39fork.py): known leaks at known sites in the
 * parent before it forks, then three children, each waited for:
 *  - a fork child that leaks and churns at sites of its own and frees
 *    the blocks the parent kept for it (allocated before the fork);
 *  - a fork child that execs this program again ("exec-image"), which
 *    leaks at exec_site;
 *  - a vfork child that execs it the same way.
 * The parent then allocates once more (after_site) and frees nothing.
 * Prints the pid of each process, one line each, to standard error
 * ("parent PID", "fork PID", "exec PID", "vfork PID").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;
static void *kept[4];	/* the parent's, freed by the fork child */

static __attribute__((noinline)) void
parent_leak_site(void)
{
	for (int i = 0; i < 5; i++) {
		char *p = malloc(1000);

		memset(p, i, 1000);
		sink = p;	/* leaked: 5 blocks, 5000 bytes */
	}
}

static __attribute__((noinline)) void
parent_kept_site(void)
{
	for (int i = 0; i < 4; i++) {
		kept[i] = malloc(3000);	/* in use at the parent's exit */
		memset(kept[i], i, 3000);
	}
}

static __attribute__((noinline)) void
parent_after_site(void)
{
	for (int i = 0; i < 2; i++) {
		char *p = malloc(4321);

		memset(p, i, 4321);
		sink = p;	/* leaked: 2 blocks, 8642 bytes */
	}
}

static __attribute__((noinline)) void
child_leak_site(void)
{
	for (int i = 0; i < 3; i++) {
		char *p = malloc(700);

		memset(p, i, 700);
		sink = p;	/* leaked: 3 blocks, 2100 bytes */
	}
}

static __attribute__((noinline)) void
child_churn_site(void)
{
	for (int i = 0; i < 20; i++) {
		char *p = malloc(128);

		p[0] = (char)i;
		sink = p;
		free(p);	/* 20 blocks, 2560 bytes, none in use */
	}
}

static __attribute__((noinline)) void
exec_site(void)
{
	for (int i = 0; i < 6; i++) {
		char *p = malloc(250);

		memset(p, i, 250);
		sink = p;	/* leaked: 6 blocks, 1500 bytes */
	}
}

static int
wait_for(pid_t pid, const char *what)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "alloc39fork: %s child failed\n", what);
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static char self[4096];
	char *args[] = { self, "exec-image", NULL };
	int bad = 0;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "exec-image")) {
		exec_site();
		return 0;
	}
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 2;
	self[n] = 0;
	fprintf(stderr, "parent %d\n", (int)getpid());
	parent_leak_site();
	parent_kept_site();

	pid = fork();
	if (pid == 0) {
		child_leak_site();
		child_churn_site();
		for (int i = 0; i < 4; i++)
			free(kept[i]);
		exit(0);
	}
	fprintf(stderr, "fork %d\n", (int)pid);
	bad |= wait_for(pid, "fork");

	pid = fork();
	if (pid == 0) {
		execv(self, args);
		_exit(127);
	}
	fprintf(stderr, "exec %d\n", (int)pid);
	bad |= wait_for(pid, "exec");

	pid = vfork();
	if (pid == 0) {
		execv(self, args);
		_exit(127);
	}
	fprintf(stderr, "vfork %d\n", (int)pid);
	bad |= wait_for(pid, "vfork");

	parent_after_site();
	printf("alloc39fork done\n");
	return bad;
}
