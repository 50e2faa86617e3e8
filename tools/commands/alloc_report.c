/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof report --alloc and --metric alloc|alloc-bytes|inuse|inuse-bytes:
 * an allocation profile (PROFILE.alloc, libpc's PC_ALLOC) read as the
 * stacks it is (export.c, stackfile.c), written by the writer the options
 * choose (alloc_out.c's table, folded stacks, pprof's heap profile, or
 * report.c's flat profile in bytes or objects).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands/alloc_report.h"
#include "inputs/runfiles.h"
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
		/* its timeline is the CPU samples': the allocations, which keep
		 * no time, were not in it (a profile of no samples, before) */
		rc = pc_error("--metric %s: the Firefox export holds no allocations (they are not "
			      "timed); --format pprof, speedscope, callgrind or folded",
			      clock_word(r->clock));
	else
		rc = alloc_report_path(in, r, s, r->stacks, out);
	in->alloc = 0;
	return rc;
}
