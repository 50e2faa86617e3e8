/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof run's report, made in pcprof's own process once the command has
 * ended (run.c calls run_report). What it calls returns its errors as
 * values (issue 37), so a failure is its one line and the exit status
 * stays the program's; a fault while reporting (a file that the readers
 * let through and that crashes them) is one line too, and pcprof then
 * ends as the program did, as it did when the report had a child of its
 * own.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands/launch.h"
#include "commands/options.h"
#include "commands/run_report.h"

/* The faults a report may meet, each a line ready to write. */
static const int fault_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define NFAULTS	(sizeof(fault_sigs) / sizeof(fault_sigs[0]))
static char fault_line[NFAULTS][512];
static struct sigaction fault_as_found[NFAULTS];
static int program_status;	/* the command's wait status */

/*
 * A fault while the report is made: its line, the report's temporary
 * file removed, and pcprof ended as the program ended
 * (launch_end_like_from_handler). A SIGSEGV that someone sent (not a
 * fault: si_code <= 0) is left alone, as launch.c leaves it, but abort's
 * own SIGABRT is a fault. AS-safe: write, unlink, sigaction, raise,
 * _exit.
 */
static void
on_fault(int sig, siginfo_t *si, void *uc)
{
	size_t i = 0;
	ssize_t w;

	(void)uc;
	if (si->si_code <= 0 && !(sig == SIGABRT && si->si_pid == getpid()))
		return;
	while (i < NFAULTS - 1 && fault_sigs[i] != sig)
		i++;
	w = write(2, fault_line[i], strlen(fault_line[i]));
	(void)w; /* a line that cannot be written: nothing to say it with */
	out_drop_from_handler();
	_exit(launch_end_like_from_handler(program_status));
}

/* Catch the faults while the report is made (on a stack of their own,
 * so that a runaway recursion is caught too), or, with on 0, leave
 * them as they were. */
static void
guard_faults(const char *output, int on)
{
	static char stack[64 << 10];
	stack_t ss = { .ss_sp = stack, .ss_size = sizeof(stack) };
	struct sigaction sa;

	if (!on) {
		for (size_t i = 0; i < NFAULTS; i++)
			sigaction(fault_sigs[i], &fault_as_found[i], NULL);
		return;
	}
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < NFAULTS; i++) {
		snprintf(fault_line[i], sizeof(fault_line[i]),
			 "pcprof: the report of '%s' failed: %s\n",
			 text_name(output), strsignal(fault_sigs[i]));
		sigaction(fault_sigs[i], &sa, &fault_as_found[i]);
	}
}

/* The report itself onto out; 0, or -1 after one line. */
static int
report_onto(FILE *out, const char *exe, const char *output, int main_only,
	    struct report_opts *r, const struct symtab_opts *s)
{
	char *files[1] = { pc_strdup(output) };
	int rc;

	if (main_only)
		rc = report_files(exe, files, 1, r, s, out);
	else
		rc = report_run(files, 1, r, s, out);
	free(files[0]);
	return rc;
}

void
run_report(const char *exe, const char *output, int main_only,
	   const char *report_to, int status, struct report_opts *r,
	   const struct symtab_opts *s)
{
	FILE *out = stderr;
	struct out_file of;
	int rc;

	program_status = status;
	/* --report FILE: whole or not at all (base/outfile.c) */
	if (report_to && !(out = out_open(&of, report_to)))
		return;
	guard_faults(output, 1);
	rc = report_onto(out, exe, output, main_only, r, s);
	guard_faults(output, 0);
	if (!rc && out == stderr && !main_only)
		pc_warn("profiles in '%s' (pcprof report %s)", output, output);
	if (report_to && (rc || out_commit(&of)))
		out_discard(&of);
	else if (!report_to && fflush(out))
		pc_warn("standard error: %s", strerror(errno));
}
