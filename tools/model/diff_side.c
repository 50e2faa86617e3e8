/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof diff: loading a side, every run of one build, into every
 * function's seconds a run (self, and total from the call graphs when the
 * metric needs it). Called by diff.c; calls nothing else of diff's.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "model/diff.h"

/* Functions of one name in two objects stay apart: "name (object)". */
static void
side_label(struct side *s)
{
	struct symtab *st = &s->in.st;

	for (size_t f = 0; st->nobjs && f < st->nfuncs; f++) {
		char buf[1024];
		const char *l = func_label(st, (uint32_t)f, buf, sizeof(buf));

		if (l == buf) {
			free(st->funcs[f]);
			st->funcs[f] = pc_strdup(buf);
		}
	}
}

/* Run r's total seconds per function, from its call graph, into total;
 * 0, or -1 after one line. */
static int
side_totals(const struct side *s, int r, const struct gmon_profile *p,
	    const struct flat *f, double *total)
{
	struct callgraph cg;
	uint64_t outside;

	/* the records of samples outside the executable are not arcs */
	if (p->narcs <= gmon_profile_outside(p, &outside))
		return pc_error("'%s': no call graph in the profile (recorded with PC_CALLGRAPH=0?); --metric total needs one",
				s->in.runs[r].files[0]);
	callgraph_build(&cg, &s->in.st, p, f);
	for (size_t i = 0; i < s->in.st.nfuncs; i++)
		total[i] = cg.total[i] / s->rate;
	callgraph_release(&cg);
	return 0;
}

/* Every run's wall seconds, where each run is a directory that holds
 * them (RUN_ELAPSED_FILE); else s->elapsed stays NULL. */
static void
side_elapsed(struct side *s)
{
	double *v = pc_realloc(NULL, (size_t)s->nruns * sizeof(*v));

	for (int r = 0; r < s->nruns; r++) {
		char path[PATH_MAX];
		FILE *f;
		int ok = 0;

		snprintf(path, sizeof(path), "%s/%s", s->args[r],
			 RUN_ELAPSED_FILE);
		if ((f = fopen(path, "re"))) {
			ok = fscanf(f, "%lf", &v[r]) == 1 && isfinite(v[r]) &&
			     v[r] > 0;
			fclose(f);
		}
		if (!ok) {
			free(v);
			return;
		}
	}
	s->elapsed = v;
}

/* Run r of s (nf functions a run) into s's seconds; 0, or -1 after one
 * line. */
static int
side_run(struct side *s, int r, size_t nf, int need_total, int wall,
	 const struct symtab_opts *so)
{
	const struct gmon_profile *p = &s->in.runs[r].prof;
	const char *name = s->in.runs[r].files[0];
	struct flat f;
	double *self = s->self + (size_t)r * nf;
	int bad = 0;

	if (r == 0)
		s->rate = p->hists[0].rate;
	else if (p->hists[0].rate != s->rate)
		return pc_error(
			"'%s': sampled at %u Hz, '%s' at %u Hz: the runs of one side must share a rate",
			name, p->hists[0].rate, s->in.runs[0].files[0],
			s->rate);
	if (s->rate == 0)
		return pc_error("'%s': sampling rate 0", name);
	flat_build(&f, &s->in.st, p);
	if (f.total == 0)
		return pc_error("'%s': the profile holds no samples", name);
	for (size_t i = 0; i < f.nrows; i++)
		self[f.rows[i].func] = f.rows[i].samples / s->rate;
	s->program[r] = f.total / s->rate;
	if (s->marker && diff_marker_self(s, r, so, self))
		bad = -1;
	if (!bad && wall)
		bad = diff_wall_add(s, r, self);
	if (!bad && need_total)
		bad = side_totals(s, r, p, &f, s->total + (size_t)r * nf);
	flat_release(&f);
	return bad;
}

int
diff_side_load(struct side *s, const struct symtab_opts *so, int need_total,
	       int wall)
{
	const struct symtab *st = &s->in.st;
	size_t nf;

	/* each operand is a run; every run's manifests add the other
	 * objects' functions to the side's one table */
	if (inputs_open(&s->in, s->exe, s->args, s->nruns, so,
			INPUTS_EACH_RUN) ||
	    inputs_load(&s->in, so, INPUTS_STRICT))
		return -1;
	side_label(s);
	if (wall && diff_wall_rows(s))
		return -1;
	side_elapsed(s);
	nf = st->nfuncs ? st->nfuncs : 1;
	s->self = pc_calloc((size_t)s->nruns * nf, sizeof(*s->self));
	s->program = pc_calloc((size_t)s->nruns, sizeof(*s->program));
	if (need_total)
		s->total = pc_calloc((size_t)s->nruns * nf, sizeof(*s->total));
	for (int r = 0; r < s->nruns; r++)
		if (side_run(s, r, nf, need_total, wall, so))
			return -1;
	return 0;
}

void
diff_side_release(struct side *s)
{
	inputs_close(&s->in);
	free(s->self);
	free(s->total);
	free(s->program);
	free(s->waited);
	free(s->runq);
	free(s->elapsed);
	free(s->left);
	for (size_t i = 0; i < s->nwait_stacks; i++)
		free(s->wait_stacks[i].stack);
	free(s->wait_stacks);
}
