/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/names.c, which file each process of a run
 * writes. Cases:
 *  - decimals: 0, one digit, ULONG_MAX;
 *  - the run's first process (no PC_ROOT) writes BASE and sets PC_ROOT to
 *    its pid; a process under it (PC_ROOT another pid) writes
 *    BASE.prog.pid; the root's own image after an exec (PC_ROOT its own
 *    pid) writes BASE again; the name before an exec is BASE.prog.pid;
 *    a forked child BASE.prog.pid, never the root;
 *  - GMON_OUT_PREFIX: PREFIX.pid, root or not, PREFIX.prog.pid before an
 *    exec;
 *  - a base or a name too long: -ENAMETOOLONG;
 *  - a file taken: written at or after this image began, by someone else
 *    (times set exactly, never the file system's clock), not a directory;
 *  - a new file opened exclusively, close-on-exec, replacing a stale file
 *    and a symbolic link, never writing through the link.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../preload/pc.h"
#include "unit.h"

/* the test binary's file name, as names.c tames it */
#define PROG	"unit-preload"

static char dir[64];

static void
setup(void)
{
	unit_preload_reset();
	snprintf(dir, sizeof(dir), "/tmp/pc-names-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	unsetenv("PC_ROOT");
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* dir/name into buf */
static char *
at(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
	return buf;
}

START_TEST(test_names_decimal)
{
	char buf[24];

	pc_decimal(buf, 0);
	ck_assert_str_eq(buf, "0");
	pc_decimal(buf, 7);
	ck_assert_str_eq(buf, "7");
	pc_decimal(buf, 1002003);
	ck_assert_str_eq(buf, "1002003");
	pc_decimal(buf, ULONG_MAX);
	ck_assert_str_eq(buf, "18446744073709551615");
}
END_TEST

START_TEST(test_names_root_and_others)
{
	char base[128], want[256], got[PATH_MAX], pid[24];
	const char *env;

	at(base, sizeof(base), "gmon.out");
	snprintf(pid, sizeof(pid), "%d", (int)getpid());

	/* the run's first process: BASE, and PC_ROOT its pid */
	ck_assert_int_eq(pc_names_init(base, 0, NULL), 0);
	ck_assert_int_eq(pc->root, 1);
	ck_assert_int_eq(pc->pid, getpid());
	ck_assert_str_eq(pc->path, base);
	env = getenv("PC_ROOT");
	ck_assert_ptr_nonnull(env);
	ck_assert_str_eq(env, pid);
	/* its name before an exec, for the image after it to take BASE */
	snprintf(want, sizeof(want), "%s." PROG ".%s", base, pid);
	ck_assert_int_eq(pc_name(got, sizeof(got), PC_NAME_OTHER), 0);
	ck_assert_str_eq(got, want);

	/* a process under another root: BASE.prog.pid, PC_ROOT left alone */
	setenv("PC_ROOT", "1", 1);
	ck_assert_int_eq(pc_names_init(base, 0, "1"), 0);
	ck_assert_int_eq(pc->root, 0);
	ck_assert_str_eq(pc->path, want);
	ck_assert_str_eq(getenv("PC_ROOT"), "1");
	ck_assert_int_eq(pc_name(got, sizeof(got), PC_NAME_OWN), 0);
	ck_assert_str_eq(got, want);

	/* the root's own image after an exec: BASE again */
	ck_assert_int_eq(pc_names_init(base, 0, pid), 0);
	ck_assert_int_eq(pc->root, 1);
	ck_assert_str_eq(pc->path, base);

	/* a forked child is never the root; it wrote nothing yet */
	pc->wrote_own = 1;
	pc_names_forked();
	ck_assert_int_eq(pc->root, 0);
	ck_assert_int_eq(pc->wrote_own, 0);
	ck_assert_str_eq(pc->path, want);
}
END_TEST

START_TEST(test_names_prefix)
{
	char base[128], want[256], got[PATH_MAX];

	at(base, sizeof(base), "p.x");
	ck_assert_int_eq(pc_names_init(base, 1, NULL), 0);
	ck_assert_int_eq(pc->root, 1);
	/* PREFIX.pid even for the root, as glibc writes */
	snprintf(want, sizeof(want), "%s.%d", base, (int)getpid());
	ck_assert_str_eq(pc->path, want);
	ck_assert_int_eq(pc_name(got, sizeof(got), PC_NAME_OWN), 0);
	ck_assert_str_eq(got, want);
	/* before an exec: PREFIX.prog.pid */
	snprintf(want, sizeof(want), "%s." PROG ".%d", base, (int)getpid());
	ck_assert_int_eq(pc_name(got, sizeof(got), PC_NAME_OTHER), 0);
	ck_assert_str_eq(got, want);
}
END_TEST

START_TEST(test_names_too_long)
{
	static char base[PATH_MAX + 8];
	char small[16];

	memset(base, 'a', sizeof(base) - 1);
	base[0] = '/';
	ck_assert_int_eq(pc_names_init(base, 0, NULL), -ENAMETOOLONG);

	ck_assert_int_eq(pc_names_init("/tmp/gmon.out", 0, "1"), 0);
	/* "/tmp/gmon.out" fits 16 bytes, ".unit-preload.PID" does not */
	ck_assert_int_eq(pc_name(small, sizeof(small), PC_NAME_OWN),
			 -ENAMETOOLONG);
	ck_assert_int_eq(pc_name(small, 13, PC_NAME_OTHER), -ENAMETOOLONG);
	pc->root = 1;
	ck_assert_int_eq(pc_name(small, sizeof(small), PC_NAME_OWN), 0);
	ck_assert_str_eq(small, "/tmp/gmon.out");
	ck_assert_int_eq(pc_name(small, 13, PC_NAME_OWN), -ENAMETOOLONG);
}
END_TEST

/* Make dir/name (a file) with its modification time at start + s, ns. */
static void
file_at(const char *path, long s, long ns)
{
	struct timespec t[2];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	close(fd);
	t[0] = t[1] = pc->start;
	t[1].tv_sec += s;
	t[1].tv_nsec += ns;
	if (t[1].tv_nsec < 0) {
		t[1].tv_nsec += 1000000000;
		t[1].tv_sec--;
	} else if (t[1].tv_nsec >= 1000000000) {
		t[1].tv_nsec -= 1000000000;
		t[1].tv_sec++;
	}
	ck_assert_int_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

START_TEST(test_names_taken)
{
	char base[128], path[256];

	ck_assert_int_eq(pc_names_init(at(base, sizeof(base), "gmon.out"), 0,
				       NULL), 0);
	at(path, sizeof(path), "f");
	ck_assert_int_eq(pc_name_taken(path), 0);	/* not there */
	file_at(path, 0, 0);				/* as we began */
	ck_assert_int_eq(pc_name_taken(path), 1);
	file_at(path, 0, 1);
	ck_assert_int_eq(pc_name_taken(path), 1);
	file_at(path, 3, 0);
	ck_assert_int_eq(pc_name_taken(path), 1);
	/* left by a run before */
	file_at(path, 0, -1);
	ck_assert_int_eq(pc_name_taken(path), 0);
	file_at(path, -5, 0);
	ck_assert_int_eq(pc_name_taken(path), 0);
	/* written by ourselves (a snapshot): ours to replace */
	file_at(path, 3, 0);
	pc->wrote_own = 1;
	ck_assert_int_eq(pc_name_taken(path), 0);
	pc->wrote_own = 0;
	/* a directory is no profile of anybody's */
	at(path, sizeof(path), "d");
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(pc_name_taken(path), 0);
}
END_TEST

START_TEST(test_names_open_new)
{
	char path[256], target[256], buf[16];
	struct stat st;
	int fd;

	at(path, sizeof(path), "new");
	fd = pc_open_new(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	ck_assert_int_eq(write(fd, "stale", 5), 5);
	close(fd);

	/* a file of this name left behind: replaced by an empty one */
	fd = pc_open_new(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	close(fd);

	/* a symbolic link: replaced, its target never written */
	at(target, sizeof(target), "target");
	fd = open(target, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_eq(write(fd, "keep", 4), 4);
	close(fd);
	at(path, sizeof(path), "link");
	ck_assert_int_eq(symlink(target, path), 0);
	fd = pc_open_new(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "new", 3), 3);
	close(fd);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	fd = open(target, O_RDONLY);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 4);
	close(fd);
	ck_assert_int_eq(memcmp(buf, "keep", 4), 0);

	/* a directory that is not there: -1 and its errno */
	at(path, sizeof(path), "no/such");
	errno = 0;
	ck_assert_int_eq(pc_open_new(path, O_WRONLY), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

Suite *
names_suite(void)
{
	Suite *s = suite_create("names");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_names_decimal);
	tcase_add_test(t, test_names_root_and_others);
	tcase_add_test(t, test_names_prefix);
	tcase_add_test(t, test_names_too_long);
	tcase_add_test(t, test_names_taken);
	tcase_add_test(t, test_names_open_new);
	suite_add_tcase(s, t);
	return s;
}
