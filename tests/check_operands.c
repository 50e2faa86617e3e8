/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof report's operands resolved once (tools/inputs/operands.c), on
 * runs made in a temporary directory: what each operand is, the run's
 * processes with their manifests and pids, the ones --process picks, and
 * the one program of a report of one program.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../gmon/gmon.h"
#include "inputs/operands.h"
#include "unit.h"

/* build-id 1..8, that no program has */
static const uint8_t id[GMON_BUILDID_SIZE] = { 1, 2, 3, 4, 5, 6, 7, 8 };

/* A run in base/name: a.20 and b.21 of /bin/prog (b's pid in its name
 * alone), and c.22 with no manifest. */
static void
run_make(char *dir, size_t size, const char *name)
{
	snprintf(dir, size, "%s/%s", unit_base, name);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	unit_put_gmon(dir, "gmon.out.prog.20", id);
	unit_put_manifest(dir, "gmon.out.prog.20", 20, "/bin/prog");
	unit_put_gmon(dir, "gmon.out.prog.21", id);
	unit_put_manifest(dir, "gmon.out.prog.21", 0, "/bin/prog");
	unit_put_gmon(dir, "gmon.out.c.22", id);
}

/*
 * A run's directory is a run: listed once, its processes those with a
 * manifest, in name order, each with its manifest and pid (the name's
 * where the manifest says none), all chosen with no --process; with
 * --process 21 that one alone; no wall time recorded.
 */
START_TEST(test_run_directory_resolved_once)
{
	char dir[256], *argv[1] = { dir };
	struct operands o;

	run_make(dir, sizeof(dir), "run");
	ck_assert_int_eq(operands_resolve(&o, argv, 1, NULL), 0);
	ck_assert_int_eq(o.kind, OPERANDS_RUN);
	ck_assert_int_eq(o.peek, 2);
	ck_assert_ptr_eq(o.listing, &o.own);
	ck_assert_int_eq(operands_gather(&o, NULL, 0, 0), 0);
	ck_assert(o.view && !o.one && !o.wall);
	ck_assert_uint_eq(o.nprocs, 2);
	ck_assert(strstr(o.procs[0].profile, "gmon.out.prog.20"));
	ck_assert_uint_eq(o.procs[0].pid, 20);
	ck_assert_uint_eq(o.procs[1].pid, 21);
	for (size_t i = 0; i < 2; i++) {
		ck_assert(o.procs[i].chosen);
		ck_assert_str_eq(o.procs[i].man->v[0].path, "/bin/prog");
	}
	operands_release(&o);

	ck_assert_int_eq(operands_resolve(&o, argv, 1, NULL), 0);
	ck_assert_int_eq(operands_gather(&o, "21", 0, 0), 0);
	ck_assert(!o.procs[0].chosen && o.procs[1].chosen);
	operands_release(&o);
}
END_TEST

/*
 * A report of one program of the run (--callgraph) in JSON reads both
 * the program (re: its path, its two profiles, their manifests) and the
 * run's processes, each with a manifest of its own; not in JSON, the
 * program alone.
 */
START_TEST(test_one_program_of_a_run)
{
	char dir[256], *argv[1] = { dir };
	struct operands o;

	run_make(dir, sizeof(dir), "one");
	ck_assert_int_eq(operands_resolve(&o, argv, 1, NULL), 0);
	ck_assert_int_eq(operands_gather(&o, NULL, 1, 1), 0);
	ck_assert(o.one && o.view);
	ck_assert_str_eq(o.re.exe, "/bin/prog");
	ck_assert_int_eq(o.re.nfiles, 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_ptr_nonnull(o.re.man[i]);
		ck_assert_ptr_nonnull(o.procs[i].man);
		ck_assert_ptr_ne(o.re.man[i], o.procs[i].man);
	}
	operands_release(&o);

	ck_assert_int_eq(operands_resolve(&o, argv, 1, NULL), 0);
	ck_assert_int_eq(operands_gather(&o, NULL, 1, 0), 0);
	ck_assert(o.one && !o.view);
	ck_assert_int_eq(o.re.nfiles, 2);
	operands_release(&o);
}
END_TEST

/*
 * Profiles named one by one: a profile with its manifest first is the
 * run's; a plain one among them has no program to name (an error, said);
 * a plain one first whose build-id no executable has is an error too. A
 * device or a FIFO is no operand; a name that is not there is an EXE's.
 */
START_TEST(test_profiles_devices_and_names)
{
	char dir[256], a[512], c[512], fifo[512], *argv[2] = { a, c };
	char devnull[] = "/dev/null", nosuch[] = "no-such-program-pc";
	struct operands o;

	run_make(dir, sizeof(dir), "files");
	unit_at(a, sizeof(a), dir, "gmon.out.prog.20");
	unit_at(c, sizeof(c), dir, "gmon.out.c.22");
	ck_assert_int_eq(operands_resolve(&o, argv, 2, NULL), 0);
	ck_assert_int_eq(o.kind, OPERANDS_RUN);
	ck_assert_int_eq(o.peek, 1);
	ck_assert_ptr_null(o.listing);
	ck_assert_int_eq(operands_gather(&o, NULL, 0, 0), -1);
	operands_release(&o);

	argv[0] = c;
	ck_assert_int_eq(operands_resolve(&o, argv, 1, NULL), -1);
	operands_release(&o);

	argv[0] = devnull;
	ck_assert_int_eq(operands_resolve(&o, argv, 1, NULL), -1);
	operands_release(&o);
	ck_assert_int_eq(mkfifo(unit_at(fifo, sizeof(fifo), dir, "fifo"), 0644),
			 0);
	argv[0] = fifo;
	ck_assert_int_eq(operands_resolve(&o, argv, 1, NULL), -1);
	operands_release(&o);

	argv[0] = nosuch;
	ck_assert_int_eq(operands_resolve(&o, argv, 1, NULL), 0);
	ck_assert_int_eq(o.kind, OPERANDS_PROGRAM);
	ck_assert_int_eq(o.peek, -1);
	operands_release(&o);
}
END_TEST

Suite *
operands_suite(void)
{
	Suite *s = suite_create("operands");
	TCase *t = tcase_create("core");

	tcase_add_unchecked_fixture(t, unit_base_make, unit_base_remove);
	tcase_add_test(t, test_run_directory_resolved_once);
	tcase_add_test(t, test_one_program_of_a_run);
	tcase_add_test(t, test_profiles_devices_and_names);
	suite_add_tcase(s, t);
	return s;
}
