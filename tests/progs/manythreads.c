/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Thousands of short-lived threads, created and joined or detached: each
 * gets a timer while it lives, and none may outlive its thread. Prints the
 * number of POSIX timers (from /proc/self/timers) and task-clock perf event
 * descriptors left in the process while a long-lived worker keeps
 * spinning, and that worker's CPU time.
 * Usage: manythreads COUNT
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "truth.h"

static volatile int stop;
static volatile uint64_t sink;
static double worker_cpu;

static void *
short_lived(void *arg)
{
	sink = spin(sink, 200);
	if (arg)
		pthread_exit(NULL);	/* the other way out */
	return NULL;
}

__attribute__((noinline)) void *
long_worker(void *arg)
{
	uint64_t x = 5;

	while (!stop)
		x = spin(x, SPIN_UNIT / 10);
	sink = x;
	worker_cpu = thread_cpu();
	return arg;
}

static int
count_timers(void)
{
	char buf[1 << 16];
	FILE *f = fopen("/proc/self/timers", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "ID:", 3))
			n++;
	fclose(f);
	return n;
}

static int
count_perf_fds(void)
{
	char path[64], link[128];
	int n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		ssize_t k;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		k = readlink(path, link, sizeof(link) - 1);
		if (k <= 0)
			continue;
		link[k] = 0;
		n += strstr(link, "perf_event") != NULL;
	}
	return n;
}

int
main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 2000;
	pthread_attr_t detached;
	pthread_t w, t;

	pthread_attr_init(&detached);
	pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
	pthread_create(&w, NULL, long_worker, NULL);
	for (int i = 0; i < count; i++) {
		if (i % 4 == 3) {
			if (pthread_create(&t, &detached, short_lived, NULL) == 0)
				continue;
		}
		if (pthread_create(&t, NULL, short_lived, (void *)(long)(i & 1)))
			return 1;
		pthread_join(t, NULL);
	}
	usleep(200000);		/* let the detached ones finish */
	printf("timers: %d\n", count_timers() + count_perf_fds());
	stop = 1;
	pthread_join(w, NULL);
	printf("truth: {\"long_worker\": %.6f, \"cpu\": %.6f}\n", worker_cpu, process_cpu());
	return 0;
}
