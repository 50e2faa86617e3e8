/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for tools/base/outfile.c, the one way pcprof writes a file:
 * whole or not at all. Each test in a child of its own (the signals'
 * dispositions are the process's), its messages on a file of its own.
 * Cases:
 *  - a new file: nothing at its name until committed, then its bytes and
 *    the umask's mode, no temporary left;
 *  - a file replaced (a new inode, its mode kept); a symbolic link
 *    replaced, its target untouched;
 *  - given up: no file and no temporary, a file there untouched;
 *  - a directory refused with its line; a device written as it is, a
 *    write that fails there one line and -1; "-" standard output;
 *  - past RLIMIT_FSIZE: a write that fails (SIGXFSZ ignored), its
 *    temporary gone once given up; SIGXFSZ as found for a command;
 *  - SIGTERM while writing: pcprof ends by it, its temporary gone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcprof.h"
#include "base/base.h"
#include "unit.h"

static char dir[64], errpath[128];
static int saved_err = -1;

static void
setup(void)
{
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/pc-outfile-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(errpath, sizeof(errpath), "/tmp/pc-outfile-err-XXXXXX");
	fd = mkstemp(errpath);
	ck_assert_int_ge(fd, 0);
	saved_err = dup(STDERR_FILENO);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

static void
teardown(void)
{
	char cmd[128];

	dup2(saved_err, STDERR_FILENO);
	close(saved_err);
	unlink(errpath);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static char *
at(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
	return buf;
}

/* The names in dir, sorted, joined by spaces. */
static const char *
names(void)
{
	static char buf[512];
	struct dirent **v;
	int n = scandir(dir, &v, NULL, alphasort);

	ck_assert_int_ge(n, 0);
	size_t len = 0;

	buf[0] = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i]->d_name, ".") && strcmp(v[i]->d_name, "..") &&
		    len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"%s%s", len ? " " : "",
						v[i]->d_name);
		free(v[i]);
	}
	free(v);
	return buf;
}

static const char *
slurp(const char *p)
{
	static char buf[256];
	int fd = open(p, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

START_TEST(test_outfile_new)
{
	struct out_file o;
	struct stat st;
	char p[128];
	FILE *f;

	umask(027);
	f = out_open(&o, at(p, sizeof(p), "out"));
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs("hello\n", f), 0);
	/* its temporary beside it, nothing at its name yet */
	ck_assert_int_eq(strncmp(names(), "out.", 4), 0);
	ck_assert_int_eq(lstat(p, &st), -1);
	ck_assert_int_eq(out_commit(&o), 0);
	ck_assert_str_eq(names(), "out");
	ck_assert_str_eq(slurp(p), "hello\n");
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	ck_assert_str_eq(slurp(errpath), "");
}
END_TEST

START_TEST(test_outfile_replaces)
{
	struct out_file o;
	struct stat before, st;
	char p[128], target[128];
	int fd;

	at(p, sizeof(p), "out");
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_eq(write(fd, "old\n", 4), 4);
	close(fd);
	ck_assert_int_eq(stat(p, &before), 0);
	ck_assert_ptr_nonnull(out_open(&o, p));
	fputs("new\n", o.f);
	ck_assert_int_eq(out_commit(&o), 0);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_ne(st.st_ino, before.st_ino);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_str_eq(slurp(p), "new\n");

	/* a symbolic link: replaced, its target never written */
	at(target, sizeof(target), "target");
	fd = open(target, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_eq(write(fd, "keep\n", 5), 5);
	close(fd);
	at(p, sizeof(p), "link");
	ck_assert_int_eq(symlink(target, p), 0);
	ck_assert_ptr_nonnull(out_open(&o, p));
	fputs("new\n", o.f);
	ck_assert_int_eq(out_commit(&o), 0);
	ck_assert_int_eq(lstat(p, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_str_eq(slurp(p), "new\n");
	ck_assert_str_eq(slurp(target), "keep\n");
	ck_assert_str_eq(names(), "link out target");
}
END_TEST

START_TEST(test_outfile_discard)
{
	struct out_file o;
	char p[128];
	int fd;

	ck_assert_ptr_nonnull(out_open(&o, at(p, sizeof(p), "out")));
	fputs("half", o.f);
	out_discard(&o);
	ck_assert_str_eq(names(), "");

	fd = open(p, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_eq(write(fd, "whole\n", 6), 6);
	close(fd);
	ck_assert_ptr_nonnull(out_open(&o, p));
	fputs("half", o.f);
	out_discard(&o);
	ck_assert_str_eq(names(), "out");
	ck_assert_str_eq(slurp(p), "whole\n");
}
END_TEST

START_TEST(test_outfile_not_regular)
{
	struct out_file o;
	char p[128], want[256];

	at(p, sizeof(p), "d");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_ptr_null(out_open(&o, p));
	snprintf(want, sizeof(want), "pcprof: '%s': is a directory\n", p);
	ck_assert_str_eq(slurp(errpath), want);
	ck_assert_str_eq(names(), "d");

	/* a device is written as it is: /dev/full fails at the end */
	ck_assert_int_eq(ftruncate(STDERR_FILENO, 0), 0);
	ck_assert_int_eq(lseek(STDERR_FILENO, 0, SEEK_SET), 0);
	ck_assert_ptr_nonnull(out_open(&o, "/dev/full"));
	ck_assert_ptr_null(o.tmp);
	fputs("x\n", o.f);
	ck_assert_int_eq(out_commit(&o), -1);
	ck_assert_str_eq(slurp(errpath),
			 "pcprof: '/dev/full': No space left on device\n");

	/* "-": standard output */
	ck_assert_ptr_eq(out_open(&o, "-"), stdout);
	ck_assert_str_eq(o.path, "standard output");
	ck_assert_ptr_eq(out_open(&o, NULL), stdout);
	ck_assert_int_eq(out_commit(&o), 0);
}
END_TEST

START_TEST(test_outfile_too_large)
{
	static char big[8192];
	struct out_file o;
	struct sigaction sa;
	struct rlimit was, r;
	char p[128];

	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
	r = was;
	r.rlim_cur = 1024;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &r), 0);
	ck_assert_ptr_nonnull(out_open(&o, at(p, sizeof(p), "out")));
	ck_assert_int_eq(sigaction(SIGXFSZ, NULL, &sa), 0);
	ck_assert_ptr_eq(sa.sa_handler, SIG_IGN);
	fwrite(big, 1, sizeof(big), o.f);
	/* alive: the write failed with EFBIG instead */
	ck_assert_int_eq(out_commit(&o), -1);
	/* the limit as it was, for Check's own files */
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &was), 0);
	ck_assert_ptr_nonnull(strstr(slurp(errpath), "File too large"));
	ck_assert_int_eq(lstat(p, &(struct stat){ 0 }), -1);
	out_discard(&o);
	ck_assert_str_eq(names(), "");
	/* as found, for a command pcprof runs */
	out_signals_as_found();
	ck_assert_int_eq(sigaction(SIGXFSZ, NULL, &sa), 0);
	ck_assert_ptr_eq(sa.sa_handler, SIG_DFL);
}
END_TEST

START_TEST(test_outfile_killed_while_writing)
{
	char p[128];
	int status;
	pid_t pid;

	at(p, sizeof(p), "out");
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct out_file o;

		/* as pcprof starts: not Check's handler, which ends the
		 * whole process group */
		signal(SIGTERM, SIG_DFL);
		if (!out_open(&o, p))
			_exit(3);
		fputs("half", o.f);
		fflush(o.f);
		raise(SIGTERM);
		_exit(4);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(WTERMSIG(status), SIGTERM);
	ck_assert_str_eq(names(), "");
}
END_TEST

Suite *
outfile_suite(void)
{
	Suite *s = suite_create("outfile");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_outfile_new);
	tcase_add_test(t, test_outfile_replaces);
	tcase_add_test(t, test_outfile_discard);
	tcase_add_test(t, test_outfile_not_regular);
	tcase_add_test(t, test_outfile_too_large);
	tcase_add_test(t, test_outfile_killed_while_writing);
	suite_add_tcase(s, t);
	return s;
}
