/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Known waits, for the wall-clock profile's tests: the main thread waits
 * in known ways, each phase in its own function, and measures each with
 * CLOCK_MONOTONIC; an idle thread waits on a condition variable for the
 * whole run. Prints one "truth:" line of JSON: each phase's wall seconds,
 * the idle thread's, and the run's.
 *
 *   waits [SCALE]   phases of about SCALE seconds each (0.4), each drawn
 *                   at random within +-25 % so that no phase keeps step
 *                   with a sampler's rounds
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double scale = 0.4;
static volatile unsigned long sink;

/* a phase's length: scale, +-25 % */
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

__attribute__((noinline)) void
wait_sleep(void)
{
	sleep_for(length());
}

/* a child writes to the pipe late; the read waits for it */
__attribute__((noinline)) void
wait_pipe(void)
{
	int p[2];
	char c;
	double s = length();
	pid_t pid;

	if (pipe(p))
		exit(1);
	pid = fork();
	if (pid == 0) {
		sleep_for(s);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		exit(1);
	close(p[0]);
	waitpid(pid, NULL, 0);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int holder_has_it;

static void *
holder(void *arg)
{
	double s = *(double *)arg;

	prctl(PR_SET_NAME, "holder", 0, 0, 0);
	pthread_mutex_lock(&lock);
	pthread_mutex_lock(&gate);
	holder_has_it = 1;
	pthread_cond_signal(&gate_cv);
	pthread_mutex_unlock(&gate);
	sleep_for(s);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* another thread holds the mutex for a while */
__attribute__((noinline)) void
wait_mutex(void)
{
	pthread_t t;
	double s = length();

	holder_has_it = 0;
	pthread_create(&t, NULL, holder, &s);
	pthread_mutex_lock(&gate);
	while (!holder_has_it)
		pthread_cond_wait(&gate_cv, &gate);
	pthread_mutex_unlock(&gate);
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	pthread_join(t, NULL);
}

/* a poll that times out */
__attribute__((noinline)) void
wait_poll(void)
{
	int p[2];
	struct pollfd f;
	double end = now() + length();

	if (pipe(p))
		exit(1);
	f.fd = p[0];
	f.events = POLLIN;
	while (now() < end)
		poll(&f, 1, (int)((end - now()) * 1000) + 1);
	close(p[0]);
	close(p[1]);
}

/* waitpid for a child that sleeps */
__attribute__((noinline)) void
wait_child(void)
{
	double s = length();
	pid_t pid = fork();

	if (pid == 0) {
		sleep_for(s);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	sink++;		/* not a tail call: this frame stays on the stack */
}

/* CPU work, no wait */
__attribute__((noinline)) void
work_cpu(void)
{
	double end = now() + length();

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			sink = sink * 2654435761u + (unsigned long)i;
}

static int idle_done;
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cv = PTHREAD_COND_INITIALIZER;
static double idle_seconds;

static void *
idle(void *arg)
{
	double t0 = now();

	(void)arg;
	prctl(PR_SET_NAME, "idle", 0, 0, 0);
	pthread_mutex_lock(&idle_lock);
	while (!idle_done)
		pthread_cond_wait(&idle_cv, &idle_lock);
	pthread_mutex_unlock(&idle_lock);
	idle_seconds = now() - t0;
	return NULL;
}

int
main(int argc, char **argv)
{
	static void (*const phase[])(void) = {
		wait_sleep, wait_pipe, wait_mutex, wait_poll, wait_child, work_cpu,
	};
	static const char *const name[] = {
		"wait_sleep", "wait_pipe", "wait_mutex", "wait_poll", "wait_child", "work_cpu",
	};
	double took[6], t0 = now();
	pthread_t t;

	if (argc > 1)
		scale = atof(argv[1]);
	srandom((unsigned)(getpid() ^ (unsigned)(now() * 1e6)));
	pthread_create(&t, NULL, idle, NULL);
	for (int i = 0; i < 6; i++) {
		double s = now();

		phase[i]();
		took[i] = now() - s;
	}
	pthread_mutex_lock(&idle_lock);
	idle_done = 1;
	pthread_cond_signal(&idle_cv);
	pthread_mutex_unlock(&idle_lock);
	pthread_join(t, NULL);
	printf("truth: {");
	for (int i = 0; i < 6; i++)
		printf("\"%s\": %.6f, ", name[i], took[i]);
	printf("\"idle\": %.6f, \"run\": %.6f}\n", idle_seconds, now() - t0);
	return 0;
}
