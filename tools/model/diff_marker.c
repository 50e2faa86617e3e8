/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * diff and compare --marker NAME: a run's self seconds of the time inside
 * the markers named NAME alone (one request type, the steady state after
 * start-up), from its timeline (model/window.c) instead of its whole
 * histogram. Called by diff_side.c for each run.
 */
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "model/diff.h"
#include "model/export.h"

/* The index of the function labelled name in st, or -1. */
static long
func_named(const struct symtab *st, const char *name)
{
	for (size_t i = 0; i < st->nfuncs; i++)
		if (!strcmp(st->funcs[i], name))
			return (long)i;
	return -1;
}

/* The side's function for the export's function f of xs: diff_side
 * labels those outside the executable "name (object)" (func_label). */
static long
side_func(const struct symtab *side, const struct symtab *xs, uint32_t f)
{
	const char *obj = xs->nobjs && xs->func_obj[f] ?
				  xs->objnames[xs->func_obj[f]] :
				  NULL;
	char buf[1024];
	long k;

	if (obj && strrchr(obj, '/'))
		obj = strrchr(obj, '/') + 1;
	if (obj &&
	    (size_t)snprintf(buf, sizeof(buf), "%s (%s)", xs->funcs[f], obj) <
		    sizeof(buf) &&
	    (k = func_named(side, buf)) >= 0)
		return k;
	return func_named(side, xs->funcs[f]);
}

int
diff_marker_self(struct side *s, int r, const struct symtab_opts *so,
		 double *self)
{
	struct report_opts win = { .marker = s->marker,
				   .window = WINDOW_MARKER };
	size_t nf = s->in.st.nfuncs;
	struct pc_inputs in;
	struct export x;
	struct symtab st;
	struct flat f;

	if (inputs_open(&in, s->exe, &s->args[r], 1, so, 0) ||
	    inputs_load(&in, so, 0))
		return -1;
	export_init(&x);
	x.clock = PC_CLOCK_CPU;
	if (export_add(&x, &in, so, NULL, s->exe, 0) ||
	    export_keep_window(&x, &win))
		return -1;
	export_flat(&x, &st, &f);
	memset(self, 0, nf * sizeof(*self));
	for (size_t i = 0; i < f.nrows; i++) {
		long k = side_func(&s->in.st, &st, f.rows[i].func);

		/* a function no run's symbols name (a pseudo one) counts in
		 * the program's seconds only */
		if (k >= 0)
			self[k] += f.rows[i].samples / s->rate;
	}
	s->program[r] = f.total / s->rate;
	if (f.total == 0)
		return pc_error("'%s': no samples inside the markers '%s'",
				s->args[r], s->marker);
	export_flat_release(&st, &f);
	export_release(&x);
	inputs_close(&in);
	return 0;
}
