/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Choosing and preparing the stack walker of unwind.c, outside any signal
 * handler: libunwind is loaded with dlopen only when PC_UNWIND asks for it,
 * libgcc's unwinder is run once so that its one-time set-up (which takes a
 * lock) never happens in a handler, and each thread notes its stack bounds
 * for the frame-pointer walk and for the handler's measure of its room.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <pthread.h>
#include <stdlib.h>

#include "unwind.h"

int
pc_unwind_stack_of(pthread_t t, uintptr_t *lo, uintptr_t *hi)
{
	pthread_attr_t attr;
	void *base;
	size_t size;
	int r;

	if ((r = pthread_getattr_np(t, &attr)))
		return r;
	if ((r = pthread_attr_getstack(&attr, &base, &size)) == 0) {
		*lo = (uintptr_t)base;
		*hi = (uintptr_t)base + size;
	}
	pthread_attr_destroy(&attr);
	return r;
}

static PC_TLS int bounds_given;	/* by the creator, known or not */

void
pc_unwind_thread_bounds(uintptr_t lo, uintptr_t hi)
{
	pc_stack_lo = lo;
	pc_stack_hi = hi;
	bounds_given = 1;
}

void
pc_unwind_thread_init(void)
{
	uintptr_t lo, hi;

	/* every unwinder's: the handler measures the room it has left on the
	 * thread's stack before it walks (sample.c). A thread the program
	 * starts has them from its creator (threads.c says why). */
	if (pc_stack_hi || bounds_given)
		return;
	if (pc_unwind_stack_of(pthread_self(), &lo, &hi) == 0)
		pc_unwind_thread_bounds(lo, hi);
}

static int
warm_up(struct _Unwind_Context *ctx, void *arg)
{
	(void)ctx;
	(void)arg;
	return URC_NORMAL_STOP;
}

/* glibc 2.35 brought _dl_find_object; before it libgcc's unwinder takes
 * the loader's lock like libunwind does. */
static int
have_dl_find_object(void)
{
	const char *v = gnu_get_libc_version();
	long major = strtol(v, (char **)&v, 10), minor = 0;

	if (*v == '.')
		minor = strtol(v + 1, NULL, 10);
	return major > 2 || (major == 2 && minor >= 35);
}

/* libgcc_s's unwinder by its handle (unwind.h says why), loaded here if
 * the program has not loaded it (as glibc itself does for backtrace and
 * thread cancellation), and kept. 0, or -1 where it is not there. */
static int
gcc_unwinder(void)
{
	void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return -1;
	pc_gcc_backtrace = (int (*)(trace_fn, void *))dlsym(h, "_Unwind_Backtrace");
	pc_gcc_get_ip_info = (uintptr_t (*)(struct _Unwind_Context *, int *))
		dlsym(h, "_Unwind_GetIPInfo");
	pc_gcc_get_region_start = (uintptr_t (*)(struct _Unwind_Context *))
		dlsym(h, "_Unwind_GetRegionStart");
	pc_gcc_get_cfa = (uintptr_t (*)(struct _Unwind_Context *))
		dlsym(h, "_Unwind_GetCFA");
	return pc_gcc_backtrace && pc_gcc_get_ip_info &&
			       pc_gcc_get_region_start ?
		       0 :
		       -1;
}

int
pc_unwind_init(enum pc_unwinder *u)
{
	void *h;

	if (*u == PC_UNWIND_AUTO)
		*u = have_dl_find_object() ? PC_UNWIND_DWARF : PC_UNWIND_FP;
	if (gcc_unwinder() < 0) {
		pc_gcc_backtrace = NULL;
		if (*u == PC_UNWIND_DWARF) {
			pc_say("cannot find libgcc_s.so.1's unwinder; using frame pointers",
			       "", "");
			*u = PC_UNWIND_FP;
		}
	}
	if (*u == PC_UNWIND_LIBUNWIND) {
		h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
		if (h) {
			pc_unw_init2 =
				(int (*)(unw_cursor_t *, unw_context_t *,
					 int))dlsym(h, "_ULx86_64_init_local2");
			pc_unw_step = (int (*)(unw_cursor_t *))dlsym(h, "_ULx86_64_step");
			pc_unw_get_reg = (int (*)(
				unw_cursor_t *, unw_regnum_t,
				unw_word_t *))dlsym(h, "_ULx86_64_get_reg");
			pc_unw_get_proc_info =
				(int (*)(unw_cursor_t *, unw_proc_info_t *))
					dlsym(h, "_ULx86_64_get_proc_info");
		}
		if (!pc_unw_init2 || !pc_unw_step || !pc_unw_get_reg ||
		    !pc_unw_get_proc_info) {
			*u = pc_gcc_backtrace ? PC_UNWIND_DWARF : PC_UNWIND_FP;
			pc_say("PC_UNWIND=libunwind: cannot load libunwind.so.8; using ",
			       *u == PC_UNWIND_DWARF ? "dwarf" :
						       "frame pointers",
			       "");
		}
	}
	/* libgcc sets up its register tables with pthread_once on first use:
	 * do that here, not inside a signal handler */
	if (pc_gcc_backtrace)
		pc_gcc_backtrace(warm_up, NULL);
	pc_unwind_thread_init();
	return 0;
}
