/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for the call graph (tools/model/callgraph.c) on arcs made by
 * hand: arcs summed per pair of functions, ends in no symbol counted apart,
 * libpc's outside samples left out, totals that are self plus callees,
 * and the text view built from them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "unit.h"

#define N(a)	(sizeof(a) / sizeof((a)[0]))

/* main calls a from two places, a calls b and b's piece b.cold */
static const struct unit_sym syms[] = {
	{ 0x1000, 0x1100, "main" }, { 0x1100, 0x1200, "a" },
	{ 0x1200, 0x1300, "b" }, { 0x2000, 0x2100, "b" },
};
enum { MAIN, A, B };

/* The flat profile by hand: self samples per function and the total. */
static void
flat_of(struct flat *f, const double *self, size_t n, double total)
{
	memset(f, 0, sizeof(*f));
	f->rows = calloc(n, sizeof(*f->rows));
	ck_assert_ptr_nonnull(f->rows);
	for (size_t i = 0; i < n; i++)
		if (self[i] > 0)
			f->rows[f->nrows++] =
				(struct flat_row){ (uint32_t)i, self[i] };
	qsort(f->rows, f->nrows, sizeof(*f->rows), flat_row_cmp);
	f->total = total;
	f->rate = 100;
}

static void
check_arc(const struct callgraph *cg, size_t i, uint32_t caller,
	  uint32_t callee, double samples)
{
	ck_assert_uint_lt(i, cg->narcs);
	ck_assert_uint_eq(cg->arcs[i].caller, caller);
	ck_assert_uint_eq(cg->arcs[i].callee, callee);
	ck_assert_msg(cg->arcs[i].samples == samples, "arc %zu: %g samples, want %g",
		      i, cg->arcs[i].samples, samples);
}

/*
 * In hand-made order, not the sorted one:
 *   a -> b       4, then a -> b.cold 3        one arc, 7
 *   main -> a    10 and 5 from another site   one arc, 15
 *   b -> b       2 (recursion)                kept, adds to no total
 *   ? -> a 6, main -> ? 1, ? -> ? 8           unresolved, 15
 *   0 -> 1       100 (libpc: outside)         neither
 */
static void
arcs_of(struct gmon_profile *p, int libpc)
{
	unit_profile(p, libpc);
	unit_arc(p, 0x1150, 0x1200, 4);
	unit_arc(p, 0x1010, 0x1100, 10);
	unit_arc(p, 0x5000, 0x1100, 6);
	unit_arc(p, 0x1160, 0x2000, 3);
	unit_arc(p, GMON_OUTSIDE_FROM, GMON_OUTSIDE_SELF, 100);
	unit_arc(p, 0x1210, 0x1200, 2);
	unit_arc(p, 0x1020, 0x1100, 5);
	unit_arc(p, 0x1030, 0x9000, 1);
	unit_arc(p, 0x9000, 0x5000, 8);
}

START_TEST(test_callgraph_sums_arcs_per_pair_of_functions)
{
	static const double self[] = { 2, 8, 7 };
	struct gmon_profile p;
	struct callgraph cg;
	struct symtab st;
	struct flat f;

	unit_symtab(&st, syms, N(syms));
	ck_assert_uint_eq(st.nfuncs, 3);
	arcs_of(&p, 1);
	flat_of(&f, self, N(self), 217);
	callgraph_build(&cg, &st, &p, &f);
	ck_assert_uint_eq(cg.narcs, 3);
	check_arc(&cg, 0, MAIN, A, 15);
	check_arc(&cg, 1, A, B, 7);
	check_arc(&cg, 2, B, B, 2);
	ck_assert(cg.unresolved == 15);
	callgraph_release(&cg);
	ck_assert_ptr_null(cg.arcs);
	flat_release(&f);
	symtab_release(&st);
	gmon_profile_release(&p);
}
END_TEST

/* A function's total is its self time and the samples of the arcs to its
 * callees; calling itself adds nothing. */
START_TEST(test_callgraph_totals_are_self_plus_callees)
{
	static const double self[] = { 2, 8, 7 };
	struct gmon_profile p;
	struct callgraph cg;
	struct symtab st;
	struct flat f;

	unit_symtab(&st, syms, N(syms));
	arcs_of(&p, 1);
	flat_of(&f, self, N(self), 217);
	callgraph_build(&cg, &st, &p, &f);
	ck_assert(cg.total[MAIN] == 2 + 15);
	ck_assert(cg.total[A] == 8 + 7);
	ck_assert(cg.total[B] == 7);
	callgraph_release(&cg);
	flat_release(&f);
	symtab_release(&st);
	gmon_profile_release(&p);
}
END_TEST

/* Arcs from 0 to 1 in a file that is not libpc's are no samples outside:
 * they are arcs whose ends are in no symbol. */
START_TEST(test_callgraph_outside_arcs_only_in_libpc_files)
{
	static const double self[] = { 2, 8, 7 };
	struct gmon_profile p;
	struct callgraph cg;
	struct symtab st;
	struct flat f;

	unit_symtab(&st, syms, N(syms));
	arcs_of(&p, 0);
	flat_of(&f, self, N(self), 17);
	callgraph_build(&cg, &st, &p, &f);
	ck_assert_uint_eq(cg.narcs, 3);
	ck_assert(cg.unresolved == 115);
	callgraph_release(&cg);
	flat_release(&f);
	symtab_release(&st);
	gmon_profile_release(&p);
}
END_TEST

/* Mutual recursion counts a sample on both arcs: no total above all
 * the samples there are. */
START_TEST(test_callgraph_caps_totals_at_every_sample)
{
	static const struct unit_sym fg[] = {
		{ 0x1000, 0x1100, "f" }, { 0x1100, 0x1200, "g" },
	};
	static const double self[] = { 10, 10 };
	struct gmon_profile p;
	struct callgraph cg;
	struct symtab st;
	struct flat f;

	unit_symtab(&st, fg, N(fg));
	unit_profile(&p, 1);
	unit_arc(&p, 0x1010, 0x1100, 80);
	unit_arc(&p, 0x1110, 0x1000, 30);
	flat_of(&f, self, N(self), 60);
	callgraph_build(&cg, &st, &p, &f);
	ck_assert(cg.total[0] == 60);
	ck_assert(cg.total[1] == 40);
	callgraph_release(&cg);
	flat_release(&f);
	symtab_release(&st);
	gmon_profile_release(&p);
}
END_TEST

START_TEST(test_callgraph_without_arcs_is_self_time)
{
	static const double self[] = { 0, 3, 0 };
	struct gmon_profile p;
	struct callgraph cg;
	struct symtab st;
	struct flat f;

	unit_symtab(&st, syms, N(syms));
	unit_profile(&p, 1);
	flat_of(&f, self, N(self), 3);
	callgraph_build(&cg, &st, &p, &f);
	ck_assert_uint_eq(cg.narcs, 0);
	ck_assert(cg.unresolved == 0);
	ck_assert(cg.total[MAIN] == 0 && cg.total[A] == 3 && cg.total[B] == 0);
	callgraph_release(&cg);
	flat_release(&f);
	symtab_release(&st);
	gmon_profile_release(&p);
}
END_TEST

/* The text view: functions by total, each with its callers and callees
 * and their shares, and none of its calls to itself. */
START_TEST(test_callgraph_print_lists_callers_and_callees)
{
	static const double self[] = { 2, 8, 7 };
	struct gmon_profile p;
	struct callgraph cg;
	struct symtab st;
	struct flat f;
	char *out = NULL, *a, *b;
	size_t len = 0;
	FILE *mem = open_memstream(&out, &len);

	ck_assert_ptr_nonnull(mem);
	unit_symtab(&st, syms, N(syms));
	arcs_of(&p, 1);
	flat_of(&f, self, N(self), 217);
	callgraph_build(&cg, &st, &p, &f);
	callgraph_print(mem, &cg, &f, &st, 0);
	ck_assert_int_eq(fclose(mem), 0);
	a = strstr(out,
		   "\n[1] main\n      total 0.170 s (7.8%), self 0.020 s\n");
	ck_assert_msg(a, "%s", out);
	ck_assert_ptr_nonnull(strstr(a, "      callees           15  100.0%  a [2]\n"));
	a = strstr(out, "\n[2] a\n      total 0.150 s (6.9%), self 0.080 s\n");
	ck_assert_msg(a, "%s", out);
	b = strstr(out, "\n[3] b\n");
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(strstr(a, "      callers           15  100.0%  main [1]\n"));
	ck_assert_ptr_nonnull(strstr(a, "      callees            7  100.0%  b [3]\n"));
	ck_assert_ptr_nonnull(strstr(b, "      callers            7  100.0%  a [2]\n"));
	ck_assert_ptr_null(strstr(b, "b [3]"));
	ck_assert_ptr_null(strstr(out, "[4]"));
	free(out);

	/* top 1: main alone */
	mem = open_memstream(&out, &len);
	ck_assert_ptr_nonnull(mem);
	callgraph_print(mem, &cg, &f, &st, 1);
	ck_assert_int_eq(fclose(mem), 0);
	ck_assert_ptr_nonnull(strstr(out, "[1] main"));
	ck_assert_ptr_null(strstr(out, "[2] a"));
	free(out);
	callgraph_release(&cg);
	flat_release(&f);
	symtab_release(&st);
	gmon_profile_release(&p);
}
END_TEST

Suite *
callgraph_suite(void)
{
	Suite *s = suite_create("callgraph");
	TCase *t = tcase_create("callgraph_build");

	tcase_add_test(t, test_callgraph_sums_arcs_per_pair_of_functions);
	tcase_add_test(t, test_callgraph_totals_are_self_plus_callees);
	tcase_add_test(t, test_callgraph_outside_arcs_only_in_libpc_files);
	tcase_add_test(t, test_callgraph_caps_totals_at_every_sample);
	tcase_add_test(t, test_callgraph_without_arcs_is_self_time);
	tcase_add_test(t, test_callgraph_print_lists_callers_and_callees);
	suite_add_tcase(s, t);
	return s;
}
