/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof report: its usage and options, and the report of an executable's
 * profiles (report_files, which pcprof run calls too), read through
 * inputs.c; runview.c makes the report of a whole run.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcprof.h"
#include "inputs/operands.h"
#include "inputs/runexe.h"
#include "inputs/runfiles.h"
#include "model/export.h"
#include "writers/export_out.h"
#include "model/lines.h"
#include "model/wallgmon.h"
#include "writers/gmon_out.h"
#include "commands/options.h"
#include "commands/alloc_report.h"

static const char usage_short[] =
"usage: pcprof report [OPTIONS] DIR|GMON...      the whole run that pcprof run left\n"
"       pcprof report [OPTIONS] EXE [GMON|DIR...] one program's profiles\n"
"  e.g. pcprof report DIR; pcprof report --callgraph --process NAME DIR\n"
"pcprof report --help for more.\n";

static const char usage_report[] =
"usage: pcprof report [OPTIONS] EXE [GMON|DIR...]\n"
"       pcprof report [OPTIONS] DIR|GMON...\n"
"Options may come anywhere among the operands; -- ends them.\n"
"\n"
"Print the flat profile of EXE from one or more gmon.out files (default\n"
"gmon.out), summed without 16-bit truncation: each function's self\n"
"seconds, its share of all samples, the cumulative share and the samples,\n"
"most first. Samples in no symbol are one [unknown] line, and those that a\n"
"profile of the executable alone took in its libraries one [outside the\n"
"executable] line; shares are of all of them. With --callgraph,\n"
"each function's callers and callees follow, with the samples in which\n"
"each edge was on the stack. --format folded prints the collapsed stacks\n"
"of GMON.stacks (written with PC_STACKS=1) for flame graph tools.\n"
"A directory stands for the profiles in it that libpc wrote for EXE (the\n"
"files of a multi-process run); of several files, those that libpc\n"
"recorded for another program are left out.\n"
"A profile recorded with PC_SCOPE=all has a manifest, GMON.objects, beside\n"
"it: the report then covers every shared object of the process, named\n"
"with each object's own symbols, with an object column (--by-object for\n"
"one line per object).\n"
"EXE may be a program's name as the run recorded it, or a name on PATH.\n"
"With no EXE, --callgraph, --lines and --format folded read the program\n"
"that the run's manifests name, its processes merged (--process PID|NAME\n"
"picks one of several programs).\n"
"With no EXE, the report is of the whole run that the directories (or\n"
"the profiles) hold: each profile recorded with PC_SCOPE=all names its\n"
"program in its manifest. One line per process (CPU seconds, share, pid,\n"
"threads, program), then the functions summed over all processes, by\n"
"object. A profile with no manifest (a plain LD_PRELOAD run) is read as\n"
"the program's whose build-id its header records, when that executable\n"
"is beside it or in the current directory.\n"
"A wall-clock profile (pcprof run --clock wall, PC_CLOCK=wall) is shown in\n"
"wall seconds: each thread's CPU samples and the time it spent off the\n"
"CPU, each wait a function [off-cpu: CALL] (the system call it blocked in,\n"
"the kind of descriptor: [off-cpu: read pipe]; [off-cpu: runqueue] is time\n"
"a runnable thread waited for a CPU) at the leaf of the stack it blocked\n"
"at, so that a wait is self time and its callers' total time holds it.\n"
"--clock cpu shows its CPU samples alone, --clock off its waits alone.\n"
"A wait for a child ([off-cpu: wait4 pid N]) names the command that shows\n"
"the child's own profile.\n"
"--format pprof, speedscope or callgrind write the profile for those\n"
"tools: from GMON.stacks where it was recorded (PC_STACKS=1), each\n"
"sampled stack; otherwise each sampled address alone (callgrind: with\n"
"the call-graph arcs). Every process of a run is in the one file.\n"
"\n"
"  -o, --output FILE  write to FILE (written whole, then renamed into\n"
"                     place) instead of standard output\n"
"  --timeline         what each thread ran when, in time buckets, and the\n"
"                     markers, from GMON.timeline (pcprof run --timeline,\n"
"                     PC_TIMELINE=1); --format firefox writes it for the\n"
"                     Firefox Profiler, with each thread's native\n"
"                     allocations where run --alloc recorded them too\n"
REPORT_OPTIONS_HELP;

/* The executable's profiles for another tool (export.h); 0, or -1
 * after one line. */
static int
export_inputs(const struct pc_inputs *in, const struct report_opts *r,
	      const struct symtab_opts *s, FILE *out)
{
	const char *base = strrchr(in->exe, '/');
	struct export x;
	int rc;

	if (FORMAT_IS_EXPORT(r->format) || r->by_thread || r->thread ||
	    r->window) {
		if (export_refuse(r))
			return -1;
	} else if (r->by_object || r->lines) {
		return pc_error("%s: a view of CPU samples (--clock cpu); the %s view is by "
				"function", r->by_object ? "--by-object" : "--lines",
				clock_word(r->clock));
	}
	export_init(&x);
	x.clock = r->clock;
	rc = export_add(&x, in, s, r->stacks,
			base && base[1] ? base + 1 : in->exe, 0) ||
			     export_finish(&x, r, out, in->exe) ?
		     -1 :
		     0;
	export_release(&x);
	return rc;
}

/* --format gmon: the executable's gmon file of the clock's time, for
 * gprof (wallgmon.h), onto out (out_open's: whole or not at all); 0, or
 * -1 after one line. */
static int
gmon_inputs(const struct pc_inputs *in, const struct report_opts *r, FILE *out)
{
	struct gmon_profile p;
	int e;

	if (r->by_thread || r->thread || r->callgraph || r->lines ||
	    r->by_object)
		return pc_error(
			"--format gmon: gprof's file of the whole executable, not "
			"with %s",
			r->by_thread ? "--by-thread" :
			r->thread    ? "--thread" :
			r->callgraph ? "--callgraph" :
			r->lines     ? "--lines" :
				       "--by-object");
	if (isatty(fileno(out)))
		return pc_error("--format gmon: a binary file for gprof, not for a terminal: "
				"name the file with -o FILE");
	if (wallgmon_build(&p, in, 0, r->stacks, r->clock))
		return -1;
	if (fflush(out))
		e = pc_error("'%s': %s", r->files[0], strerror(errno));
	else if ((e = gmon_write_fd(fileno(out), &p)) < 0)
		e = pc_error("writing the gmon file: %s", strerror(-e));
	gmon_profile_release(&p);
	return e < 0 ? -1 : 0;
}

/* The flat profile, and the call graph where there are arcs. */
static void
print_flat(const struct pc_inputs *in, const struct report_opts *r, FILE *out)
{
	const struct gmon_profile *p = &in->runs[0].prof;
	struct callgraph cg;
	struct flat f;
	uint64_t outside;
	int arcs;

	flat_build(&f, &in->st, p);
	if (f.total == 0)
		pc_warn("warning: '%s': the profile holds no samples",
			r->files[0]);
	/* arcs, not the records that count samples outside */
	arcs = p->narcs > gmon_profile_outside(p, &outside);
	if (arcs)
		callgraph_build(&cg, &in->st, p, &f);
	report_print(out, &f, &in->st, arcs ? &cg : NULL, r);
	if (arcs)
		callgraph_release(&cg);
	flat_release(&f);
}

/* --lines, or folded stacks: the report of in, loaded, in r's view;
 * 0, or -1 after one line. */
static int
lines_or_folded(struct pc_inputs *in, const struct report_opts *r,
		const struct symtab_opts *s, FILE *out)
{
	struct folded_set fs;
	struct lines L;

	if (r->lines) {
		if (r->format == FORMAT_FOLDED || r->callgraph || r->by_object)
			return pc_error(
				"--lines: a profile of lines, not with %s",
				r->by_object ? "--by-object" :
				r->callgraph ? "--callgraph" :
					       "--format folded");
		if (lines_build(&L, in, &in->runs[0].prof, s))
			return -1;
		lines_print(out, &L, &in->st, r);
		lines_release(&L);
		return 0;
	}
	if (folded_build(&fs, in, 0, r->stacks, r->clock))
		return -1;
	folded_print(out, &fs);
	folded_release(&fs);
	return 0;
}

/* The report of in, loaded, in the view r asks for; 0, or -1 after one
 * line. */
static int
report_view(struct pc_inputs *in, struct report_opts *r,
	    const struct symtab_opts *s, FILE *out)
{
	if (r->by_object && !in->st.nobjs)
		return pc_error("'%s': no objects manifest beside it (record with "
				"PC_SCOPE=all for --by-object)", r->files[0]);
	if (alloc_asked(r))
		return alloc_report(in, r, s, out);
	if (r->format == FORMAT_GMON)
		return gmon_inputs(in, r, out);
	/* a wall view is of the stacks, which the export holds; folded
	 * stacks are folded_build's under any clock */
	if (FORMAT_IS_EXPORT(r->format) || r->by_thread || r->thread ||
	    r->timeline || r->window ||
	    (r->clock != PC_CLOCK_CPU && r->format != FORMAT_FOLDED))
		return export_inputs(in, r, s, out);
	if (r->lines || r->format == FORMAT_FOLDED)
		return lines_or_folded(in, r, s, out);
	print_flat(in, r, out);
	return 0;
}

/* The report of in, opened: read here, closed here; 0, or -1 after one
 * line. */
static int
report_inputs(struct pc_inputs *in, struct report_opts *r,
	      const struct symtab_opts *s, FILE *out)
{
	int rc = -1;

	if (!inputs_load(in, s, 0) &&
	    !clock_resolve(in, 0, r->stacks, &r->clock)) {
		r->exe = in->exe;
		r->files = in->runs[0].files;
		r->nfiles = in->runs[0].nfiles;
		rc = report_view(in, r, s, out);
	}
	inputs_close(in);
	return rc;
}

int
report_files(const char *exe, char **files, int nfiles, struct report_opts *r,
	     const struct symtab_opts *s, FILE *out)
{
	struct pc_inputs in;

	if (r->window && export_refuse(r))
		return -1;
	if (inputs_open(&in, exe, files, nfiles, s, 0))
		return -1;
	return report_inputs(&in, r, s, out);
}

/* The report of one program's profiles, EXE named or not (runexe.h),
 * operands[0] peeked at already (runfiles_peek) or not (RUNFILES_UNPEEKED);
 * 0, or -1 after one line. */
static int
report_program(char **operands, int n, int peek0, struct report_opts *r,
	       const struct symtab_opts *s, FILE *out)
{
	struct pc_inputs in;
	struct runexe re;
	int rc = -1;

	if (runexe_resolve_peeked(&re, operands, n, r->process, r->listing,
				  peek0))
		return -1;
	if (!runexe_open(&in, &re, s, 0))
		rc = report_inputs(&in, r, s, out);
	runexe_release(&re);
	return rc;
}

/* Whether r reads one program's profiles (one symbol table), which the
 * whole run's report does not give. */
static int
one_program(const struct report_opts *r)
{
	return alloc_asked(r) ||
	       (!FORMAT_IS_EXPORT(r->format) && !r->by_thread && !r->thread &&
		!r->timeline && !r->window &&
		(r->format == FORMAT_FOLDED || r->format == FORMAT_GMON ||
		 r->callgraph || r->lines));
}

/* The report of what o resolved, OPERANDS_RUN: the whole run's, or its
 * one program's where r asks for that; 0, or -1 after one line. */
static int
report_resolved(struct operands *o, struct report_opts *r,
		const struct symtab_opts *s, FILE *out)
{
	struct pc_inputs in;
	int rc = -1;

	if (r->window && export_refuse(r))
		return -1;
	/* everything the reports read, resolved first: an error leaves no
	 * partial report where out is out_open's */
	if (operands_gather(o, r->process, one_program(r),
			    r->format == FORMAT_JSON))
		return -1;
	if (!o->one)
		return runview_report_resolved(o, r, s, out) ? -1 : 0;
	if (alloc_asked(r) && !r->stacks &&
	    alloc_check_rates(o->re.files, o->re.nfiles))
		return -1;
	/* the run report's shape in JSON, --callgraph or not: its
	 * processes (of the program), then its profile */
	if (o->view && runview_json_resolved(o, r, s, out))
		return -1;
	if (!runexe_open(&in, &o->re, s, 0) &&
	    !(rc = report_inputs(&in, r, s, out)) && o->view)
		fputs("}\n", out);
	return rc;
}

int
report_run(char **ops, int n, struct report_opts *r,
	   const struct symtab_opts *s, FILE *out)
{
	struct operands o;
	int rc;

	operands_of_run(&o, ops, n, r->listing);
	rc = report_resolved(&o, r, s, out);
	operands_release(&o);
	return rc;
}

/* The report of pcprof report's operands argv[0..argc) onto out, resolved
 * once (operands.h) before any report starts; 0, or -1 after one line. */
static int
report_operands(char **argv, int argc, struct report_opts *r,
		const struct symtab_opts *s, FILE *out)
{
	struct report_opts ro = *r;
	struct operands o;
	int rc = -1;

	if (operands_resolve(&o, argv, argc, r->listing))
		goto out;
	ro.listing = o.listing;
	if (o.kind == OPERANDS_PROGRAM)
		rc = report_program(argv, argc, o.peek, r, s, out);
	else if (o.kind == OPERANDS_PLAIN)
		rc = report_files(o.exe, o.ops, o.n, &ro, s, out);
	else
		rc = report_resolved(&o, &ro, s, out);
out:
	operands_release(&o);
	return rc;
}

/* report's options that run has not: -o FILE, --timeline. */
static int
own_option(int c, const char *arg, const char **output, struct report_opts *r)
{
	if (c == 'o')
		*output = arg;
	else if (c == 'T')
		r->timeline = 1;
	return c == 'o' || c == 'T';
}

int
cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		REPORT_LONGOPTS,
		{ "output", required_argument, NULL, 'o' },
		{ "timeline", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	struct report_opts r = { .format = FORMAT_TEXT };
	struct symtab_fetch fetch = { 0 };
	struct symtab_opts s = { .fetch = &fetch };
	const char *output = NULL;
	struct out_file of;
	int c, rc;

	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		if (c == 'h') {
			report_usage(stdout, usage_report);
			return 0;
		}
		if (own_option(c, optarg, &output, &r))
			continue;
		if (!report_option(c, optarg, &r, &s)) {
			report_usage(stderr, usage_report);
			return EXIT_BAD_INPUT;
		}
	}
	if (optind >= argc) {
		fputs(usage_short, stderr);
		return EXIT_BAD_INPUT;
	}
	/* -o FILE is a temporary file until the report is whole: bad input
	 * leaves no file */
	if (!out_open(&of, output))
		return EXIT_BAD_INPUT;
	rc = report_operands(argv + optind, argc - optind, &r, &s, of.f);
	if (rc || out_commit(&of)) {
		out_discard(&of);
		return EXIT_BAD_INPUT;
	}
	symtab_fetch_end(&fetch);
	return 0;
}
