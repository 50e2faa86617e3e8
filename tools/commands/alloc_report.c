/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof report --alloc and --metric alloc|alloc-bytes|inuse|inuse-bytes:
 * an allocation profile (PROFILE.alloc, libpc's PC_ALLOC) read as the
 * stacks it is (export.c, stackfile.c), written by the writer the options
 * choose (alloc_out.c's table, folded stacks, pprof's heap profile,
 * report.c's flat profile in bytes or objects, or the Firefox export of
 * the timeline, whose native allocations are the allocation events).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands/alloc_report.h"
#include "inputs/runfiles.h"
#include "model/timeline.h"
#include "writers/alloc_out.h"
#include "writers/export_out.h"

int
alloc_asked(const struct report_opts *r)
{
	return r->alloc || CLOCK_IS_ALLOC(r->clock);
}

/* Whether the first profile has its allocation profile beside it (or
 * --stacks-file names one): 0, or -1 after one line. The others' are
 * read where they are (a process that recorded none adds nothing). */
static int
alloc_check(const struct pc_inputs *in, const struct report_opts *r)
{
	const char *gmon = in->runs[0].files[0];
	char *p;
	int rc = 0;

	if (r->stacks)
		return 0;
	p = runfiles_alloc_name(gmon);
	if (access(p, F_OK) && errno == ENOENT)
		rc = pc_error("'%s': no allocation profile beside it (%s): record with pcprof run "
			      "--alloc, or PC_ALLOC=1", gmon, p);
	free(p);
	return rc;
}

int
alloc_check_rates(char *const *files, int n)
{
	uint32_t rate = 0;
	int rc = 0;

	for (int i = 0; i < n && !rc; i++) {
		char *p = runfiles_alloc_name(files[i]);
		struct gmon_stacks ss;
		int r = pc_read_stacks_if(p, &ss);

		if (r < 0)
			rc = -1;
		if (r == 0 && rate && ss.rate != rate)
			rc = pc_error("'%s': sampled every %u bytes, not %u as another process "
				      "of the run: report one with --process PID",
				      p, ss.rate, rate);
		if (r == 0) {
			rate = ss.rate;
			gmon_stacks_release(&ss);
		}
		free(p);
	}
	return rc;
}

/* --metric M --format firefox: the Firefox export of x's timeline, its
 * native allocations the allocation events it holds (PC_ALLOC with
 * PC_TIMELINE); 0, or -1 after one line where no process's timeline has
 * them. */
static int
alloc_firefox_check(const struct export *x, enum pc_clock metric)
{
	const char *why = "it has no timeline";

	for (size_t i = 0; x->timeline && i < x->timeline->n; i++) {
		if (x->timeline->v[i].has_allocs)
			return 0;
		why = "its timeline has no allocation events";
	}
	return pc_error("'%s': --metric %s --format firefox: %s (record "
			"with pcprof run --alloc --timeline, or PC_ALLOC=1 "
			"PC_TIMELINE=1)", x->source, clock_word(metric), why);
}

/* --metric M --format firefox: the export of the CPU timeline, as
 * without --metric, where a timeline has allocation events (they are its
 * native allocations); 0, or -1 after one line. */
static int
alloc_firefox(struct pc_inputs *in, struct report_opts *r,
	      const struct symtab_opts *s, FILE *out)
{
	const char *base = strrchr(in->exe, '/');
	enum pc_clock metric = r->clock;
	struct export x;
	int rc;

	in->alloc = 0;
	r->clock = PC_CLOCK_CPU;
	export_init(&x);
	rc = export_add(&x, in, s, r->stacks,
			base && base[1] ? base + 1 : in->exe, 0) ||
			     alloc_firefox_check(&x, metric) ||
			     export_finish(&x, r, out, in->exe) ? -1 : 0;
	export_release(&x);
	r->clock = metric;
	return rc;
}

/* The report of the allocation profiles of in's processes (each
 * profile's PROFILE.alloc, summed: in->alloc) or of path (--stacks-file),
 * as r asks; 0, or -1 after one line. */
static int
alloc_report_path(const struct pc_inputs *in, const struct report_opts *r,
		  const struct symtab_opts *s, const char *path, FILE *out)
{
	const char *base = strrchr(in->exe, '/');
	struct folded_set fs;
	struct export x;
	int rc = 0;

	if (r->format == FORMAT_FOLDED && !r->alloc) {
		if (folded_build(&fs, in, 0, path, r->clock))
			return -1;
		folded_print(out, &fs);
		folded_release(&fs);
		return 0;
	}
	export_init(&x);
	x.clock = r->clock;
	x.alloc_all = r->alloc || r->format == FORMAT_PPROF;
	if (export_add(&x, in, s, path, base && base[1] ? base + 1 : in->exe,
		       0))
		rc = -1;
	else if (r->alloc)
		alloc_print(out, &x, r);
	else if (export_finish(&x, r, out, in->exe))
		rc = -1;
	export_release(&x);
	return rc;
}

int
alloc_report(struct pc_inputs *in, struct report_opts *r,
	     const struct symtab_opts *s, FILE *out)
{
	int rc;

	if (alloc_check(in, r))
		return -1;
	in->alloc = 1;
	if (!CLOCK_IS_ALLOC(r->clock))
		r->clock = PC_CLOCK_ALLOC_BYTES;
	if (r->by_object || r->lines)
		rc = pc_error("%s: not of an allocation profile", r->by_object ?
			      "--by-object" : "--lines");
	else if (r->alloc && r->format != FORMAT_TEXT &&
		 r->format != FORMAT_JSON)
		rc = pc_error("--alloc: a table in text or json; --metric M --format F for "
			      "the other formats");
	else if (r->format == FORMAT_FIREFOX)
		rc = alloc_firefox(in, r, s, out);
	else
		rc = alloc_report_path(in, r, s, r->stacks, out);
	in->alloc = 0;
	return rc;
}
