/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The live file's header (live.c): what pc_recover needs to finish a
 * profile of a process that ended without writing it. It opens with
 * gmon/live.h's head, whose version tells one layout from another; the
 * same libpc writes and reads the rest: hdr_size tells one build's
 * header from another's.
 */
#ifndef PC_LIVE_H
#define PC_LIVE_H

#include "pc.h"
#include "objects.h"
#include "../gmon/live.h"

#define PC_LIVE_CHUNKS	32		/* mappings of the file, at most */
#define PC_LIVE_SPILL	1024		/* counters waiting for their page */
#define PC_LIVE_STRINGS	(256 * 1024)	/* a region of the objects' paths */
#define PC_LIVE_BLOCK	(64u << 10)	/* chunk 0 is mapped in blocks of this */
#define PC_LIVE_MAX_BLOCKS (1u << 16)	/* of chunk 0 mapped by blocks, at most */

#define PC_LIVE_CAPPED	(-1)		/* full_errno: PC_LIVE_MAX reached */
#define PC_LIVE_UNMAPPED (-2)		/* full_errno: no room to map more */
#define PC_LIVE_LOCKED	(-3)		/* full_errno: mlockall(MCL_FUTURE) on */
#define PC_LIVE_WAIT	(-4)		/* pc_live_map_for: the grower maps it */

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
	void *timeline;			/* timeline.c's state and names */
	size_t timeline_len;
	void *timeline_rings;		/* its samples and markers */
	size_t timeline_rings_len;
	void *alloc_arena; /* PC_ALLOC's stacks: uint64_t[alloc_words] */
	size_t alloc_words;
	void *alloc_index;		/* uint32_t[alloc_slots], or NULL */
	size_t alloc_slots;
	uint64_t alloc_rate;		/* bytes a sample */
};

/* One mapping of the file: bytes [off, off + len) at address va. */
struct pc_live_chunk {
	uint64_t off, va, len;
};

/* A histogram counter whose page was not backed yet when a sample came
 * (livegrow.c): the counter's address in the process, and the weight. */
struct pc_spill {
	uint64_t key;
	uint64_t count;
	uint32_t state;			/* enum pc_slot, atomic */
};

/*
 * A table that starts small and grows (livegrow.c): its first slots are
 * backed, and the grower backs twice as many whenever handlers have
 * taken half of them, up to max. A hash table probes (hash & (slots -
 * 1)); an append-only one takes [used, slots).
 */
struct pc_grow {
	char *base;			/* the table, in the live file */
	size_t unit;			/* bytes of a slot */
	size_t first, max;		/* slots backed at first, at most */
	size_t slots;			/* slots backed now, atomic */
	size_t used;			/* slots taken, atomic */
	size_t *publish; /* where pc_recover reads slots, or NULL */
};

struct pc_live {
	struct gmon_live_head head;	/* hdr_size: sizeof(struct pc_live) */
	uint64_t base; /* the mapping's address in the process */
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
	uint32_t nchunks; /* chunk[0, nchunks) are mapped, atomic */
	uint32_t full;			/* 1: the file stopped growing */
	int32_t full_errno;		/* why: an errno, or PC_LIVE_CAPPED */
	uint32_t on_tmpfs;		/* 1: its pages are memory */
	uint64_t backed; /* bytes the file takes (backed pages) */
	uint64_t cap;			/* PC_LIVE_MAX, or 0 */
	struct pc_live_chunk chunk[PC_LIVE_CHUNKS];
	struct pc_spill *spill;		/* PC_LIVE_SPILL of them */
};

/* livegrow.c: back the pages of [addr, addr + len) in the file (an
 * address outside it is backed already): 0, or -1 when the file cannot
 * grow (then it stops growing). Not AS-safe. */
int pc_live_back(const void *addr, size_t len) PC_HIDDEN;
/* livegrow.c: add w to a histogram counter where its page is backed,
 * else keep it in the spill table for the grower: 1, or 0 when neither
 * could take it (the caller counts it elsewhere). AS-safe. */
int pc_live_add_from_handler(uint32_t *counter, uint32_t w) PC_HIDDEN;
/* livegrow.c: whether addr's page of the file is backed (1 outside the
 * file). AS-safe. */
int pc_live_backed(const void *addr) PC_HIDDEN;
/* livegrow.c: a growable table of the live file at base (first and max
 * slots, powers of two); its first slots backed, all of them where base
 * is not in the file. Not AS-safe. */
void pc_grow_init(struct pc_grow *g, void *base, size_t unit, size_t first,
		  size_t max, size_t *publish) PC_HIDDEN;
/* livegrow.c: a handler took n more slots of g: the grower is woken when
 * half are taken. AS-safe. */
void pc_grow_took_from_handler(struct pc_grow *g, size_t n) PC_HIDDEN;
/* livegrow.c: the slots of g a handler may use now. AS-safe. */
static inline size_t
pc_grow_slots(struct pc_grow *g)
{
	return __atomic_load_n(&g->slots, __ATOMIC_ACQUIRE);
}
/* livegrow.c: the bitmap for the header h mapped at its base, its first
 * keep bytes backed already (start-up), the first mapped bytes of chunk 0
 * mapped (livemap.c maps the rest as it is backed, from the file fd
 * until pc_live_map_fd says otherwise); -EFBIG for a file too long for
 * it. Not AS-safe. */
int pc_live_grow_open(struct pc_live *h, size_t keep, const char *path, int fd,
		      size_t mapped) PC_HIDDEN;
/* livemap.c: chunk 0 of *len bytes from fd, and room bytes more at its
 * end (*len grows by room), its first *mapped bytes mapped and a place
 * kept for the rest, mapped block by block as it is backed; where no
 * place is had, *len bytes mapped whole (*mapped is then *len). Its
 * address, or MAP_FAILED. Not AS-safe. */
void *pc_live_map_first(int fd, size_t *len, size_t room,
			size_t *mapped) PC_HIDDEN;
/* livemap.c: chunk 0 of h's file (at path, fd while it is made), its
 * first mapped bytes mapped (pc_live_grow_open). Not AS-safe. */
void pc_live_map_init(const struct pc_live *h, const char *path, int fd,
		      size_t mapped) PC_HIDDEN;
/* livemap.c: the blocks of chunk 0 under [a, a + len) mapped, before
 * their pages are backed: 0, or why one cannot be, PC_LIVE_UNMAPPED,
 * PC_LIVE_LOCKED or the errno of the file's open (then the file stops
 * growing); PC_LIVE_WAIT where this thread may not open the file (a
 * program's thread among others, force 0): the blocks are asked of the
 * grower. Raw system calls: AS-safe where a round may run in a
 * handler (livegrow.c). */
int pc_live_map_for(const char *a, size_t len, int force) PC_HIDDEN;
/* livemap.c: the blocks pc_live_map_for asked for with PC_LIVE_WAIT,
 * mapped (the grower's round); this thread's descriptor table is its own
 * (the grower's, at its start). Not AS-safe. */
void pc_live_map_wanted(void) PC_HIDDEN;
void pc_live_map_own_table(void) PC_HIDDEN;
/* livemap.c: chunk 0's first mapped bytes from byte *at of it on: their
 * length (0: none left), *at moved to where they start; the whole chunk
 * where it was mapped whole. AS-safe. */
size_t pc_live_mapped_run(uint64_t *at) PC_HIDDEN;
/* livemap.c: every chunk of h mapped again from fd, in place, only where
 * mapped (a fork child's file, the file by its name): 0, or -1 with some
 * still mapped from the file they were. Not AS-safe. */
int pc_live_map_chunks(const struct pc_live *h, int fd) PC_HIDDEN;
/* livemap.c: the file's descriptor while it is made (start-up, a fork
 * child), for mapping chunk 0's blocks; -1 once it has its name. */
void pc_live_map_fd(int fd) PC_HIDDEN;
/* livemap.c: whether the program locks its later mappings
 * (mlockall(MCL_FUTURE)): then chunk 0 maps no more blocks; on -1 only
 * asks. Returns the state now. AS-safe. */
int pc_live_map_locked(int on) PC_HIDDEN;
/* livegrow.c: the futex word handlers set to wake the grower, and one
 * round of its work: back what waits, double what is half taken.
 * Not AS-safe. */
uint32_t *pc_live_grow_word(void) PC_HIDDEN;
/* One round: 0, or -1 while another runs (never two at once: a handler
 * may interrupt a call's round in a process of one thread). */
int pc_live_grow_round(void) PC_HIDDEN;
/* livegrow.c: a fork child's file, backed where the inventory was copied
 * into it, the tables back to their first slots; detached 1: no file,
 * everything is anonymous memory now. Not AS-safe. */
void pc_live_grow_forked(struct pc_live *h, int detached) PC_HIDDEN;
/* livegrow.c: whether the page at file offset off is one a fork child
 * keeps (the header's, the inventory's). AS-safe. */
int pc_live_kept(const struct pc_live *h, uint64_t off) PC_HIDDEN;
/* livegrow.c: the bytes the live file takes (0 without one), and in *why
 * 0 while it grows, else why it stopped: an errno or PC_LIVE_CAPPED.
 * AS-safe. */
uint64_t pc_live_footprint(int *why) PC_HIDDEN;
/* livegrow.c: the bytes of the mapping made at start-up, for the header,
 * the spill, text_bytes of the program's counters, an arc table, stacks
 * and PC_SCOPE=all's objects loaded now. Not AS-safe. */
size_t pc_live_first_len(size_t text_bytes, size_t arcs, size_t stacks_mb,
			 int scope_all) PC_HIDDEN;
/* livegrow.c: the most pages a live file may have. AS-safe. */
size_t pc_live_max_pages(void) PC_HIDDEN;
/* livegrower.c: start the grower thread (start-up, a fork child); stop it
 * for a call that needs a process of one thread (1 when it ran: then
 * start it again after). Not AS-safe. */
void pc_live_grower_start(void) PC_HIDDEN;
int pc_live_grower_pause(void) PC_HIDDEN;
/* livememcg.c: find the memory cgroup's limit and usage files (v2, else
 * v1; start-up, a fork child), and whether len bytes more of tmpfs leave
 * the cgroup an eighth of its limit, 4 MiB at least (1 where no limit is
 * said). Not AS-safe; AS-safe. */
void pc_live_memcg_find(void) PC_HIDDEN;
int pc_live_memcg_room(size_t len) PC_HIDDEN;
/* livegrow.c: whether the grower thread runs the rounds (livegrower.c
 * says); whether a round is asked for that no thread will run. AS-safe. */
void pc_live_grow_threaded(int on) PC_HIDDEN;
int pc_live_grow_wanted(void) PC_HIDDEN;
/* livegrow.c: where no grower thread runs (a process of one thread), the
 * round handlers asked for, from libpc's interposed calls (a flag's look
 * when nothing waits; never in a sandbox). Not AS-safe. */
void pc_live_grow_now(void) PC_HIDDEN;
/* livegrow.c: the same from the sampling handler, with room bytes of
 * stack left: only in a process of one thread (__libc_single_threaded,
 * no grower), with ROUND_STACK of room, while running and never in a
 * sandbox; a try-lock keeps a call's round from being entered again.
 * AS-safe. */
void pc_live_grow_from_handler(size_t room) PC_HIDDEN;
/* livegrow.c: fold the spill into the counters it waits for, backing
 * their pages where it can; what cannot be placed stays in the spill and
 * is counted (pc_stats->live_unplaced). Not AS-safe. */
void pc_live_fold(void) PC_HIDDEN;
/* livegrow.c, for recover.c's copy of a file: fold the spill, each key
 * moved by move_key (NULL: it cannot be): how many were. Not AS-safe. */
size_t pc_live_fold_copy(struct pc_spill *spill,
			 uint32_t *(*move_key)(uint64_t, void *),
			 void *arg) PC_HIDDEN;

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
