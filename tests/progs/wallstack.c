/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Known waits, each in its own function, for the tests of off-CPU stacks
 * (test_wallstack.py): built as it is (-O2) and with frame pointers
 * (wallstack-fp), so that the wall profile's stacks can be checked to keep
 * each wait's caller. The main thread waits in turn in: nanosleep, a pipe
 * read, poll, epoll_wait, a mutex, a condition variable, fsync, accept and
 * waitpid; each wait's length is drawn at random (no period to keep step
 * with the sampler's rounds or the 250 Hz tick). Prints one "truth:" line
 * of JSON: each function's wall seconds and the run's.
 *
 *   wallstack [SCALE [DIR]]   waits of about SCALE seconds each (0.15);
 *                             fsync's file is made in DIR (".")
 *   wallstack children N [SCALE]
 *                             one waiting site (ws_children) waits for N
 *                             children in turn, each for about SCALE
 *                             seconds, a tenth of that of CPU after each;
 *                             prints each child's pid and wait
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>

static double scale = 0.15;
static const char *dir = ".";
static volatile unsigned long sink;

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* a wait's length: scale, +-25 % */
static double
length(void)
{
	return scale * (0.75 + 0.5 * (double)(random() % 1000) / 1000.0);
}

static void
sleep_for(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&t, &t))
		;
}

/* a child that writes one byte to fd after s seconds */
static pid_t
late_writer(int fd, double s)
{
	pid_t pid = fork();

	if (pid == 0) {
		sleep_for(s);
		if (write(fd, "x", 1) != 1)
			_exit(1);
		_exit(0);
	}
	return pid;
}

__attribute__((noinline)) void
ws_sleep(void)
{
	sleep_for(length());
	sink++;
}

__attribute__((noinline)) void
ws_pipe(void)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe(p))
		exit(1);
	pid = late_writer(p[1], length());
	if (read(p[0], &c, 1) != 1)
		exit(1);
	close(p[0]);
	close(p[1]);
	waitpid(pid, NULL, 0);
	sink++;
}

__attribute__((noinline)) void
ws_poll(void)
{
	struct pollfd f = { .fd = -1 };
	double end = now() + length();

	while (now() < end)
		poll(&f, 1, (int)((end - now()) * 1000) + 1);
	sink++;
}

__attribute__((noinline)) void
ws_epoll(void)
{
	int p[2], ep = epoll_create1(0);
	struct epoll_event e = { .events = EPOLLIN };
	pid_t pid;

	if (ep < 0 || pipe(p))
		exit(1);
	e.data.fd = p[0];
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e);
	pid = late_writer(p[1], length());
	while (epoll_wait(ep, &e, 1, -1) != 1)
		;
	close(ep);
	close(p[0]);
	close(p[1]);
	waitpid(pid, NULL, 0);
	sink++;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int stage;

/* takes the lock, says so, holds it s seconds; then, once the main
 * thread has it (stage 3), signals the cv s seconds later: a main thread
 * kept from a CPU longer than s after the unlock (two CPU hogs and the
 * tests beside them) found the cv signalled already, a wait of 1 us */
static void *
holder(void *arg)
{
	double s = *(double *)arg;

	pthread_mutex_lock(&lock);
	pthread_mutex_lock(&gate);
	stage = 1;
	pthread_cond_signal(&gate_cv);
	pthread_mutex_unlock(&gate);
	sleep_for(s);
	pthread_mutex_unlock(&lock);
	pthread_mutex_lock(&gate);
	while (stage != 3)
		pthread_cond_wait(&gate_cv, &gate);
	pthread_mutex_unlock(&gate);
	sleep_for(s);
	pthread_mutex_lock(&gate);
	stage = 2;
	pthread_cond_signal(&gate_cv);
	pthread_mutex_unlock(&gate);
	return NULL;
}

static double mutex_took, cond_took;

__attribute__((noinline)) void
ws_mutex(void)
{
	double t = now();

	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	mutex_took = now() - t;
	pthread_mutex_lock(&gate);
	stage = 3;
	pthread_cond_signal(&gate_cv);
	pthread_mutex_unlock(&gate);
	sink++;
}

__attribute__((noinline)) void
ws_cond(void)
{
	double t = now();

	pthread_mutex_lock(&gate);
	while (stage != 2)
		pthread_cond_wait(&gate_cv, &gate);
	pthread_mutex_unlock(&gate);
	cond_took = now() - t;
	sink++;
}

/* the mutex and the condition variable: another thread holds the one,
 * then signals the other */
static void
locks(void)
{
	pthread_t t;
	double s = length();

	stage = 0;
	pthread_create(&t, NULL, holder, &s);
	pthread_mutex_lock(&gate);
	while (stage != 1)
		pthread_cond_wait(&gate_cv, &gate);
	pthread_mutex_unlock(&gate);
	ws_mutex();
	ws_cond();
	pthread_join(t, NULL);
}

__attribute__((noinline)) void
ws_fsync(void)
{
	char name[4096], buf[4096];
	double end = now() + length();
	int fd;

	snprintf(name, sizeof(name), "%s/wallstack.%d", dir, (int)getpid());
	if ((fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0)
		exit(1);
	memset(buf, 'x', sizeof(buf));
	while (now() < end) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			exit(1);
		fsync(fd);
	}
	close(fd);
	unlink(name);
	sink++;
}

__attribute__((noinline)) void
ws_accept(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0), c;
	double wait = length();
	pid_t pid;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 1) ||
	    getsockname(s, (struct sockaddr *)&a, &len))
		exit(1);
	pid = fork();
	if (pid == 0) {
		int k = socket(AF_INET, SOCK_STREAM, 0);

		sleep_for(wait);
		_exit(connect(k, (struct sockaddr *)&a, sizeof(a)) ? 1 : 0);
	}
	if ((c = accept(s, NULL, NULL)) < 0)
		exit(1);
	close(c);
	close(s);
	waitpid(pid, NULL, 0);
	sink++;
}

__attribute__((noinline)) void
ws_waitpid(void)
{
	double s = length();
	pid_t pid = fork();

	if (pid == 0) {
		sleep_for(s);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	sink++;
}

/* one site, waitpid, for n children one after the other */
__attribute__((noinline)) void
ws_children(int n)
{
	printf("truth: {");
	for (int i = 0; i < n; i++) {
		double s = length(), t = now();
		pid_t pid = fork();

		if (pid == 0) {
			sleep_for(s);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		printf("%s\"%d\": %.6f", i ? ", " : "", (int)pid, now() - t);
		/* some CPU between the waits: a profile with CPU samples too */
		for (double end = now() + s / 10; now() < end;)
			sink++;
	}
	printf("}\n");
	sink++;
}

int
main(int argc, char **argv)
{
	static void (*const phase[])(void) = {
		ws_sleep, ws_pipe, ws_poll, ws_epoll, locks, ws_fsync, ws_accept, ws_waitpid,
	};
	static const char *const name[] = {
		"ws_sleep", "ws_pipe", "ws_poll", "ws_epoll", "locks", "ws_fsync", "ws_accept",
		"ws_waitpid",
	};
	double took[8], t0 = now();

	srandom((unsigned)(getpid() ^ (unsigned)(now() * 1e6)));
	if (argc > 2 && !strcmp(argv[1], "children")) {
		if (argc > 3)
			scale = atof(argv[3]);
		setvbuf(stdout, NULL, _IOFBF, 1 << 16);
		ws_children(atoi(argv[2]));
		return 0;
	}
	if (argc > 1)
		scale = atof(argv[1]);
	if (argc > 2)
		dir = argv[2];
	for (int i = 0; i < 8; i++) {
		double s = now();

		phase[i]();
		took[i] = now() - s;
	}
	printf("truth: {");
	for (int i = 0; i < 8; i++)
		if (phase[i] != locks)
			printf("\"%s\": %.6f, ", name[i], took[i]);
	printf("\"ws_mutex\": %.6f, \"ws_cond\": %.6f, ", mutex_took, cond_took);
	printf("\"run\": %.6f}\n", now() - t0);
	return 0;
}
