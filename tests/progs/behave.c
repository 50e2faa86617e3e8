/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program whose observable behaviour must not change under libpc.so: it
 * writes to stdout and stderr, spins a little, checks errno and its own
 * SIGALRM handler and interval timer, and exits with a chosen status.
 * Usage: behave STATUS
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "truth.h"

static volatile uint64_t sink;
static volatile sig_atomic_t alarms;

static void
on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

int
main(int argc, char **argv)
{
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
	struct sigaction sa;
	int status = argc > 1 ? atoi(argv[1]) : 0;
	uint64_t x = 9;

	printf("errno at start: %d\n", errno);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < 3000; i++)
		x = spin(x, SPIN_UNIT / 10);
	sink = x;
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	printf("alarms seen: %s\n", alarms > 0 ? "some" : "none");
	for (int i = 0; i < 5; i++)
		printf("line %d of stdout\n", i);
	fprintf(stderr, "a line on stderr\n");
	errno = 0;
	if (write(-1, "", 0) < 0)
		printf("errno after a bad write: %s\n", strerror(errno));
	return status;
}
