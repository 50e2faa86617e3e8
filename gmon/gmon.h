/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gmon.out format as GNU gprof reads it: constants, records, and the
 * writer (used by libpc.so, async-signal-safe) and reader (used by pcprof).
 * Every function returns 0 or a negative errno and never prints.
 */
#ifndef PC_GMON_H
#define PC_GMON_H

#include <stddef.h>
#include <stdint.h>

#define GMON_MAGIC		"gmon"
#define GMON_VERSION		1
#define GMON_HEADER_SIZE	20	/* magic, version, 12 spare bytes */
#define GMON_SPARE_SIZE		12

#define GMON_TAG_TIME_HIST	0
#define GMON_TAG_CG_ARC		1
#define GMON_TAG_BB_COUNT	2	/* basic-block counts: never
					   written; gmon/read.c skips them */

/* Histogram record after the tag: low, high, size, rate, dimen, abbrev. */
#define GMON_HIST_HDR_SIZE	(8 + 8 + 4 + 4 + 15 + 1)
#define GMON_ARC_SIZE		(8 + 8 + 4)
#define GMON_DIMEN_SIZE		15
#define GMON_COUNT_MAX		65535u	/* a histogram count is 16 bits */

/*
 * libpc marks its files in the spare header bytes, which gprof ignores:
 * "pc", a format byte, the log2 of the bin size, then the first 8 bytes of
 * the executable's GNU build-id (zeros when it has none).
 */
#define GMON_PC_MARK0		'p'
#define GMON_PC_MARK1		'c'
#define GMON_PC_FORMAT		1

/*
 * A libpc file of the executable alone (PC_SCOPE=main) also says how many
 * samples fell outside the executable's text (shared libraries, the vDSO,
 * JIT code), so that a report can account for all the time sampled: as
 * call-graph arcs from address 0 to address 1, whose counts add up. No
 * ELF file has a function at either address, and gprof leaves arcs it
 * cannot place out of both its flat profile and its call graph.
 */
#define GMON_OUTSIDE_FROM	0
#define GMON_OUTSIDE_SELF	1
#define GMON_BUILDID_OFF	4
#define GMON_BUILDID_SIZE	8

/* ---------------------------------------------------------------- writer */

/*
 * A buffered sink over a file descriptor. No allocation, no stdio, no locks:
 * every writer function is async-signal-safe. The first error sticks in
 * ->error and later calls do nothing.
 */
struct gmon_sink {
	int fd;
	int error;		/* 0 or a negative errno */
	uint64_t bytes;		/* written so far, flushed or not */
	size_t len;
	unsigned char buf[8192];
};

/* Start a sink on fd. AS-safe. */
void gmon_sink_init(struct gmon_sink *s, int fd);

/* Write the file header; spare may be NULL (zeros). AS-safe. */
int gmon_sink_header(struct gmon_sink *s, const uint8_t spare[GMON_SPARE_SIZE]);

/*
 * Write one histogram record covering [low, high) with nbins 16-bit counts,
 * given as 32-bit values already reduced to at most GMON_COUNT_MAX. AS-safe.
 */
int gmon_sink_hist(struct gmon_sink *s, uint64_t low, uint64_t high,
		   uint32_t rate, const uint16_t *counts, uint32_t nbins);

/* Write one call-graph arc record. AS-safe. */
int gmon_sink_arc(struct gmon_sink *s, uint64_t from_pc, uint64_t self_pc,
		  uint32_t count);

/* Write n raw bytes (libpc's text manifest). AS-safe. */
int gmon_sink_bytes(struct gmon_sink *s, const void *p, size_t n);

/* Write out what is buffered; returns s->error. AS-safe. */
int gmon_sink_flush(struct gmon_sink *s);

/*
 * Write histogram records for the nonzero parts of counts[0..n), where
 * counts[i] covers [low + i*bin, low + (i+1)*bin). bin is 2 or 4 (or any power
 * of two) and low a multiple of it. Runs of zero bins longer than a record
 * header are left out; counts above 65535 are carried in extra records for
 * the same range, which gprof sums. Ranges written by one call never overlap
 * and never leave [low, low + n*bin). Returns the number of records written
 * or a negative errno. AS-safe.
 */
long gmon_sink_counts(struct gmon_sink *s, uint64_t low, unsigned bin,
		      uint32_t rate, const uint32_t *counts, size_t n);

/* The same for 64-bit counts (pcprof merge's sums). AS-safe. */
long gmon_sink_counts64(struct gmon_sink *s, uint64_t low, unsigned bin,
			uint32_t rate, const uint64_t *counts, size_t n);

/* ---------------------------------------------------------------- stacks */

/*
 * Sampled stacks, deduplicated with counts: libpc writes them beside the
 * gmon.out when asked (PC_STACKS), for flame graphs. gprof never reads it.
 *   header: "pcstacks", u32 version (2), u32 rate, 8 bytes of build-id,
 *           u32 flags (0), u32 pid of the writer (0 in older files)
 *   record: u64 count, u32 depth, u32 flags, u32 tid, u32 0, then depth x
 *           u64 addresses, leaf first, at link-time addresses of the
 *           executable; 0 stands for one or more frames outside it
 *           (shared libraries, vDSO). With PC_SCOPE=all an address is
 *           encoded as the manifest's arc ends are (index << 48 |
 *           link-time address), and a frame in no object at all (JIT
 *           code) is GMON_OBJ_ANON << 48 | its runtime address, for
 *           pcprof to name from the process's perf map or jitdump.
 *           Version 1 records have no tid and its 0 (16 bytes before the
 *           addresses), and are still read.
 * Record flag GMON_STACK_TRUNCATED: the walk stopped at its depth limit,
 * so the outermost callers are missing. Record flag GMON_STACK_THREAD: not
 * a stack but thread tid's name, the last libpc saw: count 0, depth 2,
 * the 16 bytes of the name (NUL-padded) as the two words.
 *
 * Version 3 is a wall-clock profile (PC_CLOCK=wall; header flag
 * GMON_STACKS_WALL): the records above, whose counts are CPU samples as
 * before, and two more kinds, which an older reader would misread and so
 * is kept from by the version:
 *  - GMON_STACK_OFFCPU: time thread tid spent off the CPU, its count in
 *    nanoseconds; its leaf word is a wait (GMON_WAIT below), the rest the
 *    blocked thread's stack as above, from the call's frame outward.
 *    GMON_STACK_CUT with it: the walk stopped at a frame it could not
 *    unwind (its CFA needs a register that a blocked thread's saved pc and
 *    sp do not give), so callers are missing.
 *  - GMON_STACK_WALLINFO: not a stack but the wall sampler's figures, once
 *    per file: count 0, depth GMON_WALLINFO_WORDS, the words as
 *    enum gmon_wallinfo says.
 */
#define GMON_STACKS_MAGIC	"pcstacks"
#define GMON_STACKS_VERSION	2
#define GMON_STACKS_WALL_VERSION 3
#define GMON_STACKS_HEADER_SIZE	32
#define GMON_STACKS_WALL	1u	/* header flag: a wall-clock profile */
#define GMON_STACK_TRUNCATED	1u
#define GMON_STACK_THREAD	2u
#define GMON_STACK_OFFCPU	4u
#define GMON_STACK_WALLINFO	8u
#define GMON_STACK_CUT		16u
#define GMON_STACK_MAX_DEPTH	4096

/*
 * An allocation profile (PC_ALLOC), PROFILE.alloc, is a stacks file of
 * version 2 whose header rate is the sampling rate in bytes and whose
 * records all carry GMON_STACK_ALLOC: one record per stack and kind
 * (GMON_ALLOC_KIND of its flags, enum gmon_alloc_kind), the count the
 * kind's estimate for the allocations made at that stack (scaled as
 * pprof's heap profiles are; exact at rate 1) or its samples. A kind
 * whose count is 0 has no record. The stack's leaf is the allocator's
 * caller.
 */
#define GMON_STACK_ALLOC	64u
#define GMON_ALLOC_KIND_SHIFT	8
#define GMON_ALLOC_KIND(flags)	((flags) >> GMON_ALLOC_KIND_SHIFT & 7u)
enum gmon_alloc_kind {
	GMON_ALLOC_OBJECTS, /* allocations */
	GMON_ALLOC_BYTES,   /* bytes allocated */
	GMON_INUSE_OBJECTS, /* of them, not freed when the file was written */
	GMON_INUSE_BYTES,
	GMON_ALLOC_SAMPLES, /* allocations sampled (the estimates' error) */
	GMON_INUSE_SAMPLES, /* of them, not freed */
	GMON_ALLOC_KINDS
};
#define GMON_ALLOC_SUFFIX	".alloc"
#define GMON_THREAD_NAME_SIZE	16

/*
 * A wait, the leaf word of an off-CPU stack: GMON_OBJ_WAIT << 48, then
 * bits 0-11 the system call's number (x86_64), or GMON_WAIT_RUNQUEUE (a
 * runnable thread waiting for a CPU) or GMON_WAIT_NOCALL (blocked outside
 * any call: a page fault) or GMON_WAIT_UNSEEN (off the CPU where no look
 * saw it wait: read from its counters alone); bits 12-15 what the
 * call's descriptor is (enum gmon_fd_kind, for the calls that take one
 * first); bits 16-47 the
 * process a wait4 or waitid waits for (0: any).
 */
#define GMON_OBJ_WAIT		0xfffdu
#define GMON_WAIT_RUNQUEUE	0xfffu
#define GMON_WAIT_NOCALL	0xffeu
#define GMON_WAIT_UNSEEN	0xffdu
#define GMON_WAIT_CALL(w)	((unsigned)((w) & 0xfff))
#define GMON_WAIT_FD(w)		((unsigned)((w) >> 12 & 0xf))
#define GMON_WAIT_PID(w)	((uint32_t)((w) >> 16))
#define GMON_WAIT_WORD(call, fd, pid) \
	((uint64_t)GMON_OBJ_WAIT << 48 | (uint64_t)(uint32_t)(pid) << 16 | \
	 (uint64_t)((fd)&0xf) << 12 | ((call)&0xfff))
#define GMON_IS_WAIT(w)		((w) >> 48 == GMON_OBJ_WAIT)

enum gmon_fd_kind {
	GMON_FD_NONE, GMON_FD_FILE, GMON_FD_PIPE, GMON_FD_SOCKET, GMON_FD_TTY,
	GMON_FD_EVENTFD, GMON_FD_OTHER, GMON_FD_KINDS
};

/* The words of a GMON_STACK_WALLINFO record. */
enum gmon_wallinfo {
	GMON_WALL_HZ,      /* the rate asked for (PC_WALL_HZ) */
	GMON_WALL_HZ_LOW,  /* the rate a thread was looked at, on average
			    * (under HZ where the budget spaced the looks) */
	GMON_WALL_TICKS,   /* the sampler's rounds */
	GMON_WALL_FULL,    /* off-CPU samples whose walk reached its end */
	GMON_WALL_CUT,     /* ... stopped at a frame it could not unwind */
	GMON_WALL_NONE,    /* ... with no stack at all (only the wait) */
	GMON_WALL_THREADS, /* the most threads seen at once */
	GMON_WALL_DROPPED, /* samples lost: the stacks table was full */
	GMON_WALLINFO_WORDS
};

struct gmon_error;

/* Write the stacks header (flags GMON_STACKS_WALL: version 3). AS-safe. */
int gmon_sink_stacks_header(struct gmon_sink *s, uint32_t rate,
			    const uint8_t build_id[GMON_BUILDID_SIZE],
			    uint32_t pid, uint32_t flags);
/* Write thread tid's name record. AS-safe. */
int gmon_sink_thread(struct gmon_sink *s, uint32_t tid,
		     const char name[GMON_THREAD_NAME_SIZE]);
/* Write one stack record, of thread tid (0: not known). AS-safe. */
int gmon_sink_stack(struct gmon_sink *s, uint64_t count, uint32_t flags,
		    uint32_t tid, const uint64_t *pcs, uint32_t depth);

struct gmon_stack {
	uint64_t count;
	uint32_t depth;
	uint32_t flags;
	uint32_t tid;		/* the thread sampled; 0 where not recorded */
	const uint64_t *pcs;	/* into gmon_stacks->pool */
};

struct gmon_thread {
	uint32_t tid;
	char name[GMON_THREAD_NAME_SIZE + 1];	/* NUL-terminated */
};

struct gmon_stacks {
	uint32_t rate;
	uint32_t flags;		/* header flags: GMON_STACKS_WALL */
	uint64_t wall[GMON_WALLINFO_WORDS];	/* a wall profile's figures */
	uint32_t pid;		/* the process that wrote it; 0 if not said */
	uint8_t build_id[GMON_BUILDID_SIZE];
	struct gmon_stack *v;
	size_t n;
	uint64_t *pool;
	struct gmon_thread *threads;	/* names of the threads, by record */
	size_t nthreads;
};

/*
 * Parse a stacks file held in memory; allocation is bounded by len.
 * Returns 0, -EINVAL (err filled in) or -ENOMEM. Not AS-safe.
 */
int gmon_stacks_parse(const void *buf, size_t len, struct gmon_stacks *st,
		      struct gmon_error *err);
/* The first have bytes of len, as gmon_parse_part (below). */
int gmon_stacks_parse_part(const void *buf, size_t have, size_t len,
			   struct gmon_stacks *st, struct gmon_error *err);
void gmon_stacks_release(struct gmon_stacks *st);

/* ---------------------------------------------------------------- reader */

struct gmon_hist {
	uint64_t low, high;	/* link-time addresses, [low, high) */
	uint32_t nbins;
	uint32_t rate;
	char dimen[GMON_DIMEN_SIZE + 1];
	char abbrev;
	uint64_t *counts;	/* nbins counts, summed over equal records */
};

struct gmon_arc {
	uint64_t from_pc, self_pc;
	uint64_t count;
};

struct gmon_profile {
	uint32_t version;
	uint8_t spare[GMON_SPARE_SIZE];
	struct gmon_hist *hists;	/* sorted by low, disjoint */
	size_t nhists;
	struct gmon_arc *arcs;		/* as read; equal pairs not merged */
	size_t narcs;
	int nbbrecords;			/* tag-2 records seen and skipped */
};

/* Where parsing stopped and why, for a one-line message. */
struct gmon_error {
	uint64_t offset;
	uint64_t need;		/* -EAGAIN: the bytes to have read (_part) */
	char what[96];
};

/*
 * Parse a whole gmon file held in memory. Records of the same range are
 * summed into 64-bit counts; partly overlapping ranges, a bin size or
 * dimension unlike the first record's, bad tags and truncation are errors,
 * as in gprof. Allocation is bounded by len. Returns 0, -EINVAL (bad data,
 * err filled in) or -ENOMEM. Not AS-safe.
 */
int gmon_parse(const void *buf, size_t len, struct gmon_profile *p,
	       struct gmon_error *err);

/*
 * The parsers' _part forms read the first have bytes of a file of len
 * bytes, so that a reader need not hold a file before it knows what the
 * file is: a bad magic, a corrupt header or record, or a record longer
 * than the file is the error that the whole file would give, found in
 * what was read; where those bytes are a valid beginning, -EAGAIN, and
 * err->need (more than have, at most len) is where the record they end
 * in ends: read that far, or further, and parse again. With have = len,
 * the same as the whole-file parser. Allocation is bounded by have.
 */
int gmon_parse_part(const void *buf, size_t have, size_t len,
		    struct gmon_profile *p, struct gmon_error *err);

/*
 * Add the records of q into p (both parsed). Records that overlap are
 * summed over their union (two processes' files may cut the same text
 * differently), disjoint ones added; a different bin size or bins that
 * fall between another record's are -EINVAL, and leave p as it was.
 * Not AS-safe.
 */
int gmon_profile_add(struct gmon_profile *p, const struct gmon_profile *q,
		     struct gmon_error *err);

/* Total of every histogram count. */
uint64_t gmon_profile_samples(const struct gmon_profile *p);

/* Release what gmon_parse allocated; p may be reparsed afterwards. */
void gmon_profile_release(struct gmon_profile *p);

/* Whether arc a of p says samples outside the executable (a libpc file of
 * PC_SCOPE=main, see GMON_OUTSIDE_FROM); and how many of p's arcs do, with
 * their samples summed in *samples. */
int gmon_arc_is_outside(const struct gmon_profile *p, const struct gmon_arc *a);
size_t gmon_profile_outside(const struct gmon_profile *p, uint64_t *samples);

/* True when the header carries libpc's mark; fills build_id (8 bytes). */
int gmon_profile_is_libpc(const struct gmon_profile *p, uint8_t *build_id);
/* The first n bytes of a file, h, as a gmon header: -1 when they are not
 * one (too short, or not the magic); 0 when it is not libpc's; 1 when it
 * is, with the build-id bytes libpc wrote into it in build_id. For telling
 * a profile by its head without reading the whole file. AS-safe. */
int gmon_read_header(const void *h, size_t n,
		     uint8_t build_id[GMON_BUILDID_SIZE]);

/* --------------------------------------------------------------- objects */

/*
 * The manifest libpc writes beside a profile with PC_SCOPE=all (PATH.objects):
 * every shared object of the process, its own gmon file, and the arcs
 * between objects. Text, one record a line; see preload/objfind.c.
 */
#define GMON_OBJECTS_MAGIC	"pcprof-objects 1"
#define GMON_OBJECTS_MAX	4096	/* libpc lists at most 1024 */
#define GMON_OBJECTS_LINE_MAX	32768	/* libpc writes lines under 17 KiB */
#define GMON_OBJ_SHIFT		48	/* arc ends: index << 48 | address */
#define GMON_VERSION_MAX	31	/* the longest libpc version a manifest names */
#define GMON_OBJ_ADDR_MASK	((UINT64_C(1) << GMON_OBJ_SHIFT) - 1)	/* the address */
#define GMON_OBJ_ANON		0xfffeu	/* a stack frame's index: in no object */

/*
 * The names of the files libpc writes beside a profile PROFILE: its
 * manifest, PROFILE.objects, and its stacks, PROFILE.stacks. Each is
 * built here and nowhere else (write.c): into buf, size bytes, 0; or
 * -ENAMETOOLONG where it does not fit, buf then "". AS-safe: libpc
 * builds them while it writes at exit and from fatal-signal handlers.
 */
#define GMON_OBJECTS_SUFFIX	".objects"
#define GMON_STACKS_SUFFIX	".stacks"
int gmon_objects_name(char *buf, size_t size, const char *profile);
int gmon_stacks_name(char *buf, size_t size, const char *profile);

/*
 * An object's own gmon file beside profile PROFILE: PROFILE+OBJECT, where
 * OBJECT is the object's file name (libc.so.6), built here and nowhere
 * else (write.c): into buf, size bytes, 0; or -ENAMETOOLONG, buf then "".
 * AS-safe. Either part may hold a '+' (gmon.out.g++.42+libstdc++.so.6),
 * so a name is read by trying its splits: gmon_object_split gives the
 * length of the PROFILE part before the next '+' of path's last part
 * after its first prev bytes (0: the first), from the left; 0 when there
 * is none. The caller tells which PROFILE is a profile. AS-safe.
 */
#define GMON_OBJECT_SEP		"+"
int gmon_object_name(char *buf, size_t size, const char *profile,
		     const char *object);
size_t gmon_object_split(const char *path, size_t prev);

struct gmon_object {
	int loaded;
	uint64_t samples;
	uint8_t build_id[20];
	size_t build_id_len;
	char *file; /* a name in the manifest's directory, or NULL */
	char *path;		/* the object's path when it ran */
};

/* Samples at a PC in no object (JIT code): pcprof names them from the
 * process's /tmp/perf-PID.map. */
struct gmon_anon {
	uint64_t pc, count;
};

/* how an image ended: killed is a profile pcprof finished from libpc's
 * live file, of a process that ended without writing it */
/* a manifest says its timer's signals ("signals N SAMPLES") where each
 * stood for more samples than this: a rate asked beyond what the timer
 * gives */
#define GMON_SAMPLES_A_SIGNAL	5
enum { GMON_ENDED_NOT_SAID, GMON_ENDED_EXIT, GMON_ENDED_EXEC, GMON_ENDED_KILLED,
       GMON_ENDED_SIGNAL };
/* The manifest's "timer KIND HOW COST": what the threads got (posix,
 * taskclock), why (asked: PC_TIMER named it; measured: chosen by the
 * measured cost of a task-clock sample, COST ns; refused: task-clock was
 * refused, so POSIX) */
enum { GMON_TIMER_NOT_SAID, GMON_TIMER_POSIX, GMON_TIMER_TASKCLOCK };
enum { GMON_TIMER_ASKED = 1, GMON_TIMER_MEASURED, GMON_TIMER_REFUSED };
/* under this cost (ns) of a task-clock sample, PC_TIMER=auto takes it */
#define GMON_TASKCLOCK_CHEAP_NS	5000
/* such a cost as libpc's summary line and pcprof report say it: in
 * tenths of a us, rounded half up (24950 ns is 25.0 us in both) */
#define GMON_US_TENTHS(ns)	(((uint64_t)(ns) + 50) / 100)

struct gmon_objects {
	uint32_t rate;
	uint64_t pid;		/* the process that wrote it; 0 if not said */
	uint64_t threads;	/* threads it sampled; 0 if not said */
	uint64_t no_object;	/* samples in no object */
	uint64_t started; /* CLOCK_REALTIME ns at the image's start; 0 if not
			     said */
	int have_cpu;		/* the cpu line was there: */
	uint64_t cpu_start; /* the process CPU clock (ns) at the image's start, */
	uint64_t cpu_stop;	/* when sampling stopped */
	uint64_t cpu_write;	/* and when the manifest was written */
	int ended;		/* GMON_ENDED_*: how the image ended */
	int end_signal;		/* GMON_ENDED_SIGNAL: the signal it died of */
	uint64_t signals;	/* the timer's signals; 0 if not said */
	uint64_t signal_samples;	/* the samples they stood for */
	int timer; /* GMON_TIMER_*: what the threads got; 0 if not said */
	int timer_how;		/* GMON_TIMER_ASKED, ...: why */
	uint64_t timer_cost; /* a task-clock sample's measured cost, ns; 0: not
				measured */
	char version[GMON_VERSION_MAX +
		     1];        /* the libpc that wrote it; "" if not said */
	struct gmon_object *v;	/* v[i] is object i; v[0] the main program */
	size_t n;
	struct gmon_arc *arcs;	/* between objects, ends encoded */
	size_t narcs;
	struct gmon_anon *anon;	/* part of no_object, by PC */
	size_t nanon;
};

/*
 * Parse a manifest held in memory. Object lines must come in index order
 * from 0; a FILE must be a plain name (no '/', not "." or ".."); arc ends
 * must name listed objects; no line may be longer than
 * GMON_OBJECTS_LINE_MAX. Allocation is bounded by len. Returns 0,
 * -EINVAL (err filled in, offset is the line number) or -ENOMEM.
 */
int gmon_objects_parse(const void *buf, size_t len, struct gmon_objects *o,
		       struct gmon_error *err);
/* The first have bytes of len, as gmon_parse_part; err->need is then
 * have + 1, a line being unfinished. */
int gmon_objects_parse_part(const void *buf, size_t have, size_t len,
			    struct gmon_objects *o, struct gmon_error *err);
void gmon_objects_release(struct gmon_objects *o);

#endif
