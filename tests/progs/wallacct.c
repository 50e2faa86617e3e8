/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Wall time that adds up (test_wallacct.py): the truth of each thread's
 * life, CPU and run-queue time from the program's own clocks.
 *
 *   wallacct sleepers N SECONDS CPU_MS
 *	N threads (64 KiB stacks) each live about SECONDS (0.6 to 1.0 of it,
 *	at random), burn CPU_MS of CPU, and sleep the rest in jittered
 *	sleeps (5 to 25 ms a sleep at 16 threads and fewer, 50 to 150 ms at
 *	1,000 and fewer, in one sleep beyond), then end; the main thread
 *	joins them. Prints "thread TID LIFE CPU END" for each thread and the
 *	main thread (seconds, CLOCK_MONOTONIC and the thread's CPU clock):
 *	its life to its function's return, and from its creation to its
 *	end (its key destructor, or for the main thread 50 ms past its last
 *	line): a new thread may wait for a CPU before its first instruction
 *	(88 ms at a load of 10), which is its life too.
 *   wallacct mutex N SECONDS
 *	N identical threads take one mutex in turn for SECONDS: 0.2 ms of
 *	CPU under it, then a sleep of 0.1 to 0.5 ms; printed as sleepers.
 *   wallacct runqueue SECONDS
 *	a thread: 0.2 ms of CPU, then a sleep of 0.5 to 1.5 ms, again and
 *	again for SECONDS (in rq_sleep), then a last nap; prints "runqueue
 *	TID LIFE CPU RUNQ" with its run-queue time from its own schedstat.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double
now_s(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static unsigned
rnd(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

static volatile unsigned long sink;

__attribute__((noinline)) static void
burn_until(double cpu_s)
{
	while (now_s(CLOCK_THREAD_CPUTIME_ID) < cpu_s)
		for (int i = 0; i < 2000; i++)
			sink = sink * 31 + (unsigned long)i;
}

__attribute__((noinline)) static void
nap(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&t, &t))
		;
}

struct worker {
	pthread_t t;
	int locker;
	unsigned seed;
	double want, cpu_ms, chunk;	/* life, CPU, longest sleep (s) */
	double t0, life, hi, cpu;	/* life to its return, hi to its end */
	double born;			/* the creator's clock before pthread_create */
	long tid;
};

/* A thread's life ends in its key destructors, after its function
 * returns: libpc tells its end from its own (created first, run first),
 * this one's runs after it. With 10,000 threads ending at once on two
 * CPUs a thread may wait for a CPU between the two for 30 ms: its life
 * is known to lie between its return and this destructor. */
static pthread_key_t end_key;

static void
ended(void *p)
{
	struct worker *w = p;

	w->hi = now_s(CLOCK_MONOTONIC) - w->born;
}

static void *
worker(void *p)
{
	struct worker *w = p;
	double t0 = now_s(CLOCK_MONOTONIC), end = t0 + w->want, left;

	w->t0 = t0;
	pthread_setspecific(end_key, w);
	w->tid = syscall(SYS_gettid);
	if (w->locker) {
		static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

		while (now_s(CLOCK_MONOTONIC) < end) {
			pthread_mutex_lock(&m);
			burn_until(now_s(CLOCK_THREAD_CPUTIME_ID) + 0.0002);
			pthread_mutex_unlock(&m);
			nap(0.0001 + (rnd(&w->seed) % 400) / 1e6);
		}
		goto out;
	}
	burn_until(w->cpu_ms / 1000);
	while ((left = end - now_s(CLOCK_MONOTONIC)) > 0) {
		double s = w->chunk <= 0 ? left :
			w->chunk * (0.33 + 0.67 * (rnd(&w->seed) % 1000) / 1000.0);

		nap(s < left ? s : left);
	}
out:
	w->cpu = now_s(CLOCK_THREAD_CPUTIME_ID);
	w->life = now_s(CLOCK_MONOTONIC) - t0;
	return NULL;
}

static int
sleepers(int n, double secs, double cpu_ms, int locker)
{
	double t0 = now_s(CLOCK_MONOTONIC);
	struct worker *w = calloc((size_t)n, sizeof(*w));
	pthread_attr_t attr;
	double chunk = n <= 16 ? 0.025 : n <= 1000 ? 0.15 : 0;

	if (!w)
		return 1;
	pthread_key_create(&end_key, ended);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < n; i++) {
		w[i].seed = (unsigned)i * 2654435761u + 1;
		w[i].want = locker ? secs : secs * (0.6 + 0.4 * (rnd(&w[i].seed) % 1000) / 1000.0);
		w[i].locker = locker;
		w[i].cpu_ms = cpu_ms;
		w[i].chunk = chunk;
		w[i].born = now_s(CLOCK_MONOTONIC);
		if (pthread_create(&w[i].t, &attr, worker, &w[i])) {
			fprintf(stderr, "wallacct: thread %d: cannot create\n", i);
			return 1;
		}
	}
	for (int i = 0; i < n; i++)
		pthread_join(w[i].t, NULL);
	for (int i = 0; i < n; i++)
		printf("thread %ld %.6f %.6f %.6f\n", w[i].tid, w[i].life, w[i].cpu, w[i].hi);
	/* the main thread's end is libpc's last round, after this line */
	printf("thread %ld %.6f %.6f %.6f\n", (long)getpid(), now_s(CLOCK_MONOTONIC) - t0,
	       now_s(CLOCK_THREAD_CPUTIME_ID), now_s(CLOCK_MONOTONIC) - t0 + 0.05);
	free(w);
	return 0;
}

static double
run_delay(void)
{
	char buf[128];
	int fd = open("/proc/thread-self/schedstat", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	unsigned long long run = 0, wait = 0;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	sscanf(buf, "%llu %llu", &run, &wait);
	return (double)wait / 1e9;
}

__attribute__((noinline)) static void
rq_sleep(double secs)
{
	double end = now_s(CLOCK_MONOTONIC) + secs;
	unsigned seed = (unsigned)getpid();

	while (now_s(CLOCK_MONOTONIC) < end) {
		burn_until(now_s(CLOCK_THREAD_CPUTIME_ID) + 0.0002);
		nap(0.0005 + (rnd(&seed) % 1000) / 1e6);
	}
}

/*
 * Its run-queue time is its schedstat's whole run_delay, which starts at 0
 * with the thread (its wait for a first CPU included, before t0). It ends
 * with a nap of 20 to 40 ms after its last reading: once a thread has
 * ended, schedstat cannot say how long it waited for a CPU since the
 * sampler's last look, and its wake-up from that nap (the run queue's
 * time after the reading) is what libpc counts to the nap instead.
 */
static void *
rq_thread(void *arg)
{
	double t0 = now_s(CLOCK_MONOTONIC), c, q1;
	unsigned seed = (unsigned)getpid() * 7u;

	rq_sleep(*(double *)arg);
	c = now_s(CLOCK_THREAD_CPUTIME_ID);
	q1 = run_delay();
	nap(0.020 + (rnd(&seed) % 20000) / 1e6);
	printf("runqueue %ld %.6f %.6f %.6f\n", (long)syscall(SYS_gettid),
	       now_s(CLOCK_MONOTONIC) - t0, c, q1);
	return NULL;
}

int
main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "sleepers"))
		return sleepers(atoi(argv[2]), atof(argv[3]), atof(argv[4]), 0);
	if (argc == 4 && !strcmp(argv[1], "mutex"))
		return sleepers(atoi(argv[2]), atof(argv[3]), 0, 1);
	if (argc == 3 && !strcmp(argv[1], "runqueue")) {
		pthread_t t;
		double secs = atof(argv[2]);

		/* a thread of its own: its whole life is in its clocks */
		if (pthread_create(&t, NULL, rq_thread, &secs) || pthread_join(t, NULL))
			return 1;
		return 0;
	}
	fprintf(stderr, "usage: wallacct sleepers N SECONDS CPU_MS | mutex N SECONDS | "
		"runqueue SECONDS\n");
	return 2;
}
