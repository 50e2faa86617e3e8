/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stack walking inside the sampling signal handler, three ways:
 *  - "dwarf" (default): libgcc's _Unwind_Backtrace, which on glibc >= 2.35
 *    finds unwind tables with the lock-free, async-signal-safe
 *    _dl_find_object, so it cannot deadlock against dlopen or malloc in
 *    another thread, and which knows every function's entry point;
 *  - "fp": frame pointers, bounded by the thread's stack, for programs built
 *    with -fno-omit-frame-pointer (the caller of a frameless leaf is taken
 *    from the top of the stack);
 *  - "libunwind": libunwind, loaded with dlopen only when asked for. It
 *    takes the loader's lock through dl_iterate_phdr, and peers' bug
 *    trackers hold deadlocks from exactly that, so it is not the default.
 * Everything in this file runs in the signal handler and follows the rules
 * of sample.c; unwind_setup.c prepares it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>

#include "unwind.h"
#include "x86call.h"
#include "banned.h"

/* libunwind, when PC_UNWIND=libunwind; set up by unwind_setup.c */
int (*pc_unw_init2)(unw_cursor_t *, unw_context_t *, int) PC_HIDDEN;
int (*pc_unw_step)(unw_cursor_t *) PC_HIDDEN;
int (*pc_unw_get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *) PC_HIDDEN;
int (*pc_unw_get_proc_info)(unw_cursor_t *, unw_proc_info_t *) PC_HIDDEN;

/* libgcc_s's unwinder, when PC_UNWIND=dwarf; set up by unwind_setup.c */
int (*pc_gcc_backtrace)(trace_fn, void *) PC_HIDDEN;
uintptr_t (*pc_gcc_get_ip_info)(struct _Unwind_Context *, int *) PC_HIDDEN;
uintptr_t (*pc_gcc_get_region_start)(struct _Unwind_Context *) PC_HIDDEN;
uintptr_t (*pc_gcc_get_cfa)(struct _Unwind_Context *) PC_HIDDEN;

/* the thread's stack, for the frame-pointer walk; set by unwind_setup.c */
PC_TLS uintptr_t pc_stack_lo PC_HIDDEN;
PC_TLS uintptr_t pc_stack_hi PC_HIDDEN;

/* ------------------------------------------------------------ dwarf */

struct dwarf_walk {
	uintptr_t ip;		/* the interrupted PC, from the ucontext */
	int started;		/* reached the interrupted frame */
	int n, max;
	struct pc_frame *f;
};

static int
dwarf_frame_from_handler(struct _Unwind_Context *ctx, void *arg)
{
	struct dwarf_walk *w = arg;
	int before = 0;
	uintptr_t ip = pc_gcc_get_ip_info(ctx, &before);

	/* the first frames are the handler's own and the signal trampoline */
	if (!w->started) {
		if (ip != w->ip)
			return w->n++ > 64 ? URC_NORMAL_STOP : URC_NO_REASON;
		w->started = 1;
		w->n = 0;
	}
	if (w->n >= w->max || !ip)
		return URC_NORMAL_STOP;
	w->f[w->n].site = ip;
	w->f[w->n].entry = pc_gcc_get_region_start(ctx);
	w->n++;
	return URC_NO_REASON;
}

static int
walk_dwarf_from_handler(uintptr_t ip, struct pc_frame *f, int max)
{
	struct dwarf_walk w = { ip, 0, 0, max, f };

	if (!pc_gcc_backtrace)	/* set-up chose another walker; never here */
		return 0;
	pc_gcc_backtrace(dwarf_frame_from_handler, &w);
	return w.started ? w.n : 0;
}

/* ------------------------------------------------------------ fp */

/* A return address is in the program's text right after a call (any form
 * x86call.h decodes). Reading the text is safe: it is mapped for as long
 * as the program runs (unlike a shared object's, which a dlclose in
 * another thread may unmap at any moment). */
static int
after_call(uintptr_t ra)
{
	uintptr_t target;

	return pc_main_addr(ra - PC_CALL_MAX_LEN) &&
	       pc_call_before(ra, PC_CALL_MAX_LEN, &target) != PC_CALL_NONE;
}

static int
walk_fp_from_handler(const ucontext_t *uc, uintptr_t ip, struct pc_frame *f,
		     int max)
{
#if defined(__x86_64__)
	uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#else
	uintptr_t fp = 0, sp = 0;
#endif
	int n = 0;

	f[n].site = ip;
	f[n++].entry = 0;
	if (!pc_stack_hi)
		return n;
	/* a frameless leaf (or one in its prologue) has not pushed the frame
	 * pointer yet: its return address is on top of the stack, and the
	 * frame-pointer chain would skip its caller */
	if (sp >= pc_stack_lo && sp + 8 <= pc_stack_hi && !(sp & 7)) {
		uintptr_t top = *(const uintptr_t *)sp;
		uintptr_t chain = fp >= pc_stack_lo && fp + 16 <= pc_stack_hi &&
						  !(fp & 7) ?
					  ((const uintptr_t *)fp)[1] :
					  0;

		if (top != chain && after_call(top) && n < max) {
			f[n].site = top;
			f[n++].entry = 0;
		}
	}
	while (n < max && fp >= pc_stack_lo && fp + 16 <= pc_stack_hi &&
	       !(fp & 7)) {
		const uintptr_t *frame = (const uintptr_t *)fp;
		uintptr_t next = frame[0], ra = frame[1];

		if (!ra)
			break;
		f[n].site = ra;
		f[n++].entry = 0;
		if (next <= fp)
			break;		/* the chain must climb the stack */
		fp = next;
	}
	return n;
}

/* ------------------------------------------------------------ libunwind */

static int
walk_libunwind_from_handler(ucontext_t *uc, struct pc_frame *f, int max)
{
	unw_cursor_t cur;
	int n = 0;

	if (pc_unw_init2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return 0;
	do {
		unw_word_t ip;
		unw_proc_info_t pi;

		if (pc_unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		f[n].site = ip;
		f[n].entry =
			pc_unw_get_proc_info(&cur, &pi) == 0 ? pi.start_ip : 0;
		n++;
	} while (n < max && pc_unw_step(&cur) > 0);
	return n;
}

/* ------------------------------------------------------------ interface */

int
pc_unwind_from_handler(ucontext_t *uc, uintptr_t ip, struct pc_frame *f,
		       int max)
{
	switch (pc_cfg->unwinder) {
	case PC_UNWIND_AUTO:
	case PC_UNWIND_DWARF:
		return walk_dwarf_from_handler(ip, f, max);
	case PC_UNWIND_FP:
		return walk_fp_from_handler(uc, ip, f, max);
	case PC_UNWIND_LIBUNWIND:
		return walk_libunwind_from_handler(uc, f, max);
	}
	return 0;
}

int
pc_unwind_here(uintptr_t ra, struct pc_frame *f, int max)
{
	char here;

	/* the dwarf walker's contexts take some 2 KiB: a thread whose stack
	 * has less than 16 KiB left below this frame is not walked */
	if (!pc_gcc_backtrace || !pc_stack_lo ||
	    (uintptr_t)&here < pc_stack_lo + 16384)
		return 0;
	return walk_dwarf_from_handler(ra, f, max);
}
