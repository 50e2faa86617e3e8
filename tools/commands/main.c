/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof: the command line. Dispatches to report, run, merge, flame, diff,
 * compare and annotate, and prints the usage of pcprof itself; nothing else.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"
#include "config.h"	/* PC_VERSION, from VERSION by the Makefile */

static const char usage_main[] =
"usage: pcprof COMMAND [OPTIONS] [ARGS]\n"
"\n"
"Commands:\n"
"  report [OPTIONS] [EXE] GMON|DIR... flat profile of a run, or of EXE from\n"
"                                   its profiles (default GMON: gmon.out)\n"
"  run [OPTIONS] -- CMD [ARGS...]   run CMD under libpc.so, then report\n"
"  merge -o OUT GMON|DIR...         sum profiles into gmon.out files for gprof\n"
"  flame -o SVG [EXE] GMON|DIR...   interactive flame graph of the stacks\n"
"  diff --base [EXE] GMON|DIR... --new [EXE] GMON|DIR...\n"
"                                   CI gate: exit 1 on a regression\n"
"  compare [OPTIONS] --base CMD [ARGS...] --new CMD [ARGS...]\n"
"                                   run both in turns, then gate as diff does\n"
"  annotate [--asm|--source] [EXE] GMON|DIR... FUNCTION\n"
"                                   one function by instruction and line\n"
"  history [OPTIONS] FILE           the commits where a function's seconds\n"
"                                   changed; history add FILE [EXE] RUN...\n"
"                                   keeps a commit's runs in FILE\n"
"\n"
"EXE may be left out where DIR is what pcprof run left: the run's manifests\n"
"name the program. `pcprof COMMAND --help` describes each command.\n"
"Exit status: 0 success, 2 bad input or usage; run passes the program's own\n"
"status through; diff and compare exit 1 on a significant regression.\n";

int
main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd || !strcmp(cmd, "-h") || !strcmp(cmd, "--help") ||
	    !strcmp(cmd, "help")) {
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
	if (!strcmp(cmd, "diff"))
		return cmd_diff(argc - 1, argv + 1);
	if (!strcmp(cmd, "compare"))
		return cmd_compare(argc - 1, argv + 1);
	if (!strcmp(cmd, "annotate"))
		return cmd_annotate(argc - 1, argv + 1);
	if (!strcmp(cmd, "history"))
		return cmd_history(argc - 1, argv + 1);
	/* pcprof's own: finishing a live file apart (recover.c) */
	if (!strcmp(cmd, "__finish"))
		return cmd_finish(argc - 1, argv + 1);
	pc_warn("'%s': not a command; try pcprof --help", cmd);
	return EXIT_BAD_INPUT;
}
