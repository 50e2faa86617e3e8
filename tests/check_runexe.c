/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for tools/inputs/runexe.c: which processes --process names
 * (a pid, a path, a file name, a name on PATH that is the same file), and
 * a profile's own files among the operands (a shell glob of a run's
 * directory) standing for their profile, once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"
#include "inputs/runexe.h"
#include "unit.h"

/* A file at dir/name holding text. */
static void
put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(test_chosen_by_pid_path_name_and_path_lookup)
{
	char dir[] = "/tmp/check-runexe-XXXXXX", exe[600], link[600], path[700];
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, "x86_64-linux-gnu-objdump", "#!/bin/sh\n");
	snprintf(exe, sizeof(exe), "%s/x86_64-linux-gnu-objdump", dir);
	ck_assert_int_eq(chmod(exe, 0755), 0);
	snprintf(link, sizeof(link), "%s/objdump", dir);
	ck_assert_int_eq(symlink(exe, link), 0);
	ck_assert(runexe_chosen(exe, 42, NULL));
	ck_assert(runexe_chosen(exe, 42, "42"));
	ck_assert(!runexe_chosen(exe, 42, "43"));
	ck_assert(runexe_chosen(exe, 42, exe));
	ck_assert(runexe_chosen(exe, 42, "x86_64-linux-gnu-objdump"));
	ck_assert(runexe_chosen(exe, 42, link)); /* a path to the same file */
	ck_assert(!runexe_chosen(exe, 42, "objdump"));	/* not on PATH */
	snprintf(path, sizeof(path), "%s:/nonexistent", dir);
	setenv("PATH", path, 1);
	ck_assert(runexe_chosen(exe, 42, "objdump"));		/* as typed */
	ck_assert(!runexe_chosen(exe, 42, "objdum"));
	ck_assert(!runexe_chosen(exe, 42, ""));
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
	unlink(link);
	unlink(exe);
	rmdir(dir);
}
END_TEST

START_TEST(test_a_profiles_files_stand_for_it)
{
	char dir[] = "/tmp/check-runexe-XXXXXX", a[9][600];
	static const char *const names[] = {
		"gmon.out.cc1.7+libc.so.6", "gmon.out.cc1.7", "gmon.out.cc1.7.objects",
		"gmon.out.cc1.7.stacks", "gmon.out.cc1.8+libstdc++.so.6", "gmon.out.cc1.8",
		"plain.stacks", "gone+libc.so.6", "gmon.out.cc1.7"
	};
	char *argv[9];
	char **ops;
	int n;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, "gmon.out.cc1.7", "gmon\1\0\0\0");
	put(dir, "gmon.out.cc1.7.objects", "");
	put(dir, "gmon.out.cc1.8", "gmon\1\0\0\0");
	put(dir, "gmon.out.cc1.8.objects", "");
	put(dir, "plain.stacks", "");		/* no profile "plain": itself */
	for (int i = 0; i < 9; i++) {
		snprintf(a[i], sizeof(a[i]), "%s/%s", dir, names[i]);
		argv[i] = a[i];
	}
	ops = runexe_operands(argv, 9, &n);
	/* the files beside a profile stand for it once, and not at all where
	 * it is named; a profile named twice is read twice, as gprof sums it */
	ck_assert_int_eq(n, 5);
	ck_assert_str_eq(ops[0], a[1]);
	ck_assert_str_eq(ops[1], a[5]);
	ck_assert_str_eq(ops[2], a[6]);
	ck_assert_str_eq(ops[3], a[7]);		/* no such profile: as given */
	ck_assert_str_eq(ops[4], a[8]);
	for (int i = 0; i < n; i++)
		free(ops[i]);
	free(ops);
	for (int i = 0; i < 6; i++)
		unlink(a[i]);
	unlink(a[6]);
	snprintf(a[0], sizeof(a[0]), "%s/gmon.out.cc1.8.objects", dir);
	unlink(a[0]);
	/* a program with a '+' in its name (g++): its profile stays itself */
	put(dir, "gmon.out.g++.9", "gmon\1\0\0\0");
	put(dir, "gmon.out.g++.9.objects", "");
	snprintf(a[0], sizeof(a[0]), "%s/gmon.out.g++.9+libc.so.6", dir);
	snprintf(a[1], sizeof(a[1]), "%s/gmon.out.g++.9", dir);
	ops = runexe_operands(argv, 2, &n);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(ops[0], a[1]);
	free(ops[0]);
	free(ops);
	unlink(a[1]);
	snprintf(a[0], sizeof(a[0]), "%s/gmon.out.g++.9.objects", dir);
	unlink(a[0]);
	rmdir(dir);
}
END_TEST

Suite *
runexe_suite(void)
{
	Suite *s = suite_create("runexe");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_chosen_by_pid_path_name_and_path_lookup);
	tcase_add_test(t, test_a_profiles_files_stand_for_it);
	suite_add_tcase(s, t);
	return s;
}
