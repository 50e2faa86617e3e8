/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof history: one record a commit of a benchmark's seconds (each
 * function's, the whole program's), kept as JSON lines in a file that a CI
 * cache or artifact carries from job to job, and the change points found
 * in them. history_file.c reads and appends the records (the parser is a
 * pure function, fuzzed by tests/fuzz/fuzz_history.c), history_cp.c finds
 * the change points, writers/history_out.c prints them and
 * commands/history.c is the command. None of it is AS-safe.
 */
#ifndef PC_HISTORY_H
#define PC_HISTORY_H

#include "base/base.h"
#include <stddef.h>
#include <stdio.h>

/* the record format's version, the "version" field of every line */
#define HISTORY_VERSION		1
/* what one record may hold: a longer line, a longer name or more series
 * is not a record of this pcprof's (exit 2, not an allocation) */
#define HISTORY_LINE_MAX	(4u << 20)
#define HISTORY_NAME_MAX	4096
#define HISTORY_SERIES_MAX	100000
/* and the most records a file may hold */
#define HISTORY_RECORDS_MAX	100000

/* One series' value at one commit: the mean and the unbiased variance of
 * its seconds over the commit's runs. */
struct hist_value {
	char *name;		/* a function's, or NULL for cpu and wall */
	double mean, var;
};

/* One line of the file: one commit's runs. */
struct hist_record {
	char *commit;		/* as given: a hash, a tag, any text */
	double time;		/* the commit's time, seconds since 1970 */
	int runs;		/* the runs its means and variances are of */
	struct hist_value cpu;	/* the whole program's CPU seconds a run */
	struct hist_value wall;	/* its wall seconds a run; mean < 0: none */
	struct hist_value *funcs;	/* sorted by name, no name twice */
	size_t nfuncs;
};

/*
 * history_file.c: parse line[0..len) (no line end; need not be
 * NUL-ended) into *r. 0, or -1 with *why a phrase saying what is wrong
 * ("not JSON: ..." or "field ...": static text or, for a few, text in a
 * static buffer that the next call reuses); *r holds nothing to release
 * then. Never reads past len, allocates at most a few times len.
 */
int history_parse(const char *line, size_t len, struct hist_record *r,
		  const char **why);
/* history_file.c: free what history_parse or the caller allocated in r. */
void history_record_release(struct hist_record *r);
/* history_file.c: r as one line of the file, newline-ended, into a
 * malloc'ed string. */
char *history_format(const struct hist_record *r);
/* history_file.c: qsort's order of struct hist_value, by name. */
int history_cmp_value(const void *a, const void *b);
/* history_file.c: v[0..n) sorted by name, the values of a name given
 * twice summed into one (their runs' seconds added); how many are left. */
size_t history_sort_values(struct hist_value *v, size_t n);
/* history_file.c: append r to path (created 0644 when missing) with one
 * write(2) of its whole line under O_APPEND, never through a symbolic
 * link; 0, or -1 after one line naming the file. */
PC_CHECKED int history_append(const char *path, const struct hist_record *r);

/* All the records of a file, in the file's order. */
struct history {
	struct hist_record *recs;
	size_t n;
};

/* history_file.c: read path into h; 0, or -1 after one line naming the
 * file (and the line) on anything that is not a record, or a file of
 * none. */
PC_CHECKED int history_read(const char *path, struct history *h);
void history_release(struct history *h);

/* history_cp.c: the methods of finding change points */
enum cp_method { CP_TTEST, CP_EDIVISIVE };

/* One change point of a series: the level changes from commit at on. */
struct change {
	size_t at;		/* index of the first commit of the new level */
	double before, after;	/* the means of the levels on each side */
	double p;		/* the split's p-value, corrected for the
				 * splits tried */
};

/*
 * history_cp.c: the change points of x[0..n) (a commit's mean) with
 * within[i] the variance of x[i] from its runs (NULL: none known), at
 * family-wise level alpha, a change smaller than min_rel of its level not
 * reported; up to max into out, sorted by at, their count. Deterministic
 * (the permutations of CP_EDIVISIVE are of a fixed seed).
 */
size_t cp_find(enum cp_method m, const double *x, const double *within,
	       size_t n, double alpha, double min_rel, struct change *out,
	       size_t max);

/* The commit a record is of: --commit and --time, or git's. */
struct hist_id {
	const char *commit;	/* NULL: git rev-parse HEAD */
	double time;		/* < 0: the commit's time from git, or now */
	char buf[128];		/* git's answer */
};

/* commands/history_keep.c: fill id's commit and time where not given:
 * from git in the current directory (the commit's hash and committer
 * time); a commit git does not know is of the current time. Exits with
 * one line where no commit is given and git names none. */
void history_id_resolve(struct hist_id *id);
/* commands/history_keep.c: append to path the record of side s (its runs
 * loaded: every function's self seconds a run, and the program's) as of
 * commit id, with the wall seconds of e's new side where e (compare's
 * experiment) is not NULL. Exits with one line on failure. */
struct side;
struct experiment;
void history_keep(const char *path, const struct side *s,
		  const struct hist_id *id, const struct experiment *e);

/* One series over the commits: a function's seconds, or the program's. */
struct hist_series {
	const char *name;	/* the function's; for the program's, "cpu"
				 * or "wall" */
	int program;		/* 1: the whole program's seconds */
	size_t n;		/* the commits it has a value at */
	size_t *idx;		/* their indices in the history */
	double *x, *within;	/* the mean, and its variance from the runs,
				 * at one machine speed (history_analyse) */
	struct change *ch;	/* the change points, at indices into x */
	size_t nch;
	double *raw, *raw_within;	/* x and within as recorded */
	/* a change at the series' last commit, a level of that commit
	 * alone, whose runs were disturbed (hist_result's why): held back
	 * from ch, unconfirmed until a commit after it agrees */
	struct change held;
	int nheld;		/* 0 or 1 */
};

/* Why a commit's runs were disturbed, as pcprof compare judges a run:
 * its machine speed (its functions' seconds against their levels) stood
 * out slower than the other commits', or its wall seconds over its CPU
 * seconds (the run queue's, and any wait's) stood out above theirs. */
enum hist_disturbed { HIST_CALM, HIST_SLOWER, HIST_RUNQUEUE };

/* pcprof history's analysis of a whole file. */
struct hist_result {
	const struct history *h;
	struct hist_series *s;	/* the program's first, then by name */
	size_t ns;
	size_t nchanges;	/* in the series' ch */
	double alpha, threshold;
	const char *method;
	size_t nheld;		/* in the series' held: unconfirmed */
	double *speed;		/* each record's machine speed, 1 the
				 * levels' pace (history_analyse) */
	signed char *why;	/* each record's enum hist_disturbed, -1 not
				 * judged yet */
};

/*
 * history_fit.c: res's series from the records of res->h, each commit's
 * seconds at one machine speed (absolute: as recorded), and their change
 * points at res->alpha over all series (method m, history_cp.c); a change
 * at a series' last commit whose runs were disturbed is held back
 * (hist_series' held). history_result_release frees what it made.
 */
void history_analyse(struct hist_result *res, int absolute, enum cp_method m);
void history_result_release(struct hist_result *res);

/* writers/history_out.c: res as text, json or markdown (format 0, 1, 2,
 * as enum diff_format) onto out. */
void history_print(FILE *out, const struct hist_result *res, int format);
/* writers/history_out.c: an SVG plot of series s of res onto out: each
 * commit's mean with its standard error from its runs, the levels between
 * change points, and each change point marked and labelled. */
void history_plot(FILE *out, const struct hist_result *res,
		  const struct hist_series *s);

#endif
