/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Runs every Check suite; the exit status is 0 only when all pass. Check has
 * no skipped outcome, so a suite leaves out a test whose tool is missing
 * (unit_skip), and this prints what was left out and why. Under CI=true a
 * skip is a failure: .ci/run installs every tool the tests use. Also the
 * symbol tables and profiles that suites make by hand (unit.h), and the
 * scratch directory of the suites that work on real files. Check's
 * CK_RUN_SUITE=NAME runs one suite alone. Run as "unit __finish FILE" it
 * is pcprof's finisher of a live file, as recover.c runs its own program.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gmon/gmon.h"
#include "pcprof.h"
#include "symbols/symtab.h"
#include "unit.h"

static int nskipped;

int
unit_have(const char *shell_test)
{
	return system(shell_test) == 0;
}

void
unit_skip(const char *test, const char *reason)
{
	fprintf(stderr, "unit: skip %s: %s\n", test, reason);
	nskipped++;
}

char unit_base[64];

void
unit_base_make(void)
{
	strcpy(unit_base, "/tmp/pcprof-unit-XXXXXX");
	if (!mkdtemp(unit_base)) {
		perror("unit: mkdtemp");
		exit(EXIT_FAILURE);
	}
}

static int
remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path);
}

void
unit_base_remove(void)
{
	nftw(unit_base, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

void
unit_symtab(struct symtab *st, const struct unit_sym *v, size_t n)
{
	memset(st, 0, sizeof(*st));
	st->syms = calloc(n ? n : 1, sizeof(*st->syms));
	st->funcs = calloc(n ? n : 1, sizeof(*st->funcs));
	ck_assert(st->syms && st->funcs);
	for (size_t i = 0; i < n; i++) {
		size_t f;

		ck_assert(v[i].lo < v[i].hi &&
			  (i == 0 || v[i - 1].hi <= v[i].lo));
		for (f = 0; f < st->nfuncs && strcmp(st->funcs[f], v[i].name);
		     f++)
			;
		if (f == st->nfuncs) {
			st->funcs[f] = strdup(v[i].name);
			ck_assert_ptr_nonnull(st->funcs[f]);
			st->nfuncs++;
		}
		st->syms[i].lo = v[i].lo;
		st->syms[i].hi = v[i].hi;
		st->syms[i].func = (uint32_t)f;
	}
	st->nsyms = n;
	strcpy(st->source, "unit");
}

void
unit_profile(struct gmon_profile *p, int libpc)
{
	memset(p, 0, sizeof(*p));
	p->version = GMON_VERSION;
	if (libpc) {
		p->spare[0] = GMON_PC_MARK0;
		p->spare[1] = GMON_PC_MARK1;
		p->spare[2] = GMON_PC_FORMAT;
	}
}

void
unit_hist(struct gmon_profile *p, uint64_t low, uint64_t high, uint32_t rate,
	  const uint64_t *counts, uint32_t nbins)
{
	struct gmon_hist *h;

	p->hists = realloc(p->hists, (p->nhists + 1) * sizeof(*p->hists));
	ck_assert_ptr_nonnull(p->hists);
	h = &p->hists[p->nhists++];
	memset(h, 0, sizeof(*h));
	h->low = low;
	h->high = high;
	h->nbins = nbins;
	h->rate = rate;
	strcpy(h->dimen, "seconds");
	h->abbrev = 's';
	h->counts = malloc(nbins * sizeof(*h->counts));
	ck_assert_ptr_nonnull(h->counts);
	memcpy(h->counts, counts, nbins * sizeof(*h->counts));
}

void
unit_arc(struct gmon_profile *p, uint64_t from_pc, uint64_t self_pc,
	 uint64_t count)
{
	p->arcs = realloc(p->arcs, (p->narcs + 1) * sizeof(*p->arcs));
	ck_assert_ptr_nonnull(p->arcs);
	p->arcs[p->narcs++] = (struct gmon_arc){ from_pc, self_pc, count };
}

int
main(int argc, char **argv)
{
	SRunner *sr;
	const char *ci = getenv("CI");
	int failed;

	/* recover.c finishes a live file by running this program as pcprof
	 * __finish FILE (check_runfiles.c puts one in a run's directory) */
	if (argc == 3 && !strcmp(argv[1], "__finish"))
		return cmd_finish(argc - 1, argv + 1);
	sr = srunner_create(gmon_suite());
	srunner_add_suite(sr, profil_suite());
	srunner_add_suite(sr, stats_suite());
	srunner_add_suite(sr, flat_suite());
	srunner_add_suite(sr, symtab_suite());
	srunner_add_suite(sr, callgraph_suite());
	srunner_add_suite(sr, flame_suite());
	srunner_add_suite(sr, settings_suite());
	srunner_add_suite(sr, label_suite());
	srunner_add_suite(sr, jitdump_suite());
	srunner_add_suite(sr, diff_model_suite());
	srunner_add_suite(sr, diff_compare_suite());
	srunner_add_suite(sr, runfiles_suite());
	srunner_add_suite(sr, launch_suite());
	srunner_add_suite(sr, runexe_suite());
	srunner_add_suite(sr, operands_suite());
	srunner_add_suite(sr, waits_suite());
	srunner_add_suite(sr, wallstack_suite());
	srunner_add_suite(sr, history_suite());
	srunner_add_suite(sr, sequential_suite());
	srunner_add_suite(sr, formats_suite());
	srunner_add_suite(sr, writers_suite());
	srunner_add_suite(sr, pprof_suite());
	srunner_add_suite(sr, options_suite());
	srunner_add_suite(sr, outputs_suite());
	srunner_add_suite(sr, diff_out_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (nskipped && ci && strcmp(ci, "true") == 0) {
		printf("unit: %d skipped, which CI=true counts as failed\n",
		       nskipped);
		return EXIT_FAILURE;
	}
	if (nskipped)
		printf("unit: %d skipped\n", nskipped);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
