/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The timeline's test program (tests/e2e/test_timeline38.py): phases at
 * known times, each in a function of its own, and requests marked with
 * pcprof/marker.h, some slow by design. It prints each phase's
 * CLOCK_MONOTONIC span and the requests it made, so that the test can
 * hold the timeline to them. Usage: timeline38 [requests [slow_every]]
 * [-t threads] [-f DIR: samply's DIR/marker-PID.txt too] [-k: busy until
 * killed, once served]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../include/pcprof/marker.h"

static volatile unsigned long sink;

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Busy for sec of CPU; the clock read once per block of work. */
#define BURNER(fn, k)							\
	__attribute__((noinline)) static void fn(double sec)		\
	{								\
		double end = cpu() + sec;				\
		do {							\
			unsigned n = 20000 + (rand() & 255);		\
			for (unsigned i = 0; i < n; i++)		\
				sink += i * k ^ sink;			\
		} while (cpu() < end);					\
	}

/* each its own constant: identical functions would be folded into one */
BURNER(phase_one, 3)
BURNER(phase_two, 5)
BURNER(fast_request, 7)
BURNER(slow_request, 11)

static FILE *marker_file;

static void
phase(const char *name, void (*fn)(double), double sec)
{
	double a = mono(), b;

	pcprof_mark_begin(name);
	fn(sec);
	pcprof_mark_end(name);
	b = mono();
	printf("phase %s %.6f %.6f\n", name, a, b);
	if (marker_file)
		fprintf(marker_file, "%llu %llu file-%s\n", (unsigned long long)(a * 1e9),
			(unsigned long long)(b * 1e9), name);
}

static int requests = 1000, slow_every = 10;

static void *
serve(void *arg)
{
	int fast = 0, slow = 0;

	(void)arg;
	for (int i = 0; i < requests; i++) {
		int is_slow = i % slow_every == slow_every - 1;

		pcprof_mark_begin(is_slow ? "slow" : "fast");
		if (is_slow)
			slow_request(0.002);
		else
			fast_request(0.0002);
		pcprof_mark_end(is_slow ? "slow" : "fast");
		pcprof_count("served", i + 1);
		is_slow ? slow++ : fast++;
	}
	pcprof_mark_instant("served all");
	printf("requests fast %d slow %d\n", fast, slow);
	printf("cpu serve %.6f\n", cpu());
	return NULL;
}

int
main(int argc, char **argv)
{
	int threads = 1, opt, killme = 0;
	pthread_t t[16];

	while ((opt = getopt(argc, argv, "t:f:k")) != -1) {
		if (opt == 't')
			threads = atoi(optarg);
		else if (opt == 'f') {
			char path[4096];

			snprintf(path, sizeof(path), "%s/marker-%d.txt", optarg, (int)getpid());
			marker_file = fopen(path, "w");
		}
		else if (opt == 'k')
			killme = 1;
	}
	if (optind < argc)
		requests = atoi(argv[optind]);
	if (optind + 1 < argc)
		slow_every = atoi(argv[optind + 1]);
	if (threads < 1 || threads > 16)
		threads = 1;
	phase("one", phase_one, 0.3);
	phase("two", phase_two, 0.3);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, serve, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	if (killme) {
		printf("spinning\n");
		fflush(stdout);
		for (;;)
			phase_one(1);
	}
	if (marker_file)
		fclose(marker_file);
	printf("cpu main %.6f\n", cpu());
	return 0;
}
