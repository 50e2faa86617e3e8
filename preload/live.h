/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The live file's header (live.c): what pc_recover needs to finish a
 * profile of a process that ended without writing it. The same libpc
 * writes and reads it: hdr_size tells one build's header from another's.
 */
#ifndef PC_LIVE_H
#define PC_LIVE_H

#include "pc.h"
#include "objects.h"

#define PC_LIVE_MAGIC	"pcprof-live 1\n"	/* 16 bytes with its NULs */

enum { PC_LIVE_RUNNING = 1, PC_LIVE_DONE = 2 };

/* Where a module's tables are, for pc_recover. */
struct pc_live_tables {
	void *arcs;			/* struct pc_arc[arcs_slots] */
	size_t arcs_slots;
	void *stacks_arena;		/* uint64_t[stacks_words] */
	size_t stacks_words;
	void *stacks_index;		/* uint32_t[stacks_slots] */
	size_t stacks_slots;
	void *stacks_names;		/* the thread names' table */
	size_t stacks_names_len;
};

struct pc_live {
	char magic[16];
	uint32_t hdr_size;		/* sizeof(struct pc_live) */
	uint32_t state;			/* PC_LIVE_*, atomic */
	int32_t pid;
	uint32_t spare;
	uint64_t base;			/* the mapping's address in the process */
	uint64_t size;			/* bytes of the file and the mapping */
	uint64_t used;			/* bytes handed out, atomic */
	uint32_t nmeta;			/* regions of the inventory, which a */
	uint32_t spare2;		/* fork child keeps: */
	uint64_t meta_off[16], meta_len[16];
	struct pc_config config;	/* a copy, once sealed */
	struct pc_state st;		/* pc points here */
	struct pc_stats stats;		/* pc_stats points here */
	struct pc_objects objs;		/* pc_objs points here */
	struct pc_live_tables tables;
};

/* live.c: where the modules record their tables. Not AS-safe. */
struct pc_live_tables *pc_live_tables(void) PC_HIDDEN;

/* arcs.c, stacks.c: take the tables a live file records (pc_recover);
 * 0, or -EINVAL for a table that cannot be theirs. Not AS-safe. */
int pc_arcs_recover(const struct pc_live_tables *t) PC_HIDDEN;
int pc_stacks_recover(const struct pc_live_tables *t) PC_HIDDEN;
/* start.c: the configuration a live file records, for pc_recover.
 * AS-safe (a copy). */
void pc_config_recover(const struct pc_config *c) PC_HIDDEN;

/* recover.c: finish the live file at path into the profile beside it;
 * 0 when written (the file is removed), 1 when it was written already
 * (removed too), -EBUSY while its process runs, -EINVAL for a file that is
 * not a live file, -EPROTO for another libpc's or a cut one, -EBADMSG for a
 * damaged one, or another -errno. Exported for pcprof. Not AS-safe. */
int pc_recover(const char *path) __attribute__((visibility("default")));

#endif
