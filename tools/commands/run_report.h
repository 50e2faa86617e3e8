/* SPDX-License-Identifier: BSD-2-Clause */
/* pcprof run's report, in pcprof's own process (run_report.c). */
#ifndef PC_RUN_REPORT_H
#define PC_RUN_REPORT_H

#include "pcprof.h"

/*
 * The report of the run that the program, ended with wait status status,
 * left in output (its directory, or with main_only its first profile of
 * exe), on standard error or, whole or not at all, in report_to. A
 * failure is one line and nothing more: the caller ends with the
 * program's status; a fault in the report says one line and ends pcprof
 * as the program ended. Not AS-safe.
 */
void run_report(const char *exe, const char *output, int main_only,
		const char *report_to, int status, struct report_opts *r,
		const struct symtab_opts *s);

#endif
