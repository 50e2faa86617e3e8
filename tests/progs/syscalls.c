/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Blocking system calls in sampled threads must never fail with EINTR where
 * the unprofiled program would not. Threads burn CPU (so their timers fire)
 * between short blocking calls (nanosleep, poll, select, read from a pipe)
 * for SECONDS of wall-clock time; the program counts every EINTR and exits
 * 1 if it saw one. Usage: syscalls SECONDS
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "truth.h"

static double seconds, deadline;

static double
wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static long eintr[4], calls[4];
static volatile uint64_t sink;
static int pipefd[2];

__attribute__((noinline)) static void
burn(void)
{
	sink = spin(sink, SPIN_UNIT / 20);
}

static void *
sleeper(void *arg)
{
	struct timespec ts = { 0, 20000 };

	while (wall() < deadline) {
		burn();
		calls[0]++;
		if (nanosleep(&ts, NULL) && errno == EINTR)
			eintr[0]++;
	}
	return arg;
}

static void *
poller(void *arg)
{
	while (wall() < deadline) {
		struct timeval tv = { 0, 20 };

		burn();
		calls[1] += 2;
		if (poll(NULL, 0, 1) < 0 && errno == EINTR)
			eintr[1]++;
		if (select(0, NULL, NULL, NULL, &tv) < 0 && errno == EINTR)
			eintr[1]++;
	}
	return arg;
}

static void *
writer(void *arg)
{
	char c = 'x';
	struct timespec ts = { 0, 50000 };

	for (;;) {
		if (write(pipefd[1], &c, 1) != 1)
			break;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		ts.tv_nsec = 50000;
	}
	return arg;
}

static void *
reader(void *arg)
{
	char c;

	while (wall() < deadline) {
		burn();
		calls[2]++;
		if (read(pipefd[0], &c, 1) < 0 && errno == EINTR)
			eintr[2]++;
	}
	return arg;
}

int
main(int argc, char **argv)
{
	pthread_t t[4];
	void *(*fn[3])(void *) = { sleeper, poller, reader };
	long total = 0, bad = 0;

	seconds = argc > 1 ? atof(argv[1]) : 1.0;
	deadline = wall() + seconds;
	if (pipe(pipefd))
		return 2;
	pthread_create(&t[3], NULL, writer, NULL);
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, fn[i], NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 3; i++) {
		total += calls[i];
		bad += eintr[i];
	}
	printf("calls: %ld eintr: %ld (nanosleep %ld, poll/select %ld, read %ld)\n",
	       total, bad, eintr[0], eintr[1], eintr[2]);
	return bad ? 1 : 0;
}
