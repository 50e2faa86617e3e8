/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The timeline of an export (tools/inputs/timeline.c): for each process
 * whose profile has a PROFILE.timeline beside it (PC_TIMELINE=1), its
 * samples with their times and threads, its allocation events (PC_ALLOC
 * too), each stack as the export's
 * locations, and the markers, from libpc's marker API and from samply's
 * marker files (marker-PID.txt beside the profile, each line
 * "START_NS END_NS NAME" on CLOCK_MONOTONIC). Times are CLOCK_MONOTONIC
 * nanoseconds; writers subtract timelines_zero().
 */
#ifndef PC_TIMELINE_MODEL_H
#define PC_TIMELINE_MODEL_H

#include "base/base.h"
#include <stddef.h>
#include <stdint.h>

#include "../../preload/timeline.h"

struct export;
struct gmon_stack;

struct tl_sample {
	uint64_t t;
	uint32_t tid;
	uint32_t stack;		/* into stacks; UINT32_MAX: none recorded */
	double weight;		/* samples (off-CPU time at the CPU rate) */
	uint64_t cpu_delta;	/* the thread's CPU ns since its last kept
				 * sample (CPU samples only) */
	int off;
	uint64_t pc;		/* a CPU sample with no stack: its pc, as a
				 * stack's frames are (0: not known) */
};

/* An allocation event (PC_ALLOC with PC_TIMELINE): a sampled allocation
 * (bytes > 0) or the free of one (bytes < 0, the same address). */
struct tl_alloc {
	uint64_t t;
	uint64_t addr;
	int64_t bytes;
	uint32_t tid;
	uint32_t stack;		/* into stacks; UINT32_MAX: none recorded */
};

struct tl_stack {		/* the export's locations, leaf first */
	size_t first;		/* into pool */
	uint32_t depth;
};

enum { TL_INTERVAL, TL_INSTANT, TL_COUNTER };

struct tl_marker {
	uint64_t start, end;	/* end == start: an instant */
	uint32_t tid;		/* 0: the process's (a marker file's) */
	char *name;
	int kind;		/* TL_* */
	int64_t value;		/* TL_COUNTER */
	int from_file;		/* samply's marker file */
};

struct tl_group {
	uint32_t group;		/* the export's group (process) */
	struct pc_tl_head head;
	struct tl_sample *samples;	/* sorted by time */
	size_t nsamples;
	struct tl_stack *stacks;
	size_t nstacks;
	uint32_t *pool;
	size_t npool;
	struct tl_marker *markers;	/* sorted by start */
	size_t nmarkers;
	struct tl_alloc *allocs;	/* sorted by time */
	size_t nallocs;
	int has_allocs;		/* the run recorded them (PC_TL_ALLOCS) */
	struct pc_tl_allocs alloc_head;
	uint64_t first_t, last_t;	/* of its samples and markers */
	double cpu_samples;	/* weight of its CPU samples */
};

struct timelines {
	struct tl_group *v;
	size_t n;
};

/* The stack k of the export's current input file `file` as its locations
 * (room for k->depth + 1), leaf first; how many (export.c). */
typedef uint32_t (*tl_locs_fn)(void *arg, int file, const struct gmon_stack *k,
			       uint32_t *locs);

/* Add the timeline beside the profile path (file `file` of the input
 * that export_add reads now) to x's, as group g; nothing where there is
 * none. 0, or -1 after one line on a damaged one. */
PC_CHECKED int timelines_add(struct export *x, const char *path, int file,
			     uint32_t g, tl_locs_fn locs, void *arg);
/* The earliest time of all; the last. */
uint64_t timelines_zero(const struct timelines *t);
uint64_t timelines_end(const struct timelines *t);
void timelines_release(struct timelines *t);

#endif
