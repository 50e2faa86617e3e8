/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for the wall sampler's parsing of a thread's /proc lines
 * (preload/wall_parse.c): schedstat's three numbers; a syscall line's
 * number, six arguments, sp and pc, as sscanf's "%ld %lx..." read them.
 *
 * Edge cases: numbers past 2^32; a line cut short; "-1 SP PC" (blocked
 * outside a call); "running"; "-1 0x0 0x0" (no user state).
 */
#include <stdio.h>
#include <string.h>
#include <check.h>

#include "../preload/pc.h"
#include "../preload/wall.h"
#include "unit.h"

START_TEST(test_parse_schedstat_reads_three_numbers)
{
	uint64_t v[3];

	ck_assert_int_eq(pc_wall_parse_schedstat(
				 "123456789012 98765 4294967301\n", v), 0);
	ck_assert_uint_eq(v[0], 123456789012ULL);
	ck_assert_uint_eq(v[1], 98765);
	ck_assert_uint_eq(v[2], 4294967301ULL);
	ck_assert_int_eq(pc_wall_parse_schedstat("12 34\n", v), -1);
	ck_assert_int_eq(pc_wall_parse_schedstat("", v), -1);
}
END_TEST

/* each line as sscanf reads it, field for field */
START_TEST(test_parse_syscall_reads_as_sscanf_does)
{
	static const char *const lines[] = {
		"202 0x7f12a4c0 0x189 0x0 0x0 0x0 0xffffffff 0x7ffd3c1e8a10 "
		"0x7f12a4b8f2d7\n",
		"7 0x7ffc1 0x1 0x63 0x0 0x0 0x0 0x7ffc0 0x7f00aa\n",
		"-1 0x7ffd3c1e8a10 0x401136\n",
		"-1 0x0 0x0\n",
		"running\n",
		"61 0xffffffffffffffff 0x0",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(*lines); i++) {
		unsigned long a[6], b[6], sp, ip, sp2 = 0, ip2 = 0;
		long nr = 0, nr2 = 0;
		int k = pc_wall_parse_syscall(lines[i], &nr, a, &sp, &ip);
		int want = sscanf(lines[i],
				  "%ld %lx %lx %lx %lx %lx %lx %lx %lx", &nr2,
				  &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
				  &sp2, &ip2);

		ck_assert_int_eq(k, want < 0 ? 0 : want);
		if (k >= 1)
			ck_assert_int_eq(nr, nr2);
		for (int j = 0; j + 1 < k && j < 6; j++)
			ck_assert_uint_eq(a[j], b[j]);
		if (k == 9)
			ck_assert(sp == sp2 && ip == ip2);
	}
}
END_TEST

Suite *
wallparse_suite(void)
{
	Suite *s = suite_create("wallparse");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_parse_schedstat_reads_three_numbers);
	tcase_add_test(tc, test_parse_syscall_reads_as_sscanf_does);
	suite_add_tcase(s, tc);
	return s;
}
