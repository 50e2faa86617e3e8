/*
 * pcprof: the command line. Dispatches to report, run and merge; parses
 * the options they share; prints usage.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "options.h"

#ifndef PC_VERSION
#define PC_VERSION "0.1"
#endif

static const char usage_main[] =
"usage: pcprof COMMAND [OPTIONS] [ARGS]\n"
"\n"
"Commands:\n"
"  report [OPTIONS] EXE [GMON...]   flat profile of EXE from its profiles\n"
"                                   (default GMON: gmon.out)\n"
"  run [OPTIONS] -- CMD [ARGS...]   run CMD under libpc.so, then report\n"
"  merge -o OUT GMON...             sum profiles into one gmon.out\n"
"  flame -o SVG EXE [GMON...]       interactive flame graph of the stacks\n"
"\n"
"`pcprof COMMAND --help` describes each command. Exit status: 0 success,\n"
"2 bad input or usage; run passes the program's own status through.\n";

static const char usage_report[] =
"usage: pcprof report [OPTIONS] EXE [GMON...]\n"
"\n"
"Print the flat profile of EXE from one or more gmon.out files (default\n"
"gmon.out), summed without 16-bit truncation: each function's self\n"
"seconds, its share of all samples, the cumulative share and the samples,\n"
"most first. Samples in no symbol are one [unknown] line. With --callgraph,\n"
"each function's callers and callees follow, with the samples in which\n"
"each edge was on the stack. --format folded prints the collapsed stacks\n"
"of GMON.stacks (written with PC_STACKS=1) for flame graph tools.\n"
"\n"
REPORT_OPTIONS_HELP;

void
report_usage(FILE *out, const char *text)
{
	fputs(text, out);
}

int
report_option(int c, const char *arg, struct report_opts *r,
	      struct symtab_opts *s)
{
	char *end;

	switch (c) {
	case OPT_FORMAT:
		if (!strcmp(arg, "text"))
			r->format = FORMAT_TEXT;
		else if (!strcmp(arg, "json"))
			r->format = FORMAT_JSON;
		else if (!strcmp(arg, "csv"))
			r->format = FORMAT_CSV;
		else if (!strcmp(arg, "folded"))
			r->format = FORMAT_FOLDED;
		else
			pc_fatal("--format '%s': not text, json, csv or folded", arg);
		return 1;
	case OPT_CALLGRAPH:
		r->callgraph = 1;
		return 1;
	case OPT_STACKS:
		r->stacks = arg;
		return 1;
	case OPT_TOP:
		r->top = strtol(arg, &end, 10);
		if (*end || end == arg || r->top < 0)
			pc_fatal("--top '%s': not a count", arg);
		return 1;
	case OPT_KEEP_PIECES:
		s->keep_pieces = 1;
		return 1;
	case OPT_NO_DEMANGLE:
		s->no_demangle = 1;
		return 1;
	case OPT_DEBUG_DIR:
		s->debug_root = arg;
		return 1;
	}
	return 0;
}

int
report_files(const char *exe, char **files, int nfiles, struct report_opts *r,
	     const struct symtab_opts *s, FILE *out)
{
	static char gmon_out[] = "gmon.out";
	char *deflt[] = { gmon_out };
	struct gmon_profile p;
	struct callgraph cg;
	struct symtab st;
	struct flat f;

	if (nfiles == 0) {
		files = deflt;
		nfiles = 1;
	}
	r->exe = exe;
	r->files = files;
	r->nfiles = nfiles;
	symbols_load(&st, exe, s);
	profiles_load(&p, files, nfiles);
	check_build_id(&p, &st, exe);
	if (r->format == FORMAT_FOLDED) {
		struct folded_set fs;

		folded_build(&fs, &st, files, nfiles, r->stacks);
		folded_print(out, &fs);
		folded_release(&fs);
		goto out;
	}
	flat_build(&f, &st, &p);
	if (f.total == 0)
		pc_warn("warning: '%s': the profile holds no samples", files[0]);
	if (p.narcs)
		callgraph_build(&cg, &st, &p, &f);
	report_print(out, &f, &st, p.narcs ? &cg : NULL, r);
	if (p.narcs)
		callgraph_release(&cg);
	flat_release(&f);
out:
	symtab_release(&st);
	gmon_profile_release(&p);
	return 0;
}

int
cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		REPORT_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	struct report_opts r = { FORMAT_TEXT, 0, 0, NULL, NULL, NULL, 0 };
	struct symtab_opts s = { 0, 0, NULL };
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
	return report_files(argv[optind], argv + optind + 1, argc - optind - 1,
			    &r, &s, stdout);
}

int
main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd || !strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		fputs(usage_main, cmd ? stdout : stderr);
		return cmd ? 0 : EXIT_BAD_INPUT;
	}
	if (!strcmp(cmd, "--version")) {
		printf("pcprof %s\n", PC_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "merge"))
		return cmd_merge(argc - 1, argv + 1);
	if (!strcmp(cmd, "flame"))
		return cmd_flame(argc - 1, argv + 1);
	pc_warn("'%s': not a command; try pcprof --help", cmd);
	return EXIT_BAD_INPUT;
}
