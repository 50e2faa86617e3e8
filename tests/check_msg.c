/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/msg.c, libpc's one-line messages, with the
 * test's descriptor 2 made a file of its own. Cases:
 *  - a line of the three parts, "libpc: " first, a newline last, errno
 *    as it was; parts left out (NULL);
 *  - a variable part too long: cut with "...", the reason after it
 *    whole, the line 1024 bytes with its newline;
 *  - descriptor 2 closed at start-up, or another file put there since:
 *    nothing written to it;
 *  - SIGXFSZ held around a write: a SIGXFSZ a failed write raised is
 *    taken, not delivered; one the program had pending stays pending;
 *    the mask as it was;
 *  - text without stdio: strings and numbers cut at the buffer's end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../preload/pc.h"
#include "unit.h"

static char path[64];
static int saved_err = -1;

/* Descriptor 2 onto a new file of the test's own (path). */
static void
setup(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/pc-msg-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	saved_err = dup(STDERR_FILENO);
	ck_assert_int_ge(saved_err, 0);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

static void
teardown(void)
{
	dup2(saved_err, STDERR_FILENO);
	close(saved_err);
	unlink(path);
}

/* What the file at p holds, into buf; its length. */
static ssize_t
slurp(const char *p, char *buf, size_t size)
{
	int fd = open(p, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, size - 1);
	close(fd);
	ck_assert_int_ge(n, 0);
	buf[n] = 0;
	return n;
}

START_TEST(test_msg_one_line)
{
	char buf[256];

	pc_msg_init();
	errno = 4242;
	pc_say("cannot write ", "/x/gmon.out", ": No space left on device");
	ck_assert_int_eq(errno, 4242);
	pc_say("plain", NULL, NULL);
	pc_say(NULL, "b", " c");
	slurp(path, buf, sizeof(buf));
	ck_assert_str_eq(buf,
			 "libpc: cannot write /x/gmon.out: No space left on "
			 "device\nlibpc: plain\nlibpc: b c\n");
}
END_TEST

START_TEST(test_msg_long_value_gives_way)
{
	static char b[3000], buf[4096];
	const char *c = ": the reason";
	ssize_t n;

	memset(b, 'v', sizeof(b) - 1);
	pc_msg_init();
	pc_say("at ", b, c);
	n = slurp(path, buf, sizeof(buf));
	ck_assert_int_eq(n, 1024);
	ck_assert_int_eq(strncmp(buf, "libpc: at vvv", 13), 0);
	ck_assert_str_eq(buf + 1024 - 1 - strlen(c) - 3, "...: the reason\n");
	/* a value that fits is whole */
	ck_assert_int_eq(ftruncate(STDERR_FILENO, 0), 0);
	ck_assert_int_eq(lseek(STDERR_FILENO, 0, SEEK_SET), 0);
	b[1000] = 0;
	pc_say("at ", b, c);
	n = slurp(path, buf, sizeof(buf));
	ck_assert_int_eq(n, 7 + 3 + 1000 + (ssize_t)strlen(c) + 1);
	ck_assert_ptr_null(strstr(buf, "..."));
}
END_TEST

START_TEST(test_msg_not_to_another_file)
{
	char other[64], buf[64];
	int fd;

	pc_msg_init();
	/* the program put a file of its own on descriptor 2 */
	snprintf(other, sizeof(other), "/tmp/pc-msg-XXXXXX");
	fd = mkstemp(other);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
	pc_say("not here", NULL, NULL);
	ck_assert_int_eq(slurp(other, buf, sizeof(buf)), 0);
	ck_assert_int_eq(slurp(path, buf, sizeof(buf)), 0);
	unlink(other);
}
END_TEST

START_TEST(test_msg_closed_at_start)
{
	char buf[64];
	int fd;

	close(STDERR_FILENO);
	pc_msg_init();
	/* opened again later, on the same file even: not libpc's */
	fd = open(path, O_WRONLY);
	ck_assert_int_eq(fd, STDERR_FILENO);
	errno = 17;
	pc_say("not here", NULL, NULL);
	ck_assert_int_eq(errno, 17);
	ck_assert_int_eq(slurp(path, buf, sizeof(buf)), 0);
}
END_TEST

static volatile sig_atomic_t xfsz_got;

static void
on_xfsz(int sig)
{
	xfsz_got++;
}

static int
xfsz_blocked(void)
{
	sigset_t now;

	ck_assert_int_eq(sigprocmask(SIG_BLOCK, NULL, &now), 0);
	return sigismember(&now, SIGXFSZ);
}

static int
xfsz_pending(void)
{
	sigset_t p;

	ck_assert_int_eq(sigpending(&p), 0);
	return sigismember(&p, SIGXFSZ);
}

START_TEST(test_msg_xfsz_held)
{
	struct pc_xfsz h;
	sigset_t one;

	ck_assert_ptr_ne(signal(SIGXFSZ, on_xfsz), SIG_ERR);
	/* a write that failed (EFBIG) raised SIGXFSZ: taken, not delivered */
	pc_xfsz_block(&h);
	ck_assert(xfsz_blocked());
	raise(SIGXFSZ);
	pc_xfsz_release(&h, 1);
	ck_assert(!xfsz_blocked());
	ck_assert(!xfsz_pending());
	ck_assert_int_eq(xfsz_got, 0);

	/* a write that did not fail: a SIGXFSZ meanwhile is the program's */
	pc_xfsz_block(&h);
	raise(SIGXFSZ);
	pc_xfsz_release(&h, 0);
	ck_assert_int_eq(xfsz_got, 1);

	/* the program's own pending SIGXFSZ (it blocks it) stays pending,
	 * and blocked, even when libpc's write failed */
	sigemptyset(&one);
	sigaddset(&one, SIGXFSZ);
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, &one, NULL), 0);
	raise(SIGXFSZ);
	pc_xfsz_block(&h);
	pc_xfsz_release(&h, 1);
	ck_assert(xfsz_blocked());
	ck_assert(xfsz_pending());
	ck_assert_int_eq(xfsz_got, 1);
	ck_assert_int_eq(sigprocmask(SIG_UNBLOCK, &one, NULL), 0);
	ck_assert_int_eq(xfsz_got, 2);
}
END_TEST

START_TEST(test_msg_line_text)
{
	char b[8], w[32];
	struct pc_line l = { b, sizeof(b), 0 }, m = { w, sizeof(w), 0 };

	pc_line_str(&l, "abc");
	pc_line_u64(&l, 12345);
	ck_assert_uint_eq(l.len, 7);	/* room for a NUL kept */
	ck_assert_int_eq(memcmp(b, "abc1234", 7), 0);
	pc_line_str(&l, "more");
	ck_assert_uint_eq(l.len, 7);
	pc_line_u64(&m, 0);
	pc_line_str(&m, " ");
	pc_line_u64(&m, UINT64_MAX);
	ck_assert_uint_eq(m.len, 22);
	ck_assert_int_eq(memcmp(w, "0 18446744073709551615", 22), 0);
}
END_TEST

Suite *
msg_suite(void)
{
	Suite *s = suite_create("msg");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_msg_one_line);
	tcase_add_test(t, test_msg_long_value_gives_way);
	tcase_add_test(t, test_msg_not_to_another_file);
	tcase_add_test(t, test_msg_closed_at_start);
	tcase_add_test(t, test_msg_xfsz_held);
	tcase_add_test(t, test_msg_line_text);
	suite_add_tcase(s, t);
	return s;
}
