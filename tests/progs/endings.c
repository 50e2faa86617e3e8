/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ends a process in the way its argument names, after spinning for a while
 * in ending_work: exit, return, _exit, _Exit, abort, a signal (INT, TERM,
 * HUP, QUIT, SEGV, BUS, FPE, ILL), an atexit handler that does work, or a
 * crash with a handler of the program's own that must still run.
 * Usage: endings HOW [SECONDS]
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "truth.h"

static volatile uint64_t sink;
static double seconds = 0.3;

__attribute__((noinline)) void
ending_work(void)
{
	double t0 = thread_cpu();

	while (thread_cpu() - t0 < seconds)
		sink = spin(sink, TRUTH_BLOCK * SPIN_UNIT);
}

__attribute__((noinline)) void
atexit_work(void)
{
	double t0 = thread_cpu();

	while (thread_cpu() - t0 < seconds)
		sink = spin(sink, TRUTH_BLOCK * SPIN_UNIT);
}

static void
own_handler(int sig)
{
	static const char msg[] = "own handler ran\n";

	(void)sig;
	write(1, msg, sizeof(msg) - 1);
	_exit(42);
}

int
main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "exit";
	static const struct { const char *name; int sig; } sigs[] = {
		{ "INT", SIGINT }, { "TERM", SIGTERM }, { "HUP", SIGHUP },
		{ "QUIT", SIGQUIT }, { "SEGV", SIGSEGV }, { "BUS", SIGBUS },
		{ "FPE", SIGFPE }, { "ILL", SIGILL }, { "PIPE", SIGPIPE },
	};

	if (argc > 2)
		seconds = atof(argv[2]);
	if (!strcmp(how, "atexit"))
		atexit(atexit_work);
	if (!strcmp(how, "own-segv"))
		signal(SIGSEGV, own_handler);
	ending_work();
	fflush(stdout);
	if (!strcmp(how, "exit") || !strcmp(how, "atexit"))
		exit(3);
	if (!strcmp(how, "return"))
		return 4;
	if (!strcmp(how, "_exit"))
		_exit(5);
	if (!strcmp(how, "_Exit"))
		_Exit(6);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "crash") || !strcmp(how, "own-segv"))
		*(volatile int *)8 = 1;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(how, sigs[i].name))
			kill(getpid(), sigs[i].sig);
	return 99;
}
