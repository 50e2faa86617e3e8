/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A process's life beside libpc's own threads and shared state: forks
 * whose children exit at once, a main thread that calls pthread_exit, a
 * new user namespace, vfork and posix_spawn children that change their
 * signal dispositions, a process that makes itself non-dumpable, and a
 * plain CPU burner to be killed early. Each case prints what it saw, in
 * lines that are the same on every unprofiled run, and exits 0 when it saw
 * what an unprofiled run sees. tests/e2e/test_lifecycle2.py runs each case
 * plain and under libpc.so and compares the two.
 *
 * Work is burnt in lc_burn(), varied as truth.h varies it, so that a
 * profile holds samples and nothing runs in phase with the kernel's tick.
 *
 * Usage: lifecycle2 CASE [ARGS]; with no arguments it lists the cases.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "truth.h"

static volatile uint64_t sink;

static __attribute__((noinline)) uint64_t
lc_unit(uint64_t x)
{
	return spin(x, SPIN_UNIT / 4);
}

/* About `seconds` of this thread's CPU time. */
static __attribute__((noinline)) void
lc_burn(double seconds)
{
	double t0 = thread_cpu();
	uint64_t x = sink;

	while (thread_cpu() - t0 < seconds)
		for (int i = 0; i < 4; i++)
			x = lc_unit(x);
	sink = x;
}

static const char *
errname(int e)
{
	const char *s = e ? strerrorname_np(e) : "0";

	return s ? s : "unknown errno";
}

/* forks N: N children, one after the other, each exits at once (exit or
 * _exit by turns); the parent burns a little between them. */
static int
forks(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 60, bad = 0;

	lc_burn(0.05);
	for (int i = 0; i < n; i++) {
		int st;
		pid_t p = fork();

		if (p < 0) {
			printf("fork: %s\n", errname(errno));
			return 1;
		}
		if (p == 0) {
			if (i & 1)
				_exit(i & 0x7f);
			exit(i & 0x7f);
		}
		lc_burn(0.001);
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != (i & 0x7f))
			bad++;
	}
	printf("forks: %d children, %d ended otherwise than asked\n", n, bad);
	return bad != 0;
}

static void *
last_thread(void *arg)
{
	(void)arg;
	lc_burn(0.1);
	printf("last thread: done\n");
	fflush(stdout);
	return NULL;
}

/* pthread-exit: main starts a thread and leaves by pthread_exit; the
 * process ends, status 0, when that thread ends. */
static int
pthread_exit_main(void)
{
	pthread_t t;

	lc_burn(0.1);
	if (pthread_create(&t, NULL, last_thread, NULL)) {
		printf("pthread_create failed\n");
		return 1;
	}
	printf("main: pthread_exit\n");
	fflush(stdout);
	pthread_exit(NULL);
}

/* unshare-user: a new user namespace, which needs a process of one
 * thread; then setns back is not possible, so that is all. */
static int
unshare_user(void)
{
	int r, e;

	lc_burn(0.1);
	r = unshare(CLONE_NEWUSER);
	e = errno;
	printf("unshare(CLONE_NEWUSER): %s\n", r ? errname(e) : "0");
	lc_burn(0.05);
	return r != 0;
}

static volatile sig_atomic_t got;

static void
on_int(int sig)
{
	(void)sig;
	got++;
}

/* vfork HOW WHAT: the parent catches SIGINT (HOW handler) or ignores it
 * (HOW ignore) and blocks SIGTERM and SIGUSR2; a vfork child sets SIGINT
 * to SIG_DFL and empties its mask, then _exits (WHAT exit) or execs /bin/true (WHAT
 * exec). The parent then ignores SIGINT and puts back what it had, as
 * system(3) does, and raises SIGINT: caught or ignored, never fatal. */
static int
vfork_case(int argc, char **argv)
{
	const char *how = argc > 2 ? argv[2] : "handler", *what = argc > 3 ? argv[3] : "exit";
	struct sigaction sa, now;
	sigset_t set;
	pid_t p;
	int st;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = strcmp(how, "ignore") ? on_int : SIG_IGN;
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	lc_burn(0.05);
	p = vfork();
	if (p == 0) {
		sigset_t none;

		sigemptyset(&none);
		signal(SIGINT, SIG_DFL);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (!strcmp(what, "exec")) {
			char *args[] = { "true", NULL };

			execv("/bin/true", args);
		}
		_exit(3);
	}
	if (p < 0 || waitpid(p, &st, 0) != p) {
		printf("vfork failed\n");
		return 1;
	}
	printf("child: %s %d\n", WIFEXITED(st) ? "exit" : "signal",
	       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	/* what system(3) does: ignore SIGINT for a while, then put back
	 * what was there */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, &now);
	sigaction(SIGINT, &now, NULL);
	sigprocmask(SIG_BLOCK, NULL, &set);
	printf("parent: SIGINT %s, SIGTERM %s, SIGUSR2 %s\n",
	       now.sa_handler == SIG_IGN ? "ignored" : now.sa_handler == on_int ? "caught" : "default",
	       sigismember(&set, SIGTERM) ? "blocked" : "unblocked",
	       sigismember(&set, SIGUSR2) ? "blocked" : "unblocked");
	raise(SIGINT);
	lc_burn(0.05);
	printf("parent: survived SIGINT, handler ran %d\n", (int)got);
	return 0;
}

/* spawn: the parent catches SIGINT and blocks SIGTERM; posix_spawn runs
 * /bin/true with SIGINT reset to default and an empty mask. */
static int
spawn_case(void)
{
	posix_spawnattr_t a;
	struct sigaction sa, now;
	sigset_t def, set, empty;
	char *args[] = { "true", NULL };
	pid_t p;
	int st, r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_int;
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	lc_burn(0.05);
	posix_spawnattr_init(&a);
	sigemptyset(&def);
	sigaddset(&def, SIGINT);
	sigemptyset(&empty);
	posix_spawnattr_setsigdefault(&a, &def);
	posix_spawnattr_setsigmask(&a, &empty);
	posix_spawnattr_setflags(&a, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	r = posix_spawn(&p, "/bin/true", NULL, &a, args, environ);
	posix_spawnattr_destroy(&a);
	if (r || waitpid(p, &st, 0) != p) {
		printf("posix_spawn: %s\n", errname(r));
		return 1;
	}
	printf("child: exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	sigaction(SIGINT, NULL, &now);
	sigprocmask(SIG_BLOCK, NULL, &set);
	printf("parent: SIGINT %s, SIGTERM %s\n",
	       now.sa_handler == on_int ? "caught" : "not caught",
	       sigismember(&set, SIGTERM) ? "blocked" : "unblocked");
	raise(SIGINT);
	lc_burn(0.05);
	printf("parent: survived SIGINT, handler ran %d\n", (int)got);
	return 0;
}

/* nodump SECONDS: non-dumpable, then burns; prints when done. */
static int
nodump(int argc, char **argv)
{
	double s = argc > 2 ? atof(argv[2]) : 1;

	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		printf("prctl: %s\n", errname(errno));
	lc_burn(s);
	printf("nodump: done\n");
	return 0;
}

/* burn SECONDS: CPU only. */
static int
burn(int argc, char **argv)
{
	lc_burn(argc > 2 ? atof(argv[2]) : 1);
	printf("burn: done\n");
	return 0;
}

int
main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(c, "forks"))
		return forks(argc, argv);
	if (!strcmp(c, "pthread-exit"))
		return pthread_exit_main();
	if (!strcmp(c, "unshare-user"))
		return unshare_user();
	if (!strcmp(c, "vfork"))
		return vfork_case(argc, argv);
	if (!strcmp(c, "spawn"))
		return spawn_case();
	if (!strcmp(c, "nodump"))
		return nodump(argc, argv);
	if (!strcmp(c, "burn"))
		return burn(argc, argv);
	fprintf(stderr, "usage: lifecycle2 forks [N] | pthread-exit | unshare-user | "
		"vfork handler|ignore exit|exec | spawn | nodump SECONDS | burn SECONDS\n");
	return 2;
}
