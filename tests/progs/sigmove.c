/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program that uses the signal libpc samples on by default (SIGRTMAX),
 * and other things that once stopped libpc's sampling: run plain and under
 * libpc, it must print the same. Each case burns CPU in a named function
 * after the part that matters, so that the profile shows sampling went on.
 *
 *   sigmove WAY [thread|process]  SIGRTMAX blocked, sent with a value by
 *       another thread or a child process, and waited for with WAY:
 *       sigwait, sigwaitinfo, sigtimedwait, sigsuspend, ppoll, pselect,
 *       signalfd
 *   sigmove eintr       a handler without SA_RESTART cuts a read short
 *   sigmove queue3      three sigqueue values, blocked, then unblocked
 *   sigmove selfqueue   every signal blocked, three values sent to itself,
 *       taken with sigtimedwait
 *   sigmove longjmp     a handler on an alternate stack longjmps out
 *   sigmove closerange  close_range(3, ~0) with two threads burning
 *   sigmove smallstack  a 16 KiB-stack thread that leaves about 1 KiB free
 *       (SIGMOVE_DEPTH levels of 528 bytes, 20 by default)
 *
 * SIGMOVE_SCALE=F makes every burn F times as long.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static double scale = 1;	/* SIGMOVE_SCALE: every burn shorter */

static double
cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double
wall_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* each its own constant, so that no two are folded into one */
#define BURNER(name, k)							\
	__attribute__((noinline)) static void				\
	name(double secs)						\
	{								\
		double end = cpu_now() + secs * scale;			\
		while (cpu_now() < end)					\
			for (int i = 0; i < 20000; i++)			\
				sink += (unsigned long)i * (k);		\
	}
BURNER(before_work, 2654435761u)
BURNER(after_move_work, 2654435763u)
BURNER(after_jump_work, 2654435765u)
BURNER(after_close_work, 2654435767u)
BURNER(small_stack_work, 2654435769u)

static int sig;			/* SIGRTMAX */
static volatile int got_value = -1, handled;
static pid_t self;

static void
on_sig(int s, siginfo_t *si, void *uc)
{
	(void)s;
	(void)uc;
	handled++;
	got_value = si->si_value.sival_int;
}

static void
install(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sig;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void
block(int how)
{
	sigset_t one;

	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(how, &one, NULL);
}

static void
wait_a_little(void)
{
	struct timespec d = { 0, 60 * 1000 * 1000 };

	nanosleep(&d, NULL);
}

static void *
sender(void *arg)
{
	(void)arg;
	wait_a_little();
	sigqueue(self, sig, (union sigval){ .sival_int = 7 });
	return NULL;
}

/* The signal comes from a thread or a child process. */
static void
send_later(const char *from, pthread_t *t)
{
	if (strcmp(from, "process") == 0) {
		if (fork() == 0) {
			sender(NULL);
			_exit(0);
		}
		return;
	}
	pthread_create(t, NULL, sender, NULL);
}

static int
wait_for(const char *way)
{
	sigset_t set, unblocked;
	struct timespec ten = { 10, 0 };
	siginfo_t si;
	int s = 0;

	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_SETMASK, NULL, &unblocked);
	sigdelset(&unblocked, sig);
	if (strcmp(way, "sigwait") == 0) {
		if (sigwait(&set, &s) == 0 && s == sig)
			return printf("sigwait: got SIGRTMAX\n"), 0;
	} else if (strcmp(way, "sigwaitinfo") == 0) {
		if (sigwaitinfo(&set, &si) == sig)
			return printf("sigwaitinfo: got SIGRTMAX value %d\n", si.si_value.sival_int), 0;
	} else if (strcmp(way, "sigtimedwait") == 0) {
		if (sigtimedwait(&set, &si, &ten) == sig)
			return printf("sigtimedwait: got SIGRTMAX value %d\n", si.si_value.sival_int), 0;
	} else if (strcmp(way, "signalfd") == 0) {
		struct signalfd_siginfo ssi;
		struct pollfd p;
		int fd = signalfd(-1, &set, SFD_CLOEXEC);

		p.fd = fd;
		p.events = POLLIN;
		if (fd >= 0 && poll(&p, 1, 10000) == 1 &&
		    read(fd, &ssi, sizeof(ssi)) == (ssize_t)sizeof(ssi) && (int)ssi.ssi_signo == sig)
			return printf("signalfd: got SIGRTMAX value %d\n", ssi.ssi_int), 0;
	} else if (strcmp(way, "sigsuspend") == 0) {
		while (!handled)
			sigsuspend(&unblocked);
		return printf("sigsuspend: handler got value %d\n", got_value), 0;
	} else if (strcmp(way, "ppoll") == 0) {
		while (!handled)
			if (ppoll(NULL, 0, &ten, &unblocked) == 0)
				break;
		if (handled)
			return printf("ppoll: handler got value %d\n", got_value), 0;
	} else if (strcmp(way, "pselect") == 0) {
		while (!handled)
			if (pselect(0, NULL, NULL, NULL, &ten, &unblocked) == 0)
				break;
		if (handled)
			return printf("pselect: handler got value %d\n", got_value), 0;
	} else {
		fprintf(stderr, "sigmove: no way %s\n", way);
		return 2;
	}
	printf("%s: nothing came (%s)\n", way, strerror(errno));
	return 1;
}

static int
blocked_wait(const char *way, const char *from)
{
	pthread_t t;
	double t0;
	int r;

	before_work(0.05);
	if (strcmp(way, "sigsuspend") == 0 || strcmp(way, "ppoll") == 0 ||
	    strcmp(way, "pselect") == 0)
		install(0);
	block(SIG_BLOCK);
	send_later(from, &t);
	t0 = wall_now();
	r = wait_for(way);
	if (wall_now() - t0 > 5)
		printf("%s: took %.1f s\n", way, wall_now() - t0);
	if (strcmp(from, "process") == 0)
		wait(NULL);
	else
		pthread_join(t, NULL);
	after_move_work(0.25);
	return r;
}

static void *
kick_main(void *arg)
{
	wait_a_little();
	pthread_kill(*(pthread_t *)arg, sig);
	return NULL;
}

static int
eintr(void)
{
	pthread_t me = pthread_self(), t;
	int fds[2];
	char c;
	ssize_t n;

	before_work(0.05);
	install(0);
	if (pipe(fds))
		return 2;
	pthread_create(&t, NULL, kick_main, &me);
	n = read(fds[0], &c, 1);
	printf("read: %zd %s, handler ran %d\n", n, n < 0 ? strerror(errno) : "", handled);
	pthread_join(t, NULL);
	after_move_work(0.25);
	return n < 0 && errno == EINTR ? 0 : 1;
}

static int values[8], nvalues;

static void
on_queued(int s, siginfo_t *si, void *uc)
{
	(void)s;
	(void)uc;
	if (nvalues < 8)
		values[nvalues++] = si->si_value.sival_int;
}

static int
queue3(void)
{
	struct sigaction sa;

	before_work(0.05);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_queued;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	block(SIG_BLOCK);
	for (int i = 1; i <= 3; i++)
		sigqueue(self, sig, (union sigval){ .sival_int = 100 + i });
	block(SIG_UNBLOCK);
	printf("queued values:");
	for (int i = 0; i < nvalues; i++)
		printf(" %d", values[i]);
	printf("\n");
	after_move_work(0.25);
	return nvalues == 3 ? 0 : 1;
}

/* Every signal blocked (a full set names none), three values sent to
 * itself, then taken one by one. */
static int
selfqueue(void)
{
	sigset_t all, one;
	siginfo_t si;

	before_work(0.05);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (int i = 1; i <= 3; i++)
		sigqueue(self, sig, (union sigval){ .sival_int = 200 + i });
	sigemptyset(&one);
	sigaddset(&one, sig);
	printf("taken:");
	for (int i = 0; i < 3; i++) {
		struct timespec ten = { 10, 0 };

		if (sigtimedwait(&one, &si, &ten) != sig)
			break;
		printf(" %d", si.si_value.sival_int);
	}
	printf("\n");
	after_move_work(0.25);
	return 0;
}

static sigjmp_buf jump;

static void
on_usr1(int s)
{
	(void)s;
	siglongjmp(jump, 1);
}

static int
jumps(void)
{
	static char alt[64 * 1024];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0 };
	struct sigaction sa;

	before_work(0.05);
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigfillset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < 3; i++)
		if (sigsetjmp(jump, 0) == 0)
			raise(SIGUSR1);
	printf("jumped out of the handler 3 times\n");
	after_jump_work(0.3);
	return 0;
}

static void *
close_burner(void *arg)
{
	(void)arg;
	before_work(0.05);
	wait_a_little();
	after_close_work(0.2);
	return NULL;
}

static int
closerange(void)
{
	pthread_t t;

	before_work(0.05);
	pthread_create(&t, NULL, close_burner, NULL);
	if (close_range(3, ~0u, 0)) {
		printf("close_range: %s\n", strerror(errno));
		return 1;
	}
	printf("closed every descriptor above 2\n");
	after_close_work(0.2);
	pthread_join(t, NULL);
	return 0;
}

/* Uses all but about 700 bytes of a 16 KiB stack, then burns. */
__attribute__((noinline)) static void
deep(int left)
{
	volatile char pad[512];

	pad[0] = (char)left;
	if (left > 0)
		deep(left - 1);
	else
		small_stack_work(0.2);
	sink += (unsigned long)pad[0];
}

static void *
small_thread(void *arg)
{
	char here;
	size_t depth = (size_t)(uintptr_t)arg;

	(void)here;
	deep((int)depth);
	return NULL;
}

static int
smallstack(void)
{
	pthread_attr_t a;
	pthread_t t;
	size_t size = 16384;

	before_work(0.05);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, size);
	/* each level takes about 528 bytes; glibc keeps its thread record
	 * and TLS in the same 16 KiB */
	pthread_create(&t, &a, small_thread, (void *)(uintptr_t)atoi(getenv("SIGMOVE_DEPTH") ?
								     getenv("SIGMOVE_DEPTH") : "20"));
	pthread_join(t, NULL);
	printf("the small-stack thread finished\n");
	return 0;
}

int
main(int argc, char **argv)
{
	int r;

	sig = SIGRTMAX;
	self = getpid();
	if (getenv("SIGMOVE_SCALE"))
		scale = atof(getenv("SIGMOVE_SCALE"));
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: sigmove CASE [thread|process]\n");
		return 2;
	}
	if (strcmp(argv[1], "eintr") == 0)
		r = eintr();
	else if (strcmp(argv[1], "queue3") == 0)
		r = queue3();
	else if (strcmp(argv[1], "selfqueue") == 0)
		r = selfqueue();
	else if (strcmp(argv[1], "longjmp") == 0)
		r = jumps();
	else if (strcmp(argv[1], "closerange") == 0)
		r = closerange();
	else if (strcmp(argv[1], "smallstack") == 0)
		r = smallstack();
	else
		r = blocked_wait(argv[1], argc > 2 ? argv[2] : "thread");
	return r;
}
