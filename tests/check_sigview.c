/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/sigview.c, the program's view of libpc's
 * signals' mask, against the thread's real mask (each test runs in a
 * child of its own, sampling on SIGRTMIN+1, snapshots on SIGRTMIN+2).
 * Cases:
 *  - which view bit a signal is; a forwarded signal the program blocked
 *    held back and, for the sampling signal, counted once;
 *  - the sampling signal blocked at start: let through for real, blocked
 *    in the view; the snapshot signal blocked for real, the view as the
 *    program had it;
 *  - a move to another signal: the old one, which the program believed
 *    blocked, blocked for real, the new one let through and kept blocked
 *    in the view where it was blocked for real; the same in a handler's
 *    saved mask; a move to none; a view not blocked moves nothing; a
 *    thread that inherits a view catches up; 64 moves at most;
 *  - a handler left by longjmp: the sampling signal let through, blocked
 *    in the view where the mask held every real-time signal.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <string.h>

#include "../preload/pc.h"
#include "unit.h"

#define A	(SIGRTMIN + 1)
#define B	(SIGRTMIN + 3)
#define C	(SIGRTMIN + 4)
#define SNAP	(SIGRTMIN + 2)

static void
setup(void)
{
	sigset_t none;

	unit_preload_reset();
	unit_config()->snapshot_sig = SNAP;
	pc_sampling_sig = A;
	sigemptyset(&none);
	ck_assert_int_eq(sigprocmask(SIG_SETMASK, &none, NULL), 0);
}

/* Whether sig is blocked for real in this thread. */
static int
blocked(int sig)
{
	sigset_t cur;

	ck_assert_int_eq(sigprocmask(SIG_BLOCK, NULL, &cur), 0);
	return sigismember(&cur, sig);
}

static void
block(int sig, int how)
{
	sigset_t one;

	sigemptyset(&one);
	sigaddset(&one, sig);
	ck_assert_int_eq(sigprocmask(how, &one, NULL), 0);
}

START_TEST(test_sigview_bits_and_deferral)
{
	ck_assert_uint_eq(pc_signals_view_bit(A), PC_HIDE_SAMPLE);
	ck_assert_uint_eq(pc_signals_view_bit(SNAP), PC_HIDE_SNAPSHOT);
	ck_assert_uint_eq(pc_signals_view_bit(SIGUSR1), 0);

	/* not blocked in the view: delivered, nothing deferred */
	ck_assert_int_eq(pc_prog_blocked_from_handler(A), 0);
	ck_assert_int_eq(pc_prog_blocked_from_handler(SNAP), 0);
	ck_assert_uint_eq(pc_signals_view_set(PC_HIDE_SAMPLE), 0);
	ck_assert_int_eq(pc_prog_blocked_from_handler(A), 1);
	ck_assert_int_eq(pc_prog_blocked_from_handler(A), 1);
	ck_assert_int_eq(pc_prog_blocked_from_handler(SNAP), 0);
	ck_assert_uint_eq(pc_signals_view_set(PC_HIDE_SNAPSHOT),
			  PC_HIDE_SAMPLE);
	ck_assert_int_eq(pc_prog_blocked_from_handler(SNAP), 1);
	ck_assert_int_eq(pc_prog_blocked_from_handler(A), 0);
	/* two sampling signals held back; the snapshot one is not counted */
	ck_assert_int_eq(pc_signals_take_deferred(), 2);
	ck_assert_int_eq(pc_signals_take_deferred(), 0);
	ck_assert_uint_eq(pc_signals_prog_blocked(), PC_HIDE_SNAPSHOT);
}
END_TEST

START_TEST(test_sigview_taken_at_start)
{
	/* not blocked: nothing to hide */
	pc_signals_take_sampling();
	ck_assert_uint_eq(pc_signals_prog_blocked(), 0);
	ck_assert(!blocked(A));
	/* blocked through exec: let through, blocked in the view */
	block(A, SIG_BLOCK);
	pc_signals_take_sampling();
	ck_assert(!blocked(A));
	ck_assert_uint_eq(pc_signals_prog_blocked(), PC_HIDE_SAMPLE);

	/* the snapshot signal: blocked for real either way */
	pc_signals_take_snapshot();
	ck_assert(blocked(SNAP));
	ck_assert_uint_eq(pc_signals_prog_blocked(), PC_HIDE_SAMPLE);
	pc_signals_view_set(0);
	pc_signals_take_snapshot();
	ck_assert(blocked(SNAP));
	ck_assert_uint_eq(pc_signals_prog_blocked(), PC_HIDE_SNAPSHOT);
}
END_TEST

START_TEST(test_sigview_moves)
{
	ck_assert_int_eq(pc_signals_moves(), 0);
	/* the program blocked A (in the view only); B is blocked for real */
	pc_signals_view_set(PC_HIDE_SAMPLE);
	block(B, SIG_BLOCK);
	ck_assert_int_eq(pc_signals_note_move(A, B), 0);
	pc_sampling_sig = B;
	pc_signals_sync();
	ck_assert_int_eq(pc_signals_moves(), 1);
	ck_assert(blocked(A));		/* left to the program, as it set it */
	ck_assert(!blocked(B));		/* libpc's now */
	ck_assert_uint_eq(pc_signals_prog_blocked(), PC_HIDE_SAMPLE);
	/* caught up: nothing more */
	ck_assert_int_eq(pc_signals_sync_mask(NULL, A), 0);

	/* in a handler: the interrupted mask, which B then C left */
	{
		sigset_t uc;

		sigemptyset(&uc);
		sigaddset(&uc, C);
		ck_assert_int_eq(pc_signals_note_move(B, C), 0);
		pc_sampling_sig = C;
		ck_assert_int_eq(pc_signals_sync_mask(&uc, B), 1);
		ck_assert_int_eq(sigismember(&uc, B), 1);
		ck_assert_int_eq(sigismember(&uc, C), 0);
		ck_assert_uint_eq(pc_signals_prog_blocked(), PC_HIDE_SAMPLE);
		ck_assert(!blocked(B));	/* the thread's own mask untouched */
	}

	/* sampling stopped (a move to none): C blocked, the view clear */
	ck_assert_int_eq(pc_signals_note_move(C, 0), 0);
	pc_signals_sync();
	ck_assert(blocked(C));
	ck_assert_uint_eq(pc_signals_prog_blocked(), 0);
	ck_assert_int_eq(pc_signals_moves(), 3);
}
END_TEST

START_TEST(test_sigview_moves_unblocked)
{
	/* the program never blocked A: A is not blocked when libpc leaves
	 * it, and B, not blocked, stays so with the view clear */
	ck_assert_int_eq(pc_signals_note_move(A, B), 0);
	pc_sampling_sig = B;
	ck_assert_int_eq(pc_signals_sync_mask(NULL, A), 0);
	ck_assert(!blocked(A));
	ck_assert(!blocked(B));
	ck_assert_uint_eq(pc_signals_prog_blocked(), 0);

	/* a thread started before the move, its view blocked: catches up */
	pc_signals_inherit_block(PC_HIDE_SAMPLE, 0);
	ck_assert_int_eq(pc_signals_moves(), 1);
	ck_assert(blocked(A));
	ck_assert_uint_eq(pc_signals_prog_blocked(), 0);

	/* 64 moves at most */
	for (int k = 1; k < 64; k++) {
		ck_assert(pc_signals_can_move());
		ck_assert_int_eq(pc_signals_note_move(B, B), 0);
	}
	ck_assert(!pc_signals_can_move());
	ck_assert_int_eq(pc_signals_note_move(B, C), -1);
}
END_TEST

START_TEST(test_sigview_leaving_handler)
{
	sigset_t all;

	/* not libpc's signal: nothing done */
	block(A, SIG_BLOCK);
	pc_signals_leaving_handler();
	ck_assert(blocked(A));

	pc->owned[A] = PC_OWN_SAMPLING;
	/* a handler's mask that held A alone: A let through, view clear */
	pc_signals_leaving_handler();
	ck_assert(!blocked(A));
	ck_assert_uint_eq(pc_signals_prog_blocked(), 0);
	/* not blocked: nothing to do */
	pc_signals_leaving_handler();
	ck_assert(!blocked(A));

	/* one that held every real-time signal (sigfillset): the program
	 * believes A blocked */
	sigfillset(&all);
	ck_assert_int_eq(sigprocmask(SIG_SETMASK, &all, NULL), 0);
	pc_signals_leaving_handler();
	ck_assert(!blocked(A));
	ck_assert(blocked(B));
	ck_assert_uint_eq(pc_signals_prog_blocked(), PC_HIDE_SAMPLE);
}
END_TEST

Suite *
sigview_suite(void)
{
	Suite *s = suite_create("sigview");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, NULL);
	tcase_add_test(t, test_sigview_bits_and_deferral);
	tcase_add_test(t, test_sigview_taken_at_start);
	tcase_add_test(t, test_sigview_moves);
	tcase_add_test(t, test_sigview_moves_unblocked);
	tcase_add_test(t, test_sigview_leaving_handler);
	suite_add_tcase(s, t);
	return s;
}
