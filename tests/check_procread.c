/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/procread.c, libpc's reader of small files and
 * their numbers. Edge cases:
 *  - a file read whole, NUL-terminated; one longer than the buffer cut
 *    at size - 1; an empty one 0 bytes; a real /proc file (this
 *    process's stat, its pid first);
 *  - a file that is not there, a symbolic link under O_NOFOLLOW, and,
 *    with a stat asked, a directory and a FIFO (never waited on): -1, the
 *    buffer "", and errno as it was before, each time;
 *  - numbers: digits up to the first other byte, at the bound and one
 *    past it, UINT64_MAX and one more, a bound under one digit, no digit
 *    at all: the pointer moved past the digits only when it is a number.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../preload/procread.h"
#include "unit.h"

#define N(a)	(sizeof(a) / sizeof((a)[0]))

/* A fresh directory of this test's own, into dir. */
static void
dir_make(char *dir, size_t size)
{
	snprintf(dir, size, "/tmp/pc-procread-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

START_TEST(test_procread_reads_small_files_whole)
{
	char dir[64], path[128], buf[16], big[8];
	struct stat sb;
	char self[32];

	dir_make(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	put(path, "12 34 56\n");
	errno = 4242;
	ck_assert_int_eq(pc_read_small(path, 0, buf, sizeof(buf), NULL), 9);
	ck_assert_str_eq(buf, "12 34 56\n");
	ck_assert_int_eq(pc_read_small(path, O_NOFOLLOW, big, sizeof(big), &sb),
			 7);
	ck_assert_str_eq(big, "12 34 5");
	ck_assert(S_ISREG(sb.st_mode));
	ck_assert_int_eq(sb.st_size, 9);
	put(path, "");
	ck_assert_int_eq(pc_read_small(path, 0, buf, sizeof(buf), &sb), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(errno, 4242);
	/* a /proc file: its text in one read */
	snprintf(self, sizeof(self), "%d (", (int)getpid());
	ck_assert_int_gt(
		pc_read_small("/proc/self/stat", 0, buf, sizeof(buf), NULL), 0);
	ck_assert_int_eq(strncmp(buf, self, strlen(self)), 0);
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(test_procread_refuses_what_it_cannot_read)
{
	char dir[64], path[128], link[128], fifo[128], buf[16];
	struct stat sb;
	const struct {
		const char *path;
		int flags;
		int stat;
	} v[] = {
		{ path, 0, 0 },			/* not there */
		{ link, O_NOFOLLOW, 0 },	/* a symbolic link */
		{ dir, 0, 1 },			/* a directory, stat asked */
		{ fifo, O_NONBLOCK, 1 },	/* a FIFO, never waited on */
	};

	dir_make(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/none", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	ck_assert_int_eq(symlink("/proc/self/stat", link), 0);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	for (size_t i = 0; i < N(v); i++) {
		memcpy(buf, "junk", 5);
		errno = 4242;
		ck_assert_int_eq(pc_read_small(v[i].path, v[i].flags, buf,
					       sizeof(buf),
					       v[i].stat ? &sb : NULL),
				 -1);
		ck_assert_str_eq(buf, "");
		ck_assert_int_eq(errno, 4242);
	}
	unlink(link);
	unlink(fifo);
	rmdir(dir);
}
END_TEST

START_TEST(test_procread_parses_numbers_to_their_bound)
{
	static const struct {
		const char *text;
		uint64_t max;
		int ok;
		uint64_t v;
		size_t used;
	} v[] = {
		{ "123 45", UINT64_MAX, 0, 123, 3 },
		{ "0\n", UINT64_MAX, 0, 0, 1 },
		{ "100", 100, 0, 100, 3 },
		{ "101", 100, -1, 0, 0 },
		{ "7", 5, -1, 0, 0 },
		{ "18446744073709551615", UINT64_MAX, 0, UINT64_MAX, 20 },
		{ "18446744073709551616", UINT64_MAX, -1, 0, 0 },
		{ "max\n", UINT64_MAX, -1, 0, 0 },
		{ "", UINT64_MAX, -1, 0, 0 },
		{ "-1", UINT64_MAX, -1, 0, 0 },
	};

	for (size_t i = 0; i < N(v); i++) {
		const char *p = v[i].text;
		uint64_t x = 99;

		ck_assert_int_eq(pc_parse_u64(&p, v[i].max, &x), v[i].ok);
		ck_assert_uint_eq(x, v[i].ok ? 99 : v[i].v);
		ck_assert_ptr_eq(p, v[i].text + v[i].used);
	}
}
END_TEST

Suite *
procread_suite(void)
{
	Suite *s = suite_create("procread");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_procread_reads_small_files_whole);
	tcase_add_test(t, test_procread_refuses_what_it_cannot_read);
	tcase_add_test(t, test_procread_parses_numbers_to_their_bound);
	suite_add_tcase(s, t);
	return s;
}
