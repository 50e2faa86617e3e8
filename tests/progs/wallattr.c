/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Known waits in many threads at once, for the wall profile's attribution
 * (test_wallattr.py, bench/wallattr.py): N worker threads each wait in
 * turn in nanosleep, a pipe read, poll, epoll_wait, a mutex, a condition
 * variable, fsync, accept and waitpid, each in its own function (wa_*),
 * starting at a different one (thread i at wait i % 9), so that at any
 * moment the threads are in different waits. Each wait's length is drawn
 * at random (no period to keep step with the sampler's rounds or the 250
 * Hz tick). A wait's other side (the writer, the holder, the connecter)
 * is a short-lived thread (a child for waitpid) whose stack holds no wa_*
 * frame. Prints one "truth:" line of JSON: each function's seconds summed
 * over the workers, and the workers' lives summed ("life").
 *
 *   wallattr N [SCALE [DIR]]   N workers, waits of about SCALE seconds
 *                              (0.1); fsync's files are made in DIR (".")
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

#define WAITS 9

static double scale = 0.1;
static const char *dir = ".";
static volatile unsigned long sink;

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void
sleep_for(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&t, &t))
		;
}

/* A worker's state: its random draws, and what its wait's other side
 * acts on. */
struct worker {
	int index;
	unsigned seed;
	double s;		/* the wait's length */
	int fd;			/* the pipe's write end; the listening socket */
	struct sockaddr_in addr;
	pthread_mutex_t lock, gate;
	pthread_cond_t cv;
	int stage;
	double took[WAITS], life;
};

/* a wait's length: scale, +-25 % */
static double
length(struct worker *w)
{
	w->seed = w->seed * 1103515245u + 12345u;
	return scale * (0.75 + 0.5 * (double)((w->seed >> 8) % 1000) / 1000.0);
}

/* The other sides: after w->s seconds, write a byte to w->fd. */
static void *
writer(void *arg)
{
	struct worker *w = arg;

	sleep_for(w->s);
	if (write(w->fd, "x", 1) != 1)
		exit(1);
	return NULL;
}

/* connect to w->addr after w->s seconds */
static void *
connecter(void *arg)
{
	struct worker *w = arg;
	int k = socket(AF_INET, SOCK_STREAM, 0);

	sleep_for(w->s);
	if (k < 0 || connect(k, (struct sockaddr *)&w->addr, sizeof(w->addr)))
		exit(1);
	close(k);
	return NULL;
}

/* hold w->lock w->s seconds (stage 1 once held) */
static void *
holder(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&w->lock);
	pthread_mutex_lock(&w->gate);
	w->stage = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->gate);
	sleep_for(w->s);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* stage 2 after w->s seconds, signalled */
static void *
signaller(void *arg)
{
	struct worker *w = arg;

	sleep_for(w->s);
	pthread_mutex_lock(&w->gate);
	w->stage = 2;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->gate);
	return NULL;
}

static pthread_t
side(void *(*fn)(void *), struct worker *w)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	if (pthread_create(&t, &a, fn, w))
		exit(1);
	pthread_attr_destroy(&a);
	return t;
}

__attribute__((noinline)) static void
wa_sleep(struct worker *w)
{
	sleep_for(w->s);
	sink++;
}

__attribute__((noinline)) static void
wa_pipe(struct worker *w)
{
	int p[2];
	char c;
	pthread_t t;

	if (pipe(p))
		exit(1);
	w->fd = p[1];
	t = side(writer, w);
	if (read(p[0], &c, 1) != 1)
		exit(1);
	pthread_join(t, NULL);
	close(p[0]);
	close(p[1]);
	sink++;
}

__attribute__((noinline)) static void
wa_poll(struct worker *w)
{
	struct pollfd f = { .fd = -1 };
	double end = now() + w->s;

	while (now() < end)
		poll(&f, 1, (int)((end - now()) * 1000) + 1);
	sink++;
}

__attribute__((noinline)) static void
wa_epoll(struct worker *w)
{
	int p[2], ep = epoll_create1(0);
	struct epoll_event e = { .events = EPOLLIN };
	pthread_t t;

	if (ep < 0 || pipe(p))
		exit(1);
	e.data.fd = p[0];
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e);
	w->fd = p[1];
	t = side(writer, w);
	while (epoll_wait(ep, &e, 1, -1) != 1)
		;
	pthread_join(t, NULL);
	close(ep);
	close(p[0]);
	close(p[1]);
	sink++;
}

__attribute__((noinline)) static void
wa_mutex(struct worker *w)
{
	pthread_t t;

	w->stage = 0;
	t = side(holder, w);
	pthread_mutex_lock(&w->gate);
	while (w->stage != 1)
		pthread_cond_wait(&w->cv, &w->gate);
	pthread_mutex_unlock(&w->gate);
	pthread_mutex_lock(&w->lock);
	pthread_mutex_unlock(&w->lock);
	pthread_join(t, NULL);
	sink++;
}

__attribute__((noinline)) static void
wa_cond(struct worker *w)
{
	pthread_t t;

	w->stage = 0;
	t = side(signaller, w);
	pthread_mutex_lock(&w->gate);
	while (w->stage != 2)
		pthread_cond_wait(&w->cv, &w->gate);
	pthread_mutex_unlock(&w->gate);
	pthread_join(t, NULL);
	sink++;
}

__attribute__((noinline)) static void
wa_fsync(struct worker *w)
{
	char name[4096], buf[4096];
	double end = now() + w->s;
	int fd;

	snprintf(name, sizeof(name), "%s/wallattr.%d.%d", dir, (int)getpid(), w->index);
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

__attribute__((noinline)) static void
wa_accept(struct worker *w)
{
	socklen_t len = sizeof(w->addr);
	int s = socket(AF_INET, SOCK_STREAM, 0), c;
	pthread_t t;

	memset(&w->addr, 0, sizeof(w->addr));
	w->addr.sin_family = AF_INET;
	w->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&w->addr, sizeof(w->addr)) || listen(s, 1) ||
	    getsockname(s, (struct sockaddr *)&w->addr, &len))
		exit(1);
	t = side(connecter, w);
	if ((c = accept(s, NULL, NULL)) < 0)
		exit(1);
	pthread_join(t, NULL);
	close(c);
	close(s);
	sink++;
}

__attribute__((noinline)) static void
wa_waitpid(struct worker *w)
{
	pid_t pid = fork();

	if (pid == 0) {
		sleep_for(w->s);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	sink++;
}

static void (*const wait_fn[WAITS])(struct worker *) = {
	wa_sleep, wa_pipe, wa_poll, wa_epoll, wa_mutex, wa_cond, wa_fsync, wa_accept,
	wa_waitpid,
};
static const char *const wait_name[WAITS] = {
	"wa_sleep", "wa_pipe", "wa_poll", "wa_epoll", "wa_mutex", "wa_cond", "wa_fsync",
	"wa_accept", "wa_waitpid",
};

static void *
work(void *arg)
{
	struct worker *w = arg;
	double t0 = now();

	for (int k = 0; k < WAITS; k++) {
		int i = (w->index + k) % WAITS;
		double t;

		w->s = length(w);
		t = now();
		wait_fn[i](w);
		w->took[i] = now() - t;
	}
	w->life = now() - t0;
	return NULL;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 16;
	struct worker *w;
	pthread_t *t;
	double sum[WAITS] = { 0 }, life = 0;
	unsigned seed = (unsigned)getpid() ^ (unsigned)(now() * 1e6);

	if (argc > 2)
		scale = atof(argv[2]);
	if (argc > 3)
		dir = argv[3];
	if (n < 1 || !(w = calloc((size_t)n, sizeof(*w))) || !(t = calloc((size_t)n, sizeof(*t))))
		return 2;
	for (int i = 0; i < n; i++) {
		w[i].index = i;
		w[i].seed = seed + 7919u * (unsigned)i;
		pthread_mutex_init(&w[i].lock, NULL);
		pthread_mutex_init(&w[i].gate, NULL);
		pthread_cond_init(&w[i].cv, NULL);
		if (pthread_create(&t[i], NULL, work, &w[i]))
			return 2;
	}
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		for (int k = 0; k < WAITS; k++)
			sum[k] += w[i].took[k];
		life += w[i].life;
	}
	printf("truth: {");
	for (int k = 0; k < WAITS; k++)
		printf("\"%s\": %.6f, ", wait_name[k], sum[k]);
	printf("\"life\": %.6f, \"threads\": %d}\n", life, n);
	return 0;
}
