/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for the names of waits (tools/symbols/waits.c, its system
 * call table generated from the kernel's header) and for what a wall
 * profile's records weigh under each clock (stackfile.c's stack_weight).
 */
#include <stdio.h>
#include <string.h>
#include <check.h>

#include "pcprof.h"
#include "symbols/waits.h"
#include "unit.h"

/* x86_64's numbers, fixed by its ABI: the table must agree with them */
START_TEST(test_syscall_table_has_the_abi_numbers)
{
	ck_assert_str_eq(syscall_name(0), "read");
	ck_assert_str_eq(syscall_name(7), "poll");
	ck_assert_str_eq(syscall_name(61), "wait4");
	ck_assert_str_eq(syscall_name(202), "futex");
	ck_assert_str_eq(syscall_name(230), "clock_nanosleep");
	ck_assert_str_eq(syscall_name(232), "epoll_wait");
	ck_assert_ptr_null(syscall_name(4000));
	ck_assert_ptr_null(syscall_name(0xfff));
}
END_TEST

/*
 * The names: a call; a call on a descriptor of each kind; a wait4 with and
 * without its child; a pid on a call that is not a wait for a child (not
 * shown); the runqueue, a fault, a number with no name.
 */
static const struct {
	unsigned call, fd;
	uint32_t pid;
	const char *name;
} names[] = {
	{ 230, GMON_FD_NONE, 0, "[off-cpu: clock_nanosleep]" },
	{ 0, GMON_FD_PIPE, 0, "[off-cpu: read pipe]" },
	{ 0, GMON_FD_FILE, 0, "[off-cpu: read file]" },
	{ 1, GMON_FD_SOCKET, 0, "[off-cpu: write socket]" },
	{ 0, GMON_FD_TTY, 0, "[off-cpu: read tty]" },
	{ 0, GMON_FD_EVENTFD, 0, "[off-cpu: read eventfd]" },
	{ 0, GMON_FD_OTHER, 0, "[off-cpu: read other]" },
	{ 61, GMON_FD_NONE, 4242, "[off-cpu: wait4 pid 4242]" },
	{ 61, GMON_FD_NONE, 0, "[off-cpu: wait4]" },
	{ 247, GMON_FD_NONE, 7, "[off-cpu: waitid pid 7]" },
	{ 202, GMON_FD_NONE, 99, "[off-cpu: futex]" },
	{ GMON_WAIT_RUNQUEUE, GMON_FD_NONE, 0, "[off-cpu: runqueue]" },
	{ GMON_WAIT_NOCALL, GMON_FD_NONE, 0, "[off-cpu: fault]" },
	{ GMON_WAIT_UNSEEN, GMON_FD_NONE, 0, "[off-cpu: unknown]" },
	{ 999, GMON_FD_NONE, 0, "[off-cpu: syscall 999]" },
};

START_TEST(test_wait_names)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char buf[96];
		uint64_t w = GMON_WAIT_WORD(names[i].call, names[i].fd,
					    names[i].pid);

		ck_assert_msg(GMON_IS_WAIT(w), "case %zu", i);
		ck_assert_str_eq(wait_name(w, buf, sizeof(buf)), names[i].name);
		ck_assert(wait_name_is(buf));
	}
	ck_assert(!wait_name_is("main"));
}
END_TEST

/* A short buffer gets a cut, terminated name, never an overrun. */
START_TEST(test_wait_name_cut_short)
{
	char buf[12];

	memset(buf, 'x', sizeof(buf));
	wait_name(GMON_WAIT_WORD(61, 0, 4242), buf, 8);
	ck_assert_uint_eq(strlen(buf), 7);
	ck_assert_int_eq(buf[8], 'x');
}
END_TEST

/* Under wall a CPU record weighs its samples and an off-CPU record its
 * nanoseconds at the CPU rate; cpu leaves the off-CPU out, off the CPU. */
START_TEST(test_stack_weight_by_clock)
{
	uint64_t pcs[1] = { GMON_WAIT_WORD(230, 0, 0) };
	struct gmon_stacks ss = { .rate = 1000, .flags = GMON_STACKS_WALL };
	struct gmon_stack cpu = { 7, 1, 0, 1, pcs };
	struct gmon_stack off = { 2500000, 1, GMON_STACK_OFFCPU, 1, pcs };

	ck_assert_double_eq(stack_weight(&ss, &cpu, PC_CLOCK_WALL), 7);
	ck_assert_double_eq_tol(stack_weight(&ss, &off, PC_CLOCK_WALL), 2.5,
				1e-12);
	ck_assert_double_eq(stack_weight(&ss, &cpu, PC_CLOCK_CPU), 7);
	ck_assert_double_eq(stack_weight(&ss, &off, PC_CLOCK_CPU), 0);
	ck_assert_double_eq(stack_weight(&ss, &cpu, PC_CLOCK_OFF), 0);
	ck_assert_double_eq_tol(stack_weight(&ss, &off, PC_CLOCK_OFF), 2.5,
				1e-12);
}
END_TEST

Suite *
waits_suite(void)
{
	Suite *s = suite_create("waits");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_syscall_table_has_the_abi_numbers);
	tcase_add_test(t, test_wait_names);
	tcase_add_test(t, test_wait_name_cut_short);
	tcase_add_test(t, test_stack_weight_by_clock);
	suite_add_tcase(s, t);
	return s;
}
