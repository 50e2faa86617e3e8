/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program that profiles itself the old way: its own SIGPROF handler, its
 * own ITIMER_PROF, and SIGPROF blocked around a critical section. It must
 * keep receiving its own ticks while libpc samples it, and see its own
 * disposition when it asks. Prints what it saw.
 * Usage: coexist SECONDS
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "truth.h"

static volatile sig_atomic_t ticks;
static volatile uint64_t sink;

static void
on_prof(int sig)
{
	(void)sig;
	ticks++;
}

/* returns the CPU time it took, by the process's own clock */
__attribute__((noinline)) double
coexist_work(double seconds)
{
	double t0 = process_cpu(), t;

	while ((t = process_cpu()) - t0 < seconds)
		sink = spin(sink, SPIN_UNIT);
	return t - t0;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };	/* 100 Hz */
	struct sigaction sa, now;
	sigset_t set, old;
	int blocked_ticks;
	double open_cpu;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	sigaction(SIGPROF, NULL, &now);
	printf("own handler installed: %s\n", now.sa_handler == on_prof ? "yes" : "no");
	setitimer(ITIMER_PROF, &it, NULL);
	open_cpu = coexist_work(seconds);
	/* blocked: the program's own ticks wait; libpc's samples go on */
	sigemptyset(&set);
	sigaddset(&set, SIGPROF);
	sigprocmask(SIG_BLOCK, &set, &old);
	blocked_ticks = ticks;
	coexist_work(seconds / 4);
	printf("ticks while blocked: %s\n", ticks == blocked_ticks ? "none" : "some");
	sigprocmask(SIG_SETMASK, NULL, &set);
	printf("mask shows SIGPROF blocked: %s\n", sigismember(&set, SIGPROF) ? "yes" : "no");
	sigprocmask(SIG_SETMASK, &old, NULL);
	open_cpu += coexist_work(seconds / 4);
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_PROF, &it, NULL);
	/*
	 * 100 Hz of CPU time while unblocked, and the ticks of the blocked
	 * phase merged into one. The kernel charges ITIMER_PROF by the tick
	 * (whoever runs at a tick is charged all of it), while the CPU clock
	 * is exact: on a shared CPU the two differ by some ticks either way.
	 */
	printf("own ticks: %d expected about %d\n", (int)ticks, (int)(100 * open_cpu) + 1);
	return 0;
}
