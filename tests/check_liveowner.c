/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for the look at whether a live file's process still runs
 * (preload/liveowner.c), shared by pc_recover and pcprof.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <check.h>

#include "../preload/liveowner.h"
#include "unit.h"

/* A file of a page in the scratch directory, its stat in *st. */
static int
scratch_file(const char *name, struct stat *st)
{
	char path[128];
	int fd;

	unit_base_make();
	snprintf(path, sizeof(path), "%s/%s", unit_base, name);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 4096), 0);
	ck_assert_int_eq(fstat(fd, st), 0);
	return fd;
}

/* This process maps the file: it runs; once unmapped, its pid is another
 * image's (a raw execve), which does not. */
START_TEST(test_the_process_that_maps_the_file_runs)
{
	struct stat st;
	int fd = scratch_file(".pcprof.1.live", &st);
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(pc_live_owner_runs(getpid(), &st), 1);
	munmap(m, 4096);
	ck_assert_int_eq(pc_live_owner_runs(getpid(), &st), 0);
	close(fd);
	unit_base_remove();
}
END_TEST

/* A pid that started more than a second after the file last changed is
 * another process's: the file's ctime set back to 1970 in the copy. */
START_TEST(test_a_pid_started_after_the_file_is_another_process)
{
	struct stat st;
	int fd = scratch_file(".pcprof.2.live", &st);
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	ck_assert_ptr_ne(m, MAP_FAILED);
	st.st_ctim.tv_sec = 1;
	ck_assert_int_eq(pc_live_owner_runs(getpid(), &st), 0);
	munmap(m, 4096);
	close(fd);
	unit_base_remove();
}
END_TEST

/* No process: a child reaped, pid 0, a negative pid. */
START_TEST(test_no_process_does_not_run)
{
	struct stat st;
	int fd = scratch_file(".pcprof.3.live", &st);
	pid_t p = fork();

	if (p == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(p, NULL, 0), p);
	ck_assert_int_eq(pc_live_owner_runs(p, &st), 0);
	ck_assert_int_eq(pc_live_owner_runs(0, &st), 0);
	ck_assert_int_eq(pc_live_owner_runs(-1, &st), 0);
	close(fd);
	unit_base_remove();
}
END_TEST

Suite *
liveowner_suite(void)
{
	Suite *s = suite_create("liveowner");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_the_process_that_maps_the_file_runs);
	tcase_add_test(t, test_a_pid_started_after_the_file_is_another_process);
	tcase_add_test(t, test_no_process_does_not_run);
	suite_add_tcase(s, t);
	return s;
}
