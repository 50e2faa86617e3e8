/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof diff and compare: runs that the machine disturbed. A run whose
 * threads waited for a CPU far longer than its side's other runs' (a
 * wall profile's run queue), or whose CPU seconds stand far above
 * theirs (its machine was slower: a neighbour in its caches, a lower
 * clock), measured the machine, not the build. pcprof compare makes
 * such a run again (compare_runs.c); pcprof diff leaves it out of the
 * comparison, and both name it (diff_out.c). Called by diff.c and
 * compare_runs.c; calls stats.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcprof.h"
#include "inputs/runfiles.h"
#include "model/diff.h"
#include "model/stats.h"

static double
median_of(const double *v, int n)
{
	double *c = pc_realloc(NULL, (size_t)(n ? n : 1) * sizeof(*c)), m;

	memcpy(c, v, (size_t)n * sizeof(*c));
	m = stats_median(c, (size_t)n);
	free(c);
	return m;
}

/* The median of v and the limit above it that a value must pass to stand
 * out: floor, and DIST_MADS robust standard deviations. */
static double
limit_of(const double *v, int n, double floor, double *med)
{
	double *dev = pc_realloc(NULL, (size_t)(n ? n : 1) * sizeof(*dev)), mad;

	*med = median_of(v, n);
	for (int i = 0; i < n; i++)
		dev[i] = fabs(v[i] - *med);
	mad = stats_median(dev, (size_t)n);
	free(dev);
	return *med + fmax(floor, DIST_MADS * 1.4826 * mad);
}

int
diff_outlier_above(double x, const double *v, int n, double floor, double *ref)
{
	return n >= 1 && x > limit_of(v, n, floor, ref);
}

/*
 * One at a time, the largest first, each against the runs not marked yet
 * (two disturbed runs of six spread the rest's deviations so that
 * neither stood out against all five others); a third of the runs at
 * most: were more out, the side's runs are that noisy, and no run is the
 * odd one.
 */
int
diff_outliers(const double *v, int n, double floor, int *out)
{
	double *rest = pc_realloc(NULL,
				  (size_t)(n > 0 ? n : 1) * sizeof(*rest)),
	       med;
	int k = 0;

	memset(out, 0, (size_t)(n > 0 ? n : 0) * sizeof(*out));
	for (int most = n >= 3 ? n / 3 : 0; k < most; k++) {
		int top = -1, m = 0;

		for (int i = 0; i < n; i++)
			if (!out[i]) {
				rest[m++] = v[i];
				if (top < 0 || v[i] > v[top])
					top = i;
			}
		if (top < 0 || !(v[top] > limit_of(rest, m, floor, &med)))
			break;
		out[top] = 1;
	}
	free(rest);
	return k;
}

double
diff_runq_floor(const double *rq, int n, double wall)
{
	return fmax(fmax(DIST_RUNQ_MIN, DIST_RUNQ_SHARE * wall),
		    n ? median_of(rq, n) : 0);
}

/* Run r's data moved so that the runs marked in out come after the rest,
 * each in its order: in.runs and every per-run array. */
static void
move_runs(struct side *s, const int *out)
{
	int n = s->nruns, k = 0;
	size_t nf = s->in.st.nfuncs ? s->in.st.nfuncs : 1;
	int *order = pc_realloc(NULL, (size_t)n * sizeof(*order));
	struct pc_run *runs = pc_realloc(NULL, (size_t)n * sizeof(*runs));
	double *rows = pc_realloc(NULL, (size_t)n * nf * sizeof(*rows));
	double *one = pc_realloc(NULL, (size_t)n * sizeof(*one));
	double *per_run[] = { s->program, s->waited, s->runq, s->elapsed };

	for (int pass = 0; pass < 2; pass++)
		for (int r = 0; r < n; r++)
			if (out[r] == pass)
				order[k++] = r;
	for (int r = 0; r < n; r++)
		runs[r] = s->in.runs[order[r]];
	memcpy(s->in.runs, runs, (size_t)n * sizeof(*runs));
	for (double *m = s->self; m; m = m == s->self ? s->total : NULL) {
		for (int r = 0; r < n; r++)
			memcpy(rows + (size_t)r * nf, m + (size_t)order[r] * nf,
			       nf * sizeof(*rows));
		memcpy(m, rows, (size_t)n * nf * sizeof(*rows));
	}
	for (size_t a = 0; a < sizeof(per_run) / sizeof(*per_run); a++) {
		if (!per_run[a])
			continue;
		for (int r = 0; r < n; r++)
			one[r] = per_run[a][order[r]];
		memcpy(per_run[a], one, (size_t)n * sizeof(*one));
	}
	free(order);
	free(runs);
	free(rows);
	free(one);
}

/* Mark in out the runs of s that v (one figure a run) finds disturbed,
 * beside those marked already, a third of the runs in all at most; each
 * named in s->left. */
static void
mark(struct side *s, int side, const double *v, double floor,
     enum disturbance why, int *out)
{
	int n = s->nruns, *mine = pc_realloc(NULL, (size_t)n * sizeof(*mine));
	double med = median_of(v, n);

	diff_outliers(v, n, floor, mine);
	for (int r = 0; r < n; r++) {
		if (!mine[r] || out[r] || s->nleft >= n / 3)
			continue;
		out[r] = 1;
		s->left = pc_realloc(s->left,
				     ((size_t)s->nleft + 1) * sizeof(*s->left));
		s->left[s->nleft++] = (struct disturbed){ s->args[r], side, why,
							  v[r],       med,  0 };
	}
	free(mine);
}

#define DIST_MIN_RUNS	5	/* runs a side before any is left out */

void
diff_disturbed_leave_out(struct side *s, int side)
{
	int n = s->nruns, *out;
	double *cpu, scale;

	/* with fewer runs a side, their own spread is no measure: one of
	 * three stood 5 % out beside a CPU hog, and the sequential gate,
	 * decided at its first look, found its runs one short */
	if (n < DIST_MIN_RUNS)
		return;
	out = pc_realloc(NULL, (size_t)n * sizeof(*out));
	cpu = pc_realloc(NULL, (size_t)n * sizeof(*cpu));
	memset(out, 0, (size_t)n * sizeof(*out));
	for (int r = 0; r < n; r++)
		cpu[r] = s->program[r] - (s->waited ? s->waited[r] : 0);
	if (s->runq) {
		/* the run queue's seconds, against a floor of the run's length */
		scale = median_of(s->elapsed ? s->elapsed : s->program, n);
		mark(s, side, s->runq, diff_runq_floor(s->runq, n, scale),
		     DIST_RUNQUEUE, out);
	}
	mark(s, side, cpu, DIST_SPEED_SHARE * median_of(cpu, n), DIST_SPEED,
	     out);
	if (s->nleft) {
		move_runs(s, out);
		s->nruns -= s->nleft;
	}
	free(out);
	free(cpu);
}

/* Whether profile is exe's (its manifest's first object), or exe NULL;
 * -1 after one line where its manifest cannot be read. */
static int
of_program(const char *profile, const char *exe)
{
	struct gmon_objects o;
	int yes;

	if (!exe)
		return 1;
	if (!runfiles_has_manifest(profile))
		return 0;
	if (runfiles_read_manifest(profile, &o))
		return -1;
	yes = o.n && !strcmp(o.v[0].path, exe);
	gmon_objects_release(&o);
	return yes;
}

double
diff_dir_runqueue(const char *dir, const char *exe)
{
	size_t n, left;
	char **files = runfiles_of_run(dir, &n, &left);
	double sec = 0;

	if (!files)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char *path = runfiles_stacks_name(files[i]);
		struct gmon_stacks ss;
		int of = path && !access(path, R_OK) ?
				 of_program(files[i], exe) :
				 0;

		if (of < 0 || (of && pc_read_stacks(path, &ss))) {
			sec = -1;
			break;
		}
		if (of) {
			for (size_t j = 0; j < ss.n; j++)
				if ((ss.v[j].flags & GMON_STACK_OFFCPU) &&
				    ss.v[j].depth &&
				    GMON_IS_WAIT(ss.v[j].pcs[0]) &&
				    GMON_WAIT_CALL(ss.v[j].pcs[0]) ==
					    GMON_WAIT_RUNQUEUE)
					sec += (double)ss.v[j].count / 1e9;
			gmon_stacks_release(&ss);
		}
		free(path);
		free(files[i]);
	}
	free(files);
	return sec;
}

const char *
diff_disturbed_why(const struct disturbed *d, char *buf, size_t size)
{
	switch (d->why) {
	case DIST_RUNQUEUE:
		snprintf(buf, size,
			 "%.3f s in the run queue, its side's runs %.3f s",
			 d->x, d->ref);
		break;
	case DIST_SPEED:
		snprintf(buf, size, "%.3f s of CPU, its side's runs %.3f s: a slower machine",
			 d->x, d->ref);
		break;
	case DIST_WALL_CPU:
		snprintf(buf, size, "%.2f times its CPU time in wall time, its side's runs "
			 "%.2f times", d->x, d->ref);
		break;
	}
	return buf;
}
