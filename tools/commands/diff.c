/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof diff: compares the profiles of two builds of a program function by
 * function, by name, and says whether the new build is significantly slower
 * anywhere: the gate of a CI performance-regression job (exit status 1).
 * Each profile argument is one run; the statistics are in docs/ci.md. This
 * file reads the command line and runs the stages: diff_side.c loads,
 * diff_compare.c compares (with diff_model.c), diff_out.c prints.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "inputs/runexe.h"
#include "inputs/runfiles.h"
#include "commands/options.h"
#include "model/history.h"
#include "model/diff_alloc.h"
#include "model/sequential.h"
#include "writers/diff_out.h"
#include "writers/flame.h"

static const char usage_diff[] =
"usage: pcprof diff [OPTIONS] --base [EXE] GMON|DIR... --new [EXE] GMON|DIR...\n"
"       pcprof diff [OPTIONS] EXE BASE_GMON NEW_GMON\n"
"\n"
"Compare the profiles of a base and a new build, function by function\n"
"(matched by name), and exit 1 if the new build is significantly slower in\n"
"any function: a CI performance-regression gate. Each GMON is one run of\n"
"the benchmark (a DIR: the profiles of one multi-process run); give several\n"
"runs a side, so that run-to-run variation is measured. Improvements are\n"
"reported and never fail; functions found on one side only are listed as\n"
"appeared or gone. Runs recorded with PC_SCOPE=all are compared as whole\n"
"processes, functions outside the executable named \"name (object)\".\n"
"A side with no EXE (--base DIR, as pcprof run left it) is of the program\n"
"that the run's manifests name.\n"
"The statistics are described in docs/ci.md.\n"
"\n"
"Options:\n"
"  --metric M         self (default): each function's own seconds a run;\n"
"                     total: self plus callees (needs call graphs);\n"
"                     program: the whole program's CPU seconds a run;\n"
"                     wall: of wall-clock profiles (PC_CLOCK=wall), each\n"
"                     function's CPU self seconds and each wait's\n"
"                     seconds, a row \"[off-cpu: CALL] from FUNCTION\"\n"
"                     (the innermost function of the executable it\n"
"                     blocked under)\n"
"                     alloc, alloc-bytes: of allocation profiles (PC_ALLOC),\n"
"                     each function's allocations (or bytes) with its\n"
"                     callees' a run, exact at PC_ALLOC_RATE=1 (one run a\n"
"                     side decides), else with each one's sampling error;\n"
"                     --threshold's default is then 0.5\n"
"  --alpha A          significance level over all functions, 0 < A < 1\n"
"                     (default 0.01; Holm's correction across functions)\n"
"  --threshold PCT    smallest change that counts, in percent of the base\n"
"                     seconds (default 5)\n"
"  --min-seconds S    smallest change that counts, in seconds a run\n"
"                     (default 0.01)\n"
"  --format FMT       text (default), json, or markdown (for a pull-request\n"
"                     comment: a verdict line, then the significant changes)\n"
"  --top N            text: rows beyond the significant ones (default 10;\n"
"                     0: all)\n"
"  --absolute         compare seconds as measured: no allowance for runs or\n"
"                     sides on a faster or slower machine (see below)\n"
"  --marker NAME      compare only each run's time inside the markers NAME\n"
"                     (its timeline: pcprof run --timeline; compare records\n"
"                     it), --metric self or program\n"
"  --flame FILE       write a differential flame graph (SVG): the stacks of\n"
"                     the new side's last run (recorded with PC_STACKS=1),\n"
"                     each function red where significantly slower, blue\n"
"                     where faster, grey where not significantly changed\n"
"  --looks N          judge as pcprof compare's sequential gate would with a\n"
"                     budget of N runs a side: the first 3, 4, ... runs a\n"
"                     side in order, up to the first look that decides;\n"
"                     a verdict, regressed, unchanged or undecided\n"
"  --undecided pass|fail  exit status of an undecided verdict (default pass:\n"
"                     0; fail: 1)\n"
"  --keep-pieces, --no-demangle, --full-names, --debug-dir DIR   as for report\n"
"\n"
"Seconds are compared at one machine speed: each run is scaled by its\n"
"side's mean program seconds over its own, and the new side by a robust\n"
"mean of the functions' ratios of new to base seconds, which the functions\n"
"that changed do not move (a uniform slowdown of every function is the\n"
"machine's; --metric program or --absolute sees it).\n"
"\n"
"Exit status: 0 no significant regression, 1 a significant regression\n"
"(or with --looks and --undecided fail, undecided), 2 bad input or usage.\n";

static double
parse_number(const char *opt, const char *arg, int percent)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(arg, &end);
	if (percent && *end == '%')
		end++;
	if (end == arg || *end || errno || !isfinite(x) || x < 0)
		pc_fatal("%s '%s': not a number%s", opt, arg, percent ? " of percent" : "");
	return percent ? x / 100 : x;
}

static void
add_arg(struct side *s, char *arg)
{
	char **v = realloc(s->args, ((size_t)s->nruns + 1) * sizeof(*v));

	if (!v)
		pc_fatal("out of memory");
	s->args = v;
	s->args[s->nruns++] = arg;
}

static int
usage_error(void)
{
	fputs(usage_diff, stderr);
	return EXIT_BAD_INPUT;
}

/* The index of arg in words (NULL-ended), or exit naming opt and want. */
static int
pick(const char *opt, const char *arg, const char *const *words, const char *want)
{
	for (int i = 0; words[i]; i++)
		if (!strcmp(arg, words[i]))
			return i;
	pc_fatal("--%s '%s': not %s", opt, arg, want);
}

/* Apply one of diff's own value options; 0 when c is not one. */
int
diff_option(int c, const char *arg, struct diff_opts *o, struct symtab_opts *so)
{
	static const char *const metrics[] = { "self", "total", "program", "wall", "alloc",
					       "alloc-bytes", NULL };
	static const char *const formats[] = { "text", "json", "markdown", NULL };
	char *end;

	switch (c) {
	case OPT_METRIC:	/* enum metric's order */
		o->metric = (enum metric)pick("metric", arg, metrics,
					      "self, total, program, wall, alloc or alloc-bytes");
		return 1;
	case OPT_DIFF_MARKER:
		o->marker = arg;
		return 1;
	case OPT_ALPHA:
		o->alpha = parse_number("--alpha", arg, 0);
		if (o->alpha <= 0 || o->alpha >= 1)
			pc_fatal("--alpha '%s': not between 0 and 1", arg);
		return 1;
	case OPT_THRESHOLD:
		o->threshold = parse_number("--threshold", arg, 1);
		o->threshold_set = 1;
		return 1;
	case OPT_MIN_SECONDS:
		o->min_seconds = parse_number("--min-seconds", arg, 0);
		return 1;
	case OPT_DFORMAT:	/* enum diff_format's order */
		o->format = (enum diff_format)pick("format", arg, formats,
						   "text, json or markdown");
		return 1;
	case OPT_DTOP:
		o->top = strtol(arg, &end, 10);
		if (*end || end == arg || o->top < 0)
			pc_fatal("--top '%s': not a count", arg);
		return 1;
	case OPT_FLAME:
		o->flame = arg;
		return 1;
	case OPT_ABSOLUTE:
		o->absolute = 1;
		return 1;
	case OPT_UNDECIDED:
		o->undecided_fail = pick("undecided", arg, (const char *const[]){ "pass", "fail",
					 NULL }, "pass or fail");
		return 1;
	case OPT_LOOKS:
		o->seq_max = (int)strtol(arg, &end, 10);
		if (*end || end == arg || o->seq_max < 1 || o->seq_max > 1000)
			pc_fatal("--looks '%s': not a count of runs from 1 to 1000", arg);
		o->seq_min = SEQ_MIN_RUNS;
		o->replay = 1;
		return 1;
	}
	return symtab_option(c, arg, so);
}

/* A side named by its run (--base DIR): the program that the run's
 * manifests name, and the directory its first run. The program's path
 * lives as long as the command. */
static void
side_of_run(struct side *s)
{
	struct runexe re;
	char *run = (char *)s->exe;

	if (!run || !runfiles_is_profile(run))
		return;
	if (runexe_resolve(&re, &run, 1, NULL))
		exit(EXIT_BAD_INPUT);
	add_arg(s, run);
	memmove(s->args + 1, s->args, ((size_t)s->nruns - 1) * sizeof(*s->args));
	s->args[0] = run;
	s->exe = re.exe;
	re.exe = NULL;
	runexe_release(&re);
}

/* The sides once every argument is read: loose holds profiles named before
 * --base or --new, which only "EXE BASE NEW" may have. -1 when both sides
 * are complete, or the status to exit with. */
static int
sides_finish(struct side *b, struct side *nw, struct side *loose)
{
	if (!b->exe && !nw->exe && loose->nruns == 3) {
		/* pcprof diff EXE BASE NEW: one build, one run a side */
		b->exe = nw->exe = loose->args[0];
		add_arg(b, loose->args[1]);
		add_arg(nw, loose->args[2]);
	} else if (loose->nruns) {
		pc_warn("'%s': a profile before --base or --new", loose->args[0]);
		free(loose->args);
		return usage_error();
	}
	free(loose->args);
	side_of_run(b);
	side_of_run(nw);
	if (!b->exe || !nw->exe || !b->nruns || !nw->nruns) {
		pc_warn("%s", !b->exe || !nw->exe ? "--base EXE and --new EXE are both needed" :
			"each side needs one profile or more");
		return usage_error();
	}
	return -1;
}

/*
 * Fill the two sides from the command line: --base EXE runs... --new EXE
 * runs..., or EXE BASE NEW. Returns -1 to go on, or an exit status.
 */
static int
parse_args(int argc, char **argv, struct diff_opts *o, struct symtab_opts *so,
	   struct side sides[2])
{
	static const struct option longopts[] = {
		{ "base", required_argument, NULL, OPT_BASE },
		{ "new", required_argument, NULL, OPT_NEW },
		DIFF_LONGOPTS,
		{ "flame", required_argument, NULL, OPT_FLAME },
		{ "looks", required_argument, NULL, OPT_LOOKS },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	struct side *cur = NULL, loose;
	int c;

	memset(&loose, 0, sizeof(loose));
	/* "-": profiles come back in order as option 1, for the side named last */
	while ((c = getopt_long(argc, argv, "-h", longopts, NULL)) != -1) {
		if (c == 1) {
			add_arg(cur ? cur : &loose, optarg);
		} else if (c == OPT_BASE || c == OPT_NEW) {
			cur = &sides[c == OPT_NEW];
			if (cur->exe)
				pc_fatal("--%s given twice", c == OPT_NEW ? "new" : "base");
			cur->exe = optarg;
		} else if (!diff_option(c, optarg, o, so)) {
			free(loose.args);
			if (c != 'h')
				return usage_error();
			fputs(usage_diff, stdout);
			return 0;
		}
	}
	/* what "--" left, for the side being filled */
	for (; optind < argc; optind++)
		add_arg(cur ? cur : &loose, argv[optind]);
	return sides_finish(&sides[0], &sides[1], &loose);
}

/* A function's change, as the flame graph colours it; sorted by name. */
struct verdict {
	const char *name;
	enum status status;
};

struct verdicts {
	struct verdict *v;
	size_t n;
};

static int
cmp_verdict(const void *a, const void *b)
{
	return strcmp(((const struct verdict *)a)->name, ((const struct verdict *)b)->name);
}

static unsigned char
verdict_kind(const char *name, void *arg)
{
	const struct verdicts *vs = arg;
	struct verdict key = { name, ST_SAME }, *v;

	v = bsearch(&key, vs->v, vs->n, sizeof(key), cmp_verdict);
	if (!v)
		return FLAME_KIND_SAME;
	return v->status == ST_SLOWER ? FLAME_KIND_SLOWER :
	       v->status == ST_FASTER ? FLAME_KIND_FASTER : FLAME_KIND_SAME;
}

/* The new side's last run's stacks, coloured by the comparison, into
 * the temporary file of of. Written before the verdict is printed (a
 * graph that cannot be made is bad input, exit 2, not a verdict) and
 * put in place after it (a verdict that cannot be printed leaves no
 * graph). */
static void
diff_flame(const struct result *res, const struct side *n, const struct diff_opts *o,
	   struct out_file *of)
{
	struct verdicts vs = { malloc((res->nrows ? res->nrows : 1) * sizeof(*vs.v)),
			       res->nrows };
	char title[600];
	FILE *f;

	if (!vs.v)
		pc_fatal("out of memory");
	for (size_t i = 0; i < res->nrows; i++)
		vs.v[i] = (struct verdict){ res->rows[i].name, res->rows[i].status };
	qsort(vs.v, vs.n, sizeof(*vs.v), cmp_verdict);
	snprintf(title, sizeof(title), "%s against its base: %d function%s slower, %d faster "
		 "(alpha %g)", n->exe, res->nslow, res->nslow == 1 ? "" : "s", res->nfast,
		 o->alpha);
	if (!(f = out_open(of, o->flame)))
		exit(EXIT_BAD_INPUT);
	if (flame_of_run(f, &n->in, n->nruns - 1, NULL,
			 o->metric == METRIC_WALL ? PC_CLOCK_WALL : PC_CLOCK_CPU, title,
			 verdict_kind, &vs) ||
	    fflush(f) || ferror(f))
		pc_fatal("'%s': %s", o->flame, strerror(errno ? errno : EIO));
	free(vs.v);
}

static double *
dup_doubles(const double *v, size_t n)
{
	double *d;

	if (!v)
		return NULL;
	if (!(d = malloc((n ? n : 1) * sizeof(*d))))
		pc_fatal("out of memory");
	memcpy(d, v, n * sizeof(*d));
	return d;
}

/* src's first n runs in dst: its seconds copied (diff_compare scales
 * them), the rest shared with src. */
static void
side_cut(struct side *dst, const struct side *src, int n)
{
	size_t nf = src->in.st.nfuncs ? src->in.st.nfuncs : 1;

	*dst = *src;
	dst->nruns = n;
	dst->self = dup_doubles(src->self, (size_t)n * nf);
	dst->total = dup_doubles(src->total, (size_t)n * nf);
	dst->program = dup_doubles(src->program, (size_t)n);
	dst->waited = dup_doubles(src->waited, (size_t)n);
	dst->runq = dup_doubles(src->runq, (size_t)n);
	dst->elapsed = dup_doubles(src->elapsed, (size_t)n);
}

static void
side_cut_free(struct side *s)
{
	free(s->self);
	free(s->total);
	free(s->program);
	free(s->waited);
	free(s->runq);
	free(s->elapsed);
}

/*
 * The sequential look at the sides' first n runs into res (their copies
 * in cut, to be freed): compared at the level the look spends, and
 * judged regressed, unchanged or undecided.
 */
static void
seq_look(struct result *res, struct side cut[2], const struct side sides[2], int n,
	 const struct diff_opts *o)
{
	struct diff_opts lo = *o;
	int to = sides[0].nruns < sides[1].nruns ? sides[0].nruns : sides[1].nruns;

	/* the last look has every run of each side (one may have more, where
	 * the other's disturbed runs were left out) */
	side_cut(&cut[0], &sides[0], n >= to ? sides[0].nruns : n);
	side_cut(&cut[1], &sides[1], n >= to ? sides[1].nruns : n);
	lo.alpha = seq_look_level(o->alpha, n, o->seq_min, o->seq_max);
	if (diff_compare(res, &cut[0], &cut[1], &lo))
		exit(EXIT_BAD_INPUT);
	seq_judge(res, &lo, lo.alpha);
	res->seq.runs = n;
	res->seq.left = 0;
	for (int s = 0; s < 2; s++) {
		/* the runs left out were found among all of a side's: the
		 * earlier looks' first n are of those kept */
		res->seq.used[s] = cut[s].nruns;
		res->seq.made[s] = n >= to ? sides[s].nruns + sides[s].nleft : n;
		res->seq.left += n >= to ? sides[s].nleft : 0;
	}
	res->seq.min = o->seq_min;
	res->seq.max = o->seq_max;
	res->seq.alpha = lo.alpha;
}

/* The sequential gate on the loaded sides: the look at all their runs
 * (the fewer side's), or with o->replay each look from the first up to
 * the first that decides. A look regressed by the whole process's
 * elapsed time alone decides the verdict but not the stop: the looks go
 * on until one names a function or wait slower, or the runs end
 * (seq_whole_only). */
static void
seq_gate(struct result *res, struct side cut[2], const struct side sides[2],
	 const struct diff_opts *o)
{
	int to = sides[0].nruns < sides[1].nruns ? sides[0].nruns : sides[1].nruns;
	int n = o->replay && o->seq_min < to ? o->seq_min : to;
	int whole = o->seq_whole;

	for (;; n = seq_next_look(n, o->seq_min, to)) {
		seq_look(res, cut, sides, n, o);
		if (!whole && seq_whole_only(res))
			whole = n;
		seq_keep_whole(res, whole);
		if (n >= to || (res->seq.verdict != SEQ_UNDECIDED &&
				!(whole && seq_whole_only(res))))
			break;
		free(res->rows);
		side_cut_free(&cut[0]);
		side_cut_free(&cut[1]);
	}
}

/* --marker: a run's self seconds from its timeline, which holds no call
 * graph and no waits' totals. */
static void
marker_refuse(const struct diff_opts *o)
{
	if (o->marker && (o->metric == METRIC_TOTAL || o->metric == METRIC_WALL ||
			  METRIC_IS_ALLOC(o->metric) || o->flame))
		pc_fatal("--marker: with --metric self or program, without --flame");
}

enum seq_verdict
diff_look(struct side sides[2], const struct diff_opts *o, const struct symtab_opts *so,
	  int *whole)
{
	struct side cut[2];
	struct result res;

	marker_refuse(o);
	/* the gate on allocations decides at the last run (diff_alloc_gate) */
	if (METRIC_IS_ALLOC(o->metric))
		return SEQ_UNDECIDED;
	for (int s = 0; s < 2; s++) {
		sides[s].marker = o->marker;
		if (diff_side_load(&sides[s], so, o->metric == METRIC_TOTAL,
				   o->metric == METRIC_WALL))
			exit(EXIT_BAD_INPUT);
		diff_disturbed_leave_out(&sides[s], s);
	}
	seq_gate(&res, cut, sides, o);
	*whole = res.seq.whole;
	/* the whole process alone: regressed, and the runs go on to name
	 * what changed */
	if (seq_whole_only(&res) && res.seq.runs < o->seq_max)
		res.seq.verdict = SEQ_UNDECIDED;
	free(res.rows);
	for (int s = 0; s < 2; s++) {
		side_cut_free(&cut[s]);
		diff_side_release(&sides[s]);
	}
	return res.seq.verdict;
}

/* Compare the loaded sides into res, as o asks: at once, or as the
 * sequential gate (with the sides cut to the look's runs in cut[]);
 * the sides to print. */
static struct side *
gate_compare(struct result *res, struct side sides[2], struct side cut[2],
	     const struct diff_opts *o)
{
	if (o->seq_max <= 0) {
		if (diff_compare(res, &sides[0], &sides[1], o))
			exit(EXIT_BAD_INPUT);
		return sides;
	}
	seq_gate(res, cut, sides, o);
	return cut;
}

int
diff_gate(struct side sides[2], const struct diff_opts *o, const struct symtab_opts *so)
{
	struct out_file of;
	struct result res;
	struct side cut[2], *sd;
	size_t tested = 0;
	int r;

	marker_refuse(o);
	if (METRIC_IS_ALLOC(o->metric))
		return diff_alloc_gate(sides, o, so);
	sides[0].marker = sides[1].marker = o->marker;
	for (int s = 0; s < 2; s++)
		if (diff_side_load(&sides[s], so, o->metric == METRIC_TOTAL,
				   o->metric == METRIC_WALL))
			exit(EXIT_BAD_INPUT);
	for (int s = 0; s < 2; s++)
		diff_disturbed_leave_out(&sides[s], s);
	/* the new side's seconds as measured, before diff_compare scales them */
	if (o->keep_history)
		history_keep(o->keep_history, &sides[1], o->hist, o->exp);
	if (!sides[0].in.st.nobjs != !sides[1].in.st.nobjs)
		pc_warn("note: only the %s side was recorded with PC_SCOPE=all: its shared "
			"libraries' time has nothing to be compared with",
			sides[0].in.st.nobjs ? "base" : "new");
	sd = gate_compare(&res, sides, cut, o);
	for (size_t i = 0; i < res.nrows; i++)
		tested += (size_t)res.rows[i].tested;
	if (!tested)
		pc_fatal("'%s' and '%s': no function has samples on both sides; not builds of one program?",
			 sides[0].exe, sides[1].exe);
	if (o->flame)
		diff_flame(&res, &sd[1], o, &of);
	diff_print(stdout, &res, &sd[0], &sd[1], o);
	if (fflush(stdout) || ferror(stdout))
		pc_fatal("standard output: %s", strerror(errno));
	if (o->flame && out_commit(&of))
		exit(EXIT_BAD_INPUT);
	free(res.rows);
	r = diff_exit_status(&res, o);
	for (int s = 0; s < 2; s++) {
		if (sd == cut)
			side_cut_free(&cut[s]);
		diff_side_release(&sides[s]);
	}
	return r;
}

int
cmd_diff(int argc, char **argv)
{
	struct diff_opts o = DIFF_OPTS_DEFAULT;
	struct symtab_fetch fetch = { 0 };
	struct symtab_opts so = { .fetch = &fetch };
	struct side sides[2];
	int r;

	memset(sides, 0, sizeof(sides));
	if ((r = parse_args(argc, argv, &o, &so, sides)) >= 0) {
		free(sides[0].args);
		free(sides[1].args);
		return r;
	}
	r = diff_gate(sides, &o, &so);
	for (int s = 0; s < 2; s++)
		free(sides[s].args);
	symtab_fetch_end(&fetch);
	return r;
}
