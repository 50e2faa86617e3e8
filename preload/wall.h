/* SPDX-License-Identifier: BSD-2-Clause */
/* The wall sampler's parts (wall.c, wall_acct.c, wall_proc.c,
 * wall_unwind.c): not the
 * handler's. */
#ifndef PC_WALL_H
#define PC_WALL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "pc.h"

/* How a blocked thread's walk ended. */
enum pc_wall_walk { PC_WALL_FULL, PC_WALL_CUT, PC_WALL_TRUNCATED };

/* wall_unwind.c: load libunwind's remote unwinder and make its address
 * space, before the sampler's thread starts (they malloc); then, in that
 * thread, set it up (its descriptors are the thread's). 0 or -1. */
int pc_wall_unwind_load(void) PC_HIDDEN;
int pc_wall_unwind_init(void) PC_HIDDEN;

/* wall_unwind.c: the frames of a thread blocked at ip with stack pointer
 * sp into f[0..max), f[0] ip itself; *how says how the walk ended.
 * Returns the number of frames (at least 1). Reads memory only with
 * process_vm_readv. */
int pc_wall_unwind(uintptr_t ip, uintptr_t sp, struct pc_frame *f, int max,
		   int *how) PC_HIDDEN;
/* wall_unwind.c: room for PC_WALL_FRAMES frames of a walk, in memory a
 * child of fork does not share (a page copied on write after every fork
 * of the program's cost 30 to 50 us here); NULL before
 * pc_wall_unwind_load. */
#define PC_WALL_FRAMES	128
struct pc_frame *pc_wall_frames(void) PC_HIDDEN;

/* wall_stackreuse.c: walks kept by their pc and sp, with the stack words
 * each read (a stack word's address and value), for a walk from the same
 * pc and sp to reuse once those words are checked (wall_unwind.c). Map
 * the table: 0 or -1. Get: the frames into f[0..max) and *how, the words
 * to check in *w[0..*nw) (a walk kept at pc alone: shifted to sp); the
 * number of frames, or 0 where none is kept. Put: keep a walk (one with
 * too many frames or words is not). Clear: forget them all. */
struct pc_wword {
	uintptr_t addr, val;
};
int pc_wall_reuse_map(void) PC_HIDDEN;
int pc_wall_reuse_get(uintptr_t ip, uintptr_t sp, struct pc_frame *f, int max,
		      int *how, const struct pc_wword **w,
		      unsigned *nw) PC_HIDDEN;
void pc_wall_reuse_put(uintptr_t ip, uintptr_t sp, const struct pc_frame *f,
		       int n, int how, const struct pc_wword *w,
		       unsigned nw) PC_HIDDEN;
void pc_wall_reuse_clear(void) PC_HIDDEN;

/* wall_mask.c: the calling thread (the wall sampler's) walks from now
 * (on: 1) or no longer (0): its mask calls are answered there
 * (pc_wall_walker_mask, pc.h). */
void pc_wall_walking(int on) PC_HIDDEN;

/* The wait a thread was last seen in (wall_acct.c). */
struct pc_wwait {
	uint64_t key;		/* the hash of its syscall line; 0: none */
	uint64_t word;		/* GMON_WAIT_WORD */
	uint64_t ip;		/* the call's pc */
	uint64_t *alone;	/* the entry of the call alone, or NULL */
	uint64_t *entry;	/* its walked stack's, or NULL */
	uint64_t pending;	/* ns under alone that a walk moves to entry */
	uint64_t unplaced;	/* ns the stacks table had no room for yet */
	int io;			/* its run-queue time is its own (fsync) */
};

enum { PC_W_NEW, PC_W_RUNNING, PC_W_BLOCKED, PC_W_ENDED };

/* One thread followed by the wall sampler. */
struct pc_wthread {
	uint32_t tid;
	uint8_t state;		/* PC_W_* */
	uint8_t listed;		/* seen in this round's listing */
	uint8_t young;		/* rounds listed before its start was told */
	uint8_t guessed;	/* its start (seen_ns) guessed, not told */
	uint8_t told; /* started by libpc's path, which tells its end and notes
			 its name */
	uint32_t rounds;
	int fd;			/* its schedstat kept open, or -1 */
	int sfd1;		/* its syscall file kept open, + 1 (0: none) */
	uint64_t run_ns, rq_ns, switches;	/* schedstat at the last look */
	uint64_t seen_ns;	/* when its time was last counted */
	uint64_t unknown_ns;	/* off the CPU before any wait was seen */
	uint64_t tail_ns;	/* of unknown_ns, the interval's in which it
				   left the wait last seen (wall_acct.c) */
	uint64_t unseen_left;	/* [off-cpu: unknown]'s ns the table had no
				   room for yet */
	int64_t carry_ns;	/* counted ahead of the kernel's counters */
	uint64_t rq_io_ns;   /* waiting for a CPU after a disk wait: whose? */
	uint64_t io_prev[2]; /* its fsync, its unlink time so far (wall_io.c) */
	uint64_t rq_left;    /* run-queue time the table had no room for yet */
	uint64_t exit_ns, exit_cpu; /* its exit hook's time and CPU, while it
				       is still listed after it (0: none) */
	struct pc_wwait cur, prev;
	struct pc_wwait iow;	/* its last fsync's, when neither is */
};

/* A wait left with time never walked: one with the wait alone, for the
 * summary's count. */
static inline void
pc_wall_settle(const struct pc_wwait *x)
{
	if (x->alone && !x->entry && x->pending)
		pc_wall_count(GMON_WALL_NONE, 1);
}

/* wall_mem.c: map the sampler's memory, its two tables of threads (*a,
 * *b) among it, with room for 49 threads each: 0, or -1. */
int pc_wall_mem_start(struct pc_wthread **a, struct pc_wthread **b) PC_HIDDEN;
/* wall_mem.c: room for entry n in table t (one of those two), grown if
 * need be: t, or where it moved; NULL where it cannot grow (locked by
 * mlockall, no address space, 32768 threads), t left as it was; the
 * room t has; n threads not followed, at most, for the summary. */
struct pc_wthread *pc_wall_room(struct pc_wthread *t, size_t n) PC_HIDDEN;
size_t pc_wall_room_of(const struct pc_wthread *t) PC_HIDDEN;
void pc_wall_not_followed(size_t n) PC_HIDDEN;
/* wall_mem.c: tid[0..n) sorted, in place; t's first n * 4 bytes, thread
 * ids, sorted and made entries t[0..n), each new (fd -1). */
void pc_wall_sort_tids(uint32_t *tid, size_t n) PC_HIDDEN;
void pc_wall_spread(struct pc_wthread *t, size_t n) PC_HIDDEN;
/* wall_mem.c: a thread's start told before a listing showed it; its
 * time, taken, or 0. */
void pc_wall_begin(uint32_t tid, uint64_t t_ns) PC_HIDDEN;
uint64_t pc_wall_begun(uint32_t tid) PC_HIDDEN;
/* wall_mem.c: room for n picks of a round's walks (wall_acct.c), or
 * NULL. */
uint32_t *pc_wall_picks(size_t n) PC_HIDDEN;

/* wall_list.c: /proc/self/task, kept open by the sampler's thread from
 * round to round, read again from its start: its descriptor, or -1; the
 * thread is new (its descriptor table is). */
int pc_wall_task_dir(void) PC_HIDDEN;
void pc_wall_task_dir_new(void) PC_HIDDEN;
/* wall_list.c: the threads of the process now, into *t (grown, sorted and
 * spread: pc_wall_spread), libpc's own (mine among them) left out; their
 * number. Unless all, a round with no start or end told since the last
 * one (and none at it) takes cur[0..ncur)'s threads not ended instead,
 * but every few rounds. */
size_t pc_wall_list(struct pc_wthread **t, const struct pc_wthread *cur,
		    size_t ncur, uint32_t mine, int all) PC_HIDDEN;
/* wall_list.c: every thread of the program has ended but a main thread
 * that called pthread_exit, which stays listed as a zombie (t[0..n)
 * listed): glibc's last thread calls exit(0) when it ends, but libpc's
 * threads keep the process alive. */
int pc_wall_program_ended(const struct pc_wthread *t, size_t n) PC_HIDDEN;
/* wall_proc.c: the sampler's view of /proc/self/task during a round. */
void pc_wall_acct_dir(int dir) PC_HIDDEN;
/* wall_proc.c: close thread w's kept descriptor; forget them all (a
 * new sampler thread's table has none). */
void pc_wall_forget(struct pc_wthread *w) PC_HIDDEN;
void pc_wall_forget_all(struct pc_wthread *t, size_t n) PC_HIDDEN;
/* wall_proc.c: thread w's schedstat (run, run-queue ns, switches): 0, or
 * -1 (gone); where thread w is blocked (its syscall line: 1, with the
 * line's hash in *key; 0 running; -1 gone). */
int pc_wall_read_schedstat(struct pc_wthread *w, uint64_t v[3]) PC_HIDDEN;
/* wall_cpuclock.c: as pc_wall_read_schedstat, its CPU time alone, from
 * its CPU clock (its run-queue time and switches left as they were). */
int pc_wall_read_cpuclock(struct pc_wthread *w, uint64_t v[3]) PC_HIDDEN;
int pc_wall_read_syscall(struct pc_wthread *w, uint64_t *key, long *nr,
			 unsigned long arg[6], unsigned long *sp,
			 unsigned long *ip) PC_HIDDEN;
/* wall_proc.c: what thread tid's descriptor fd is (GMON_FD_*), from its
 * link in the thread's own table; note thread tid's name (its comm) in
 * the stacks table, for a thread the CPU timer may never see run. */
unsigned pc_wall_fd_kind(uint32_t tid, int fd) PC_HIDDEN;
void pc_wall_note_name(uint32_t tid) PC_HIDDEN;
/* wall_acct.c: the thread that ends the process, which waits for the
 * last round (pc_wall_final): not a wait of the program's. */
void pc_wall_acct_ending(uint32_t tid) PC_HIDDEN;
/* wall_acct.c: count thread w's time up to now (CLOCK_MONOTONIC, read
 * with its counters); PC_LOOK_CHEAP: from its counters alone;
 * PC_LOOK_LAST: the end of the process, nothing kept for later. */
enum { PC_LOOK_CHEAP = 1, PC_LOOK_LAST = 2 };
void pc_wall_look(struct pc_wthread *w, int how) PC_HIDDEN;
/* wall_proc.c, wall_acct.c: where a thread is found (its syscall
 * line): 1 blocked in call nr (-1: outside any call) with arguments arg
 * at ip, the line's hash in key; 0 running; -1 gone. */
struct pc_wfound {
	uint64_t key;
	long nr;
	unsigned long arg[6], ip;
};
typedef int (*pc_wall_where_fn)(struct pc_wthread *w, struct pc_wfound *f);
/* wall_proc.c: where thread w, which ran since its last look, is now,
 * from its syscall line (read again while its state says it sleeps). */
int pc_wall_where_now(struct pc_wthread *w, struct pc_wfound *f) PC_HIDDEN;
/* wall_acct.c: pc_wall_look's accounting once its counters are read:
 * thread w's schedstat ss (run, run-queue ns, switches) read at now
 * (CLOCK_MONOTONIC); where() asked where it is only when it was
 * switched in since (pc_wall_look's reads /proc;
 * tests/check_wallacct.c's are made up). */
void pc_wall_account(struct pc_wthread *w, int how, const uint64_t ss[3],
		     uint64_t now, pc_wall_where_fn where) PC_HIDDEN;
/* wall_acct.c: the looks so far that found a thread switched in since its
 * last. */
uint64_t pc_wall_moved(void) PC_HIDDEN;
/* wall_acct.c: count thread w's time up to its end at end_ns, when its
 * CPU clock read cpu_ns; or (cpu_ns ~0) half its time since its last
 * look, its end not known. */
void pc_wall_ended(struct pc_wthread *w, uint64_t end_ns,
		   uint64_t cpu_ns) PC_HIDDEN;
/* wall_acct.c: thread tid's life of life_ns, cpu_ns of it on the CPU,
 * begun and ended between two rounds. */
void pc_wall_brief(uint32_t tid, uint64_t life_ns, uint64_t cpu_ns) PC_HIDDEN;
/* wall_round.c: the entry of thread tid in t[0..n), sorted, or NULL;
 * the starts and ends told since the last round, given to the threads
 * listed now nxt[0..n) and at the last round cur[0..ncur); a look at each
 * of nxt, a wait found walked while more() allows, the last round's
 * first looks in full while afford(threads left) (PC_LOOK_LAST): the
 * walks made, their CPU ns added to *in_walks, the first looks' (walks
 * apart) to *in_first; a first look's CPU ns lately, full or cheap. */
struct pc_wthread *pc_wall_find(struct pc_wthread *t, size_t n,
				uint32_t tid) PC_HIDDEN;
void pc_wall_events(struct pc_wthread *nxt, size_t n, struct pc_wthread *cur,
		    size_t ncur) PC_HIDDEN;
size_t pc_wall_looks(struct pc_wthread *t, size_t n, int how,
		     int (*more)(void), int (*afford)(size_t left),
		     uint64_t *in_walks, uint64_t *in_first) PC_HIDDEN;
double pc_wall_first_ns(int cheap) PC_HIDDEN;
/* wall_walks.c: walk the stacks of the blocked threads of t[0..n) whose
 * wait is not walked yet, picked at random weighted by their time not
 * yet under a stack, while more() says the budget allows; the number
 * walked. seed: the round's random state. */
size_t pc_wall_walks(struct pc_wthread *t, size_t n, int (*more)(void),
		     uint64_t *seed) PC_HIDDEN;
/* wall_walks.c: walk thread w at once if its look found it in a wait
 * other than the one keyed key_before, not walked yet, and more() allows:
 * the walk's CPU ns + 1, or 0 where it did not walk. */
uint64_t pc_wall_walk_found(struct pc_wthread *w, uint64_t key_before,
			    int (*more)(void)) PC_HIDDEN;
/* A thread's start or end (wall_events.c): seq is its number + 1 once
 * it is whole; cpu_ns the thread's CPU clock at its end, ~0 at a start. */
struct pc_wevent {
	uint32_t seq, tid;
	uint64_t t_ns, cpu_ns;
};
/* wall_events.c: the next whole event into *e (1), or 0; how many are
 * waiting, about; start taking them; forget them (a fork child). */
int pc_wall_next_event(struct pc_wevent *e) PC_HIDDEN;
uint32_t pc_wall_events_waiting(void) PC_HIDDEN;
/* wall_events.c: of those, the starts not matched by an end, about. */
size_t pc_wall_events_staying(void) PC_HIDDEN;
int pc_wall_events_on(void) PC_HIDDEN;
void pc_wall_events_reset(void) PC_HIDDEN;
/* wall_acct.c: whether time found no room in the stacks table (which
 * grows in another thread, livegrow.c); count it again for t[0..n). */
int pc_wall_unplaced(void) PC_HIDDEN;
void pc_wall_place(struct pc_wthread *t, size_t n) PC_HIDDEN;
/* wall_acct.c's charge: count ns off the CPU for thread tid in wait x:
 * under its walked stack, or under the call alone until a walk moves it. */
typedef void (*pc_wall_charge_fn)(uint32_t tid, struct pc_wwait *x,
				  uint64_t ns);
/* wall_iotime.c: thread w's time off the CPU in the calls it times itself
 * (wall_io.c) since its last look, at now, charged to them (charge); taken
 * from *off, then *drq. end: the thread has ended. */
void pc_wall_io_time(struct pc_wthread *w, uint64_t now, uint64_t *off,
		     uint64_t *drq, int end,
		     pc_wall_charge_fn charge) PC_HIDDEN;
/* wall_io.c: time fsync and fdatasync from now on (interposed). */
void pc_wall_io_start(void) PC_HIDDEN;
/* The calls wall_io.c times, by kind: fsync and fdatasync; unlink,
 * unlinkat and rename. */
enum { PC_IO_SYNC, PC_IO_NAME, PC_IO_KINDS };
/* wall_io.c: what the wait of timed call nr names (GMON_FD_*). */
unsigned pc_wall_io_fd(uint32_t nr) PC_HIDDEN;
/* wall_io.c: thread tid's time off the CPU in calls of kind so far
 * (*total; at now, its schedstat run time run_ns), the last such call and
 * where it was called from, and the stack the thread walked for it (*entry,
 * a stacks-table entry, or NULL): 1, or 0 when it made none. end: the
 * thread has ended (its slot is freed once its last kind is read). */
int pc_wall_io_read(uint32_t tid, unsigned kind, uint64_t now, uint64_t run_ns,
		    int end, uint64_t *total, uint32_t *nr, uint64_t *ret,
		    uint64_t **entry) PC_HIDDEN;
/* wall_events.c: the sampler runs (on) as thread tid (0: not known
 * yet); its wake-ups: their count, one, and a wait for one until at
 * (CLOCK_MONOTONIC; 1: timed out); the last round pc_wall_final asks
 * for: asked (1), done (2) or not (0), who asked, it is done, and none
 * (a fork child). AS-safe. */
void pc_wall_sampler_is(int on, uint32_t tid) PC_HIDDEN;
uint32_t pc_wall_wake_seq(void) PC_HIDDEN;
void pc_wall_wake(void) PC_HIDDEN;
int pc_wall_wait(uint32_t seen, const struct timespec *at) PC_HIDDEN;
int pc_wall_final_state(void) PC_HIDDEN;
uint32_t pc_wall_final_tid(void) PC_HIDDEN;
void pc_wall_final_done(void) PC_HIDDEN;
void pc_wall_final_reset(void) PC_HIDDEN;
/* wall_events.c: the calling thread's schedstat counters and the time,
 * read as libpc's start-up ends; whether they were (the first round waits
 * for them); given to its first look's entry w (once), as its last look:
 * 1, or 0 where w is another thread. */
void pc_wall_base_take(void) PC_HIDDEN;
int pc_wall_base_ready(void) PC_HIDDEN;
int pc_wall_base_give(struct pc_wthread *w) PC_HIDDEN;
/* wall_events.c: a xorshift step. */
uint64_t pc_wall_random(uint64_t *seed) PC_HIDDEN;

/* wall_unwind.c: whether the last walk, of thread tid seen blocked in call
 * nr, args arg, at sp and ip, holds though the thread was switched in
 * during it: 1 its frames are a stack known right; 2 the thread is in
 * that call at sp and ip now, and every stack word the walk read is the
 * same, read again (right if it was not switched in during this check:
 * the caller's to see); 0 neither. pc_wall_walk_right: the last walk is
 * right (its thread stayed off the CPU, or it holds): known, and kept for
 * reuse (wall_stackreuse.c). */
int pc_wall_walk_holds(uint32_t tid, long nr, const unsigned long arg[6],
		      unsigned long sp, unsigned long ip) PC_HIDDEN;
void pc_wall_walk_right(void) PC_HIDDEN;

/* wall_parse.c: a thread's /proc lines, and what a call says of its wait */
int pc_wall_parse_schedstat(const char *buf, uint64_t v[3]) PC_HIDDEN;
int pc_wall_parse_syscall(const char *line, long *nr, unsigned long arg[6],
			  unsigned long *sp, unsigned long *ip) PC_HIDDEN;
int pc_wall_takes_fd(long nr) PC_HIDDEN;
int pc_wall_timed_call(long nr) PC_HIDDEN;
int pc_wall_is_io(long nr, unsigned fd) PC_HIDDEN;

#endif
