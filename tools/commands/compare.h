/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the three files of pcprof compare share: compare.c (the command
 * and its options), compare_dir.c (the runs' directory and its cleaning
 * up) and compare_runs.c (the experiment: the runs and their checks).
 */
#ifndef PC_COMPARE_H
#define PC_COMPARE_H

#include <limits.h>

#include "pcprof.h"
#include "model/diff.h"
#include "model/history.h"

/* 0.1 % of the base warm-up run's CPU time (--metric wall: its wall
 * time): the smallest change in seconds that fails, unless --min-seconds
 * (COMPARE_THRESHOLD says why) */
#define COMPARE_MIN_SHARE	0.001
/* the fewest runs a side that measure run-to-run variation, by budget */
#define MIN_RUNS	3
/* and the most: a run shorter than a thousandth of the budget is a
 * benchmark too short to time */
#define MAX_RUNS	1000
/* a run whose wall / CPU is this much over its side's median was disturbed */
#define DISTURBED	1.25
/* and a disturbed run is made again this often in a row, at most */
#define AGAIN_MAX	3

struct command {
	char **argv;
	int argc;
	char exe[PATH_MAX];
	char *line;		/* argv as one line, for the output */
};

struct compare {
	struct diff_opts d;
	struct symtab_opts s;
	struct experiment e;
	struct command cmd[2];
	struct hist_id hist;	/* --keep-history's commit */
	double budget;
	int runs, quiet, taskclock, budget_given;
	long hz;
	const char *program;
	char lib[PATH_MAX];
	char dir[PATH_MAX];	/* the runs' directory, absolute */
	int made_dir;		/* it was made here (else it was empty) */
	char **names[2];	/* the measured runs' directories */
	char exe[2][PATH_MAX];	/* the program each side's runs compare */
	double *q[2];		/* wall / CPU of a side's kept runs, the
				 * warm-up's first */
	double *rq[2];		/* and their seconds in the run queue
				 * (--metric wall; else 0) */
	int nq[2];
};

/* compare_dir.c: the runs' directory, -o's (made, or empty) or a new
 * temporary one, into c->dir, absolute; what compare makes in it is
 * removed at exit unless compare_keep_runs is called. */
void compare_make_dir(struct compare *c);
/* compare_dir.c: a run directory made in it, to be removed on a failure;
 * and a disturbed run's (the last one made) removed now. */
void compare_note_made(const char *name);
void compare_remove_run(const struct compare *c, const char *name);
/* compare_dir.c: the runs are to be kept: nothing is removed at exit. */
void compare_keep_runs(void);
/* compare_dir.c: a signal asked compare to stop and the command has
 * ended: clean up and end as the signal would have. */
void compare_stop_now(void) __attribute__((noreturn));

/* compare_runs.c: the warm-up pair, the number of runs, then the runs in
 * turns, into c->e, c->names and c->exe; exits with one line on a run
 * that fails. */
void compare_experiment(struct compare *c);

#endif
