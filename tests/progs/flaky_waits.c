/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The waits that install a mask of their own, many times over: block a
 * signal (SIGPROF, then SIGUSR1, in turn), send it to the process, and
 * wait with the old mask in sigsuspend, ppoll, pselect or epoll_pwait.
 * Plain, the handler runs during every wait, which ends with EINTR. The
 * loop spends its time in these system calls, so that a profiler's
 * CPU-time timer often expires inside one and its signal comes as the
 * wait is cut short. Prints, per wait, how many times the handler ran
 * only after the wait returned (0 plain); the number of waits, which
 * depends on the machine's speed, goes to stderr.
 *
 *   flaky_waits SECONDS   CPU seconds for each wait
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t ran;

static void
on_signal(int sig)
{
	(void)sig;
	ran++;
}

static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
wait_one(const char *how, int ep, const sigset_t *old)
{
	struct epoll_event ev;

	if (!strcmp(how, "sigsuspend"))
		return sigsuspend(old);
	if (!strcmp(how, "ppoll"))
		return ppoll(NULL, 0, NULL, old);
	if (!strcmp(how, "pselect"))
		return pselect(0, NULL, NULL, NULL, NULL, old);
	return epoll_pwait(ep, &ev, 1, -1, old);
}

int
main(int argc, char **argv)
{
	static const char *const hows[] = { "sigsuspend", "ppoll", "pselect", "epoll_pwait" };
	static const int sigs[] = { SIGPROF, SIGUSR1 };
	double seconds = argc > 1 ? atof(argv[1]) : 0.25;
	struct sigaction sa;
	int ep = epoll_create1(EPOLL_CLOEXEC), bad = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	/* a wait that never returns ends the program */
	alarm(30);
	for (size_t h = 0; h < sizeof(hows) / sizeof(hows[0]); h++) {
		long waits = 0, late = 0, odd = 0;
		double end = cpu_now() + seconds;

		while (cpu_now() < end) {
			sigset_t one, old;
			int sig = sigs[waits & 1], r, e, during;

			sigemptyset(&one);
			sigaddset(&one, sig);
			ran = 0;
			sigprocmask(SIG_BLOCK, &one, &old);
			kill(getpid(), sig);
			r = wait_one(hows[h], ep, &old);
			e = errno;
			during = ran;
			sigprocmask(SIG_SETMASK, &old, NULL);
			waits++;
			late += !during && ran;
			odd += r != -1 || e != EINTR;
		}
		printf("%s: handler ran after the wait returned: %ld; other results: %ld\n",
		       hows[h], late, odd);
		fprintf(stderr, "%s: %ld waits\n", hows[h], waits);
		bad |= late || odd;
	}
	return bad;
}
