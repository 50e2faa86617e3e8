/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report options that report and run share (commands/options.h), and
 * --clock's word: a bad one is one line and exit status 2. Moved here from
 * inputs/inputs.c, since only a command decides to exit.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "commands/options.h"

void
report_usage(FILE *out, const char *text)
{
	fputs(text, out);
}

/* --format's word, in enum format's order. */
static enum format
format_named(const char *arg)
{
	static const char *const words[] = {
		"text",       "json",      "csv",     "folded", "pprof",
		"speedscope", "callgrind", "firefox", "gmon"
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(arg, words[i]))
			return (enum format)i;
	pc_fatal("--format '%s': not text, json, csv, folded, pprof, speedscope, callgrind, "
		 "firefox or gmon", arg);
}

enum pc_clock
clock_named(const char *arg)
{
	if (!strcmp(arg, "wall"))
		return PC_CLOCK_WALL;
	if (!strcmp(arg, "cpu"))
		return PC_CLOCK_CPU;
	if (!strcmp(arg, "off"))
		return PC_CLOCK_OFF;
	static const char *const alloc[] = { "alloc", "alloc-bytes", "inuse", "inuse-bytes" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(arg, alloc[i]))
			return (enum pc_clock)(PC_CLOCK_ALLOC + i);
	pc_fatal("--clock '%s': not wall, cpu or off (or, of allocations, alloc, "
		 "alloc-bytes, inuse or inuse-bytes)", arg);
}

/* report's --metric: an allocation profile's, in its own words for a
 * name no clock has either ('bytes' was answered as --clock's). */
static enum pc_clock
alloc_metric_named(const char *arg)
{
	if (strcmp(arg, "alloc") && strcmp(arg, "alloc-bytes") &&
	    strcmp(arg, "inuse") && strcmp(arg, "inuse-bytes"))
		pc_fatal("--metric '%s': not alloc, alloc-bytes, inuse or inuse-bytes",
			 arg);
	return clock_named(arg);
}

/* --from S, --to S, --marker NAME into r. */
static void
window_option(int c, const char *arg, struct report_opts *r)
{
	char *end;

	if (c == OPT_MARKER) {
		r->marker = arg;
		r->window |= WINDOW_MARKER;
		return;
	}
	*(c == OPT_FROM ? &r->from : &r->to) = strtod(arg, &end);
	if (*end || end == arg ||
	    !(r->from >= 0 && r->from < 1e9 && r->to >= 0 && r->to < 1e9))
		pc_fatal("--%s '%s': not a time in seconds",
			 c == OPT_FROM ? "from" : "to", arg);
	r->window |= c == OPT_FROM ? WINDOW_FROM : WINDOW_TO;
}

int
report_option(int c, const char *arg, struct report_opts *r,
	      struct symtab_opts *s)
{
	char *end;

	switch (c) {
	case OPT_FORMAT:
		r->format = format_named(arg);
		return 1;
	case OPT_CALLGRAPH:
		r->callgraph = 1;
		return 1;
	case OPT_BY_OBJECT:
		r->by_object = 1;
		return 1;
	case OPT_LINES:
		r->lines = 1;
		return 1;
	case OPT_PROCESS:
		r->process = arg;
		return 1;
	case OPT_PROCESSES:
		r->all_processes = 1;
		return 1;
	case OPT_BY_THREAD:
		r->by_thread = 1;
		return 1;
	case OPT_THREAD:
		r->thread = arg;
		return 1;
	case OPT_STACKS:
		r->stacks = arg;
		return 1;
	case OPT_CLOCK:
		r->clock = clock_named(arg);
		return 1;
	case OPT_ALLOC_METRIC:
		r->clock = alloc_metric_named(arg);
		return 1;
	case OPT_ALLOC:
		r->alloc = 1;
		return 1;
	case OPT_FROM:
	case OPT_TO:
	case OPT_MARKER:
		window_option(c, arg, r);
		return 1;
	case OPT_TOP:
		r->top = strtol(arg, &end, 10);
		if (*end || end == arg || r->top < 0)
			pc_fatal("--top '%s': not a count", arg);
		return 1;
	}
	return symtab_option(c, arg, s);
}

int
symtab_option(int c, const char *arg, struct symtab_opts *s)
{
	switch (c) {
	case OPT_KEEP_PIECES:
		s->keep_pieces = 1;
		return 1;
	case OPT_NO_DEMANGLE:
		s->no_demangle = 1;
		return 1;
	case OPT_FULL_NAMES:
		s->full_names = 1;
		return 1;
	case OPT_DEBUG_DIR:
		s->debug_root = arg;
		return 1;
	}
	return 0;
}
