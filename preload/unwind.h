/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the stack walkers (unwind.c, in the signal handler) share with their
 * set-up (unwind_setup.c): libgcc's and libunwind's entry points and the
 * thread's stack bounds.
 */
#ifndef PC_UNWIND_H
#define PC_UNWIND_H

#include <stdint.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "pc.h"

/* libgcc's unwinder, declared here rather than through <unwind.h>, which
 * libunwind-dev replaces with its own */
struct _Unwind_Context;
typedef int (*trace_fn)(struct _Unwind_Context *, void *);
#define URC_NO_REASON	0
#define URC_NORMAL_STOP	4

/*
 * libgcc_s's own entry points, looked up in libgcc_s.so.1 at start-up
 * (unwind_setup.c), never by name through the global scope: a program
 * that links libunwind (perf does) puts libunwind's _Unwind_Backtrace
 * there first, and that one takes a mutex, so a sample that lands while
 * the program unwinds would wait for ever on its own thread's lock.
 */
extern int (*pc_gcc_backtrace)(trace_fn, void *) PC_HIDDEN;
extern uintptr_t (*pc_gcc_get_ip_info)(struct _Unwind_Context *,
				       int *) PC_HIDDEN;
extern uintptr_t (*pc_gcc_get_region_start)(struct _Unwind_Context *) PC_HIDDEN;
/* _Unwind_GetCFA, for alloc_walk.c; NULL where libgcc has none */
extern uintptr_t (*pc_gcc_get_cfa)(struct _Unwind_Context *) PC_HIDDEN;

extern int (*pc_unw_init2)(unw_cursor_t *, unw_context_t *, int) PC_HIDDEN;
extern int (*pc_unw_step)(unw_cursor_t *) PC_HIDDEN;
extern int (*pc_unw_get_reg)(unw_cursor_t *, unw_regnum_t,
			     unw_word_t *) PC_HIDDEN;
extern int (*pc_unw_get_proc_info)(unw_cursor_t *, unw_proc_info_t *) PC_HIDDEN;
extern PC_TLS uintptr_t pc_stack_lo PC_HIDDEN;
extern PC_TLS uintptr_t pc_stack_hi PC_HIDDEN;

#endif
