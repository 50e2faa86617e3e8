/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The timeline's records (PC_TIMELINE=1): what libpc keeps in the live
 * file (timeline.c, markers.c) and writes beside the profile as
 * PROFILE.timeline, which pcprof reads (tools/inputs/timeline.c). The
 * same build writes and reads it; it includes only <stdint.h>.
 *
 * The file is a run of records, each a struct pc_tl_rec then len bytes:
 *   PC_TL_HEAD   struct pc_tl_head, first
 *   PC_TL_SAMPLE struct pc_tl_entry: a CPU or off-CPU sample
 *   PC_TL_MARK   struct pc_tl_entry: a marker or a counter's value
 *   PC_TL_NAME   uint64_t id, then the name's bytes (no NUL)
 *   PC_TL_STACK  uint64_t id, uint32_t flags, tid, depth, 0, then depth
 *                uint64_t frames as in the stacks file (gmon.h)
 *   PC_TL_LAST   nothing, last: a file without it was cut short
 *   PC_TL_ALLOCS struct pc_tl_allocs: the allocation events' counts
 *                (PC_ALLOC with PC_TIMELINE), before them
 *   PC_TL_ALLOC  struct pc_tl_entry: an allocation event, a sampled
 *                allocation or its free (PC_TL_MALLOC...), its stack a
 *                PC_TL_STACK of id PC_TL_ALLOC_STACK | its arena offset
 * A reader leaves out the tags it does not know: a file of an earlier
 * build has no allocation events, and an earlier pcprof reads a later
 * file's samples and markers.
 */
#ifndef PC_TIMELINE_H
#define PC_TIMELINE_H

#include <stdint.h>

#define PC_TL_MAGIC	"pcprof-timeline1"	/* 16 bytes, no NUL */
#define PC_TL_SUFFIX	".timeline"
#define PC_TL_DEFAULT_MAX	(1u << 18)	/* samples kept: 4 minutes of
						 * one busy thread at 1000 Hz */
#define PC_TL_MARKS	(1u << 16)	/* markers kept, the first ones */
#define PC_TL_NAMES	1024		/* distinct marker names */
#define PC_TL_NAME_LEN	48		/* a name's bytes kept, NUL included */

enum pc_tl_tag {
	PC_TL_HEAD = 1,
	PC_TL_SAMPLE,
	PC_TL_MARK,
	PC_TL_NAME,
	PC_TL_STACK,
	PC_TL_LAST,
	PC_TL_ALLOCS,
	PC_TL_ALLOC
};

/* What an entry is (kind's low byte). */
enum pc_tl_kind {
	PC_TL_CPU = 1,		/* where: stack id; weight: samples; value:
				 * the thread's CPU ns then (0: not read) */
	PC_TL_PC,		/* a CPU sample with no stack: where is its
				 * link-time pc (0: outside the program) */
	PC_TL_OFF,		/* off-CPU: where: stack id; value: ns, an
				 * int64: a wait's time moved from its call
				 * alone to its walked stack is taken off
				 * the first (wall_acct.c) */
	PC_TL_BEGIN,		/* markers: where: name id */
	PC_TL_END,
	PC_TL_INSTANT,
	PC_TL_COUNT,		/* value: the counter's value (int64) */
	/* allocation events (PC_TL_ALLOC records, kept in a ring of their
	 * own): where: bytes; value: the block's address; weight: its
	 * stack's offset in alloc_table.c's arena */
	PC_TL_MALLOC,		/* a sampled allocation */
	PC_TL_FREE,		/* its free */
	PC_TL_UNFREE,		/* a realloc that failed: the block's last
				 * free taken back */
};
/* the id of an allocation stack's PC_TL_STACK record: its arena offset
 * with this bit (the CPU stacks' ids are below it) */
#define PC_TL_ALLOC_STACK	(1ull << 63)
/* kind's flag: a marker at a time the program gave (pcprof_mark_begin_at),
 * CLOCK_MONOTONIC ns in the live file too, never the CPU's ticks */
#define PC_TL_AT_NS	0x100u

struct pc_tl_entry {
	uint64_t t;		/* CLOCK_MONOTONIC ns */
	uint64_t where;
	uint64_t value;
	uint32_t tid;
	uint32_t weight;
	uint32_t kind;
	uint32_t seq;		/* even: whole; odd: being written; 0: empty */
};

/* A marker name, interned by its pointer (markers.c): id is 1 + its
 * slot. */
struct pc_tl_name_slot {
	uint64_t key;		/* the program's pointer to the name */
	uint32_t state;		/* enum pc_slot, atomic */
	uint32_t spare;
	char name[PC_TL_NAME_LEN];
};

struct pc_tl_rec {
	uint32_t tag, len;
};

struct pc_tl_head {
	char magic[16];
	uint32_t pid, hz;
	uint64_t start_ns;	/* CLOCK_MONOTONIC when sampling began */
	uint64_t end_ns;	/* when the file was written */
	uint64_t interval_ns;	/* a CPU sample's period */
	uint64_t max;		/* PC_TIMELINE_MAX */
	uint64_t seen;		/* samples offered to the timeline */
	uint64_t busy;		/* lost to a slot being written */
	uint64_t unbacked;	/* lost while the file grew */
	uint64_t marks;		/* markers offered */
	uint64_t marks_lost;	/* past PC_TL_MARKS, or the name table full */
};

/* The allocation events' counts: offered, and lost (past the ring's
 * bound, PC_TIMELINE_MAX, which keeps the first ones, or to a slot not
 * yet backed); the events kept follow. */
struct pc_tl_allocs {
	uint64_t seen, lost, max;
};

#endif
