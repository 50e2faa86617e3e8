/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for the flat profile (flat_build in tools/model/profile.c), on
 * symbol tables and profiles made by hand: which function each bin's
 * samples go to, what is unknown, what was outside the executable, and
 * the order of the rows.
 */
#include <math.h>
#include <string.h>

#include "pcprof.h"
#include "unit.h"

#define N(a)	(sizeof(a) / sizeof((a)[0]))

/* The samples flat_build gave the function named name; 0 without a row. */
static double
samples_of(const struct flat *f, const struct symtab *st, const char *name)
{
	int rows = 0;
	double v = 0;

	for (size_t i = 0; i < f->nrows; i++) {
		ck_assert_uint_lt(f->rows[i].func, st->nfuncs);
		if (!strcmp(st->funcs[f->rows[i].func], name)) {
			v = f->rows[i].samples;
			rows++;
		}
	}
	ck_assert_msg(rows <= 1, "%d rows for %s", rows, name);
	return v;
}

static void
near_(double got, double want, const char *what)
{
	ck_assert_msg(fabs(got - want) <= 1e-9 * fmax(fabs(want), 1),
		      "%s = %.12g, want %.12g", what, got, want);
}

#define near(got, want)	near_((got), (want), #got)

/* Every sample is in a row, unknown or outside, and only once. */
static void
check_sums(const struct flat *f)
{
	double sum = f->unknown + f->outside;

	for (size_t i = 0; i < f->nrows; i++) {
		ck_assert(f->rows[i].samples > 0);
		sum += f->rows[i].samples;
	}
	near(sum, f->total);
}

static void
build(struct flat *f, struct symtab *st, const struct unit_sym *syms,
      size_t nsyms, struct gmon_profile *p)
{
	unit_symtab(st, syms, nsyms);
	flat_build(f, st, p);
	check_sums(f);
}

static void
release(struct flat *f, struct symtab *st, struct gmon_profile *p)
{
	flat_release(f);
	symtab_release(st);
	gmon_profile_release(p);
}

START_TEST(test_flat_credits_whole_bins_to_their_function)
{
	static const struct unit_sym syms[] = {
		{ 0x1000, 0x1010, "a" }, { 0x1010, 0x1020, "b" },
	};
	static const uint64_t counts[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct gmon_profile p;
	struct symtab st;
	struct flat f;

	unit_profile(&p, 1);
	unit_hist(&p, 0x1000, 0x1020, 997, counts, N(counts));
	build(&f, &st, syms, N(syms), &p);
	ck_assert_uint_eq(f.rate, 997);
	near(f.total, 36);
	near(f.unknown, 0);
	near(f.outside, 0);
	ck_assert_uint_eq(f.nrows, 2);
	ck_assert_str_eq(st.funcs[f.rows[0].func], "b");
	near(f.rows[0].samples, 26);
	ck_assert_str_eq(st.funcs[f.rows[1].func], "a");
	near(f.rows[1].samples, 10);
	release(&f, &st, &p);
}
END_TEST

/*
 * a ends at an odd address, 0x1003, and the padding after it fills its
 * last bin: that bin is a's alone, as gprof (a reaching to b) has it. The
 * bin of padding alone is no function's.
 */
START_TEST(test_flat_bin_shared_with_padding_is_the_function_s)
{
	static const struct unit_sym syms[] = {
		{ 0x1002, 0x1003, "a" }, { 0x1008, 0x1010, "b" },
	};
	static const uint64_t counts[] = { 8, 5, 3, 4 };
	struct gmon_profile p;
	struct symtab st;
	struct flat f;

	unit_profile(&p, 0);
	unit_hist(&p, 0x1000, 0x1010, 100, counts, N(counts));
	build(&f, &st, syms, N(syms), &p);
	near(samples_of(&f, &st, "a"), 8);
	near(samples_of(&f, &st, "b"), 7);
	near(f.unknown, 5);
	near(f.total, 20);
	release(&f, &st, &p);
}
END_TEST

/*
 * Bins that two or three functions share, with padding between some:
 *   [0x1000, 0x1004)  a 3 bytes, b 1             8 -> a 6, b 2
 *   [0x1008, 0x1010)  c 2, d 3, e 3              16 -> c 4, d 6, e 6
 *   [0x1010, 0x1018)  e 3, padding 2, f 3        12 -> e 6, f 6
 * and a bin that b fills alone, so that its share adds up.
 */
START_TEST(test_flat_bin_across_functions_splits_by_bytes)
{
	static const struct unit_sym syms[] = {
		{ 0x1000, 0x1003, "a" }, { 0x1003, 0x1008, "b" },
		{ 0x1008, 0x100a, "c" }, { 0x100a, 0x100d, "d" },
		{ 0x100d, 0x1013, "e" }, { 0x1015, 0x1018, "f" },
	};
	static const uint64_t counts4[] = { 8, 1 };
	static const uint64_t counts8[] = { 16, 12 };
	struct gmon_profile p;
	struct symtab st;
	struct flat f;

	unit_profile(&p, 0);
	unit_hist(&p, 0x1000, 0x1008, 100, counts4, N(counts4));
	unit_hist(&p, 0x1008, 0x1018, 100, counts8, N(counts8));
	build(&f, &st, syms, N(syms), &p);
	near(samples_of(&f, &st, "a"), 6);
	near(samples_of(&f, &st, "b"), 3);
	near(samples_of(&f, &st, "c"), 4);
	near(samples_of(&f, &st, "d"), 6);
	near(samples_of(&f, &st, "e"), 6 + 6);
	near(samples_of(&f, &st, "f"), 6);
	near(f.unknown, 0);
	release(&f, &st, &p);
}
END_TEST

/* Before every symbol, between two, after the last, and with no table. */
START_TEST(test_flat_bin_in_no_symbol_is_unknown)
{
	static const struct unit_sym syms[] = {
		{ 0x1010, 0x1020, "a" }, { 0x1030, 0x1040, "b" },
	};
	static const uint64_t counts[] = { 1, 2, 4, 8, 16, 32 };
	struct gmon_profile p;
	struct symtab st;
	struct flat f;

	unit_profile(&p, 0);
	/* bins of 16: before a, a, between, b, after, after */
	unit_hist(&p, 0x1000, 0x1060, 100, counts, N(counts));
	build(&f, &st, syms, N(syms), &p);
	near(samples_of(&f, &st, "a"), 2);
	near(samples_of(&f, &st, "b"), 8);
	near(f.unknown, 1 + 4 + 16 + 32);
	ck_assert_uint_eq(f.nrows, 2);
	release(&f, &st, &p);

	unit_profile(&p, 0);
	unit_hist(&p, 0x1000, 0x1060, 100, counts, N(counts));
	build(&f, &st, NULL, 0, &p);
	near(f.unknown, 63);
	near(f.total, 63);
	ck_assert_uint_eq(f.nrows, 0);
	release(&f, &st, &p);
}
END_TEST

/*
 * PC_SCOPE=all names the code between an object's functions after the
 * object ("[libz.so.1]"): such a gap takes a bin only where no function
 * does, so a function's last bin stays the function's.
 */
START_TEST(test_flat_gap_takes_only_bins_no_function_covers)
{
	static const struct unit_sym syms[] = {
		{ 0x1000, 0x1004, "[libz.so.1]" },
		{ 0x1004, 0x1010, "inflate" },
		{ 0x1010, 0x1100, "[libz.so.1]" },
	};
	static const uint64_t counts[] = { 10, 1, 3, 0, 7 };
	struct gmon_profile p;
	struct symtab st;
	struct flat f;

	unit_profile(&p, 0);
	/* bins of 8: gap+inflate, inflate, gap, gap, gap */
	unit_hist(&p, 0x1000, 0x1028, 100, counts, N(counts));
	build(&f, &st, syms, N(syms), &p);
	near(samples_of(&f, &st, "inflate"), 11);
	near(samples_of(&f, &st, "[libz.so.1]"), 10);
	near(f.unknown, 0);
	release(&f, &st, &p);
}
END_TEST

/* libpc's arcs from 0 to 1 carry the samples outside the executable; in
 * a file that is not libpc's they are an arc like any other. */
START_TEST(test_flat_counts_outside_samples_of_libpc_files)
{
	static const struct unit_sym syms[] = { { 0x1000, 0x1010, "a" } };
	static const uint64_t counts[] = { 3, 4 };
	struct gmon_profile p;
	struct symtab st;
	struct flat f;

	for (int libpc = 0; libpc < 2; libpc++) {
		unit_profile(&p, libpc);
		unit_hist(&p, 0x1000, 0x1010, 100, counts, N(counts));
		unit_arc(&p, GMON_OUTSIDE_FROM, GMON_OUTSIDE_SELF, 40);
		unit_arc(&p, 0x1004, 0x1008, 9);
		unit_arc(&p, GMON_OUTSIDE_FROM, GMON_OUTSIDE_SELF, 2);
		build(&f, &st, syms, N(syms), &p);
		near(f.outside, libpc ? 42 : 0);
		near(f.total, libpc ? 49 : 7);
		near(samples_of(&f, &st, "a"), 7);
		near(f.unknown, 0);
		release(&f, &st, &p);
	}
}
END_TEST

/* a and its piece a.cold, in two records: one row; and records in any
 * place relative to the symbols. */
START_TEST(test_flat_sums_the_pieces_of_one_function)
{
	static const struct unit_sym syms[] = {
		{ 0x1000, 0x1010, "a" }, { 0x1010, 0x1020, "b" },
		{ 0x8000, 0x8008, "a" },
	};
	static const uint64_t c1[] = { 5, 6 }, c2[] = { 7, 1 };
	struct gmon_profile p;
	struct symtab st;
	struct flat f;

	unit_profile(&p, 0);
	unit_hist(&p, 0x1008, 0x1018, 100, c1, N(c1));
	unit_hist(&p, 0x8000, 0x8010, 100, c2, N(c2));
	build(&f, &st, syms, N(syms), &p);
	ck_assert_uint_eq(f.nrows, 2);
	near(samples_of(&f, &st, "a"), 5 + 7);
	near(samples_of(&f, &st, "b"), 6);
	near(f.unknown, 1);
	release(&f, &st, &p);
}
END_TEST

/* Most samples first; equal ones in function order; no row without any. */
START_TEST(test_flat_rows_most_first_then_by_function)
{
	static const struct unit_sym syms[] = {
		{ 0x1000, 0x1004, "z" }, { 0x1004, 0x1008, "y" },
		{ 0x1008, 0x100c, "x" }, { 0x100c, 0x1010, "w" },
		{ 0x1010, 0x1014, "v" },
	};
	static const uint64_t counts[] = { 2, 9, 0, 2, 2 };
	static const char *const want[] = { "y", "z", "w", "v" };
	struct gmon_profile p;
	struct symtab st;
	struct flat f;

	unit_profile(&p, 0);
	unit_hist(&p, 0x1000, 0x1014, 100, counts, N(counts));
	build(&f, &st, syms, N(syms), &p);
	ck_assert_uint_eq(f.nrows, N(want));
	for (size_t i = 0; i < N(want); i++)
		ck_assert_str_eq(st.funcs[f.rows[i].func], want[i]);
	for (size_t i = 1; i < f.nrows; i++)
		ck_assert_int_lt(flat_row_cmp(&f.rows[i - 1], &f.rows[i]), 0);
	release(&f, &st, &p);
}
END_TEST

START_TEST(test_flat_row_cmp_orders_by_samples_then_function)
{
	struct flat_row a = { 3, 10 }, b = { 1, 5 }, c = { 4, 10 };

	ck_assert_int_lt(flat_row_cmp(&a, &b), 0);
	ck_assert_int_gt(flat_row_cmp(&b, &a), 0);
	ck_assert_int_lt(flat_row_cmp(&a, &c), 0);
	ck_assert_int_gt(flat_row_cmp(&c, &a), 0);
	ck_assert_int_eq(flat_row_cmp(&a, &a), 0);
}
END_TEST

/* Counts far above 16 bits, as merged profiles sum them, stay exact. */
START_TEST(test_flat_keeps_large_counts_exact)
{
	static const struct unit_sym syms[] = { { 0x1000, 0x1008, "a" } };
	static const uint64_t counts[] = { UINT64_C(1) << 40,
					   (UINT64_C(1) << 40) + 1 };
	struct gmon_profile p;
	struct symtab st;
	struct flat f;

	unit_profile(&p, 1);
	unit_hist(&p, 0x1000, 0x1008, 100, counts, N(counts));
	unit_arc(&p, GMON_OUTSIDE_FROM, GMON_OUTSIDE_SELF, UINT64_C(1) << 33);
	build(&f, &st, syms, N(syms), &p);
	ck_assert(f.rows[0].samples == (double)((UINT64_C(1) << 41) + 1));
	ck_assert(f.total ==
		  (double)((UINT64_C(1) << 41) + 1 + (UINT64_C(1) << 33)));
	release(&f, &st, &p);
}
END_TEST

/* No histogram at all: nothing sampled, rate 0. */
START_TEST(test_flat_of_an_empty_profile_is_empty)
{
	static const struct unit_sym syms[] = { { 0x1000, 0x1008, "a" } };
	struct gmon_profile p;
	struct symtab st;
	struct flat f;

	unit_profile(&p, 1);
	build(&f, &st, syms, N(syms), &p);
	ck_assert_uint_eq(f.rate, 0);
	ck_assert_uint_eq(f.nrows, 0);
	ck_assert(f.total == 0 && f.unknown == 0 && f.outside == 0);
	release(&f, &st, &p);
	ck_assert_ptr_null(f.rows);
}
END_TEST

Suite *
flat_suite(void)
{
	Suite *s = suite_create("flat");
	TCase *t = tcase_create("flat_build");

	tcase_add_test(t, test_flat_credits_whole_bins_to_their_function);
	tcase_add_test(t, test_flat_bin_shared_with_padding_is_the_function_s);
	tcase_add_test(t, test_flat_bin_across_functions_splits_by_bytes);
	tcase_add_test(t, test_flat_bin_in_no_symbol_is_unknown);
	tcase_add_test(t, test_flat_gap_takes_only_bins_no_function_covers);
	tcase_add_test(t, test_flat_counts_outside_samples_of_libpc_files);
	tcase_add_test(t, test_flat_sums_the_pieces_of_one_function);
	tcase_add_test(t, test_flat_rows_most_first_then_by_function);
	tcase_add_test(t, test_flat_row_cmp_orders_by_samples_then_function);
	tcase_add_test(t, test_flat_keeps_large_counts_exact);
	tcase_add_test(t, test_flat_of_an_empty_profile_is_empty);
	suite_add_tcase(s, t);
	return s;
}
