/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/vfork.c, what libpc keeps of a vfork child's
 * signal calls. A child is told by getpid differing from pc->pid (its
 * parent's): here pc->pid is set to another pid to be that child, and
 * to this one to be the parent again. The kernel's sigaction is a
 * stand-in that records its calls. Cases:
 *  - the parent, and a process before start-up: nothing kept, its own
 *    view;
 *  - a child's mask call that changes the view: kept in its record, its
 *    view then, while the parent's stays; one that changes nothing: no
 *    record;
 *  - a child's sigaction: made through the kernel's; the old action the
 *    program believes where libpc holds the signal and the child has not
 *    set it; the signals it set; a refused call or a signal out of range
 *    set nothing;
 *  - back in the parent: the child's record gone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "../preload/pc.h"
#include "unit.h"

static int calls, fail;
static struct sigaction kernel_old;

/* The kernel's sigaction: what the kernel has installed, as old. */
static int
real(int sig, const struct sigaction *act, struct sigaction *old)
{
	calls++;
	if (fail)
		return -1;
	if (old)
		*old = kernel_old;
	return 0;
}

static void
program_handler(int sig)
{
}

static void
libpc_handler(int sig)
{
}

static void
setup(void)
{
	unit_preload_reset();
	calls = fail = 0;
	memset(&kernel_old, 0, sizeof(kernel_old));
	kernel_old.sa_handler = libpc_handler;
}

static void
be_parent(void)
{
	pc->pid = getpid();
}

static void
be_child(void)
{
	pc->pid = getpid() + 1;
}

START_TEST(test_vfork_parent_keeps_nothing)
{
	struct sigaction act, old;
	int r = 7;

	for (int k = 0; k < 2; k++) {
		if (k)
			be_parent();
		else
			pc->pid = 0;	/* before start-up */
		ck_assert_uint_eq(pc_vfork_view(PC_HIDE_SAMPLE),
				  PC_HIDE_SAMPLE);
		ck_assert_int_eq(pc_vfork_keep(0, PC_HIDE_SAMPLE, 0), 0);
		memset(&act, 0, sizeof(act));
		ck_assert_int_eq(pc_vfork_sigaction(SIGUSR1, &act, &old, real,
						    0, &r), 0);
		ck_assert_int_eq(r, 7);
		ck_assert_int_eq(calls, 0);
		ck_assert_int_eq(pc_vfork_set(SIGUSR1), 0);
	}
}
END_TEST

START_TEST(test_vfork_child_mask)
{
	be_child();
	/* a call that changes nothing: no record, the view passed on */
	ck_assert_int_eq(pc_vfork_keep(0, 0, 0), 0);
	ck_assert_uint_eq(pc_vfork_view(PC_HIDE_SNAPSHOT), PC_HIDE_SNAPSHOT);
	/* the child blocks the sampling signal: its own view from then on */
	ck_assert_int_eq(pc_vfork_keep(0, PC_HIDE_SAMPLE, 0), 1);
	ck_assert_uint_eq(pc_vfork_view(0), PC_HIDE_SAMPLE);
	ck_assert_int_eq(pc_vfork_keep(PC_HIDE_SAMPLE, 0, 0), 1);
	ck_assert_uint_eq(pc_vfork_view(PC_HIDE_SNAPSHOT), 0);

	/* the parent again (its pid): its own view, the record gone */
	be_parent();
	ck_assert_uint_eq(pc_vfork_view(PC_HIDE_SAMPLE), PC_HIDE_SAMPLE);
	be_child();
	ck_assert_uint_eq(pc_vfork_view(PC_HIDE_SNAPSHOT), PC_HIDE_SNAPSHOT);
}
END_TEST

START_TEST(test_vfork_child_sigaction)
{
	struct sigaction act, old;
	int r = 7;

	pc->owned[SIGUSR1] = 1;
	memset(&pc->prog_action[SIGUSR1], 0, sizeof(pc->prog_action[0]));
	pc->prog_action[SIGUSR1].sa_handler = program_handler;
	memset(&act, 0, sizeof(act));
	act.sa_handler = SIG_IGN;
	be_child();

	/* asked only: the action the program believes is there */
	ck_assert_int_eq(pc_vfork_sigaction(SIGUSR1, NULL, &old, real, 0, &r),
			 1);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(calls, 1);
	ck_assert_ptr_eq(old.sa_handler, program_handler);
	ck_assert_int_eq(pc_vfork_set(SIGUSR1), 0);
	/* set by the child: the kernel's from then on */
	ck_assert_int_eq(pc_vfork_sigaction(SIGUSR1, &act, &old, real, 0, &r),
			 1);
	ck_assert_ptr_eq(old.sa_handler, program_handler);
	ck_assert_int_eq(pc_vfork_set(SIGUSR1), 1);
	ck_assert_int_eq(pc_vfork_sigaction(SIGUSR1, NULL, &old, real, 0, &r),
			 1);
	ck_assert_ptr_eq(old.sa_handler, libpc_handler);
	ck_assert_int_eq(calls, 3);

	/* a signal libpc does not hold: the kernel's as it is */
	ck_assert_int_eq(pc_vfork_sigaction(SIGUSR2, NULL, &old, real, 0, &r),
			 1);
	ck_assert_ptr_eq(old.sa_handler, libpc_handler);

	/* refused, or out of range: made, nothing set */
	fail = 1;
	ck_assert_int_eq(pc_vfork_sigaction(SIGUSR2, &act, NULL, real, 0, &r),
			 1);
	ck_assert_int_eq(r, -1);
	ck_assert_int_eq(pc_vfork_set(SIGUSR2), 0);
	fail = 0;
	ck_assert_int_eq(pc_vfork_sigaction(NSIG, &act, NULL, real, 0, &r), 1);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(pc_vfork_set(NSIG), 0);
	ck_assert_int_eq(pc_vfork_set(0), 0);

	/* the parent (another pid from the child's) sets nothing of it */
	be_parent();
	ck_assert_uint_eq(pc_vfork_view(0), 0);
	ck_assert_int_eq(pc_vfork_set(SIGUSR1), 0);
}
END_TEST

Suite *
vfork_suite(void)
{
	Suite *s = suite_create("vfork");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, NULL);
	tcase_add_test(t, test_vfork_parent_keeps_nothing);
	tcase_add_test(t, test_vfork_child_mask);
	tcase_add_test(t, test_vfork_child_sigaction);
	suite_add_tcase(s, t);
	return s;
}
