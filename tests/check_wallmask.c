/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/wall_mask.c: the wall sampler's thread's
 * sigprocmask answered from the mask the kernel holds for it while it
 * walks. The oracle is the kernel's own mask (rt_sigprocmask, asked
 * directly) and the calls that reach it (a counting stand-in for the
 * next sigprocmask): after every call answered, the old mask given is the
 * kernel's, and the kernel is asked to change only what would change.
 *
 * Edge cases: not walking, or another thread than the walker: not
 * answered; a set that changes nothing: no call; block, unblock and set,
 * with SIGKILL, SIGSTOP and glibc's two signals never in the mask asked
 * for; a query only (no set); a `how` the kernel refuses and a failed
 * change: the kernel's answer, the mask kept as it was.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../preload/pc.h"
#include "../preload/wall.h"
#include "unit.h"

static int calls, fail;

/* the next definition: counted, and failing when fail is set */
static int
real(int how, const sigset_t *set, sigset_t *old)
{
	calls++;
	if (fail) {
		errno = EPERM;
		return -1;
	}
	return pthread_sigmask(how, set, old) ? -1 : 0;
}

/* The kernel's mask for this thread. */
static void
kernel_mask(sigset_t *m)
{
	sigemptyset(m);
	ck_assert_int_eq(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, m,
				 (size_t)(_NSIG / 8)),
			 0);
}

/* The walker's answer to a query is the kernel's mask, bit for bit. */
static void
assert_answers_kernel(void)
{
	sigset_t old, k;
	int r = -1, before = calls;

	memset(&old, 0xa5, sizeof(old));
	ck_assert_int_eq(pc_wall_walker_mask(real, SIG_BLOCK, NULL, &old, &r),
			 1);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(calls, before);
	kernel_mask(&k);
	for (int s = 1; s < 65; s++)
		ck_assert_msg(sigismember(&old, s) == sigismember(&k, s),
			      "signal %d: answered %d, the kernel's %d", s,
			      sigismember(&old, s), sigismember(&k, s));
}

static void
start_walking(const int *sigs, int n)
{
	sigset_t m;

	sigemptyset(&m);
	for (int i = 0; i < n; i++)
		sigaddset(&m, sigs[i]);
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &m, NULL), 0);
	calls = fail = 0;
	pc_wall_walking(1);
}

START_TEST(test_wallmask_answers_from_the_kernels_mask)
{
	static const int blocked[] = { SIGUSR1, SIGPROF };
	sigset_t s, old, k;
	int r;

	start_walking(blocked, 2);
	assert_answers_kernel();
	/* blocking what is blocked: no call */
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	ck_assert_int_eq(pc_wall_walker_mask(real, SIG_BLOCK, &s, &old, &r), 1);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(calls, 0);
	ck_assert_int_eq(sigismember(&old, SIGUSR1), 1);
	ck_assert_int_eq(sigismember(&old, SIGPROF), 1);
	/* unblocking it: one call, and the kernel unblocked it */
	ck_assert_int_eq(pc_wall_walker_mask(real, SIG_UNBLOCK, &s, NULL, &r),
			 1);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(calls, 1);
	kernel_mask(&k);
	ck_assert_int_eq(sigismember(&k, SIGUSR1), 0);
	ck_assert_int_eq(sigismember(&k, SIGPROF), 1);
	assert_answers_kernel();
	/* and blocked again, with another */
	sigaddset(&s, SIGTERM);
	ck_assert_int_eq(pc_wall_walker_mask(real, SIG_BLOCK, &s, &old, &r), 1);
	ck_assert_int_eq(calls, 2);
	ck_assert_int_eq(sigismember(&old, SIGUSR1), 0);
	kernel_mask(&k);
	ck_assert(sigismember(&k, SIGUSR1) == 1 &&
		  sigismember(&k, SIGTERM) == 1 &&
		  sigismember(&k, SIGPROF) == 1);
	assert_answers_kernel();
	/* set to exactly what it is: no call */
	ck_assert_int_eq(pc_wall_walker_mask(real, SIG_SETMASK, &k, NULL, &r),
			 1);
	ck_assert_int_eq(calls, 2);
	/* set to a real-time signal alone */
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN + 3);
	ck_assert_int_eq(pc_wall_walker_mask(real, SIG_SETMASK, &s, NULL, &r),
			 1);
	ck_assert_int_eq(calls, 3);
	kernel_mask(&k);
	ck_assert(sigismember(&k, SIGRTMIN + 3) == 1 &&
		  sigismember(&k, SIGUSR1) == 0);
	assert_answers_kernel();
	/* a change in the mask's upper half alone (the kernel's is 64 bits) */
	sigemptyset(&s);
	sigaddset(&s, SIGRTMAX);
	ck_assert_int_eq(pc_wall_walker_mask(real, SIG_BLOCK, &s, NULL, &r), 1);
	ck_assert_int_eq(calls, 4);
	kernel_mask(&k);
	ck_assert_int_eq(sigismember(&k, SIGRTMAX), 1);
	assert_answers_kernel();
}
END_TEST

/* Every signal asked for: what the kernel and glibc keep stays out, and
 * asking again changes nothing. */
START_TEST(test_wallmask_full_set_leaves_out_the_unblockable)
{
	sigset_t s, k;
	int r;

	start_walking(NULL, 0);
	sigfillset(&s);
	ck_assert_int_eq(pc_wall_walker_mask(real, SIG_BLOCK, &s, NULL, &r), 1);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(calls, 1);
	kernel_mask(&k);
	ck_assert_int_eq(sigismember(&k, SIGTERM), 1);
	ck_assert_int_eq(sigismember(&k, SIGRTMAX), 1);
	ck_assert_int_eq(sigismember(&k, SIGRTMIN - 2), 0);
	ck_assert_int_eq(sigismember(&k, SIGRTMIN - 1), 0);
	assert_answers_kernel();
	ck_assert_int_eq(pc_wall_walker_mask(real, SIG_SETMASK, &s, NULL, &r),
			 1);
	ck_assert_int_eq(calls, 1);
	assert_answers_kernel();
}
END_TEST

START_TEST(test_wallmask_failures_are_the_kernels)
{
	static const int blocked[] = { SIGUSR2 };
	sigset_t s, k;
	int r = 0;

	start_walking(blocked, 1);
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	/* a how the kernel refuses: its answer */
	ck_assert_int_eq(pc_wall_walker_mask(real, 99, &s, NULL, &r), 1);
	ck_assert_int_eq(r, -1);
	ck_assert_int_eq(calls, 1);
	/* a change refused: the mask answered stays the kernel's */
	fail = 1;
	ck_assert_int_eq(pc_wall_walker_mask(real, SIG_BLOCK, &s, NULL, &r), 1);
	ck_assert_int_eq(r, -1);
	ck_assert_int_eq(calls, 2);
	fail = 0;
	kernel_mask(&k);
	ck_assert_int_eq(sigismember(&k, SIGUSR1), 0);
	assert_answers_kernel();
}
END_TEST

static void *
other_thread(void *arg)
{
	sigset_t s;
	int r = 0;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	return (void *)(intptr_t)pc_wall_walker_mask(real, SIG_BLOCK, &s,
						     NULL, &r);
}

START_TEST(test_wallmask_answers_the_walker_only_while_it_walks)
{
	sigset_t s;
	pthread_t t;
	void *answered;
	int r = 0;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	calls = 0;
	ck_assert_int_eq(pc_wall_walker_mask(real, SIG_BLOCK, &s, NULL, &r), 0);
	start_walking(NULL, 0);
	ck_assert_int_eq(pthread_create(&t, NULL, other_thread, NULL), 0);
	ck_assert_int_eq(pthread_join(t, &answered), 0);
	ck_assert_ptr_null(answered);
	pc_wall_walking(0);
	ck_assert_int_eq(pc_wall_walker_mask(real, SIG_BLOCK, &s, NULL, &r), 0);
	ck_assert_int_eq(calls, 0);
}
END_TEST

Suite *
wallmask_suite(void)
{
	Suite *s = suite_create("wallmask");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_wallmask_answers_from_the_kernels_mask);
	tcase_add_test(t, test_wallmask_full_set_leaves_out_the_unblockable);
	tcase_add_test(t, test_wallmask_failures_are_the_kernels);
	tcase_add_test(t, test_wallmask_answers_the_walker_only_while_it_walks);
	suite_add_tcase(s, t);
	return s;
}
