/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Blocking calls that a handler would break: each in a thread of its own,
 * again and again with short random timeouts, for SECONDS of wall time,
 * while one thread burns CPU (so that CPU samples go on too). Counts every
 * EINTR, and every call that returned success but changed errno (set to a
 * mark before it); prints one line of counts and exits 1 if it saw either.
 * The wall-clock sampler must cause neither: it never signals a thread.
 * One more thread does what a daemon does, again and again: closes
 * descriptor 0 and opens /dev/null, which must be 0 again; the sampler's
 * own files must never take a number the program expects. It starts once
 * every other thread has entered its function: libpc(7) says that a
 * task-clock event is opened at the lowest free number (and moved above
 * 600 at once) as each thread starts, and nothing else after.
 * Usage: blockers SECONDS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>

#define MARK 4242

enum { NANOSLEEP, SELECT, POLL, EPOLL, PPOLL, SIGTIMEDWAIT, FUTEX, READ, CALLS };
static const char *const names[CALLS] = {
	"nanosleep", "select", "poll", "epoll_wait", "ppoll", "sigtimedwait", "futex", "read",
};
static long eintr[CALLS], changed[CALLS], calls[CALLS];
static double deadline;
static int pipefd[2], epfd;
static uint32_t futex_word;
static volatile unsigned long sink;
static long fd_calls, fd_wrong;

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* 1 to 20 ms, drawn afresh each call: no period to keep step with */
static long
random_ms(unsigned *seed)
{
	return 1 + (long)(rand_r(seed) % 20);
}

static void
note(int which, long r, int err, int ok_errno)
{
	calls[which]++;
	if (r < 0 && err == EINTR)
		eintr[which]++;
	else if (r >= 0 && ok_errno && errno != MARK)
		changed[which]++;
}

/* threads of the program's that have entered their function */
static int started;

static void
enter(void)
{
	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
}

static void *
blocker(void *arg)
{
	int which = (int)(long)arg;
	unsigned seed = (unsigned)which * 7919u + (unsigned)getpid();
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	enter();
	while (now() < deadline) {
		long ms = random_ms(&seed), r = 0;
		struct timespec ts = { 0, ms * 1000000L };
		struct timeval tv = { 0, ms * 1000 };
		struct pollfd p = { pipefd[0], 0, 0 };	/* no events: times out */
		struct epoll_event ev;
		char c;

		errno = MARK;
		switch (which) {
		case NANOSLEEP: r = nanosleep(&ts, NULL); break;
		case SELECT: r = select(0, NULL, NULL, NULL, &tv); break;
		case POLL: r = poll(&p, 1, (int)ms); break;
		case EPOLL: r = epoll_wait(epfd, &ev, 1, (int)ms); break;
		case PPOLL: r = ppoll(&p, 1, &ts, NULL); break;
		case SIGTIMEDWAIT:
			r = sigtimedwait(&set, NULL, &ts);
			if (r < 0 && errno == EAGAIN)
				r = 0, errno = MARK;	/* its timeout */
			break;
		case FUTEX:
			r = syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
			if (r < 0 && errno == ETIMEDOUT)
				r = 0, errno = MARK;
			break;
		case READ: r = read(pipefd[0], &c, 1); break;
		}
		note(which, r, errno, 1);
	}
	return NULL;
}

/* feeds the read thread a byte at random moments */
static void *
writer(void *arg)
{
	unsigned seed = 99;

	(void)arg;
	enter();
	while (now() < deadline + 0.05) {
		struct timespec ts = { 0, random_ms(&seed) * 1000000L };

		nanosleep(&ts, NULL);
		if (write(pipefd[1], "x", 1) != 1)
			break;
	}
	return NULL;
}

static void *
reopener(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < CALLS + 2 &&
	       now() < deadline)
		sched_yield();
	while (now() < deadline) {
		int fd;

		close(0);
		fd = open("/dev/null", O_RDONLY);
		fd_calls++;
		if (fd != 0) {
			fd_wrong++;
			if (fd > 0)
				close(fd);
		}
	}
	return NULL;
}

static void *
burner(void *arg)
{
	(void)arg;
	enter();
	while (now() < deadline)
		for (int i = 0; i < 100000; i++)
			sink = sink * 31 + (unsigned long)i;
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t t[CALLS + 3];
	sigset_t set;
	long bad = 0;

	deadline = now() + (argc > 1 ? atof(argv[1]) : 2.0);
	/* SIGUSR1 blocked everywhere, for sigtimedwait */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pipe(pipefd) || (epfd = epoll_create1(0)) < 0)
		return 2;
	for (long i = 0; i < CALLS; i++)
		pthread_create(&t[i], NULL, blocker, (void *)i);
	pthread_create(&t[CALLS], NULL, writer, NULL);
	pthread_create(&t[CALLS + 1], NULL, burner, NULL);
	pthread_create(&t[CALLS + 2], NULL, reopener, NULL);
	for (int i = 0; i < CALLS + 3; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < CALLS; i++) {
		printf("%s %ld calls %ld eintr %ld errno; ", names[i], calls[i], eintr[i],
		       changed[i]);
		bad += eintr[i] + changed[i];
	}
	printf("reopen of 0: %ld calls %ld wrong\n", fd_calls, fd_wrong);
	bad += fd_wrong;
	return bad ? 1 : 0;
}
