/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/markers.c, the marker API, read back as
 * PROFILE.timeline's records through timeline.c's writer. Cases:
 *  - while sampling is off, or for no name: nothing kept;
 *  - each call one marker of its kind, in order, of this thread, the
 *    counter's value (negative too), a time the program gave kept with
 *    its flag; errno as it was;
 *  - names interned by pointer: the same pointer one id, another
 *    pointer to the same text another id of the same name; a long name
 *    cut to 47 bytes;
 *  - more names than the table holds: each marker kept or counted lost,
 *    never both, and a name for each id kept.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../include/pcprof/marker.h"
#include "../preload/pc.h"
#include "../preload/timeline.h"
#include "unit.h"
#include "unit_marks.h"

static void
setup(void)
{
	unit_preload_reset();
	ck_assert_int_eq(pc_timeline_init(64, 0), 0);
}

START_TEST(test_markers_off)
{
	static struct unit_marks r;

	/* sampling not on yet (or over) */
	pcprof_mark_begin("phase");
	pcprof_count("n", 1);
	pc->phase = PC_ON;
	pcprof_mark_begin(NULL);
	unit_marks_read(&r);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_uint_eq(r.head.marks, 0);
	ck_assert_uint_eq(r.head.marks_lost, 0);
	ck_assert_uint_eq(r.names.n, 0);
}
END_TEST

START_TEST(test_markers_kept_in_order)
{
	static struct unit_marks r;
	static const char phase[] = "phase";
	char copy[16], long_name[80];
	uint32_t tid = (uint32_t)gettid();

	strcpy(copy, phase);
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = 0;
	pc->phase = PC_ON;
	errno = 1234;
	pcprof_mark_begin(phase);
	pcprof_count("items", -5);
	pcprof_mark_instant(copy);
	pcprof_mark_end(phase);
	pcprof_mark_begin_at(phase, 12345);
	pcprof_mark_instant_at(long_name, 777);
	pcprof_mark_end_at(phase, 23456);
	ck_assert_int_eq(errno, 1234);
	unit_marks_read(&r);

	ck_assert_uint_eq(r.n, 7);
	ck_assert_uint_eq(r.head.marks, 7);
	ck_assert_uint_eq(r.head.marks_lost, 0);
	ck_assert_uint_eq(r.v[0].kind, PC_TL_BEGIN);
	ck_assert_uint_eq(r.v[1].kind, PC_TL_COUNT);
	ck_assert_uint_eq(r.v[1].value, (uint64_t)-5);
	ck_assert_uint_eq(r.v[2].kind, PC_TL_INSTANT);
	ck_assert_uint_eq(r.v[3].kind, PC_TL_END);
	ck_assert_uint_eq(r.v[4].kind, PC_TL_BEGIN | PC_TL_AT_NS);
	ck_assert_uint_eq(r.v[4].t, 12345);
	ck_assert_uint_eq(r.v[5].kind, PC_TL_INSTANT | PC_TL_AT_NS);
	ck_assert_uint_eq(r.v[5].t, 777);
	ck_assert_uint_eq(r.v[6].kind, PC_TL_END | PC_TL_AT_NS);
	ck_assert_uint_eq(r.v[6].t, 23456);
	for (size_t i = 0; i < 7; i++)
		ck_assert_uint_eq(r.v[i].tid, tid);
	/* the same pointer one id; another pointer, another id */
	ck_assert_uint_eq(r.v[0].where, r.v[3].where);
	ck_assert_uint_eq(r.v[0].where, r.v[4].where);
	ck_assert_uint_eq(r.v[0].where, r.v[6].where);
	ck_assert_uint_ne(r.v[0].where, r.v[2].where);
	ck_assert_uint_ne(r.v[0].where, r.v[1].where);
	ck_assert_uint_eq(r.names.n, 4);
	ck_assert_str_eq(unit_marks_name(&r, r.v[0].where), "phase");
	ck_assert_str_eq(unit_marks_name(&r, r.v[2].where), "phase");
	ck_assert_str_eq(unit_marks_name(&r, r.v[1].where), "items");
	ck_assert_uint_eq(strlen(unit_marks_name(&r, r.v[5].where)),
			  PC_TL_NAME_LEN - 1);
	ck_assert_int_eq(strncmp(unit_marks_name(&r, r.v[5].where), long_name,
				 PC_TL_NAME_LEN - 1), 0);
}
END_TEST

START_TEST(test_markers_names_full)
{
	static struct unit_marks r;
	static char text[1100][8];

	pc->phase = PC_ON;
	for (int i = 0; i < 1100; i++) {
		text[i][0] = (char)('a' + i % 26);
		pcprof_mark_instant(text[i]);
	}
	unit_marks_read(&r);
	ck_assert_uint_le(r.names.n, PC_TL_NAMES);
	ck_assert_uint_gt(r.names.n, PC_TL_NAMES / 2);
	/* each kept or lost, never both; each kept has its name */
	ck_assert_uint_eq(r.head.marks + r.head.marks_lost, 1100);
	ck_assert_uint_eq(r.head.marks, r.n);
	ck_assert_uint_eq(r.n, r.names.n);
	for (size_t i = 0; i < r.n; i++) {
		const char *nm = unit_marks_name(&r, r.v[i].where);

		ck_assert_ptr_nonnull(nm);
		ck_assert_uint_eq(strlen(nm), 1);
	}
}
END_TEST

Suite *
markers_suite(void)
{
	Suite *s = suite_create("markers");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, NULL);
	tcase_add_test(t, test_markers_off);
	tcase_add_test(t, test_markers_kept_in_order);
	tcase_add_test(t, test_markers_names_full);
	suite_add_tcase(s, t);
	return s;
}
