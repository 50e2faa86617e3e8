/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof diff and compare --metric alloc|alloc-bytes: the gate on
 * allocations, run by diff_gate (diff.c) in place of the one on seconds:
 * both sides' allocation profiles loaded and compared site by site
 * (model/diff_alloc.c), the verdict printed (writers/diff_alloc_out.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "model/diff_alloc.h"
#include "writers/diff_alloc_out.h"

int
diff_alloc_gate(struct side sides[2], const struct diff_opts *opts,
		const struct symtab_opts *so)
{
	struct diff_opts oa = *opts, *o = &oa;
	struct alloc_side a[2];
	struct result res;
	int r;

	/* allocations hardly move from run to run: a smaller change than
	 * seconds' counts, unless asked */
	if (!o->threshold_set)
		o->threshold = ALLOC_THRESHOLD;

	if (o->flame || o->keep_history)
		pc_fatal("%s: --metric %s: no %s of allocations", o->who,
			 o->metric == METRIC_ALLOC ? "alloc" : "alloc-bytes",
			 o->flame ? "flame graph" : "history");
	for (int s = 0; s < 2; s++)
		if (diff_alloc_load(&a[s], &sides[s], o->metric, so))
			exit(EXIT_BAD_INPUT);
	if (!(a[0].program > 0) || !(a[1].program > 0))
		pc_fatal("'%s': no allocation in its runs' profiles",
			 a[0].program > 0 ? sides[1].args[0] :
					    sides[0].args[0]);
	diff_alloc_compare(&res, &a[0], &a[1], o);
	diff_alloc_print(stdout, &res, &a[0], &a[1], o);
	if (fflush(stdout) || ferror(stdout))
		pc_fatal("standard output: %s", strerror(errno));
	r = res.nslow ? EXIT_REGRESSION : 0;
	free(res.rows);
	for (int s = 0; s < 2; s++)
		diff_alloc_release(&a[s]);
	return r;
}
