/* SPDX-License-Identifier: BSD-2-Clause */
/* The report options that `pcprof report` and `pcprof run` share. */
#ifndef PC_OPTIONS_H
#define PC_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

#include "pcprof.h"

enum {
	OPT_FORMAT = 256, OPT_TOP, OPT_KEEP_PIECES, OPT_NO_DEMANGLE,
	OPT_DEBUG_DIR, OPT_CALLGRAPH, OPT_STACKS, OPT_BY_OBJECT, OPT_FULL_NAMES,
	OPT_PROCESS, OPT_LINES, OPT_BY_THREAD, OPT_THREAD, OPT_PROCESSES,
	OPT_CLOCK, OPT_ALLOC_METRIC, OPT_ALLOC,
	OPT_FROM, OPT_TO, OPT_MARKER,
};

/* The options of how symbols are read and named, which report, run, diff
 * and compare share (symtab_option applies them). */
#define SYMTAB_LONGOPTS							\
	{ "keep-pieces", no_argument, NULL, OPT_KEEP_PIECES },		\
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },		\
	{ "full-names", no_argument, NULL, OPT_FULL_NAMES },		\
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR }

#define REPORT_LONGOPTS \
	{ "format", required_argument, NULL, OPT_FORMAT }, \
		{ "top", required_argument, NULL, OPT_TOP }, SYMTAB_LONGOPTS, \
		{ "callgraph", no_argument, NULL, OPT_CALLGRAPH }, \
		{ "stacks-file", required_argument, NULL, OPT_STACKS }, \
		{ "by-object", no_argument, NULL, OPT_BY_OBJECT }, \
		{ "process", required_argument, NULL, OPT_PROCESS }, \
		{ "processes", no_argument, NULL, OPT_PROCESSES }, \
		{ "lines", no_argument, NULL, OPT_LINES }, \
		{ "by-thread", no_argument, NULL, OPT_BY_THREAD }, \
		{ "thread", required_argument, NULL, OPT_THREAD }, \
		{ "clock", required_argument, NULL, OPT_CLOCK }, \
		{ "metric", required_argument, NULL, OPT_ALLOC_METRIC }, \
		{ "alloc", no_argument, NULL, OPT_ALLOC }, \
		{ "from", required_argument, NULL, OPT_FROM }, \
		{ "to", required_argument, NULL, OPT_TO }, \
	{ \
		"marker", required_argument, NULL, OPT_MARKER \
	}

#define REPORT_OPTIONS_HELP \
	"Report options:\n" \
	"  --format FMT     text (default), json, csv, or folded (collapsed\n" \
	"                   stacks from GMON.stacks, for flame graph tools);\n" \
	"                   for other tools: pprof (go tool pprof, Pyroscope,\n" \
	"                   Parca; gzipped protobuf), speedscope (JSON) or\n" \
	"                   callgrind (callgrind_annotate, KCachegrind)\n" \
	"  --callgraph      text: each function's callers and callees too\n" \
	"  --stacks-file F  the stacks file for --format folded\n" \
	"                   (default: GMON.stacks)\n" \
	"  --top N          the N functions with most samples (0: all)\n" \
	"  --lines          one line per source line instead of per function\n" \
	"                   (file:line, from the debug information)\n" \
	"  --by-object      one line per shared object instead of per\n" \
	"                   function (profiles recorded with PC_SCOPE=all)\n" \
	"  --process P      of a run, only the processes whose pid or program\n" \
	"                   is P (its path, file name, or a name on PATH)\n" \
	"  --processes      of a whole run, a line for each process (more\n" \
	"                   than 10 are summed by program otherwise)\n" \
	"  --by-thread      one line per thread (from the stacks: recorded\n" \
	"                   with PC_STACKS=1 or pcprof run --stacks)\n" \
	"  --thread T       only the samples of the thread whose tid or name\n" \
	"                   is T (from the stacks)\n" \
	"  --clock C        of a wall-clock profile (pcprof run --clock wall):\n" \
	"                   wall (its default: CPU and off-CPU time, each wait\n" \
	"                   a function [off-cpu: CALL]), cpu (its CPU samples,\n" \
	"                   as a CPU profile's report), or off (the waits alone)\n" \
	"  --metric M       of an allocation profile (pcprof run --alloc,\n" \
	"                   PC_ALLOC=1): alloc (allocations), alloc-bytes,\n" \
	"                   inuse or inuse-bytes (what was not freed at exit)\n" \
	"  --alloc          the allocation sites' table: bytes and objects\n" \
	"                   allocated and in use, and the leaks at exit\n" \
	"  --from S, --to S only the samples from S to S seconds after the\n" \
	"                   run's start, from its timeline (pcprof run --timeline)\n" \
	"  --marker NAME    only the samples inside the markers named NAME (a\n" \
	"                   thread's: its samples; a marker file's: all)\n" \
	"  --keep-pieces    show foo.cold, foo.part.N, foo.isra.N and\n" \
	"                   foo.constprop.N apart from foo (default: folded)\n" \
	"  --full-names     C++ names with their template arguments and\n" \
	"                   parameters (default: std::vector::push_back)\n" \
	"  --no-demangle    print C++ names as the symbol table has them\n" \
	"  --debug-dir DIR  look for separate debug files under DIR\n" \
	"                   (default /usr/lib/debug)\n"

/* inputs.c: 1 if c was a report option (and is applied), 0 if not. */
/* inputs.c: apply one of SYMTAB_LONGOPTS to s; 0 when c is not one. */
int symtab_option(int c, const char *arg, struct symtab_opts *s);
int report_option(int c, const char *arg, struct report_opts *r,
		  struct symtab_opts *s);

/* cmd_report.c: load symbols and profiles and print the report; 0, or
 * -1 after one line on bad input (pcprof run reports in its own
 * process, and keeps the program's status). */
PC_CHECKED int report_files(const char *exe, char **files, int nfiles,
			    struct report_opts *r, const struct symtab_opts *s,
			    FILE *out);
/* The report of a run's operands ops[0..n) (a directory first): the whole
 * run's, or, for --callgraph, --lines and folded, its one program's (a
 * run's JSON in the run report's shape all the same). 0, or -1 after one
 * line. */
PC_CHECKED int report_run(char **ops, int n, struct report_opts *r,
			  const struct symtab_opts *s, FILE *out);

/* inputs.c: a command's usage text, on out. */
void report_usage(FILE *out, const char *text);

#endif
