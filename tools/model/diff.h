/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the files of pcprof diff share: the two sides, the variance model,
 * the compared rows and the options. diff.c reads the command line and
 * calls diff_side.c (loading), diff_compare.c (comparing, with the model of
 * diff_model.c) and diff_out.c (printing, which reads diff_compare.c's
 * rows); no file calls back up that line. None of it is AS-safe.
 */
#ifndef PC_DIFF_H
#define PC_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pcprof.h"
#include "commands/options.h"

#define EXIT_REGRESSION	1

/* --format, in the order of its words */
enum diff_format { DIFF_TEXT, DIFF_JSON, DIFF_MARKDOWN };
/* --metric, in the order of its words (diff_out.c names them) */
enum metric { METRIC_SELF, METRIC_TOTAL, METRIC_PROGRAM, METRIC_WALL,
	      /* of allocation profiles (model/diff_alloc.h) */
	      METRIC_ALLOC, METRIC_ALLOC_BYTES };

/* One build: its runs' profiles and symbols (in.runs[r], in.st) and, for
 * every run, every function's seconds. */
struct side {
	const char *exe;
	char **args;		/* one run each */
	int nruns;
	struct pc_inputs in;
	uint32_t rate;
	double *self;		/* nruns x in.st.nfuncs, seconds */
	double *total;		/* the same for total time, or NULL */
	double *program;	/* per run: every sample, seconds (wall: and
				 * every off-CPU second) */
	/* --metric wall: the waits' rows follow the functions in in.st
	 * (from first_wait), their seconds in self; the wall clock's rate
	 * for their variance (the lowest of the runs' files' rates at which
	 * a thread was looked at, on average) */
	size_t first_wait;
	uint32_t wall_hz;
	double *waited;		/* per run: of program, off-CPU seconds (wall;
				 * else NULL) */
	/* --metric wall: each wait row's heaviest stack in one run (index
	 * row - first_wait), as diff_wall_stack() gives it */
	struct {
		char *stack;
		uint64_t ns; /* the off-CPU time of the record it came from */
	} *wait_stacks;
	size_t nwait_stacks;
	/* --metric wall: per run, its threads' seconds in the run queue
	 * (runnable, waiting for a CPU); else NULL */
	double *runq;
	/* per run, its wall seconds where every run's directory holds them
	 * (RUN_ELAPSED_FILE, which pcprof compare writes); else NULL */
	double *elapsed;
	/* the runs left out as disturbed (diff_disturbed.c): their data
	 * moved past nruns, in in.runs and the arrays above */
	struct disturbed *left;
	int nleft;
	const char *marker;	/* --marker NAME: the time inside it alone */
};

/* The file of a run's directory that holds its wall seconds, and their
 * row in --metric wall's comparison. */
#define ELAPSED_ROW	"[elapsed]"
#define RUN_ELAPSED_FILE	"elapsed"

/* Why a run was disturbed */
enum disturbance { DIST_RUNQUEUE, DIST_SPEED, DIST_WALL_CPU };

/* A run found disturbed: its figure against its side's other runs'. */
struct disturbed {
	const char *run;	/* as named: its directory or profile */
	int side;		/* 0 base, 1 new */
	enum disturbance why;
	double x, ref;		/* its figure and its side's median: seconds
				 * in the run queue, CPU seconds, or wall
				 * seconds over CPU seconds */
	int again;		/* made again (compare), else left out */
};

/*
 * The variance of a function's seconds in one run, a m + k m^2 for a mean
 * of m seconds: a is what one independent observation is worth in seconds
 * (sampling noise, Poisson-like), k the squared relative run-to-run noise.
 * Fitted to all functions at once, three ways (both terms; a alone; k alone
 * with a at its floor), and a function's prior variance is the largest of
 * the three at its m: when the functions' means span a narrow range the
 * two terms cannot be told apart, and whichever extrapolates higher is
 * kept. One fit:
 */
struct fit {
	double a, k;
};

/* The fits by kind, in model.fit[]. */
enum { FIT_JOINT, FIT_A, FIT_K };

/* The model of both sides, from diff_model_build(). */
struct model {
	struct fit fit[3];	/* joint, a alone, k alone */
	double d0;		/* the prior's degrees of freedom */
	double pooled_df; /* run-to-run degrees of freedom behind the fits */
	double amin_all;	/* the smallest floor of a over the sides */
	int fitted;
	int floor_only;	/* the waits': the prior a floor, not d0 runs */
};

/* A row's verdict: ST_SMALL is a row too small to enter Holm's family. */
enum status { ST_SLOWER, ST_FASTER, ST_SAME, ST_SMALL, ST_APPEARED, ST_GONE };

/* A sequential look's verdict (model/sequential.h) */
enum seq_verdict { SEQ_UNDECIDED, SEQ_REGRESSED, SEQ_UNCHANGED };

/* One function (or the whole program) compared: both sides' means and the test.
 */
struct row {
	const char *name;
	double mb, mn;		/* mean seconds a run */
	double vb, vn;		/* variance of a run's seconds, as estimated */
	double t, df, p, padj;
	double se;		/* the standard error of mn - mb */
	double bound;		/* sequential: the smallest change in seconds
				 * its equivalence test rules out at the look */
	int tested, family;
	enum status status;
};

/*
 * pcprof compare's experiment (compare.c), printed with the verdict:
 * index 0 is the base side, 1 the new.
 */
struct experiment {
	int runs; /* measured runs a side, after the warm-up pair */
	int repeated[2];	/* disturbed runs made again */
	struct disturbed *again;	/* which, and why */
	int nagain;
	double budget;		/* seconds a side asked for; 0 with --runs */
	double wall[2];		/* a measured run's mean wall seconds */
	double wall_sq[2]; /* the sum of their squares (history's variance) */
	double cpu[2];		/* and CPU seconds (its processes' rusage) */
	double cpu_warmup;	/* the base warm-up run's CPU seconds */
	double elapsed;		/* wall seconds of all the runs, warm-up too */
	const char *timer;	/* the timer libpc used: "taskclock", "posix" */
	const char *timer_note;	/* why, or NULL */
	long hz;		/* the rate asked of libpc */
	const char *dir;	/* where the runs are kept, or NULL */
	const char *cmd[2];	/* the commands, as one line each */
};

/* The command line's choices, other than the sides and symbol options. */
struct diff_opts {
	enum metric metric;
	enum diff_format format;
	double alpha, threshold, min_seconds;
	long top;
	int absolute;		/* no allowance for the machine's speed */
	const char *flame;	/* --flame FILE: the differential flame graph */
	const struct experiment *exp;	/* pcprof compare's, or NULL */
	const char *who;	/* "pcprof diff" or "pcprof compare" */
	/* compare --keep-history FILE: the new side's record appended to
	 * FILE, as of commit *hist (model/history.h) */
	const char *keep_history;
	struct hist_id *hist;
	/* the sequential gate (model/sequential.h): looks from seq_min to
	 * seq_max runs a side (0: none, a fixed design); replay: judge the
	 * runs' prefixes look by look from seq_min, up to the first decided
	 * (pcprof diff --looks), else only the look at all the runs */
	int seq_min, seq_max, replay;
	int undecided_fail;	/* --undecided fail: undecided exits 1 */
	int threshold_set; /* --threshold given (else the metric's default) */
	const char *marker;	/* --marker NAME: each run's time inside it */
	/* the runs a side of the look where the whole process's elapsed
	 * time alone decided "regressed" (seq_whole_only), 0 none: the looks
	 * after it go on, to name the function or wait that changed, and the
	 * verdict stays regressed (pcprof compare's looks set it for its
	 * last) */
	int seq_whole;
};

#define DIFF_OPTS_DEFAULT { METRIC_SELF, DIFF_TEXT, 0.01, 0.05, 0.01, 10, 0, NULL, NULL, \
			    "pcprof diff", NULL, NULL, 0, 0, 0, 0, 0, NULL, 0 }

/* The options diff and compare share, after options.h's. */
enum {
	OPT_BASE = 512, OPT_NEW, OPT_METRIC, OPT_ALPHA, OPT_THRESHOLD,
	OPT_MIN_SECONDS, OPT_DFORMAT, OPT_DTOP, OPT_ABSOLUTE, OPT_FLAME,
	OPT_UNDECIDED, OPT_LOOKS,
};
enum { OPT_DIFF_MARKER = 640 };

#define DIFF_LONGOPTS \
	{ "metric", required_argument, NULL, OPT_METRIC }, \
	{ "alpha", required_argument, NULL, OPT_ALPHA }, \
	{ "threshold", required_argument, NULL, OPT_THRESHOLD }, \
	{ "min-seconds", required_argument, NULL, OPT_MIN_SECONDS }, \
	{ "format", required_argument, NULL, OPT_DFORMAT }, \
	{ "top", required_argument, NULL, OPT_DTOP }, \
	{ "absolute", no_argument, NULL, OPT_ABSOLUTE }, \
	{ "undecided", required_argument, NULL, OPT_UNDECIDED }, \
	{ "marker", required_argument, NULL, OPT_DIFF_MARKER }, \
	SYMTAB_LONGOPTS

/* diff_marker.c: run r's self seconds inside the markers s->marker (its
 * timeline's samples) into self, and its program seconds; 0, or -1 after
 * one line where it has no timeline, no such marker or no samples in it. */
PC_CHECKED int diff_marker_self(struct side *s, int r,
				const struct symtab_opts *so, double *self);

/* diff.c: apply one of DIFF_LONGOPTS (or --flame) to o and so; 0 when c
 * is not one. Exits with a message on a bad value. */
int diff_option(int c, const char *arg, struct diff_opts *o,
		struct symtab_opts *so);
/* diff.c: load both sides (exe and args set), compare them, write the
 * flame graph o asks for and print the comparison on standard output;
 * the exit status, 0 or EXIT_REGRESSION (bad input exits 2). Releases
 * what it loaded, not the sides' args. */
int diff_gate(struct side sides[2], const struct diff_opts *o,
	      const struct symtab_opts *so);
/* diff.c: pcprof compare's look: load both sides, judge their runs as the
 * sequential gate's look at that many runs a side (o->seq_max > 0),
 * release what was loaded; the verdict, undecided where the whole
 * process's elapsed time alone regressed before the budget's end, with
 * *whole the runs a side of the look where it did (o->seq_whole's
 * earlier, or this one's), 0 none. */
enum seq_verdict diff_look(struct side sides[2], const struct diff_opts *o,
			   const struct symtab_opts *so, int *whole);

/* The sequential gate's look, in a result (seq_max 0: none). */
struct seq {
	enum seq_verdict verdict;
	int runs;		/* runs a side at the look */
	/* each side's runs made by the look (runs, or at the last look
	 * with every run: all of the side's, those left out as disturbed
	 * with them), compared (without those), and left out */
	int made[2], used[2], left;
	int min, max;		/* the first look's and the budget's */
	int whole;	/* o->seq_whole at the look: where [elapsed] decided */
	double alpha;		/* the level this look spent */
	double ruled_out;	/* undecided: the smallest change (of the base
				 * seconds) every watched row rules out */
};

/* The comparison: rows sorted for printing, and the verdict's counts. */
struct result {
	struct row *rows;
	size_t nrows;
	size_t family;		/* rows in Holm's correction */
	int nslow, nfast;	/* significant regressions, improvements */
	struct row prog;	/* the whole program's seconds */
	struct model model;
	struct model wait_model;	/* --metric wall: the waits' */
	double speed;		/* new runs' seconds / base runs', the robust
				   mean of the functions'; 1 when not judged */
	int speed_judged;
	size_t speed_functions;	/* the functions it was judged on */
	struct seq seq;		/* the sequential look (o->seq_max > 0) */
	/* the speed model's fit (diff_speed_fit): where the gate found a
	 * function slower, the functions it did not blame, of the speed's
	 * own (20 samples a run), tested by Fisher's combination of their
	 * p-values; misfit: below alpha, the verdict undecided and no row
	 * significant, what it would have said kept in blamed (a copy of
	 * the first slower row), nblamed and nfaster */
	double fit_p;
	size_t fit_functions;
	int misfit, nblamed, nfaster;
	struct row blamed;
};

/* diff_side.c: load s's runs (s->exe and s->args set) into its symbols and
 * seconds, with total time if need_total; 0, or -1 after one line on bad
 * input. */
PC_CHECKED int diff_side_load(struct side *s, const struct symtab_opts *so,
			      int need_total, int wall);
/* diff_wall.c: --metric wall's rows of s's waits, added to its table (its
 * functions' rows are loaded: before its seconds are allocated), and the
 * off-CPU seconds of run r added to self (r's row of seconds); 0, or -1
 * after one line. */
PC_CHECKED int diff_wall_rows(struct side *s);
PC_CHECKED int diff_wall_add(struct side *s, int r, double *self);
/* diff_wall.c: the stack of wait row name on side s, the heaviest one
 * record of a run holds: the executable's functions outermost first, then
 * the wait ("main;sleeper;[off-cpu: clock_nanosleep]"; a library's frames
 * left out); NULL where name is no wait row of s's. */
const char *diff_wall_stack(const struct side *s, const char *name);
/* diff_wall.c: what one independent observation of row name is worth in
 * seconds on side s: a CPU sample (1/rate), or for a wait the wall
 * clock's round (1/wall_hz). */
double diff_amin(const struct side *s, const char *name);
/* diff_disturbed.c: mark the values of v[0..n) that stand out above the
 * rest (out[i] 1): above their median by more than floor and by more
 * than DIST_MADS robust standard deviations (1.4826 times the median
 * absolute deviation), the largest first, each against those not marked;
 * at most a third of them, none where n < 3. The number marked. */
#define DIST_MADS	3.0
/* the floors: of a run's seconds in the run queue, 10 ms, 2 % of the
 * side's median run and the side's median run-queue seconds (a run must
 * wait twice as long as the median run: on a busy machine every run
 * waits, and not alike); of its CPU seconds, 5 % of the side's median */
#define DIST_RUNQ_MIN	0.01
#define DIST_RUNQ_SHARE	0.02
#define DIST_SPEED_SHARE	0.05
int diff_outliers(const double *v, int n, double floor, int *out);
/* diff_disturbed.c: whether x stands out above v[0..n) as diff_outliers
 * says (n >= 1); *ref their median. */
int diff_outlier_above(double x, const double *v, int n, double floor,
		       double *ref);
/* diff_disturbed.c: the floor of a run's run-queue seconds rq[0..n) of
 * a side whose median run takes wall seconds (DIST_RUNQ_MIN). */
double diff_runq_floor(const double *rq, int n, double wall);
/* diff_disturbed.c: the runs of s that were disturbed, their run-queue
 * seconds (wall profiles) or their CPU seconds standing out from the
 * side's, moved past s->nruns and named in s->left (side: 0 base, 1
 * new). */
void diff_disturbed_leave_out(struct side *s, int side);
/* diff_disturbed.c: the seconds the threads of the run in directory dir
 * spent in the run queue, from the wall profiles' stacks of program exe's
 * processes (exe NULL: every process's); 0 where none, -1 after one line
 * on bad input. */
double diff_dir_runqueue(const char *dir, const char *exe);
/* diff_disturbed.c: a disturbed run's reason in words, into buf. */
const char *diff_disturbed_why(const struct disturbed *d, char *buf,
			       size_t size);
/* diff_side.c: free what diff_side_load() allocated (not s->args). */
void diff_side_release(struct side *s);

/* diff_model.c: the mean and unbiased variance (0 for one value) of v[0],
 * v[stride], ... (n values) into *mean and *var. */
void diff_mean_var(const double *v, int n, size_t stride, double *mean,
		   double *var);
/* diff_model.c: fill mo from every function's self time on b and n: the
 * functions' (waits 0), or --metric wall's waits' (waits 1). */
void diff_model_build(struct model *mo, const struct side *b,
		      const struct side *n, int waits);
/* --metric wall: the runqueue's row, which no model is fitted to */
#define RUNQUEUE_ROW	"[off-cpu: runqueue]"
/* diff_wall.c: whether row name is one of the run queue's ("[off-cpu:
 * runqueue]", or "... from f"): the machine's load, shown and tested but
 * never in Holm's family, never a regression, never keeping the
 * sequential gate undecided, and no part of the program's change */
int diff_row_is_load(const char *name);
/* diff_model.c: the prior variance of a run's seconds for a mean of m
 * seconds, a at least amin. */
double diff_model_var(const struct model *mo, double m, double amin);

/* diff_compare.c: compare b and n (scaling their seconds to one machine
 * speed unless o says not to) into res, whose rows are malloc'ed; 0, or
 * -1 after one line (--metric program with one run a side). */
int diff_compare(struct result *res, struct side *b, struct side *n,
		  const struct diff_opts *o);
/* diff_compare.c: Fisher's p-value that the rows[0..n) the speed was
 * judged on (tested CPU functions with least_b seconds a run on the base
 * side and least_n on the new, 20 samples each) and that the gate did not
 * find slower have not changed at that speed; *used of them (1 for none). */
double diff_speed_fit(const struct row *rows, size_t n, double least_b,
		      double least_n, size_t *used);
/* sequential.c: the exit status of a comparison: EXIT_REGRESSION on a
 * significant regression, or on an undecided sequential verdict with
 * --undecided fail; else 0. */
int diff_exit_status(const struct result *res, const struct diff_opts *o);
/* diff_compare.c: a row's change in seconds, or its seconds when it
 * appeared or is gone. */
double diff_row_size(const struct row *w);
/* diff_compare.c: Holm's step-down adjustment of the p of rows[0..n) in
 * the family (padj); a row's rank in a table: slower, faster, the same,
 * appeared or gone, the rest. diff_alloc.c's gate uses them too. */
void diff_holm(struct row *rows, size_t n);
int diff_row_rank(const struct row *w);

#endif
