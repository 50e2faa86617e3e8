/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof compare: the CI gate in one command. Runs a base and a new
 * command in turns under libpc.so (base, new, base, new, ...), each run
 * recorded whole in a directory of its own, after one warm-up pair that is
 * discarded; makes a run again when it was clearly disturbed (its wall
 * time far above its CPU time, where the side's other runs' are not);
 * fixes the most runs from the budget and the warm-up pair's
 * length, at most; after each pair from the third judges the runs so far
 * (the sequential gate, model/sequential.h) and stops at the first look
 * that decides; then gates on the runs with pcprof diff's test
 * (diff_gate), its verdict headed by the experiment's figures. Exit 0, 1
 * (regressed, or undecided with --undecided fail) or 2 (bad usage, a command that fails or writes no
 * profile); on 2 nothing it made is left behind. This file is the
 * command and its options; compare_runs.c makes the runs, compare_dir.c
 * keeps their directory.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"	/* PC_LIBDIR, written by the Makefile */
#include "commands/compare.h"
#include "commands/launch.h"
#include "commands/options.h"
#include "model/diff_alloc.h"
#include "../preload/taskclock.h"

static const char usage_compare[] =
"usage: pcprof compare [OPTIONS] --base CMD [ARGS...] --new CMD [ARGS...]\n"
"\n"
"Run the base and the new command in turns under libpc.so, base, new, base,\n"
"new, ..., each run profiled whole, after a warm-up pair that is discarded,\n"
"then compare them function by function as pcprof diff does and exit 1 if\n"
"the new command is significantly slower anywhere: a CI performance gate in\n"
"one line. After each pair of runs from the third a side it says\n"
"regressed (significantly slower by --threshold), unchanged (every change\n"
"of --threshold ruled out, by an equivalence test) or undecided (one more\n"
"pair), and stops at the first verdict; alpha is spent over the looks that\n"
"--budget allows (the most runs a side, fixed after the warm-up pair), so\n"
"the error rates hold. At the budget's end undecided is the verdict.\n"
"Regressed by [elapsed] or waits on other threads alone, it looks on, to\n"
"the budget, until a function or a wait of its own is slower. A run\n"
"whose wall time is far above its CPU time, where the side's other runs'\n"
"are not, was disturbed (another process had its CPU) and is made again.\n"
"Each command\n"
"must do a fixed amount of work and exit 0; its standard input is\n"
"/dev/null and its output goes to a file in its run's directory. The first\n"
"--new after --base ends the base command.\n"
"\n"
"Options:\n"
"  --budget TIME      wall time of each side's measured runs: 60 (seconds),\n"
"                     90s, 2m, 1h (default 60s; 3 to 1000 runs a side)\n"
"  --runs N           N runs a side instead, 2 to 1000, one look\n"
"  --undecided pass|fail  exit status of an undecided verdict (default\n"
"                     pass: 0; fail: 1)\n"
"  -o, --output DIR   keep the runs in DIR (made if missing, else empty):\n"
"                     DIR/base-001, DIR/new-001, ... (default: a temporary\n"
"                     directory, removed)\n"
"  --program PATH     the program whose processes are compared, when the\n"
"                     command is a script that runs it (default: CMD)\n"
"  --timer T          taskclock (default where perf events are allowed) or\n"
"                     posix (one signal a kernel tick at most)\n"
"  --hz N             samples a CPU second (default 10000 with taskclock,\n"
"                     1000 with posix)\n"
"  -q, --quiet        no progress lines on standard error\n"
"  --flame FILE       also write the differential flame graph (SVG) of the\n"
"                     new side's last run (the runs record their stacks)\n"
"  --threshold PCT    smallest change that fails, percent of the function's\n"
"                     base seconds (default 1; 2 with --metric wall)\n"
"  --min-seconds S    and in seconds a run (default 0.1 % of the base warm-up\n"
"                     run's CPU time; with --metric wall, its wall time)\n"
"  --keep-history FILE  append the new side's runs to the history FILE\n"
"                     (pcprof history): as of --commit ID (default: git\n"
"                     rev-parse HEAD) and --time T (default: its time)\n"
"  --metric alloc|alloc-bytes  the gate on allocations: the runs record\n"
"                     allocations alone, every one (PC_ALLOC=only,\n"
"                     PC_ALLOC_RATE=1 unless set), one run a side unless\n"
"                     --runs or --budget; a function whose allocations (or\n"
"                     bytes) grew by 0.5 % or more (--threshold) fails\n"
"  --metric, --alpha, --format text|json|markdown, --top, --absolute,\n"
"  --marker NAME,\n"
"  --keep-pieces, --no-demangle, --full-names, --debug-dir DIR\n"
"                     as for pcprof diff\n"
"\n"
"Exit status: 0 unchanged or undecided, 1 regressed (or undecided with\n"
"--undecided fail), 2 bad usage, a command that failed, or runs that could\n"
"not be compared.\n";

enum { OPT_BUDGET = 700, OPT_RUNS, OPT_PROGRAM, OPT_TIMER, OPT_HZ_C, OPT_KEEP_HISTORY,
       OPT_COMMIT_C, OPT_TIME_C };

/* the smallest change that fails: 1 % of the function's seconds, and
 * 0.1 % of the base warm-up run's CPU time (not pcprof diff's 5 % and
 * 0.01 s a run, which let a gate that runs short runs miss a 5 % slowdown).
 * A change no larger than the threshold is caught at most about half the
 * time, whatever the samples: 20 runs a side caught a 5 % slowdown of a
 * tenth of the work in 94 % of comparisons at --threshold 1 to 3, 79 % at
 * 4 and 22 % at 5, and at 1 % no identical build failed in 800
 * (bench/threshold_power.py, docs/benchmarks.md), so 2 % is within reach
 * where the samples allow it. --metric wall: 2 %, its CPU rows carry
 * libpc's own cost a sample, which moves with the load (a function the
 * change did not touch -1 % to +4 %: docs/benchmarks.md) */
#define COMPARE_THRESHOLD	0.01
#define COMPARE_THRESHOLD_WALL	0.02

/* "60", "90s", "2m", "1h": seconds. */
static double
parse_budget(const char *arg)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(arg, &end);
	if (end != arg && !errno && isfinite(x) && x > 0) {
		if (!strcmp(end, "") || !strcmp(end, "s"))
			return x;
		if (!strcmp(end, "m"))
			return 60 * x;
		if (!strcmp(end, "h"))
			return 3600 * x;
	}
	pc_fatal("--budget '%s': not a time (60, 90s, 2m, 1h)", arg);
}

static long
parse_count(const char *opt, const char *arg, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (end == arg || *end || errno || v < lo || v > hi)
		pc_fatal("%s '%s': not a whole number from %ld to %ld", opt, arg, lo, hi);
	return v;
}

/* compare's own options; 0 when c is not one. */
static int
compare_option(struct compare *c, int opt, const char *arg)
{
	switch (opt) {
	case OPT_BUDGET:
		c->budget = parse_budget(arg);
		c->budget_given = 1;
		return 1;
	case OPT_RUNS:
		c->runs = (int)parse_count("--runs", arg, 2, MAX_RUNS);
		return 1;
	case 'o':
		if (!*arg || strlen(arg) >= sizeof(c->dir) - 64)
			pc_fatal("-o '%s': %s", arg, *arg ? "the name is too long" : "no name");
		snprintf(c->dir, sizeof(c->dir), "%s", arg);
		return 1;
	case OPT_PROGRAM:
		c->program = arg;
		return 1;
	case OPT_TIMER:
		if (strcmp(arg, "taskclock") && strcmp(arg, "posix"))
			pc_fatal("--timer '%s': not taskclock or posix", arg);
		c->taskclock = !strcmp(arg, "taskclock");
		return 1;
	case OPT_HZ_C:
		c->hz = parse_count("--hz", arg, 1, 1000000);
		return 1;
	case 'q':
		c->quiet = 1;
		return 1;
	case OPT_KEEP_HISTORY:
		c->d.keep_history = arg;
		return 1;
	case OPT_COMMIT_C:
		if (!*arg)
			pc_fatal("--commit '': an empty name");
		c->hist.commit = arg;
		return 1;
	case OPT_TIME_C:
		c->hist.time = (double)parse_count("--time", arg, 0, LONG_MAX);
		return 1;
	}
	return 0;
}

/* The options before --base; -1 to go on, or the status to exit with. */
static int
parse_options(struct compare *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		DIFF_LONGOPTS,
		{ "flame", required_argument, NULL, OPT_FLAME },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "runs", required_argument, NULL, OPT_RUNS },
		{ "output", required_argument, NULL, 'o' },
		{ "program", required_argument, NULL, OPT_PROGRAM },
		{ "timer", required_argument, NULL, OPT_TIMER },
		{ "hz", required_argument, NULL, OPT_HZ_C },
		{ "quiet", no_argument, NULL, 'q' },
		{ "keep-history", required_argument, NULL, OPT_KEEP_HISTORY },
		{ "commit", required_argument, NULL, OPT_COMMIT_C },
		{ "time", required_argument, NULL, OPT_TIME_C },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+ho:q", longopts, NULL)) != -1) {
		if (compare_option(c, opt, optarg) || diff_option(opt, optarg, &c->d, &c->s))
			continue;
		if (opt == 'h') {
			fputs(usage_compare, stdout);
			return 0;
		}
		fputs(usage_compare, stderr);
		return EXIT_BAD_INPUT;
	}
	if (c->runs && c->budget_given)
		pc_fatal("compare: --budget and --runs: give one (the runs a side, or the time "
			 "to fill with them)");
	/* exact allocation counts: one run a side decides (model/diff_alloc.h) */
	if (METRIC_IS_ALLOC(c->d.metric) && !c->runs && !c->budget_given)
		c->runs = 1;
	if (optind < argc) {
		pc_warn("compare: '%s': an argument before --base", argv[optind]);
		fputs(usage_compare, stderr);
		return EXIT_BAD_INPUT;
	}
	return -1;
}

/* argv as one line, each word quoted where a shell would need it. */
static char *
command_line(char **argv, int argc)
{
	size_t cap = 1;
	char *s, *p;

	for (int i = 0; i < argc; i++)
		cap += 4 * strlen(argv[i]) + 3;
	if (!(s = p = malloc(cap)))
		pc_fatal("out of memory");
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		int plain = *a && !a[strcspn(a, " \t\n'\"\\$`|&;<>()*?[]{}~!#")];

		if (i)
			*p++ = ' ';
		if (plain) {
			p = stpcpy(p, a);
			continue;
		}
		*p++ = '\'';
		for (; *a; a++)
			p = *a == '\'' ? stpcpy(p, "'\\''") : (*p = *a, p + 1);
		*p++ = '\'';
	}
	*p = 0;
	return s;
}

/* One command, its words from..to (exclusive), resolved as execvp would. */
static void
set_command(struct command *cmd, const char *side, char **argv, int from, int to)
{
	const char *why;

	if (from >= to)
		pc_fatal("compare: --%s names no command", side);
	cmd->argc = to - from;
	if (!(cmd->argv = calloc((size_t)cmd->argc + 1, sizeof(*cmd->argv))))
		pc_fatal("out of memory");
	memcpy(cmd->argv, argv + from, (size_t)cmd->argc * sizeof(*cmd->argv));
	cmd->line = command_line(cmd->argv, cmd->argc);
	if (launch_find(cmd->argv[0], cmd->exe, sizeof(cmd->exe)))
		pc_fatal("compare: the %s command '%s': command not found", side, cmd->argv[0]);
	if ((why = launch_why_unprofilable(cmd->exe)))
		pc_fatal("compare: the %s command '%s' cannot be profiled: %s", side,
			 cmd->exe, why);
}

/* Split the command line at --base and --new; -1 to go on, or a status. */
static int
parse_args(struct compare *c, int argc, char **argv)
{
	int ib = -1, in = -1, r;

	for (int i = 1; i < argc && in < 0; i++) {
		if (ib < 0 && !strcmp(argv[i], "--base"))
			ib = i;
		else if (ib >= 0 && !strcmp(argv[i], "--new"))
			in = i;
		else if (ib < 0 && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
			fputs(usage_compare, stdout);
			return 0;
		}
	}
	if (ib < 0) {
		pc_warn("compare: no --base command");
		fputs(usage_compare, stderr);
		return EXIT_BAD_INPUT;
	}
	if ((r = parse_options(c, ib, argv)) >= 0)
		return r;
	if (in < 0) {
		pc_warn("compare: no --new command after --base");
		fputs(usage_compare, stderr);
		return EXIT_BAD_INPUT;
	}
	set_command(&c->cmd[0], "base", argv, ib + 1, in);
	set_command(&c->cmd[1], "new", argv, in + 1, argc);
	if (c->d.threshold < 0)
		c->d.threshold = c->d.metric == METRIC_WALL ? COMPARE_THRESHOLD_WALL :
				 COMPARE_THRESHOLD;
	return -1;
}

/* Whether this process may open a task-clock event on itself, as libpc
 * will in the commands (perf_event_paranoid, seccomp); 0 or an errno. */
static int
taskclock_refused(void)
{
	int fd = pc_taskclock_open(100000);

	if (fd < 0)
		return -fd;
	close(fd);
	return 0;
}

/* libpc's settings for every run; PC_OUT is set in each run's child. */
static void
set_environment(const struct compare *c)
{
	char hz[32];
	int stacks = c->d.flame != NULL;

	snprintf(hz, sizeof(hz), "%ld", c->hz);
	/* libpc after what is preloaded already; the ASan runtime is not put
	 * first, as run does (launch_preload with no exe) */
	if (launch_preload(c->lib, NULL) || setenv("PC_SCOPE", "all", 1) ||
	    setenv("PC_TIMER", c->taskclock ? "taskclock" : "posix", 1) ||
	    setenv("PC_HZ", hz, 1) ||
	    /* stacks need the call graph; self time does not, and the walk
	     * costs the program time */
	    setenv("PC_CALLGRAPH", stacks || c->d.metric == METRIC_TOTAL ||
		   c->d.metric == METRIC_WALL ? "1" : "0", 1) ||
	    (stacks && setenv("PC_STACKS", "1", 1)) ||
	    /* the wall gate's waits: libpc's wall clock, stacks and all; a
	     * wait's samples are its rounds, so the gate's power is in their
	     * rate: up to 1000 a second, the sampler's CPU up to 10 % of one
	     * (both sides alike; bench/wall_power.py) */
	    (c->d.metric == METRIC_WALL && (setenv("PC_CLOCK", "wall", 1) ||
					    setenv("PC_WALL_HZ", "1000", 1) ||
					    setenv("PC_WALL_BUDGET", "10", 1))) ||
	    /* the gate on allocations: every one recorded, unless the
	     * environment asks for a sampling rate, and no CPU samples */
	    (METRIC_IS_ALLOC(c->d.metric) && (setenv("PC_ALLOC", "only", 1) ||
					      setenv("PC_ALLOC_RATE", "1", 0))))
		pc_fatal("cannot set libpc's environment: %s", strerror(errno));
	unsetenv("GMON_OUT_PREFIX");
	unsetenv("PC_OUT");
	if (!stacks)
		unsetenv("PC_STACKS");
	if (c->d.metric != METRIC_WALL) {
		unsetenv("PC_CLOCK");
		unsetenv("PC_WALL_HZ");
		unsetenv("PC_WALL_BUDGET");
	}	/* --marker: each run's timeline, the markers ITT's too */
	if (c->d.marker && setenv("PC_TIMELINE", "1", 1))
		pc_fatal("cannot set libpc's environment: %s", strerror(errno));
	launch_itt(c->lib);
	launch_alloc(c->lib);
}

int
cmd_compare(int argc, char **argv)
{
	static struct compare c;	/* compare_dir.c reads its directory at exit */
	struct symtab_fetch fetch = { 0 };
	struct side sides[2];
	int r, keep;

	c.d = (struct diff_opts)DIFF_OPTS_DEFAULT;
	c.d.who = "pcprof compare";
	/* a gate that is to catch a 5 % slowdown must not ask for 5 % */
	c.d.threshold = -1;	/* by the metric, unless given */
	c.d.min_seconds = -1;	/* from the warm-up run, unless given */
	c.s.fetch = &fetch;
	c.budget = 60;
	c.taskclock = -1;
	c.hist.time = -1;
	if ((r = parse_args(&c, argc, argv)) >= 0)
		return r;
	if (c.d.keep_history) {
		/* the commit is known before the runs are spent */
		history_id_resolve(&c.hist);
		c.d.hist = &c.hist;
	}
	keep = c.dir[0] != 0;
	if (libpc_find(c.lib, sizeof(c.lib)))
		pc_fatal("cannot find libpc.so beside pcprof or in %s", PC_LIBDIR);
	if (c.taskclock < 0)
		c.taskclock = !taskclock_refused();
	if (!c.hz)
		c.hz = c.taskclock ? 10000 : 1000;
	c.e.hz = c.hz;
	c.e.budget = c.runs ? 0 : c.budget;
	c.e.cmd[0] = c.cmd[0].line;
	c.e.cmd[1] = c.cmd[1].line;
	/* SIGINT, SIGTERM and SIGHUP stop compare (unless they were ignored
	 * when it started), from before its directory is made, which the stop
	 * removes; SIGPIPE is ignored, as found kept for the commands */
	launch_catch_stops(0);
	compare_make_dir(&c);
	c.e.dir = keep ? c.dir : NULL;
	set_environment(&c);
	compare_experiment(&c);
	/* the analysis: a stop is taken once the verdict is out, and no
	 * read or write of it fails with EINTR meanwhile */
	launch_catch_stops(SA_RESTART);
	c.d.exp = &c.e;
	memset(sides, 0, sizeof(sides));
	for (int s = 0; s < 2; s++) {
		sides[s].exe = c.exe[s];
		sides[s].args = c.names[s];
		sides[s].nruns = c.e.runs;
	}
	r = diff_gate(sides, &c.d, &c.s);
	symtab_fetch_end(&fetch);
	if (launch_stopped())
		compare_stop_now();
	if (keep)
		compare_keep_runs();
	return r;
}
