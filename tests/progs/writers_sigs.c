/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program that waits for a signal, for pcprof run's passing on of the
 * signals sent to it (test_writers.py): it catches each signal named on
 * its command line (numbers), prints "pid PID" once they are caught, waits,
 * and on the first that comes prints "got SIG code CODE value VALUE" (the
 * sigqueue value, or 0) and exits with status 10 + SIG.
 * Usage: writers_sigs SIG...
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got, code, value;

static void
on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (got)
		return;
	code = si->si_code;
	value = si->si_code == SI_QUEUE ? si->si_value.sival_int : 0;
	got = sig;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t mask, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&mask);
	for (int i = 1; i < argc; i++) {
		int sig = atoi(argv[i]);

		if (sigaction(sig, &sa, NULL)) {
			perror("sigaction");
			return 2;
		}
		sigaddset(&mask, sig);
	}
	/* caught only in sigsuspend: none is lost between the test and the
	 * wait */
	sigprocmask(SIG_BLOCK, &mask, &old);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	while (!got)
		sigsuspend(&old);
	printf("got %d code %d value %d\n", (int)got, (int)code, (int)value);
	return 10 + got;
}
