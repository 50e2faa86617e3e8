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
#include "writers/alloc_out.h"
#include "writers/export_out.h"

int
alloc_asked(const struct report_opts *r)
{
	return r->alloc || CLOCK_IS_ALLOC(r->clock);
}

/* The allocation profile beside the first profile, or --stacks-file's;
 * NULL after one line where there is none. */
static char *
alloc_path(const struct pc_inputs *in, const struct report_opts *r)
{
	const char *gmon = in->runs[0].files[0];
	size_t n = strlen(gmon);
	char *p;

	if (r->stacks)
		return pc_strdup(r->stacks);
	p = pc_malloc(n + sizeof(GMON_ALLOC_SUFFIX));
	memcpy(p, gmon, n);
	memcpy(p + n, GMON_ALLOC_SUFFIX, sizeof(GMON_ALLOC_SUFFIX));
	if (access(p, F_OK) && errno == ENOENT) {
		pc_error("'%s': no allocation profile beside it (%s): record with pcprof run "
			 "--alloc, or PC_ALLOC=1", gmon, p);
		free(p);
		return NULL;
	}
	return p;
}

/* The report of the allocation profile at path, as r asks; 0, or -1
 * after one line. */
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
alloc_report(const struct pc_inputs *in, struct report_opts *r,
	     const struct symtab_opts *s, FILE *out)
{
	char *path;
	int rc;

	if (!(path = alloc_path(in, r)))
		return -1;
	if (!CLOCK_IS_ALLOC(r->clock))
		r->clock = PC_CLOCK_ALLOC_BYTES;
	if (r->by_object || r->lines)
		rc = pc_error("%s: not of an allocation profile", r->by_object ?
			      "--by-object" : "--lines");
	else if (r->alloc && r->format != FORMAT_TEXT &&
		 r->format != FORMAT_JSON)
		rc = pc_error("--alloc: a table in text or json; --metric M --format F for "
			      "the other formats");
	else
		rc = alloc_report_path(in, r, s, path, out);
	free(path);
	return rc;
}
