/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gprof's file written (gmon_out.h), for pcprof merge and the wall-clock
 * profile's gmon file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writers/gmon_out.h"

static int
cmp_arc(const void *a, const void *b)
{
	const struct gmon_arc *x = a, *y = b;

	if (x->from_pc != y->from_pc)
		return x->from_pc < y->from_pc ? -1 : 1;
	if (x->self_pc != y->self_pc)
		return x->self_pc < y->self_pc ? -1 : 1;
	return 0;
}

int
gmon_write_fd(int fd, struct gmon_profile *p)
{
	struct gmon_sink *s = malloc(sizeof(*s));
	struct gmon_arc *a = p->arcs;
	size_t n = p->narcs;

	if (!s)
		return -ENOMEM;
	gmon_sink_init(s, fd);
	gmon_sink_header(s, p->spare);
	for (size_t i = 0; i < p->nhists && !s->error; i++) {
		const struct gmon_hist *h = &p->hists[i];
		long r = gmon_sink_counts64(
			s, h->low, (unsigned)((h->high - h->low) / h->nbins),
			h->rate, h->counts, h->nbins);

		if (r < 0 && !s->error)
			s->error = (int)r;
	}
	/* equal arcs summed; a sum past 32 bits goes in several records,
	 * which gprof adds up again */
	qsort(a, n, sizeof(*a), cmp_arc);
	for (size_t i = 0; i < n && !s->error; ) {
		uint64_t total = 0;
		size_t j = i;

		while (j < n && !cmp_arc(&a[i], &a[j]))
			total += a[j++].count;
		while (total > UINT32_MAX) {
			gmon_sink_arc(s, a[i].from_pc, a[i].self_pc,
				      UINT32_MAX);
			total -= UINT32_MAX;
		}
		gmon_sink_arc(s, a[i].from_pc, a[i].self_pc, (uint32_t)total);
		i = j;
	}
	n = (size_t)gmon_sink_flush(s);
	free(s);
	return (int)n;
}

int
gmon_write_file(const char *out, struct gmon_profile *p)
{
	struct out_file of;
	FILE *f = out_open(&of, out);
	int r;

	if (!f)
		return -1;
	/* nothing is buffered in f: gmon_write_fd writes its descriptor */
	if (fflush(f))
		return pc_error("'%s': %s", out, strerror(errno));
	if ((r = gmon_write_fd(fileno(f), p)))
		return pc_error("'%s': %s", out, strerror(-r));
	return out_commit(&of);
}
