/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof history: keeps one record a commit of a benchmark's runs in a
 * file (history add), and finds the commits where a function's seconds,
 * or the whole program's, changed (history FILE). The file is read and
 * written by history_file.c, its series made and their change points
 * found by history_fit.c and history_cp.c,
 * printed by history_out.c.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "commands/options.h"
#include "inputs/runexe.h"
#include "inputs/runfiles.h"
#include "model/diff.h"
#include "model/history.h"

static const char usage_history[] =
"usage: pcprof history [OPTIONS] FILE\n"
"       pcprof history add [--commit ID] [--time T] FILE [EXE] GMON|DIR...\n"
"\n"
"Find the commits where a function's CPU seconds, or the whole program's,\n"
"changed, over the records of a history FILE: one line a commit, in the\n"
"order the commits were recorded (oldest first), written by\n"
"`pcprof history add` or `pcprof compare --keep-history FILE`.\n"
"Each change is named by its commit (the first of the new level) and its\n"
"function, with its size (the change of the mean, in percent) and its\n"
"p-value. A change at the last commit whose runs were disturbed (their\n"
"speed, or their wall time over their CPU time, standing out from the\n"
"other commits') is printed apart, unconfirmed until the next commit.\n"
"The file's format and the method are in pcprof(1).\n"
"\n"
"`history add` appends one record: the runs given (each GMON or DIR one run\n"
"of the benchmark; EXE may be left out for runs pcprof run left), every\n"
"function's seconds a run as their mean and variance over the runs, and\n"
"the runs' wall seconds where each DIR holds them (the file elapsed, which\n"
"pcprof compare -o writes); a run whose CPU seconds stand out from the\n"
"rest (a disturbed run) is left out.\n"
"\n"
"Options:\n"
"  --format FMT       text (default), json, or markdown (for a CI comment)\n"
"  --alpha A          significance level over every function and commit\n"
"                     (default 0.01)\n"
"  --threshold PCT    smallest change reported, in percent of the level\n"
"                     before it (default 1)\n"
"  --method M         ttest (default): binary segmentation by Student's t;\n"
"                     edivisive: E-divisive means, a permutation test\n"
"  --absolute         functions' seconds as measured: no allowance for a\n"
"                     commit measured on a faster or slower machine (by\n"
"                     default each commit's seconds are divided by its\n"
"                     speed, the median of their ratios to their\n"
"                     levels between their change points)\n"
"  --plot FUNCTION    write an SVG plot of FUNCTION's seconds over the\n"
"                     commits (\"cpu\" or \"wall\": the program's), change\n"
"                     points marked, to the file of -o\n"
"  -o FILE            where --plot writes (default: standard output)\n"
"  --commit ID        add: the commit's name (default: git rev-parse HEAD)\n"
"  --time T           add: its time, seconds since 1970 (default: the\n"
"                     commit's time from git, or now)\n"
"\n"
"Exit status: 0 success (change points found or not), 2 bad input or\n"
"usage, a history file's bad line named.\n";

enum {
	OPT_H_ALPHA = 800,
	OPT_H_THRESHOLD,
	OPT_H_FORMAT,
	OPT_H_METHOD,
	OPT_H_PLOT,
	OPT_H_COMMIT,
	OPT_H_TIME,
	OPT_H_ABSOLUTE
};

struct history_opts {
	struct hist_result res;
	int format, absolute;
	enum cp_method method;
	const char *plot, *out;
	struct hist_id id;
};

static double
number(const char *opt, const char *arg)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(arg, &end);
	if (end != arg && *end == '%' && !strcmp(opt, "--threshold"))
		end++;
	if (end == arg || *end || errno || !isfinite(x) || x < 0)
		pc_fatal("%s '%s': not a number", opt, arg);
	return x;
}

/* The index of arg in words, or exit. */
static int
word(const char *opt, const char *arg, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (!strcmp(arg, words[i]))
			return i;
	pc_fatal("%s '%s': not one of its words (see pcprof history --help)",
		 opt, arg);
}

static int
history_option(int c, const char *arg, struct history_opts *o)
{
	static const char *const formats[] = { "text", "json", "markdown",
					       NULL };
	static const char *const methods[] = { "ttest", "edivisive", NULL };

	switch (c) {
	case OPT_H_ALPHA:
		o->res.alpha = number("--alpha", arg);
		if (o->res.alpha <= 0 || o->res.alpha >= 1)
			pc_fatal("--alpha '%s': not between 0 and 1", arg);
		return 1;
	case OPT_H_THRESHOLD:
		o->res.threshold = number("--threshold", arg) / 100;
		return 1;
	case OPT_H_FORMAT:
		o->format = word("--format", arg, formats);
		return 1;
	case OPT_H_METHOD:
		o->method = (enum cp_method)word("--method", arg, methods);
		o->res.method = methods[o->method];
		return 1;
	case OPT_H_PLOT:
		o->plot = arg;
		return 1;
	case 'o':
		o->out = arg;
		return 1;
	case OPT_H_ABSOLUTE:
		o->absolute = 1;
		return 1;
	case OPT_H_COMMIT:
		if (!arg[0])
			pc_fatal("--commit '': an empty name");
		o->id.commit = arg;
		return 1;
	case OPT_H_TIME:
		o->id.time = number("--time", arg);
		return 1;
	}
	return 0;
}

/* The options; the first operand's index, or -1 - the status to exit with. */
static int
parse(int argc, char **argv, struct history_opts *o)
{
	static const struct option longopts[] = {
		{ "alpha", required_argument, NULL, OPT_H_ALPHA },
		{ "threshold", required_argument, NULL, OPT_H_THRESHOLD },
		{ "format", required_argument, NULL, OPT_H_FORMAT },
		{ "method", required_argument, NULL, OPT_H_METHOD },
		{ "plot", required_argument, NULL, OPT_H_PLOT },
		{ "absolute", no_argument, NULL, OPT_H_ABSOLUTE },
		{ "commit", required_argument, NULL, OPT_H_COMMIT },
		{ "time", required_argument, NULL, OPT_H_TIME },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		if (history_option(c, optarg, o))
			continue;
		fputs(usage_history, c == 'h' ? stdout : stderr);
		return -1 - (c == 'h' ? 0 : EXIT_BAD_INPUT);
	}
	return optind;
}

/* history add FILE [EXE] RUN...: the runs loaded as diff loads a side
 * (with no EXE, the program that the first run's manifests name). */
static int
history_add(struct history_opts *o, int argc, char **argv)
{
	struct symtab_fetch fetch = { 0 };
	struct symtab_opts so = { .fetch = &fetch };
	struct runexe re = { 0 };
	struct side s;
	int first = 2;

	if (argc < 2 || (argc < 3 && !runfiles_is_profile(argv[1]))) {
		pc_warn("history add: a FILE and the runs are needed");
		fputs(usage_history, stderr);
		return EXIT_BAD_INPUT;
	}
	history_id_resolve(&o->id);
	memset(&s, 0, sizeof(s));
	if (runfiles_is_profile(argv[1])) {
		if (runexe_resolve(&re, argv + 1, 1, NULL))
			exit(EXIT_BAD_INPUT);
		s.exe = re.exe;
		first = 1;
	} else {
		s.exe = argv[1];
	}
	s.args = argv + first;
	s.nruns = argc - first;
	if (diff_side_load(&s, &so, 0, 0))
		exit(EXIT_BAD_INPUT);
	diff_disturbed_leave_out(&s, 1);
	history_keep(argv[0], &s, &o->id, NULL);
	diff_side_release(&s);
	runexe_release(&re);
	symtab_fetch_end(&fetch);
	return 0;
}

/* v1 of n1 runs and v2 of n2 runs as one value of n1 + n2 runs. */
static void
pool_value(struct hist_value *v1, int n1, const struct hist_value *v2, int n2)
{
	double n = (double)n1 + n2, m = (n1 * v1->mean + n2 * v2->mean) / n,
	       d = v1->mean - v2->mean;

	v1->var = ((n1 - 1) * v1->var + (n2 - 1) * v2->var +
		   n1 * (double)n2 / n * d * d) /
		  (n - 1);
	v1->mean = m;
}

/* Record b, of the same commit as a and just after it (a job run again),
 * pooled into a; b's names are a's now or freed, and b is empty. */
static void
pool_records(struct hist_record *a, struct hist_record *b)
{
	struct hist_value *f =
		pc_realloc(NULL, (a->nfuncs + b->nfuncs + 1) * sizeof(*f));
	size_t i = 0, j = 0, k = 0;

	while (i < a->nfuncs || j < b->nfuncs) {
		int c = i == a->nfuncs ? 1 : j == b->nfuncs ? -1 :
			strcmp(a->funcs[i].name, b->funcs[j].name);

		if (c < 0) {
			f[k++] = a->funcs[i++];
		} else if (c > 0) {
			f[k++] = b->funcs[j++];
		} else {
			f[k] = a->funcs[i++];
			pool_value(&f[k++], a->runs, &b->funcs[j], b->runs);
			free(b->funcs[j++].name);
		}
	}
	free(a->funcs);
	a->funcs = f;
	a->nfuncs = k;
	pool_value(&a->cpu, a->runs, &b->cpu, b->runs);
	if (a->wall.mean >= 0 && b->wall.mean >= 0)
		pool_value(&a->wall, a->runs, &b->wall, b->runs);
	else if (b->wall.mean >= 0)
		a->wall = b->wall;
	a->runs += b->runs;
	b->nfuncs = 0;
	history_record_release(b);
}

/* Records of one commit in a row (its job run again) pooled into one. */
static void
history_pool(struct history *h)
{
	size_t k = 0;

	for (size_t i = 0; i < h->n; i++) {
		if (k && !strcmp(h->recs[k - 1].commit, h->recs[i].commit) &&
		    h->recs[k - 1].runs <= 1000000 - h->recs[i].runs)
			pool_records(&h->recs[k - 1], &h->recs[i]);
		else
			h->recs[k++] = h->recs[i];
	}
	h->n = k;
}

static void
plot(const struct history_opts *o)
{
	const struct hist_result *res = &o->res;
	struct out_file of;
	FILE *f;

	for (size_t i = 0; i < res->ns; i++) {
		if (strcmp(res->s[i].name, o->plot) || !res->s[i].n)
			continue;
		if (!(f = out_open(&of, o->out)))
			exit(EXIT_BAD_INPUT);
		history_plot(f, res, &res->s[i]);
		if (out_commit(&of))
			exit(EXIT_BAD_INPUT);
		return;
	}
	pc_fatal("--plot '%s': no such function in the history",
		 text_name(o->plot));
}

int
cmd_history(int argc, char **argv)
{
	struct history_opts o = {
		.res = { .alpha = 0.01, .threshold = 0.01, .method = "ttest" },
		.id = { .time = -1 }
	};
	struct history h;
	int add = argc > 1 && !strcmp(argv[1], "add"), first;

	/* "add" stands for the command's name, as getopt skips argv[0] */
	argc -= add;
	argv += add;
	if ((first = parse(argc, argv, &o)) < 0)
		return -1 - first;
	if (add)
		return history_add(&o, argc - first, argv + first);
	if (first != argc - 1) {
		pc_warn("history: one FILE is needed");
		fputs(usage_history, stderr);
		return EXIT_BAD_INPUT;
	}
	if (history_read(argv[first], &h))
		return EXIT_BAD_INPUT;
	history_pool(&h);
	o.res.h = &h;
	history_analyse(&o.res, o.absolute, o.method);
	if (o.plot)
		plot(&o);
	else
		history_print(stdout, &o.res, o.format);
	if (fflush(stdout) || ferror(stdout))
		pc_fatal("standard output: %s", strerror(errno));
	history_result_release(&o.res);
	history_release(&h);
	return 0;
}
