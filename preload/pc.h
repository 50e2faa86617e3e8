/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpc.so's shared state and the functions its files call in each other.
 * Everything here has hidden visibility; preload/libpc.map lists what the
 * library exports.
 */
#ifndef PC_PC_H
#define PC_PC_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <ucontext.h>

#include "../gmon/gmon.h"
#include "settings.h"
#include "profil.h"

#define PC_HIDDEN	__attribute__((visibility("hidden")))
/* the program-facing functions libpc interposes (libpc.map lists them) */
#define PC_EXPORT	__attribute__((visibility("default")))
/* initial-exec: reading libpc's thread-locals must never allocate, not
 * even in a signal handler */
#define PC_TLS		__thread __attribute__((tls_model("initial-exec")))
#define PC_MAX_TEXT	8		/* executable PT_LOADs of the main program */
#define PC_DEFAULT_HZ	1000
#define PC_DEFAULT_WALL_HZ	100	/* wall.c says why */
#define PC_ALLOC_DEFAULT_RATE	(512 * 1024)	/* PC_ALLOC_RATE: bytes between samples, mean */
#define PC_MAX_HZ	1000000
#define PC_SCALE	0x10000		/* 2-byte bins: exact at any alignment */

#define PC_DEFAULT_DEPTH 128		/* frames walked per sample */
#define PC_MAX_DEPTH	256		/* 4 KB of the interrupted stack */
#define PC_DEFAULT_ARCS	65536		/* distinct caller->callee arcs */

/* PC_SCOPE=all: every shared object gets a histogram of its own */
#define PC_MAX_OBJECTS	1024		/* objects one process ever loads */
#define PC_OBJ_TEXT	4		/* executable segments of one object */
#define PC_OBJ_SHIFT	GMON_OBJ_SHIFT	/* arcs: object index above the address */
#define PC_OBJ_MASK	GMON_OBJ_ADDR_MASK
#define PC_MAX_RANGES	(PC_MAX_OBJECTS * PC_OBJ_TEXT)
#define PC_PENDING	65536		/* PCs sampled in not-yet-known objects */
#define PC_OBJ_RAW	0xffffu		/* arcs: a runtime address, not yet placed */

enum pc_timer_kind { PC_TIMER_POSIX, PC_TIMER_TASKCLOCK };

enum pc_unwinder {
	PC_UNWIND_AUTO, PC_UNWIND_DWARF, PC_UNWIND_FP, PC_UNWIND_LIBUNWIND,
};

/* One frame of a sampled stack: the PC (return address above frame 0) and
 * the function's entry point where the unwinder knows it, else 0. */
struct pc_frame {
	uintptr_t site;
	uintptr_t entry;
};

/*
 * A slot of the handler's lock-free tables (arcs, pending PCs): a handler
 * claims an empty one with compare-and-swap, fills it in, and publishes it
 * ready; readers and other claimants use only ready slots, whose key is
 * then fixed. The values are in the live file, so they stay 0, 1, 2.
 */
enum pc_slot {
	PC_SLOT_EMPTY = 0,
	PC_SLOT_CLAIMING = 1,
	PC_SLOT_READY = 2,
};

/* Claim the slot whose state word is *state if it is empty: 1 when the
 * caller now fills it in (then pc_slot_publish), else 0 with the state it
 * saw in *seen (PC_SLOT_READY: compare its key). AS-safe. */
static inline int
pc_slot_claim(uint32_t *state, uint32_t *seen)
{
	uint32_t st = __atomic_load_n(state, __ATOMIC_ACQUIRE);

	if (st == PC_SLOT_EMPTY &&
	    __atomic_compare_exchange_n(state, &st, PC_SLOT_CLAIMING, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 1;
	*seen = st;
	return 0;
}

/* The slot's fields are written: readers may use it. AS-safe. */
static inline void
pc_slot_publish(uint32_t *state)
{
	__atomic_store_n(state, PC_SLOT_READY, __ATOMIC_RELEASE);
}

/* Whether a slot is ready to read. AS-safe. */
static inline int
pc_slot_ready(const uint32_t *state)
{
	return __atomic_load_n(state, __ATOMIC_ACQUIRE) == PC_SLOT_READY;
}

/* The CPU clock of thread tid of this process (glibc's
 * pthread_getcpuclockid makes the same from a pthread_t): a timer on it
 * may be made, and it read, from any thread. AS-safe. */
static inline clockid_t
pc_thread_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 4 | 2);
}

/* One caller->callee arc, at link-time addresses. */
struct pc_arc {
	uint64_t from, self;
	uint64_t count;
	uint32_t state;		/* enum pc_slot, atomic */
};

/* One executable segment of the main program and its counters. */
struct pc_text {
	struct pc_profil prof;		/* runtime offset, counters */
	uintptr_t link_low;		/* prof.offset - load bias */
	size_t map_len;			/* bytes mapped for prof.buf */
};

/*
 * A shared object (PC_SCOPE=all). Index 0 is the main program, whose text
 * is pc.text; objects 1.. are libraries, the vDSO and dlopen'ed code. An
 * entry is never removed: after dlclose its counters stay to be written,
 * and loading the same file again takes the same entry back.
 */
struct pc_object {
	char *path;			/* absolute; "[vdso]" for the vDSO */
	char file[96]; /* output suffix: "libz.so.1", "x.so~2" */
	uintptr_t bias;			/* load bias, while loaded */
	int loaded;
	int vdso;
	int ntext;
	struct pc_text text[PC_OBJ_TEXT];
	uint64_t samples;		/* weighted */
	uint8_t build_id[20];
	int build_id_len;
	int seen;			/* found by the current scan */
	const void *image;		/* the vDSO: its ELF image in memory */
	size_t image_len;
};

/* One executable segment of a loaded object, for the handler's search
 * (objects.h holds the module's state). */
struct pc_range {
	uintptr_t lo, hi;		/* runtime [lo, hi) */
	uintptr_t bias;
	uint32_t obj, seg;
};

/* A PC in no known object, kept until a scan may place it. */
struct pc_pending {
	uintptr_t pc;
	uint64_t count;
	uint32_t state;			/* enum pc_slot, atomic */
};

enum { PC_END_RUNNING, PC_END_EXIT, PC_END_EXEC, PC_END_KILLED, PC_END_SIGNAL };

struct pc_state {
	/* read by the signal handler */
	int phase;			/* enum pc_phase (atomic) */
	int ntext;
	struct pc_text text[PC_MAX_TEXT];

	/* this process and its files */
	char path[PATH_MAX];		/* this process's output path */
	int root;  /* the run's first process: path is base */
	pid_t pid; /* whose state this is (not a vfork child's) */
	struct timespec start;		/* CLOCK_REALTIME at start or fork */
	struct timespec cpu_start; /* process CPU time when this image began */
	uint64_t cpu_stop_ns;      /* process CPU ns when sampling stopped, or 0
				      (atomic) */
	int ending; /* PC_END_*: how the image being written ends */
	int end_signal;			/* PC_END_SIGNAL: the fatal signal */
	int wrote_own;			/* path holds a snapshot of ours */
	int writer;			/* the writer lock: the thread id of a
					 * write under way, or 0 (atomic) */
	char stacks_path[PATH_MAX]; /* absolute, or "" for path + ".stacks" */
	struct sigaction
		prog_action[NSIG]; /* what the program believes is installed */
	unsigned char owned[NSIG];	/* PC_OWN_*: signals libpc handles */
};

extern struct pc_state *pc PC_HIDDEN;

/* What the summary line reports, counted where it happens with relaxed
 * atomics (the handler's included), read at the end; zeroed in a fork
 * child (lifecycle.c). */
struct pc_stats {
	uint64_t signals;		/* handler runs for our timer */
	uint64_t samples;		/* sum of 1 + si_overrun */
	uint64_t outside;		/* weighted samples outside the text */
	uint64_t foreign;		/* signals that were not our timer's */
	uint64_t threads;		/* threads whose timer was armed */
	uint64_t timer_failures;	/* threads left unsampled */
	uint64_t stacks_walked;		/* samples whose stack was walked */
	uint64_t arcs_dropped;   /* weighted edges lost to a full table */
	uint64_t stacks_dropped; /* weighted stacks lost to a full table */
	uint64_t frames;		/* frames walked, in all */
	uint64_t lost_blocked; /* foreign signals deferred while blocked */
	uint64_t no_room;		/* weighted samples whose stack had no
					 * room for the walk */
	uint64_t live_overflow; /* regions the live file had no room for */
	uint64_t snapshots;		/* snapshots written */
	uint64_t eintr_kept;            /* calls a sample would have restarted
					 * past the program's signal (handler.c) */
	uint64_t wall[GMON_WALLINFO_WORDS];	/* the wall sampler's (wall.c),
						 * here to outlive a kill */
	uint64_t wall_cpu_ns;		/* the wall sampler's own CPU so far */
	uint64_t live_unplaced;		/* weighted samples the live file had
					 * no room for (livegrow.c) */
	uint64_t live_waiting;		/* weighted samples left in its spill */
};

extern struct pc_stats *pc_stats PC_HIDDEN;

/* start.c: the value our POSIX timers carry, which tells their signals
 * from others. */
extern const char pc_timer_tag PC_HIDDEN;

/* What the environment asks for: settings.c reads it, start.c makes the
 * configuration of it. */
struct pc_settings {
#define PC_SETTING_FIELD(id, name, field, type, ...) type field;
	PC_SETTINGS(PC_SETTING_FIELD)	/* settings.h's rows */
#undef PC_SETTING_FIELD
	int sig_chosen;			/* whether PC_SIGNAL was given */
	char stacks_path[PATH_MAX];	/* PC_STACKS=2's, absolute */
};

/*
 * The configuration: what the settings asked for as start-up could grant
 * it, and what start-up found. start.c alone writes it, and only while the
 * constructor runs; then it makes the page read-only, so that a write
 * from anywhere later faults instead of changing what the handler reads.
 */
struct pc_config {
	long hz;
	long interval_ns;		/* 1 s / hz */
	int sig;			/* the sampling signal */
	int timer;			/* 0 posix, 1 taskclock, 2 taskclock
					 * falling back to posix, as PC_TIMER
					 * asked or its cost chose (timer.c
					 * knows what threads got) */
	int timer_how;			/* GMON_TIMER_ASKED or _MEASURED */
	long timer_cost_ns;		/* a task-clock sample's, measured; 0
					 * when not */
	int timer_cost_earlier;		/* measured earlier this boot */
	int verbose;
	int callgraph;			/* arcs are recorded */
	enum pc_unwinder unwinder;	/* never PC_UNWIND_AUTO once set up */
	int depth;			/* frames walked per sample */
	int stacks;			/* the stacks file is written */
	int scope_all;			/* every object is profiled */
	int snapshot_sig;		/* 0 for none */
	long snapshot_interval_ms;	/* 0 for none */
	int clock_wall;			/* off-CPU samples too (wall.c) */
	long wall_hz;			/* the wall sampler's rounds a second */
	int wall_budget; /* its CPU, at most, in percent of one */
	int pg_built;			/* the program imports mcount (-pg) */
	uintptr_t bias;			/* the main program's load bias */
	uint8_t spare[GMON_SPARE_SIZE];	/* the gmon header's spare bytes */
	char exe[PATH_MAX]; /* the main program's path (PC_SCOPE=all) */
	int timeline;       /* PROFILE.timeline is written (timeline.c) */
	int cpu_off;			/* PC_ALLOC=only: no thread is armed */
};

/* start.c: the configuration. AS-safe to read. */
extern const struct pc_config *const pc_cfg PC_HIDDEN;

/*
 * The profile's phase, one word that moves only so:
 *   PC_OFF  -> PC_ON    start-up has set everything up (start.c);
 *   PC_ON   -> PC_DONE  the final profile is taken, at exit, at a fatal
 *                       signal or before an exec (lifecycle.c): one thread
 *                       wins the move and writes;
 *   PC_DONE -> PC_ON    the exec failed and this image runs on.
 * Samples are counted only while PC_ON. Writes are serialized apart from it
 * by the writer lock (pc.writer), because a snapshot writes while sampling
 * goes on.
 */
enum pc_phase { PC_OFF, PC_ON, PC_DONE };

/* Sampling is on. AS-safe. */
static inline int
pc_on(void)
{
	return __atomic_load_n(&pc->phase, __ATOMIC_ACQUIRE) == PC_ON;
}

/* Move the phase from one state to another; 0 if it was not in from.
 * AS-safe. */
static inline int
pc_phase_move(int from, int to)
{
	return __atomic_compare_exchange_n(&pc->phase, &from, to, 0,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

#define PC_NAME_OWN	0	/* this process's usual name */
#define PC_NAME_OTHER	1	/* BASE.prog.pid: before an exec, or to avoid a clobber */

#define PC_OWN_SAMPLING	1	/* the sampling signal */
#define PC_OWN_FATAL	2	/* default-action fatal signal: write, then die */
#define PC_OWN_SNAPSHOT	3	/* write a snapshot */

/*
 * The functions the files call in each other, by layer. A file calls only
 * its own layer's files below it and the layers below: the handler's path
 * at the bottom, then the inventory, the writer and the messages, then
 * start-up, lifecycle, threads and signals at the top. Each says whether it
 * is async-signal-safe (callable from a signal handler).
 */

/* ---------------------------------------------- 1. the handler's path */

/* Clock c in ns; 0 if it cannot be read. AS-safe. */
static inline uint64_t
pc_clock_ns(clockid_t c)
{
	struct timespec t;

	if (clock_gettime(c, &t))
		return 0;
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A 64-bit mix for the handler's hash tables. AS-safe. */
static inline uint64_t
pc_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* sample.c: record a sample of weight at the PC in ucontext ucv (stack
 * and arcs too, with call graphs on). AS-safe. */
void pc_sample_from_handler(void *ucv, uint32_t weight) PC_HIDDEN;

/*
 * The handler's stack budget for the walk of a sample's call chain, below
 * the handler's frame (the frames themselves go to a pool, sample.c).
 * Measured here (docs/benchmarks.md: 1.7 KiB with dwarf, 0.2 with fp, 3.1
 * with libunwind), with 1 KiB or more to spare: an 8 KiB alternate stack
 * has about 4.6 KiB left below the kernel's signal frame. A sample on a
 * stack with less room keeps its PC and loses its call chain, counted.
 */
#define PC_WALK_STACK_DWARF	(4 * 1024)
#define PC_WALK_STACK_FP	(1 * 1024)
#define PC_WALK_STACK_LIBUNWIND	(5 * 1024)
/* sample.c: map the pool of frame buffers the walks take turns in; 0 or
 * -errno. Forget buffers held in the parent (fork child). Not AS-safe. */
int pc_sample_init(void) PC_HIDDEN;
void pc_sample_forked(void) PC_HIDDEN;
/* sample.c: the bytes left below the handler's frame on the stack it runs
 * on (the thread's or its alternate stack), or 0 where libpc does not know
 * that stack. AS-safe. */
size_t pc_stack_room_from_handler(const void *ucv) PC_HIDDEN;

/* unwind.c: the calling thread's stack, in a normal call (not a
 * handler), from the frame its call returns to (ra) outward: frames, at
 * most max; 0 where no dwarf unwinder is loaded or the stack is short.
 * AS-safe, as the handler's dwarf walk is. */
int pc_unwind_here(uintptr_t ra, struct pc_frame *f, int max) PC_HIDDEN;
/* unwind.c: walk the interrupted stack into f[0..max). AS-safe. */
int pc_unwind_from_handler(ucontext_t *uc, uintptr_t ip, struct pc_frame *f,
			   int max) PC_HIDDEN;
/* unwind_setup.c: pick the unwinder (*u: PC_UNWIND_AUTO becomes the one
 * to use, libunwind falls back to dwarf) and prepare it; per-thread
 * set-up: the thread's stack bounds (pc_stack_lo, pc_stack_hi). Not
 * AS-safe (the first call of a thread is made outside any handler). */
int pc_unwind_init(enum pc_unwinder *u) PC_HIDDEN;
void pc_unwind_thread_init(void) PC_HIDDEN;
/* unwind_setup.c: the stack of thread t (pthread_getattr_np, which
 * allocates), 0 or an error number; this thread's bounds set. Not AS-safe. */
int pc_unwind_stack_of(pthread_t t, uintptr_t *lo, uintptr_t *hi) PC_HIDDEN;
void pc_unwind_thread_bounds(uintptr_t lo, uintptr_t hi) PC_HIDDEN;

/* stacks.c: map the stack table; 0 or -errno. Not AS-safe. */
int pc_stacks_init(size_t megabytes) PC_HIDDEN;
/* stacks.c: count one sampled stack (before arcs rewrite f): its id, or
 * 0 where the table had no room. AS-safe. */
uint64_t pc_stacks_add_from_handler(const struct pc_frame *f, int n,
				    int truncated, uint32_t weight) PC_HIDDEN;
/* stacks.c: count ns off the CPU for thread tid, blocked in the wait
 * (GMON_WAIT_WORD) with the stack f[0..n); its entry, for
 * pc_stacks_add_again while the thread stays where it is, or NULL.
 * AS-safe. */
uint64_t *pc_stacks_add_offcpu(uint32_t tid, uint64_t wait,
			       const struct pc_frame *f, int n, uint32_t flags,
			       uint64_t ns) PC_HIDDEN;
void pc_stacks_add_again(uint64_t *entry, uint64_t ns) PC_HIDDEN;
/* stacks.c: count ns that thread tid waited for a CPU, under the stack it
 * was last seen blocked at (an entry pc_stacks_add_offcpu returned): a
 * thread woken from a wait waits for a CPU there; or (NULL) under its last
 * CPU sample's stack, where it was preempted, or alone. Its entry, or NULL
 * when the table has no room (yet). AS-safe. */
uint64_t *pc_stacks_add_runqueue(uint32_t tid, const uint64_t *blocked,
				 uint64_t ns) PC_HIDDEN;
/* stacks.c: keep thread tid's name (16 bytes, NUL-padded). AS-safe. */
void pc_stacks_note_name(uint32_t tid,
			 const char name[GMON_THREAD_NAME_SIZE]) PC_HIDDEN;
/* stacks.c: the wall sampler's figures (enum gmon_wallinfo), which the
 * stacks file carries: read them; start them again at rate hz; add n to
 * one; raise one to n; set one. AS-safe. */
void pc_wall_info(uint64_t info[GMON_WALLINFO_WORDS]) PC_HIDDEN;
/* wall_mem.c: the most threads the wall sampler could not follow at once
 * (its tables could not grow), and why (*why: PC_LIVE_LOCKED, mlockall;
 * PC_LIVE_UNMAPPED, no address space; PC_LIVE_CAPPED, 32768 followed). */
size_t pc_wall_unfollowed(int *why) PC_HIDDEN;
void pc_wall_reset(uint64_t hz) PC_HIDDEN;
void pc_wall_count(int what, uint64_t n) PC_HIDDEN;
void pc_wall_most(int what, uint64_t n) PC_HIDDEN;
void pc_wall_set(int what, uint64_t n) PC_HIDDEN;
/* wall.c: load libunwind for the wall sampler, before the main thread's
 * timer is armed (its CPU is libpc's, not the program's); start the
 * wall sampler's thread (PC_CLOCK=wall). Not AS-safe. */
void pc_wall_load(void) PC_HIDDEN;
void pc_wall_start(void) PC_HIDDEN;
/* wall.c: end the wall sampler's thread and wait until the process no
 * longer holds it (1), or do nothing (0: none runs, or a vfork child);
 * start it again. For calls that need a process of one thread
 * (namespaces.c). Not AS-safe. */
int pc_wall_pause(void) PC_HIDDEN;
void pc_wall_resume(void) PC_HIDDEN;
/* wall.c: at the end of the process, a last round that counts every
 * thread's time up to now (a second at most). AS-safe. */
void pc_wall_final(void) PC_HIDDEN;
/* wall_io.c: find glibc's fsync and fdatasync, which the interposed
 * ones call whatever the clock (start-up). Not AS-safe. */
void pc_wall_io_resolve(void) PC_HIDDEN;
/* wall_mask.c: a mask call of the wall sampler's thread during a walk
 * (libunwind's lock), answered there: 1 and its result in *r; 0 for any
 * other thread's or time's. */
int pc_wall_walker_mask(int (*real)(int, const sigset_t *, sigset_t *), int how,
			const sigset_t *set, sigset_t *old, int *r) PC_HIDDEN;
/* wall.c: the calling thread of the program's starts (0) or ends (1):
 * its first and last intervals, to the nanosecond. AS-safe. */
void pc_wall_thread_event(int end) PC_HIDDEN;
/* stacks.c: write the stacks file's contents. AS-safe. */
int pc_stacks_write(struct gmon_sink *s) PC_HIDDEN;
/* stacks.c: forget every stack (fork child). Not AS-safe. */
void pc_stacks_clear(void) PC_HIDDEN;
/* stacks.c: every stack with its id (what pc_stacks_add_from_handler
 * returns), as timeline records of tag (timeline.h). AS-safe. */
void pc_stacks_write_ids(struct gmon_sink *s, uint32_t tag) PC_HIDDEN;

/* timeline.c (PC_TIMELINE): map the timeline's region of the live file
 * for max samples (with_allocs: and max allocation events): 0 or
 * -errno; take a recovered file's; start again (fork child); whether it
 * is on. Not AS-safe; pc_timeline_on AS-safe. */
int pc_timeline_init(uint64_t max, int with_allocs) PC_HIDDEN;
struct pc_live_tables;
int pc_timeline_recover(const struct pc_live_tables *t) PC_HIDDEN;
void pc_timeline_clear(void) PC_HIDDEN;
int pc_timeline_on(void) PC_HIDDEN;
/* timeline.c: one CPU sample of this thread: its stack's id, or 0 and its
 * link-time pc; off-CPU ns of thread tid under stack; a marker of kind
 * (timeline.h) and name id; a marker lost. AS-safe. */
void pc_timeline_cpu_from_handler(uint64_t stack, uint64_t at,
				  uint32_t weight) PC_HIDDEN;
void pc_timeline_off(uint32_t tid, uint64_t stack, uint64_t ns) PC_HIDDEN;
/* timeline.c: an allocation event of this thread, PC_TL_MALLOC,
 * PC_TL_FREE or PC_TL_UNFREE (timeline.h), of size bytes at addr, its
 * stack's offset in alloc_table.c's arena (PC_ALLOC with PC_TIMELINE: a
 * ring of its own, else nothing). AS-safe. */
void pc_timeline_alloc(uint32_t kind, uint32_t stack, uint64_t size,
		       uint64_t addr) PC_HIDDEN;
/* A marker at CLOCK_MONOTONIC ns at (0: now; else a time the program
 * gave, pcprof_mark_begin_at). AS-safe. */
void pc_timeline_mark_at(uint32_t kind, uint32_t tid, uint64_t name,
			 uint64_t value, uint64_t at) PC_HIDDEN;
void pc_timeline_mark_lost(void) PC_HIDDEN;
/* timeline.c: the marker names' table (markers.c). AS-safe. */
struct pc_tl_name_slot *pc_timeline_names(void) PC_HIDDEN;
/* timeline.c: write PROFILE.timeline's records: its header and names,
 * then (after the stacks, pc_stacks_write_ids) its samples and markers.
 * AS-safe. */
int pc_timeline_write(struct gmon_sink *s) PC_HIDDEN;
int pc_timeline_write_rings(struct gmon_sink *s) PC_HIDDEN;
/* timeline.c: what the timeline kept, for the PC_VERBOSE line: samples
 * kept, offered, its bound, markers kept. AS-safe. */
void pc_timeline_kept(uint64_t out[4]) PC_HIDDEN;
/* markers.c: this thread's id forgotten (fork child). AS-safe. */
void pc_markers_forked(void) PC_HIDDEN;

/* arcs.c: map the arc table; 0 or -errno. Not AS-safe. */
int pc_arcs_init(size_t nslots) PC_HIDDEN;
/* arcs.c: count the edges of one sampled stack; rewrites f. AS-safe. */
void pc_arcs_add_from_handler(struct pc_frame *f, int n,
			      uint32_t weight) PC_HIDDEN;
/* arcs.c: count w on the arc from -> self (encoded ends). AS-safe. */
void pc_arc_add_from_handler(uint64_t from, uint64_t self,
			     uint32_t w) PC_HIDDEN;
/* arcs.c: call fn on every arc (encoded ends, see PC_OBJ_SHIFT). AS-safe. */
void pc_arcs_each(void (*fn)(uint64_t from, uint64_t self, uint64_t count,
			     void *arg), void *arg) PC_HIDDEN;
/* arcs.c: write object obj's own arcs as gmon records. AS-safe. */
int pc_arcs_write(struct gmon_sink *s, uint32_t obj) PC_HIDDEN;
/* arcs.c: give arcs with runtime ends (PC_OBJ_RAW) the ends place()
 * returns for them, where it knows both. Not AS-safe. */
void pc_arcs_place(uint64_t (*place)(uint64_t addr)) PC_HIDDEN;
/* arcs.c: forget every arc (fork child). Not AS-safe. */
void pc_arcs_clear(void) PC_HIDDEN;

/* objfind.c: the link-time address of a runtime PC in the main program's
 * text, or 0 outside it: the only code libpc ever reads. AS-safe. */
uint64_t pc_main_addr(uintptr_t a) PC_HIDDEN;
/* objfind.c: the link-time address of a runtime PC in the program's text,
 * or 0 outside it; with PC_SCOPE=all, in another object the object's index
 * above PC_OBJ_SHIFT and its link-time address below. AS-safe. */
uint64_t pc_link_addr(uintptr_t a) PC_HIDDEN;
/* objfind.c: the object holding runtime address a (1..), its link-time
 * address in *link and segment in *seg; 0 when none. AS-safe. */
uint32_t pc_object_find_from_handler(uintptr_t a, uint64_t *link,
				     uint32_t *seg) PC_HIDDEN;
/* objfind.c: count a sample at ip outside the main program; 1 when it is
 * in some object (now or once placed). AS-safe. */
int pc_objects_sample_from_handler(uintptr_t ip, uint32_t weight) PC_HIDDEN;
/* objfind.c: ip is in an object the inventory has not seen yet. AS-safe. */
int pc_object_unplaced_from_handler(uintptr_t ip) PC_HIDDEN;
/* objfind.c: an arc with a runtime end was counted: the next inventory
 * has something to place. AS-safe. */
void pc_objects_note_unplaced(void) PC_HIDDEN;
/* objfind.c: credit pending samples to the objects now known; 1 when
 * anything was left to place (then arcs may be too: pc_arcs_place with
 * pc_object_place). Called with the inventory's lock held. Not AS-safe. */
int pc_objects_place_pending(void) PC_HIDDEN;
/* objfind.c: an encoded arc end with a runtime address (PC_OBJ_RAW) as
 * its object and link-time address, where the inventory now knows it.
 * AS-safe. */
uint64_t pc_object_place(uint64_t v) PC_HIDDEN;

/* objfind.c: the PC in the loader's mapping of the same instruction, for
 * a PC in a copy of a known object's code mapped from its file (V8's
 * embedded builtins); any other PC as it is. AS-safe. */
uintptr_t pc_copy_original_from_handler(uintptr_t pc) PC_HIDDEN;
/* objfind.c: add a copy at runtime [lo, hi) whose PCs plus delta (mod
 * 2^N) are the original's; 0, or -1 when PC_MAX_COPIES are in the table.
 * Forget the copies that [a, a + len) touches (unmapped or replaced).
 * Lock-free, from any thread. AS-safe. */
#define PC_MAX_COPIES	64
int pc_copy_add(uintptr_t lo, uintptr_t hi, uintptr_t delta) PC_HIDDEN;
void pc_copies_retire(uintptr_t a, size_t len) PC_HIDDEN;

/* ------------------ 2. the inventory, the writer and the messages */

/* settings.c: read every PC_* setting through get (getenv); a bad one is
 * warned about through say, as pc_say, and gets the table's value for
 * it. Not AS-safe. */
void pc_settings_read(struct pc_settings *s, char *(*get)(const char *),
		      void (*say)(const char *, const char *,
				  const char *)) PC_HIDDEN;
/* settings.c: path made absolute against the working directory, suffix
 * appended, into dst[0..size); 0, or -1 when it does not fit. Not
 * AS-safe. */
int pc_absolute(char *dst, size_t size, const char *path,
		const char *suffix) PC_HIDDEN;
/* settings.c: the text row id's value, read now by get, alone (start.c's
 * first look at PC_RECOVER); NULL when unset. Not AS-safe. */
const char *pc_setting_text(enum pc_setting id,
			    char *(*get)(const char *)) PC_HIDDEN;

/*
 * msg.c: the program's RLIMIT_FSIZE is the program's: a write of libpc's
 * past it must fail with EFBIG, never kill the program with the SIGXFSZ
 * the kernel then sends the writing thread. pc_xfsz_block blocks SIGXFSZ
 * in this thread around libpc's writes; pc_xfsz_release (failed: a write
 * failed with EFBIG) takes back the one that write raised, unless one was
 * pending before (a standard signal is not queued twice, so that one is
 * the program's), and restores the mask. AS-safe.
 */
struct pc_xfsz {
	sigset_t prev;
	int pending, blocked;
};
void pc_xfsz_block(struct pc_xfsz *h) PC_HIDDEN;
void pc_xfsz_release(const struct pc_xfsz *h, int failed) PC_HIDDEN;
/* msg.c: note which file the program's descriptor 2 is (its identity,
 * no copy of it). AS-safe. */
void pc_msg_init(void) PC_HIDDEN;
/* msg.c: write to the program's descriptor 2 as it is now, where it still
 * is that file; nothing once sandboxed. AS-safe. */
void pc_write_err(const char *buf, size_t n) PC_HIDDEN;
/* sandbox.c: the program entered a seccomp sandbox (or this image was
 * started in one): libpc has stopped and makes no new system call; the
 * live file is the profile. AS-safe. */
int pc_sandboxed(void) PC_HIDDEN;
/* sandbox.c: mark libpc sandboxed. AS-safe. */
void pc_sandbox_mark(void) PC_HIDDEN;
/* sandbox.c: what stops libpc when the program enters a sandbox (no
 * sampling, no thread of libpc's, nothing written at exit: the live file
 * is the profile), set by the constructor once libpc runs. Not AS-safe. */
void pc_sandbox_set_stop(void (*fn)(void)) PC_HIDDEN;
/* sandbox.c: 1 when this image starts under a seccomp filter (exec keeps
 * it): libpc then stays off. Not AS-safe. */
int pc_sandbox_inherited(void) PC_HIDDEN;
/* msg.c: a fixed message on stderr, prefixed "libpc: ". AS-safe. */
void pc_say(const char *a, const char *b, const char *c) PC_HIDDEN;

/* names.c: v in decimal into buf (24 bytes are enough). AS-safe. */
void pc_decimal(char *buf, unsigned long v) PC_HIDDEN;
/* names.c: set up naming; root is PC_ROOT's value (NULL: unset), which
 * it sets for the run's first process. Not AS-safe. */
int pc_names_init(const char *base, int prefix_mode,
		  const char *root) PC_HIDDEN;
/* names.c: a forked child's name. AS-safe. */
void pc_names_forked(void) PC_HIDDEN;
/* names.c: build a name of the given kind. AS-safe. */
int pc_name(char *dst, size_t n, int kind) PC_HIDDEN;
/* names.c: path created anew, exclusively and never through a symlink
 * (a file left there by a process of this pid that died writing it is
 * replaced), opened with flags and close-on-exec; its descriptor or -1.
 * AS-safe. */
int pc_open_new(const char *path, int flags) PC_HIDDEN;
/* names.c: path was written by someone else while we ran. AS-safe. */
int pc_name_taken(const char *path) PC_HIDDEN;

/* objects.c: set up PC_SCOPE=all and take the first inventory; 0 or
 * -errno. Not AS-safe. */
int pc_objects_init(void) PC_HIDDEN;
/* objects.c: take a new inventory after objects were loaded or unloaded,
 * and place pending samples. Not AS-safe (takes the loader's lock). */
void pc_objects_scan(void) PC_HIDDEN;
/* objfind.c: the other objects (all but the program) and the weighted
 * samples in none of them, pending ones included. AS-safe. */
struct pc_object_counts {
	uint64_t others;
	uint64_t in_none;
};
void pc_objects_counts(struct pc_object_counts *n) PC_HIDDEN;
/* objects.c: forget the counts (fork child). Not AS-safe. */
void pc_objects_clear(void) PC_HIDDEN;
/* objects.c: the first GNU build-id note of an object: its length, with
 * up to max bytes of it in id; 0 when it has none. Not AS-safe. */
struct dl_phdr_info;
int pc_note_build_id(const struct dl_phdr_info *info, uint8_t *id,
		     size_t max) PC_HIDDEN;

/* live.c: create the live file and move libpc's state into it, with
 * room for text_bytes of the program's counters, an arc table, stacks and
 * PC_SCOPE=all's objects; 0 or -errno (then memory is anonymous). Not
 * AS-safe. */
int pc_live_open(size_t text_bytes, size_t arcs, size_t stacks_mb,
		 int scope_all, uint64_t cap) PC_HIDDEN;
/* live.c: len bytes of zeroed memory, page-aligned, from the live file
 * where it has room, else anonymous; meta: part of the inventory a fork
 * child keeps. NULL when memory runs out. Not AS-safe. */
void *pc_live_alloc(size_t len, int meta) PC_HIDDEN;
/* live.c: a string kept for the process's life, never malloc'ed. Not
 * AS-safe. */
char *pc_live_strdup(const char *s) PC_HIDDEN;
/* live.c: keep a copy of the configuration for pc_recover. AS-safe (a
 * copy). */
void pc_live_seal(const struct pc_config *c) PC_HIDDEN;
/* live.c: whether counters live in a file. AS-safe. */
int pc_live_active(void) PC_HIDDEN;
/* live.c: the profile is written: the file goes. AS-safe. */
void pc_live_done(void) PC_HIDDEN;
/* live.c: a fork child's file of its own; -1 when the child could not
 * part from its parent's mapping (it must then not sample). Not AS-safe. */
int pc_live_forked(void) PC_HIDDEN;
/* live.c: open the live file for a write (begin 1) and close it (0);
 * which pages of [addr, addr + len) hold samples, into vec as mincore(2)
 * has it, from the file system for the live file's pages (written back
 * pages are no longer resident, but hold samples); pc_recover's copy of a
 * file and its descriptor. AS-safe. */
void pc_live_io(int begin) PC_HIDDEN;
void pc_live_resident(const void *addr, size_t len,
		      unsigned char *vec) PC_HIDDEN;
/* Calls fn(lo, hi, arg) for each run of pages of [addr, addr + len) that
 * were ever written, in order, lo and hi byte offsets from addr (hi at most
 * len); stops at the first fn that returns nonzero and returns its value,
 * else 0. The pages never written are not read, so not faulted in: most of
 * a table, in a short-lived process. AS-safe. */
int pc_live_each_written(const void *addr, size_t len,
			 int (*fn)(size_t lo, size_t hi, void *arg),
			 void *arg) PC_HIDDEN;
void pc_live_span(const void *lo, size_t len, int fd) PC_HIDDEN;

/* msg.c: text built without stdio, into buf[0..size). AS-safe. */
struct pc_line {
	char *buf;
	size_t size, len;
};
void pc_line_str(struct pc_line *l, const char *s) PC_HIDDEN;
void pc_line_u64(struct pc_line *l, uint64_t v) PC_HIDDEN;
/* out.c: write a file through a temporary and rename. AS-safe. */
int pc_dump_file(const char *path, int (*body)(struct gmon_sink *)) PC_HIDDEN;
/* out.c: the counters of n segments as histogram records, with one
 * empty bin if none has a sample. AS-safe. */
int pc_dump_texts(struct gmon_sink *s, const struct pc_text *t,
		  int n) PC_HIDDEN;

/* summary.c: the closing summary line for PC_VERBOSE, or the reason a
 * write failed. AS-safe. */
void pc_dump_summary(const char *path, int err) PC_HIDDEN;

/* summary.c: the version, exported (libpc.map) for whoever holds the file. */
extern const char pc_version[];

/* objwrite.c: write the objects' files beside path and the manifest
 * path.objects (or remove a stale one). AS-safe. */
int pc_objects_dump(const char *path) PC_HIDDEN;
/* objwrite.c: remove the files pc_objects_dump(path) wrote (an exec that
 * failed). AS-safe. */
void pc_objects_unlink(const char *path) PC_HIDDEN;
/* objwrite.c: note the process CPU clock as the moment sampling stopped.
 * AS-safe. */
void pc_note_cpu_stop(void) PC_HIDDEN;

/* dump.c: write the profile (and the stacks file, when asked for) to
 * their paths atomically. AS-safe; 0 or -errno. */
int pc_dump(const char *path) PC_HIDDEN;

/* ------------- 3. start-up, lifecycle, timers, threads and signals */

/* timer.c: the timer threads get now (PC_TIMER=auto falls back to
 * POSIX when the first task-clock event is refused), and the errno of
 * that refusal or 0. AS-safe. */
enum pc_timer_kind pc_timer_kind(void) PC_HIDDEN;
int pc_timer_refused(void) PC_HIDDEN;
/* timer.c: note that task-clock was refused (err, an errno) before any
 * thread was armed. AS-safe. */
void pc_timer_note_refused(int err) PC_HIDDEN;
/* timercost.c: what one task-clock sample costs this thread, in ns
 * (fake, PC_TEST_TIMER_COST_NS's value, fakes it), or -errno where the event is
 * refused; *earlier is set when it was measured earlier in this boot
 * (and kept in /dev/shm). About 4 ms the first time; the constructor's
 * only. Not AS-safe. */
long pc_taskclock_cost_ns(int *earlier, const char *fake) PC_HIDDEN;
/* start.c: under this cost (ns), PC_TIMER=auto takes task-clock: 5 us
 * a sample is 0.5 % of the CPU at the default 1000 Hz, 4 times the
 * independent samples of a 250 Hz tick, where POSIX timers cost about
 * 0.4 %. */
#define PC_TASKCLOCK_CHEAP_NS	GMON_TASKCLOCK_CHEAP_NS
/* timer.c: arm the calling thread's CPU-time timer; 0 or -errno. Not
 * AS-safe (getenv, timer_create, pthread_getcpuclockid): thread start,
 * start-up, a fork child, a failed exec. */
int pc_thread_arm(void) PC_HIDDEN;
/* timer.c: disarm it. AS-safe: pc_finish runs it in fatal-signal
 * handlers; timer_delete is not on signal-safety(7)'s list, but for a
 * SIGEV_THREAD_ID timer glibc's is the one system call. */
void pc_thread_disarm(void) PC_HIDDEN;
/* timer.c: stop (1) or restart (0) the calling thread's task-clock event,
 * around an exec: the kernel's exec may not signal the next image before
 * it has a handler (POSIX timers' signals are flushed at exec). AS-safe. */
void pc_thread_hold(int hold) PC_HIDDEN;
/* timer.c: forget the timer without deleting it: after fork, the child
 * inherits the thread-local word but not the kernel timer it named.
 * AS-safe. */
void pc_thread_forget(void) PC_HIDDEN;
/* timer.c: this thread's task-clock event descriptor, or -1. AS-safe. */
int pc_thread_perf_fd_from_handler(void) PC_HIDDEN;
/* timer.c: the descriptor of this thread's last stopped event, whose late
 * signals are dropped, or -1. AS-safe. */
int pc_thread_perf_retired_from_handler(void) PC_HIDDEN;
/* timer.c: a late signal of this thread's task-clock event, on the signal
 * libpc moved off: sampled, and the event granted its next. AS-safe. */
void pc_thread_perf_late_from_handler(const siginfo_t *si, void *ucv) PC_HIDDEN;
/* timer.c: periods of CPU time since the last task-clock sample; *ours
 * says whether fd is still this thread's event. AS-safe. */
uint32_t pc_thread_perf_weight_from_handler(int fd, int *ours) PC_HIDDEN;
/* timer.c: after a task-clock sample, this thread's event counts again
 * (ours: as the weight found fd); where fd is no longer our event, the
 * thread gets a new one. AS-safe. */
void pc_thread_perf_resume_from_handler(int fd, int ours) PC_HIDDEN;
/* timer.c: timers for threads that ran before the constructor. Not
 * AS-safe (start-up only). */
void pc_threads_adopt(void) PC_HIDDEN;
/* timer.c: aim every armed thread's timer at sig, the new sampling
 * signal (signals.c's move, every signal blocked); or put every timer
 * out for good (no free signal). Not AS-safe (timer_create). */
void pc_timers_move(int sig) PC_HIDDEN;
void pc_timers_stop(void) PC_HIDDEN;
/* timer.c: si is a late signal of a timer of libpc's (a POSIX timer's
 * tag, or an event's descriptor number). AS-safe. */
int pc_timers_late_from_handler(const siginfo_t *si) PC_HIDDEN;
/* timer.c: the program closed descriptors (close_range, closefrom):
 * every thread whose task-clock event went gets a new one. Not AS-safe. */
void pc_timers_rearm_closed(void) PC_HIDDEN;

/* handler.c: install the handler for pc.sig. Not AS-safe; 0 or -errno. */
int pc_sample_install(void) PC_HIDDEN;
/* waits.c: where the sample cut short a wait with a mask of its own
 * (sigsuspend, ppoll, pselect, epoll_pwait), deliver the program's
 * signals that mask lets through before the wait returns. AS-safe. */
void pc_waits_deliver_from_handler(void *ucv) PC_HIDDEN;
/* handler.c: what pc_sample_install installed, for signals.c to install
 * on the next signal when libpc moves. */
extern struct sigaction pc_sample_action PC_HIDDEN;

/* signals.c: the sampling signal now: pc_cfg->sig until the program
 * takes it for its own and libpc moves to another (atomic). */
extern int pc_sampling_sig PC_HIDDEN;

/* signals.c: take the fatal signals the program leaves at their
 * default. Not AS-safe. */
void pc_signals_init(void) PC_HIDDEN;
/* signals.c: the real sigaction and pthread_sigmask, for libpc's own use.
 * AS-safe once pc_signals_init has run (a call before it may look them up
 * with dlsym, which is not); handlers run only after. */
int pc_real_sigaction(int sig, const struct sigaction *act,
		      struct sigaction *old) PC_HIDDEN;
int pc_real_sigmask(int how, const sigset_t *set, sigset_t *old) PC_HIDDEN;
/* signals.c: set the disposition the program believes sig has (one of
 * libpc's signals); writers take turns, every signal blocked meanwhile.
 * AS-safe. */
void pc_prog_action_store(int sig, const struct sigaction *act) PC_HIDDEN;
/* signals.c: a consistent copy of it; 0, or -1 when a writer on another
 * CPU never finished. AS-safe. */
int pc_prog_action_from_handler(int sig, struct sigaction *out) PC_HIDDEN;
/* sigview.c: the program blocked libpc's signal sig in this thread (then
 * counts one deferred signal). AS-safe. */
int pc_prog_blocked_from_handler(int sig) PC_HIDDEN;
/* sigview.c: the calling thread's view of which of libpc's signals the
 * program blocked (a bit set), a new thread's start with its creator's
 * view, the bit of one signal, and a view set for a while (the handler
 * forwarding a signal). AS-safe. */
unsigned pc_signals_prog_blocked(void) PC_HIDDEN;
#define PC_HIDE_SAMPLE		1u
#define PC_HIDE_SNAPSHOT	2u
/* sigview.c: record a move from one sampling signal to another (0: none,
 * sampling stopped), and whether another may be recorded; the calling
 * thread's count of what arrived for the program while it blocked the
 * sampling signal, taken; this thread's view brought up to the moves, in
 * uc_mask (an interrupted context's) or the thread's own mask (NULL): 1
 * when sig was a signal libpc left and the program believed blocked here;
 * a longjmp out of a handler: the sampling signal let through again.
 * AS-safe. */
int pc_signals_note_move(int from, int to) PC_HIDDEN;
int pc_signals_can_move(void) PC_HIDDEN;
int pc_signals_take_deferred(void) PC_HIDDEN;
int pc_signals_sync_mask(sigset_t *uc_mask, int sig) PC_HIDDEN;
void pc_signals_leaving_handler(void) PC_HIDDEN;
/* signals.c: the program took s, the sampling signal, for its own (avoid:
 * the set it names now, or NULL): libpc moves to a free signal, or stops
 * sampling. Not AS-safe. */
void pc_signals_move_off(int s, const sigset_t *avoid) PC_HIDDEN;
/* signals.c: some handler of the program's restarts calls and blocks the
 * sampling signal (SA_RESTART, and sigfillset or SA_ONSTACK). AS-safe. */
int pc_signals_restart_masks_sampling(void) PC_HIDDEN;
void pc_signals_inherit_block(unsigned blocked, int moves) PC_HIDDEN;
/* sigview.c: the calling thread's view brought up to libpc's moves to
 * another signal (its count of them for a new thread to start from), in
 * the thread's mask, or, in a handler, in the interrupted context's.
 * Not AS-safe, but for _from_handler. */
void pc_signals_sync(void) PC_HIDDEN;
int pc_signals_moves(void) PC_HIDDEN;
void pc_signals_sync_from_handler(void *ucv) PC_HIDDEN;
/* altstack.c: the calling thread runs on a small stack (under
 * PC_SMALL_STACK): an alternate stack of libpc's for the sampling
 * handler where the thread has none; 0, or -1 where it cannot have one
 * (then it is not sampled). Given back at the thread's end. Not AS-safe. */
#define PC_SMALL_STACK	(256 * 1024)
int pc_signals_small_stack(void) PC_HIDDEN;
/* signals.c: send sig to the calling thread by a system call (not through
 * the interposed raise, which takes the sampling signal for the
 * program's). AS-safe. */
void pc_raise_raw(int sig) PC_HIDDEN;
void pc_signals_small_stack_end(void) PC_HIDDEN;
unsigned pc_signals_view_bit(int sig) PC_HIDDEN;
unsigned pc_signals_view_set(unsigned blocked) PC_HIDDEN;
/* sigview.c: the sampling signal's handler is installed: let it through
 * the starting thread's mask, the program's view keeping it as it was;
 * the snapshot signal's: block it for real in this thread (and so in
 * every thread started from it). Not AS-safe. */
void pc_signals_take_sampling(void) PC_HIDDEN;
void pc_signals_take_snapshot(void) PC_HIDDEN;
/* sigcalls.c: just before an exec, make the program's view of libpc's
 * signals real (SIG_IGN, the mask), so that the next image inherits it
 * (in a vfork child, remembering nothing); undo that when the exec
 * failed. AS-safe. */
void pc_signals_before_exec(int vfork_child) PC_HIDDEN;
void pc_signals_exec_failed(void) PC_HIDDEN;
/* signals.c: a fork child's locks and sequence numbers, free. Not
 * AS-safe. */
void pc_signals_forked(void) PC_HIDDEN;

/* snapshot.c: start libpc's snapshot thread, when PC_SNAPSHOT_SIGNAL or
 * PC_SNAPSHOT_INTERVAL asks for snapshots (and again in a fork child).
 * Not AS-safe. */
void pc_snapshots_start(void) PC_HIDDEN;
/* snapshot.c: the snapshot thread's tid, or 0. AS-safe. */
uint32_t pc_snapshot_tid(void) PC_HIDDEN;
/* snapshot.c: end the snapshot thread and wait until the process no
 * longer holds it (1), or do nothing (0: none runs, or a vfork child);
 * start it again; wake it for a look at pc_own_watch. Not AS-safe. */
int pc_snapshot_pause(void) PC_HIDDEN;
void pc_snapshot_resume(void) PC_HIDDEN;
void pc_snapshot_wake(void) PC_HIDDEN;

/* own.c: libpc's own threads. A thread of libpc's enters itself in the
 * registry as it starts (pc_own_thread's own_start, before its function)
 * and leaves it as it ends; pc_own_is tells one of its ids. AS-safe. */
void pc_own_enter(void) PC_HIDDEN;
void pc_own_leave(void) PC_HIDDEN;
int pc_own_is(uint32_t tid) PC_HIDDEN;
/* the same, of process pid (its id read once for many) */
int pc_own_is_of(uint32_t tid, int32_t pid) PC_HIDDEN;
/* own.c: wait until thread tid of libpc's, joined, has left the
 * process (for calls that need a process of one thread). Not AS-safe. */
void pc_own_gone(uint32_t tid) PC_HIDDEN;
/* own.c: a thread of the program's starts (+1) or ends (-1), or the main
 * thread calls pthread_exit (-2); whether it has. Not AS-safe. */
void pc_own_prog_thread(int delta) PC_HIDDEN;
int pc_own_main_gone(void) PC_HIDDEN;
/* own.c: whether every thread /proc/self/task lists now is libpc's but a
 * main thread that called pthread_exit (a zombie). */
int pc_own_program_ended(void) PC_HIDDEN;
/* own.c: a thread of libpc's that calls pc_own_watch gives the function
 * that wakes it, called when the program's last known thread ends. */
void pc_own_waker(void (*wake)(void)) PC_HIDDEN;
/* own.c: in a thread of libpc's: when the program has no thread left,
 * end the process with exit(0), as glibc's last thread would have
 * (pc_own_end_process: once, whoever calls). Not AS-safe. */
void pc_own_watch(void) PC_HIDDEN;
void pc_own_end_process(void) PC_HIDDEN;

/* vfork.c: for signals.c's interposers in a vfork child, which shares
 * this memory and TLS (blocked: the thread's view of libpc's signals).
 * pc_vfork_view: the child's own view where it set one, else blocked.
 * pc_vfork_keep: after a mask call changed the view from was to now, 1
 * when the caller is a vfork child, whose view now is, kept apart.
 * pc_vfork_set: whether the vfork child set sig's action itself.
 * pc_vfork_sigaction: 1 when the caller is a vfork child, its call made
 * by real, in the kernel only, *result its result; 0 otherwise. AS-safe. */
unsigned pc_vfork_view(unsigned blocked) PC_HIDDEN;
int pc_vfork_keep(unsigned was, unsigned now, unsigned blocked) PC_HIDDEN;
int pc_vfork_set(int sig) PC_HIDDEN;
int pc_vfork_sigaction(int sig, const struct sigaction *act,
		       struct sigaction *old,
		       int (*real)(int, const struct sigaction *,
				   struct sigaction *),
		       unsigned blocked, int *result) PC_HIDDEN;

/* threads.c: set up pthread_create interposition. Not AS-safe. */
int pc_threads_init(void) PC_HIDDEN;
/* threads.c: in a fork child, before any thread is started. */
void pc_threads_forked(void) PC_HIDDEN;
/* threads.c: start one of libpc's own threads (fn, with no argument) by
 * the real pthread_create: every signal blocked, no timer, a 256 KiB
 * stack, detached unless joinable; 0 or an errno. Not AS-safe. */
int pc_own_thread(pthread_t *t, int joinable, void *(*fn)(void *)) PC_HIDDEN;
/* own.c: libpc's threads being started (pc_own_thread counts them), and
 * whether any is: the wall sampler lists no new thread meanwhile. */
void pc_own_start_count(int delta) PC_HIDDEN;
int pc_own_starting(void) PC_HIDDEN;
/* threads.c: fn runs after each thread the program starts, in its
 * pthread_create (livegrower.c's start). Not AS-safe. */
void pc_threads_on_create(void (*fn)(void)) PC_HIDDEN;

/* finish.c: write the final profile once and stop sampling; a thread
 * that comes second waits for the write under way. AS-safe. */
void pc_finish(void) PC_HIDDEN;
/* finish.c: the same, for a process that dies of fatal signal sig (0:
 * an exit), which the manifest records. AS-safe. */
void pc_finish_signal(int sig) PC_HIDDEN;
/* finish.c: write a snapshot without stopping. AS-safe. */
void pc_snapshot(void) PC_HIDDEN;
/* finish.c: take and give back the writer's lock (waiting for a write
 * under way in another thread, up to 30 s); write the profile to path on
 * libpc's own stack, with the lock held: with PC_WRITE_FINAL, under
 * another name when someone else wrote path, and the live file's end;
 * with PC_WRITE_SAY, the summary line. 0 or -errno. AS-safe. */
#define PC_WRITE_FINAL	1
#define PC_WRITE_SAY	2
void pc_write_lock(void) PC_HIDDEN;
void pc_write_unlock(void) PC_HIDDEN;
int pc_write_on_own_stack(const char *path, int flags) PC_HIDDEN;
/* finish.c: the C library's swapcontext, found at start-up. */
void pc_finish_resolve(void) PC_HIDDEN;
/* lifecycle.c: resolves the real exit, _exit and exec family, so that
 * those a program's handler or vfork child may call (_exit, execve,
 * execl, execle, execv, fexecve) never look them up there; the
 * constructor's first step, whether or not profiling starts. Not AS-safe. */
void pc_lifecycle_resolve(void) PC_HIDDEN;
/* lifecycle.c: fork handling (the child's atfork handler). Not AS-safe. */
void pc_lifecycle_init(void) PC_HIDDEN;
/* mappings.c: resolve the next mmap, mmap64, munmap and mremap (first
 * thing at start-up); learn copies from now on (once the configuration
 * is sealed). Not AS-safe. */
void pc_mappings_resolve(void) PC_HIDDEN;
void pc_mappings_start(void) PC_HIDDEN;
/* objfind.c: the load bias of the loaded object whose file is device
 * dev, inode ino, in *bias; 0, or -1 when no loaded object is that file.
 * Called from the mmap interposer, in any thread. AS-safe. */
int pc_object_bias_of_file(dev_t dev, ino_t ino, uintptr_t *bias) PC_HIDDEN;
/* next.c: the next definition of name after libpc's (dlsym RTLD_NEXT), or
 * NULL. Not AS-safe: called at start-up, and by an interposer only before
 * start-up resolved its function. */
void *pc_next(const char *name) PC_HIDDEN;

#endif
