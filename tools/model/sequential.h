/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sequential gate of pcprof compare (sequential.c): after each pair of
 * runs, from SEQ_MIN_RUNS a side to the most the budget allows, one of
 * three verdicts: regressed, unchanged or undecided. Each look spends a
 * part of alpha (a Pocock-type Lan-DeMets spending function), for the
 * regression test and for the equivalence test alike, so that the error
 * rates hold over all the looks. Pure arithmetic on diff_compare's rows.
 */
#ifndef PC_SEQUENTIAL_H
#define PC_SEQUENTIAL_H

#include "model/diff.h"

/* the first look: the fewest runs a side that measure run-to-run
 * variation (compare.h's MIN_RUNS) */
#define SEQ_MIN_RUNS	3

/* Alpha spent by information fraction t (0..1), Lan and DeMets'
 * Pocock-type function: alpha ln(1 + (e - 1) t); 0 at 0, alpha at 1. */
double seq_spent(double alpha, double t);
/* a look when the runs a side have grown by a tenth since the last (every
 * pair up to 20 runs a side): looking costs a load of every run so far,
 * and from 3 to 1000 runs a side that is some 60 looks, not 1000 */
#define SEQ_LOOK_GROWTH	10
/* The look after the one at n runs a side (n < nmin: the first), of
 * looks from nmin to nmax: n + max(1, n / SEQ_LOOK_GROWTH), nmax at most. */
int seq_next_look(int n, int nmin, int nmax);
/* The level of the look at n runs a side (one of seq_next_look's), of
 * looks from nmin to nmax: what the spending function adds from the look
 * before (the first look takes all it has spent by then; nmin == nmax is
 * one look at alpha). Summed over the looks it is alpha, so a union bound
 * holds the error rate of any look's test at alpha. */
double seq_look_alpha(double alpha, int n, int nmin, int nmax);
/* The nominal level of the look at n runs a side, of looks from nmin to
 * nmax: the two-sided level whose boundary, crossed at this look and at
 * none before, has the chance the look spends (seq_look_alpha) when the
 * looks' statistics are those of one sum growing run by run (a z
 * statistic at information n / nmax, correlated as sqrt(n' / n) with the
 * look at n'): Armitage, McPherson and Rowe's recursive integration, of
 * half of alpha on one side. Above seq_look_alpha at every look after
 * the first (the looks overlap, and the union bound does not use it);
 * the first look's is the same. The schedule is computed once for each
 * (alpha, nmin, nmax) and kept. */
double seq_look_level(double alpha, int n, int nmin, int nmax);
/* Student's t quantile with upper tail q (0 < q < 0.5) at df degrees of
 * freedom (INFINITY: the normal's). */
double seq_t_upper(double q, double df);
/* The smallest change, in seconds, that two one-sided tests (TOST) of a
 * difference d with standard error se and df degrees of freedom rule out
 * at level a: |d| + t(1 - a, df) se. */
double seq_ruled_out(double d, double se, double df, double a);
/* The verdict of a look from res (diff_compare's, judged at the look's
 * level a, so res->nslow counts regressions at it): regressed; else
 * unchanged when every watched row (family) and the whole program rule
 * out a change of the threshold (o->threshold of the base seconds, and
 * o->min_seconds for a function) or, for a function, are significantly
 * faster; else undecided. Sets each watched row's and the program's
 * bound, and res->seq's verdict and ruled_out. */
enum seq_verdict seq_judge(struct result *res, const struct diff_opts *o,
			   double a);
/* Whether row name's time follows a change elsewhere: the whole
 * process's elapsed time ([elapsed]), or a wait that lasts until another
 * thread or process acts (a futex, wait4, poll, select or epoll wait, a
 * pipe's, socket's, eventfd's or tty's read or write, ...). */
int seq_follows(const char *name);
/* Whether res's look is regressed with no slower row but ones that
 * follow (seq_follows): they grow with the wait that changed and decide
 * first, naming it in 0 to 1 of 20 stops where it was 10 % longer at
 * 20 s a side (issue 36). Then the gate looks on, up to the budget or a
 * look that names a function or a wait of its own, and stays regressed. */
int seq_whole_only(const struct result *res);
/* A look at or after the one at whole runs a side, where seq_whole_only
 * held (0: none): regressed whatever this look's rows say, the verdict
 * decided there (res->seq.whole = whole). */
void seq_keep_whole(struct result *res, int whole);
/* "regressed", "unchanged", "undecided" */
const char *seq_verdict_name(enum seq_verdict v);

#endif
