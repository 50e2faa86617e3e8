/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/altstack.c, libpc's alternate stack for a
 * thread on a small stack, kept out of the program's sight; the kernel's
 * alternate stack read by system call, the program's through the
 * interposed sigaltstack (linked into this binary). Cases:
 *  - a thread with none gets libpc's (64 KiB), a handler with SA_ONSTACK
 *    runs on it, and the program is shown none;
 *  - a thread with its own keeps it;
 *  - the program disabling the one it believes it has not: libpc's stays;
 *  - the program setting its own: it replaces libpc's, shown as it set it;
 *  - the thread's end: libpc's taken down, the program's left;
 *  - the real sigaltstack (next.c): libc's, not the interposer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../preload/pc.h"
#include "unit.h"

#define OWN_SIZE	(64 * 1024)

static char prog_stack[32 * 1024];

/* The kernel's alternate stack for this thread. */
static stack_t
kernel(void)
{
	stack_t k;

	ck_assert_int_eq((int)syscall(SYS_sigaltstack, NULL, &k), 0);
	return k;
}

/* What the program is shown. */
static stack_t
shown(void)
{
	stack_t s;

	ck_assert_int_eq(sigaltstack(NULL, &s), 0);
	return s;
}

static void
prog_sets_its_own(void)
{
	stack_t ss = { .ss_sp = prog_stack, .ss_size = sizeof(prog_stack) };

	ck_assert_int_eq(sigaltstack(&ss, NULL), 0);
}

/* No alternate stack to begin with (a sanitizer's runtime may have set
 * one for this thread). */
static void
setup(void)
{
	stack_t off = { .ss_flags = SS_DISABLE };

	ck_assert_int_eq((int)syscall(SYS_sigaltstack, &off, NULL), 0);
}

static volatile uintptr_t handler_at;

static void
on_usr1(int sig)
{
	char here;

	handler_at = (uintptr_t)&here;
}

START_TEST(test_altstack_given_and_hidden)
{
	struct sigaction sa;
	stack_t k;

	ck_assert(kernel().ss_flags & SS_DISABLE);
	ck_assert_int_eq(pc_signals_small_stack(), 0);
	k = kernel();
	ck_assert(!(k.ss_flags & SS_DISABLE));
	ck_assert_uint_eq(k.ss_size, OWN_SIZE);
	ck_assert(shown().ss_flags & SS_DISABLE);
	ck_assert_ptr_null(shown().ss_sp);

	/* a handler with SA_ONSTACK runs on it */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	raise(SIGUSR1);
	ck_assert(handler_at >= (uintptr_t)k.ss_sp &&
		  handler_at < (uintptr_t)k.ss_sp + k.ss_size);

	/* the thread's end: taken down */
	pc_signals_small_stack_end();
	ck_assert(kernel().ss_flags & SS_DISABLE);
}
END_TEST

START_TEST(test_altstack_the_programs_kept)
{
	prog_sets_its_own();
	ck_assert_int_eq(pc_signals_small_stack(), 0);
	ck_assert_ptr_eq(kernel().ss_sp, prog_stack);
	ck_assert_ptr_eq(shown().ss_sp, prog_stack);
	pc_signals_small_stack_end();
	ck_assert_ptr_eq(kernel().ss_sp, prog_stack);
}
END_TEST

START_TEST(test_altstack_program_disables)
{
	stack_t off = { .ss_flags = SS_DISABLE };
	void *own;

	ck_assert_int_eq(pc_signals_small_stack(), 0);
	own = kernel().ss_sp;
	/* it believes it has none: disabling it leaves libpc's */
	ck_assert_int_eq(sigaltstack(&off, NULL), 0);
	ck_assert_ptr_eq(kernel().ss_sp, own);
	ck_assert_uint_eq(kernel().ss_size, OWN_SIZE);
	ck_assert(shown().ss_flags & SS_DISABLE);
}
END_TEST

START_TEST(test_altstack_program_replaces)
{
	stack_t old;

	ck_assert_int_eq(pc_signals_small_stack(), 0);
	/* its own replaces libpc's; the old one it is shown is none */
	{
		stack_t ss = { .ss_sp = prog_stack,
			       .ss_size = sizeof(prog_stack) };

		ck_assert_int_eq(sigaltstack(&ss, &old), 0);
	}
	ck_assert(old.ss_flags & SS_DISABLE);
	ck_assert_ptr_null(old.ss_sp);
	ck_assert_ptr_eq(kernel().ss_sp, prog_stack);
	ck_assert_ptr_eq(shown().ss_sp, prog_stack);
	ck_assert_uint_eq(shown().ss_size, sizeof(prog_stack));
	/* the thread's end leaves the program's */
	pc_signals_small_stack_end();
	ck_assert_ptr_eq(kernel().ss_sp, prog_stack);
}
END_TEST

/* next.c: the definition after this binary's, libc's (what the
 * interposer calls), not the interposer itself; none for a name no one
 * defines */
START_TEST(test_altstack_next_is_libcs)
{
	void *libc = dlsym(RTLD_DEFAULT, "sigaltstack");

	ck_assert_ptr_eq(libc, (void *)sigaltstack);	/* ours, first */
	ck_assert_ptr_nonnull(pc_next("sigaltstack"));
	ck_assert_ptr_ne(pc_next("sigaltstack"), libc);
	ck_assert_ptr_null(pc_next("pc_no_such_function"));
}
END_TEST

Suite *
altstack_suite(void)
{
	Suite *s = suite_create("altstack");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, NULL);
	tcase_add_test(t, test_altstack_given_and_hidden);
	tcase_add_test(t, test_altstack_the_programs_kept);
	tcase_add_test(t, test_altstack_program_disables);
	tcase_add_test(t, test_altstack_program_replaces);
	tcase_add_test(t, test_altstack_next_is_libcs);
	suite_add_tcase(s, t);
	return s;
}
