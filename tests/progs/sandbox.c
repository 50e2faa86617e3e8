/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Programs that take away what libpc would use at exit, or that sandbox
 * themselves, for tests/e2e/test_sandbox.py: each burns CPU in
 * sandbox_burn (so that the profile has samples), then does one thing and
 * ends. Output is what the test compares plain against libpc.
 *
 *   fds              list /proc/self/fd, then a fork child's (while a
 *                    second thread of the parent lives)
 *   daemon           fork a child that closes 0-2 and sleeps 3 s; the
 *                    parent exits at once
 *   fsize BYTES      print 2000 lines, lower RLIMIT_FSIZE to BYTES, exit
 *   nofile           RLIMIT_NOFILE to 3, exit
 *   fulltable        open /dev/null until EMFILE, exit
 *   setuid           become nobody (65534), exit
 *   chroot DIR       chroot into DIR, exit
 *   openat prctl|syscall|tsync   a filter that kills on openat, through
 *                    prctl, syscall(SYS_seccomp), or syscall with
 *                    SECCOMP_FILTER_FLAG_TSYNC beside a second thread
 *   probe            seccomp calls with no filter (EFAULT), then burn
 *   exec PROG        a filter that kills on timer_create and
 *                    perf_event_open, then exec PROG "under a filter"
 *   strict thread|process        a worker in strict mode: arithmetic,
 *                    write, exit
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "truth.h"

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t
sandbox_burn(double seconds)
{
	double t0 = thread_cpu();
	uint64_t x = sink;

	while (thread_cpu() - t0 < seconds)
		x = spin(x, SPIN_UNIT);
	sink = x;
	return x;
}

/* "fd N TARGET" for each open descriptor, pipes and sockets without
 * their inode numbers (they differ from run to run) */
static void
list_fds(const char *who)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[256], out[600];
	int own = d ? dirfd(d) : -1;

	while (d && (e = readdir(d))) {
		ssize_t n;
		char *b;

		if (e->d_name[0] == '.' || atoi(e->d_name) == own)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = 0;
		if ((b = strchr(target, ':')) && b[1] == '[')
			*b = 0;
		n = snprintf(out, sizeof(out), "%s fd %s %s\n", who, e->d_name, target);
		write(1, out, (size_t)n);
	}
	if (d)
		closedir(d);
}

static pthread_barrier_t both;

static void *
second(void *arg)
{
	(void)arg;
	sandbox_burn(0.05);
	pthread_barrier_wait(&both);	/* alive while the parent forks */
	pthread_barrier_wait(&both);
	return NULL;
}

static int
fds(void)
{
	pthread_t t;
	pid_t pid;
	int st;

	sandbox_burn(0.1);
	list_fds("parent");
	pthread_barrier_init(&both, NULL, 2);
	pthread_create(&t, NULL, second, NULL);
	pthread_barrier_wait(&both);
	pid = fork();
	if (pid == 0) {
		sandbox_burn(0.05);
		list_fds("child");
		_exit(0);
	}
	waitpid(pid, &st, 0);
	pthread_barrier_wait(&both);
	pthread_join(t, NULL);
	return st == 0 ? 0 : 1;
}

static int
daemon_child(void)
{
	pid_t pid;

	sandbox_burn(0.05);
	pid = fork();
	if (pid == 0) {
		struct timespec t = { 3, 0 };

		setsid();
		close(0);
		close(1);
		close(2);
		sandbox_burn(0.02);
		nanosleep(&t, NULL);
		_exit(0);
	}
	printf("daemon %d\n", (int)pid);
	return 0;
}

static int
fsize(long bytes)
{
	struct rlimit r;

	sandbox_burn(0.1);
	for (int i = 0; i < 2000; i++)
		printf("line %d\n", i);
	getrlimit(RLIMIT_FSIZE, &r);
	r.rlim_cur = (rlim_t)bytes;
	if (setrlimit(RLIMIT_FSIZE, &r))
		return 3;
	return 0;
}

static int
nofile(void)
{
	struct rlimit r = { 3, 3 };

	sandbox_burn(0.1);
	if (setrlimit(RLIMIT_NOFILE, &r))
		return 3;
	printf("limited\n");
	return 0;
}

static int
fulltable(void)
{
	int n = 0;

	sandbox_burn(0.1);
	while (open("/dev/null", O_RDONLY) >= 0)
		n++;
	printf("full: %s\n", errno == EMFILE ? "EMFILE" : strerror(errno));
	return 0;
}

static int
become_nobody(void)
{
	sandbox_burn(0.1);
	if (setgid(65534) || setuid(65534))
		return 3;
	printf("nobody\n");
	return 0;
}

static int
chrooted(const char *dir)
{
	sandbox_burn(0.1);
	if (chroot(dir) || chdir("/"))
		return 3;
	printf("chrooted\n");
	return 0;
}

/* Kills the process on openat; allows every other call (of x86-64's
 * native ABI: another architecture's calls are killed). */
static struct sock_filter kill_openat[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* Kills the process on timer_create and perf_event_open, which a program
 * that merely execs never makes, and libpc's start-up would. */
static struct sock_filter kill_timers[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_timer_create, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* A filter, then an exec: the new image starts under it. */
static int
exec_filtered(const char *what)
{
	struct sock_fprog prog = { sizeof(kill_timers) / sizeof(kill_timers[0]), kill_timers };

	sandbox_burn(0.1);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return 3;
	fflush(stdout);
	execlp(what, what, "under a filter", (char *)NULL);
	return 4;
}

static void *
burner(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&both);
	sandbox_burn(0.15);
	return NULL;
}

static int
openat_filter(const char *how)
{
	struct sock_fprog prog = { sizeof(kill_openat) / sizeof(kill_openat[0]), kill_openat };
	pthread_t t;
	int tsync = !strcmp(how, "tsync"), r;

	sandbox_burn(0.1);
	if (tsync) {
		pthread_barrier_init(&both, NULL, 2);
		pthread_create(&t, NULL, burner, NULL);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 3;
	if (!strcmp(how, "prctl"))
		r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
	else
		r = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				 tsync ? SECCOMP_FILTER_FLAG_TSYNC : 0, &prog);
	if (r)
		return 4;
	if (tsync)
		pthread_barrier_wait(&both);
	sandbox_burn(0.15);
	if (tsync)
		pthread_join(t, NULL);
	printf("filtered\n");
	return 0;
}

/* What libseccomp and systemd do to learn whether filters work: calls
 * with no filter, which fail with EFAULT and enter no sandbox. */
static int
probe(void)
{
	int a = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) < 0 && errno == EFAULT;
	int b = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, NULL) < 0 && errno == EFAULT;

	sandbox_burn(0.1);
	printf("probes: %s %s, seccomp mode %d\n", a ? "EFAULT" : "other", b ? "EFAULT" : "other",
	       prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
	return 0;
}

/* Strict mode allows read, write, _exit and sigreturn: the worker ends
 * with the raw exit of its thread. */
static void *
strict_worker(void *arg)
{
	char line[64];
	uint64_t x;
	int n;

	(void)arg;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0))
		syscall(SYS_exit, 3);
	x = spin_exact(1, 4000 * SPIN_UNIT / 10);
	n = snprintf(line, sizeof(line), "worker %llu\n", (unsigned long long)(x & 0xffff));
	write(1, line, (size_t)n);
	syscall(SYS_exit, 0);
	return NULL;
}

static int
strict(const char *how)
{
	pthread_t t;
	pid_t pid;
	int st = 0;

	sandbox_burn(0.1);
	if (!strcmp(how, "thread")) {
		pthread_create(&t, NULL, strict_worker, NULL);
		pthread_join(t, NULL);
	} else {
		pid = fork();
		if (pid == 0)
			strict_worker(NULL);
		waitpid(pid, &st, 0);
	}
	printf("joined: %s\n", WIFEXITED(st) ? "exit" : "killed");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 5;
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *arg = argc > 2 ? argv[2] : "";

	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (!strcmp(mode, "fds"))
		return fds();
	if (!strcmp(mode, "daemon"))
		return daemon_child();
	if (!strcmp(mode, "fsize"))
		return fsize(atol(arg));
	if (!strcmp(mode, "nofile"))
		return nofile();
	if (!strcmp(mode, "fulltable"))
		return fulltable();
	if (!strcmp(mode, "setuid"))
		return become_nobody();
	if (!strcmp(mode, "chroot"))
		return chrooted(arg);
	if (!strcmp(mode, "openat"))
		return openat_filter(arg);
	if (!strcmp(mode, "probe"))
		return probe();
	if (!strcmp(mode, "exec"))
		return exec_filtered(arg);
	if (!strcmp(mode, "strict")) {
		fflush(stdout);
		return strict(arg);
	}
	fprintf(stderr, "usage: sandbox fds|daemon|fsize N|nofile|fulltable|setuid|"
		"chroot DIR|openat prctl|syscall|tsync|probe|exec PROG|strict thread|process\n");
	return 2;
}
