/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for tools/base/msg.c, pcprof's one-line messages and its
 * memory that is there or the end of pcprof, each case in a child whose
 * standard output and error go to one pipe (so that their order shows).
 * Cases:
 *  - a warning: "pcprof: " and the text, one line whatever a name in it
 *    holds (a newline escaped), after what standard output had pending;
 *  - an error: the same line, and -1;
 *  - fatal: the line, and exit status 2;
 *  - memory not there: "out of memory", and pc_oom_status (2, or what a
 *    command set);
 *  - hex of bytes; a formatted string; a stream in memory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcprof.h"
#include "base/base.h"
#include "unit.h"

/* fn in a child, stdout and stderr into one pipe: "STATUS:OUTPUT". */
static const char *
in_child(void (*fn)(void))
{
	static char buf[1024];
	int fd[2], status;
	size_t n;
	ssize_t k;
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		fn();
		fflush(NULL);
		_exit(0);
	}
	close(fd[1]);
	n = (size_t)snprintf(buf, sizeof(buf), "?:");
	while (n + 1 < sizeof(buf) &&
	       (k = read(fd[0], buf + n, sizeof(buf) - n - 1)) > 0)
		n += (size_t)k;
	buf[n] = 0;
	close(fd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	buf[0] = (char)('0' + WEXITSTATUS(status));
	return buf;
}

static void
warn(void)
{
	/* pending on stdout (a pipe: fully buffered) comes first */
	printf("report so far ");
	pc_warn("'%s': %d bad records", "a\nb", 3);
}

static void
error(void)
{
	if (pc_error("cannot read '%s'", "x") == -1)
		printf("-1\n");
}

static void
fatal(void)
{
	pc_fatal("--top '%s': not a count", "z");
}

static void
oom(void)
{
	pc_realloc(NULL, SIZE_MAX);
}

static void
oom_status(void)
{
	pc_oom_status = 7;
	pc_malloc(SIZE_MAX);
}

START_TEST(test_basemsg_lines)
{
	ck_assert_str_eq(in_child(warn),
			 "0:report so far pcprof: 'a\\nb': 3 bad records\n");
	ck_assert_str_eq(in_child(error), "0:pcprof: cannot read 'x'\n-1\n");
	ck_assert_str_eq(in_child(fatal), "2:pcprof: --top 'z': not a count\n");
#ifndef __SANITIZE_ADDRESS__	/* ASan's allocator ends the process itself */
	ck_assert_str_eq(in_child(oom), "2:pcprof: out of memory\n");
	ck_assert_str_eq(in_child(oom_status), "7:pcprof: out of memory\n");
#endif
}
END_TEST

START_TEST(test_basemsg_helpers)
{
	static const uint8_t id[4] = { 0x00, 0x0f, 0xa5, 0xff };
	char hex[9], *s, *mem = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_str_eq(pc_hex(id, 4, hex), "000fa5ff");
	ck_assert_str_eq(pc_hex(id, 0, hex), "");
	s = pc_asprintf("%s-%04d", "run", 7);
	ck_assert_str_eq(s, "run-0007");
	free(s);
	s = pc_strndup("abcdef", 3);
	ck_assert_str_eq(s, "abc");
	free(s);
	f = pc_memstream(&mem, &len);
	fprintf(f, "%d lines", 2);
	pc_memstream_close(f);
	ck_assert_str_eq(mem, "2 lines");
	ck_assert_uint_eq(len, 7);
	free(mem);
	/* zero bytes is memory too */
	s = pc_malloc(0);
	ck_assert_ptr_nonnull(s);
	free(s);
}
END_TEST

Suite *
basemsg_suite(void)
{
	Suite *s = suite_create("basemsg");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_basemsg_lines);
	tcase_add_test(t, test_basemsg_helpers);
	suite_add_tcase(s, t);
	return s;
}
