/*
 * pcprof report: its usage and options; the work is inputs.c's
 * report_files, or runview.c's for a whole run.
 */
#include <getopt.h>
#include <stdio.h>

#include "pcprof.h"
#include "options.h"

static const char usage_report[] =
"usage: pcprof report [OPTIONS] EXE [GMON|DIR...]\n"
"       pcprof report [OPTIONS] DIR|GMON...\n"
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
"With no EXE, the report is of the whole run that the directories (or\n"
"the profiles) hold: each profile recorded with PC_SCOPE=all names its\n"
"program in its manifest. One line per process (CPU seconds, share, pid,\n"
"threads, program), then the functions summed over all processes, by\n"
"object.\n"
"\n"
REPORT_OPTIONS_HELP;

int
cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		REPORT_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	struct report_opts r = { .format = FORMAT_TEXT };
	struct symtab_opts s = { 0, 0, NULL, 0 };
	int c;

	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		if (c == 'h') {
			report_usage(stdout, usage_report);
			return 0;
		}
		if (!report_option(c, optarg, &r, &s)) {
			report_usage(stderr, usage_report);
			return EXIT_BAD_INPUT;
		}
	}
	if (optind >= argc) {
		report_usage(stderr, usage_report);
		return EXIT_BAD_INPUT;
	}
	/* a profile or a directory first: the whole run, its programs
	 * named by the manifests */
	if (runview_is_profile(argv[optind]))
		return runview_report(argv + optind, argc - optind, &r, &s, stdout);
	if (r.process)
		pc_fatal("--process: name no EXE, only the run's directory or profiles");
	return report_files(argv[optind], argv + optind + 1, argc - optind - 1,
			    &r, &s, stdout);
}
