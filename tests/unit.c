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
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

char *
unit_at(char *path, size_t size, const char *dir, const char *name)
{
	snprintf(path, size, "%s/%s", dir, name);
	return path;
}

void
unit_put_gmon(const char *dir, const char *name, const uint8_t *id)
{
	uint8_t spare[GMON_SPARE_SIZE] = { 0 };
	struct gmon_sink s;
	char path[512];
	int fd = open(unit_at(path, sizeof(path), dir, name),
		      O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	if (id) {
		spare[0] = GMON_PC_MARK0;
		spare[1] = GMON_PC_MARK1;
		spare[2] = GMON_PC_FORMAT;
		spare[3] = 1;
		memcpy(spare + GMON_BUILDID_OFF, id, GMON_BUILDID_SIZE);
	}
	gmon_sink_init(&s, fd);
	gmon_sink_header(&s, spare);
	ck_assert_int_eq(gmon_sink_flush(&s), 0);
	close(fd);
}

void
unit_put_manifest(const char *dir, const char *profile, unsigned pid,
		  const char *exe)
{
	char path[512], name[256];
	FILE *f;

	snprintf(name, sizeof(name), "%s" GMON_OBJECTS_SUFFIX, profile);
	f = fopen(unit_at(path, sizeof(path), dir, name), "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, GMON_OBJECTS_MAGIC "\nrate 1000\n");
	if (pid)
		fprintf(f, "pid %u\n", pid);
	fprintf(f, "object 0 1 0 - - %s\n", exe);
	ck_assert_int_eq(fclose(f), 0);
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
	/* Check's timeout, 4 s of wall time a test by default, read when
	 * each suite makes its cases: make check runs the suites beside the
	 * end-to-end tests, and on a busy machine (CI at load 10 to 30) a
	 * test of a second's CPU waited past it for a core (the sequential
	 * levels' Monte Carlo); a hang still ends */
	setenv("CK_DEFAULT_TIMEOUT", "120", 0);
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
	srunner_add_suite(sr, commands_suite());
	srunner_add_suite(sr, wallgmon_suite());
	srunner_add_suite(sr, outfile_suite());
	srunner_add_suite(sr, basemsg_suite());
	srunner_add_suite(sr, dwcache_suite());
	srunner_add_suite(sr, hostile_suite());
	/* last: whether every golden file was checked by the suites above */
	srunner_add_suite(sr, golden_suite());
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
