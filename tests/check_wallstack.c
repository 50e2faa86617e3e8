/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for one row per waiting site (tools/symbols/waits.c): a
 * wait4's site is named without the child it waited for, and the children
 * are summed by site and pid, listed the longest first.
 */
#include <string.h>
#include <check.h>

#include "pcprof.h"
#include "symbols/waits.h"
#include "unit.h"

/* a site's name leaves the child out, keeps the call and descriptor */
START_TEST(test_site_names_leave_the_child_out)
{
	char buf[96];

	ck_assert_str_eq(
		wait_site_name(GMON_WAIT_WORD(61, 0, 4242), buf, sizeof(buf)),
		"[off-cpu: wait4]");
	ck_assert_str_eq(
		wait_site_name(GMON_WAIT_WORD(247, 0, 7), buf, sizeof(buf)),
		"[off-cpu: waitid]");
	ck_assert_str_eq(wait_site_name(GMON_WAIT_WORD(0, GMON_FD_PIPE, 0), buf,
					sizeof(buf)),
			 "[off-cpu: read pipe]");
	ck_assert_str_eq(wait_site_name(GMON_WAIT_WORD(61, 0, 0xffffffffu), buf,
					sizeof(buf)),
			 "[off-cpu: wait4]");
	/* the words of two children of one site name one site */
	ck_assert_str_eq(
		wait_site_name(GMON_WAIT_WORD(61, 0, 1), buf, sizeof(buf)),
		wait_site_name(GMON_WAIT_WORD(61, 0, 2), buf + 48, 48));
}
END_TEST

/* children: one entry per site and pid, summed; sorted by site, then the
 * longest first, then by pid */
START_TEST(test_children_summed_by_site_and_pid)
{
	struct wait_child *v = NULL;
	size_t n = 0, cap = 0;

	wait_children_add(&v, &n, &cap, "[off-cpu: wait4]", 10, 1.0);
	wait_children_add(&v, &n, &cap, "[off-cpu: waitid]", 10, 0.5);
	wait_children_add(&v, &n, &cap, "[off-cpu: wait4]", 11, 3.0);
	wait_children_add(&v, &n, &cap, "[off-cpu: wait4]", 10, 2.5);
	wait_children_add(&v, &n, &cap, "[off-cpu: wait4]", 12, 3.0);
	ck_assert_uint_eq(n, 4);
	wait_children_sort(v, n);
	ck_assert_str_eq(v[0].site, "[off-cpu: wait4]");
	ck_assert_uint_eq(v[0].pid, 10);
	ck_assert(v[0].samples == 3.5);
	ck_assert_uint_eq(v[1].pid, 11);
	ck_assert_uint_eq(v[2].pid, 12);
	ck_assert_str_eq(v[3].site, "[off-cpu: waitid]");
	ck_assert(v[3].samples == 0.5);
	wait_children_free(v, n);
}
END_TEST

/* many children of one site: each kept, none lost as the array grows */
START_TEST(test_children_many)
{
	struct wait_child *v = NULL;
	size_t n = 0, cap = 0;
	double sum = 0;

	for (uint32_t pid = 1; pid <= 1000; pid++)
		wait_children_add(&v, &n, &cap, "[off-cpu: wait4]", pid,
				  (double)(pid % 7));
	for (uint32_t pid = 1; pid <= 1000; pid++)
		wait_children_add(&v, &n, &cap, "[off-cpu: wait4]", pid, 1.0);
	ck_assert_uint_eq(n, 1000);
	wait_children_sort(v, n);
	for (size_t i = 0; i < n; i++) {
		sum += v[i].samples;
		if (i)
			ck_assert(v[i - 1].samples >= v[i].samples);
	}
	ck_assert(sum == 1000.0 + 3003.0);
	wait_children_sort(NULL, 0);
	wait_children_free(v, n);
}
END_TEST

Suite *
wallstack_suite(void)
{
	Suite *s = suite_create("wallstack");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_site_names_leave_the_child_out);
	tcase_add_test(tc, test_children_summed_by_site_and_pid);
	tcase_add_test(tc, test_children_many);
	suite_add_tcase(s, tc);
	return s;
}
