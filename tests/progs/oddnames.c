/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Names that are data, for pcprof's escaping of them (test_names.py): a
 * worker thread names itself ESC "]0;owned" BEL, a newline, a backslash
 * and "x" (an OSC sequence that retitles a terminal, a line break and the
 * escape character itself), and spends its CPU time in a function whose
 * symbol holds ESC "[2J" (clear the screen), BEL and DEL. The symbol is an
 * asm label: gas takes raw bytes in a quoted symbol name, though not a
 * newline, which would end the assembler's line.
 * Usage: oddnames SECONDS_OF_CPU
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "truth.h"

#define THREAD_NAME	"\x1b]0;owned\a\n\\x"

uint64_t odd_work(uint64_t x) __asm__("\"odd\x1b[2J\awork\x7f\"");

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t
odd_work(uint64_t x)
{
	return spin(x, SPIN_UNIT / 10);
}

static void *
worker(void *arg)
{
	double seconds = *(const double *)arg;
	uint64_t x = 1;

	prctl(PR_SET_NAME, THREAD_NAME, 0, 0, 0);
	while (thread_cpu() < seconds)
		for (int i = 0; i < 100; i++)
			x = odd_work(x);
	sink = x;
	return NULL;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5;
	pthread_t t;

	if (pthread_create(&t, NULL, worker, &seconds))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
