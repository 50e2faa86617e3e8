/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Firefox export's writer, in two files: export_firefox.c (the
 * profile, its threads' samples, markers and tables) and
 * export_firefox_allocs.c (their native allocations), which share these
 * tables. Internal to tools/writers/.
 */
#ifndef PC_EXPORT_FIREFOX_H
#define PC_EXPORT_FIREFOX_H

#include <stdint.h>
#include <stdio.h>

#include "model/export.h"
#include "model/timeline.h"

#define CAT_OTHER	0
#define CAT_CPU		1
#define CAT_OFF		2

struct ff_strings {
	const char **v;
	size_t n, cap;
	uint32_t *of_str;	/* export string i: 1 + its index, or 0 */
};

/* One thread's tables, as they are built. */
struct ff_thread {
	uint32_t group, tid;
	struct ff_strings s;
	uint32_t *func_of;	/* export func: 1 + local, or 0 */
	uint32_t *frame_of;	/* export loc: 1 + local, or 0 */
	uint32_t *funcs, *frames;	/* local -> export's */
	size_t nfuncs, nframes, cap_funcs, cap_frames;
	/* the stack table: frame, prefix (-1: root), category, subcategory */
	int64_t *st;		/* 4 a stack */
	size_t nst, cap_st;
	uint32_t *hash;		/* 1 + stack, by (prefix, frame) */
	uint32_t none_frame;	/* 1 + "[no stack recorded]"'s frame, or 0 */
	size_t hash_slots;
};

struct ff {
	const struct export *x;
	const struct timelines *tl;
	uint64_t zero;
	const char **waits;	/* the off-CPU category's subcategories */
	size_t nwaits;
};

/* The stack node of the timeline stack k of g (the root first), its
 * frames in the category of an off-CPU wait (off) or CPU; -1 for none.
 * Its frames, functions and nodes are added to t's tables
 * (export_firefox.c's). */
typedef int64_t (*ff_stack_fn)(struct ff *f, struct ff_thread *t,
			       const struct tl_group *g, uint32_t k, int off);

/* Milliseconds from the profile's zero to t (CLOCK_MONOTONIC ns). */
static inline double
ff_ms(const struct ff *f, uint64_t t)
{
	return t >= f->zero ? (double)(t - f->zero) / 1e6 :
			      -(double)(f->zero - t) / 1e6;
}

/* export_firefox_allocs.c: thread t's "nativeAllocations", with a
 * leading comma, where its process's timeline has allocation events,
 * their stacks from stack. */
void ff_write_allocs(struct ff *f, struct ff_thread *t, ff_stack_fn stack,
		     FILE *out);

#endif
