/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/wall_acct.c, the wall sampler's accounting of a
 * thread's time, driven through pc_wall_account with made-up counters:
 * schedstat's three (CPU ns, run-queue ns, switches), the time of the
 * look, and where the thread is found (its syscall line: blocked in a
 * call at a site, or running). What it counted is read back from
 * stacks.c's table, as the stacks file holds it. The rules are
 * docs/ARCHITECTURE.md's: run-queue time is counted once, the wait a
 * thread woke from getting 1/k of it; a thread's CPU and counted time
 * add up to its life; the tail of a wait left before a call the thread
 * times itself (fsync) is that wait's, and no more than that interval's.
 *
 * Edge cases: a wait found again after switches (a loop woken each time:
 * all its run-queue time its own); run_delay that grows by more than the
 * interval (time counted off the CPU turns out the run queue's); a call
 * timed by the thread itself (wall_iotime.c, its time told by a stand-in
 * for wall_io.c); the thread's end between looks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../preload/pc.h"
#include "../preload/wall.h"
#include "../gmon/gmon.h"
#include "unit.h"

#define TID	4242u
/* the thread's start, CLOCK_MONOTONIC */
#define T0	1000000000000ULL
#define MS(x)	((uint64_t)((x) * 1000000.0 + 0.5))

/* Where the next look finds the thread (fake_where's answer). */
static int found_r;
static struct pc_wfound found_f;
/* The thread's time off the CPU in fsync so far, as wall_io.c tells it
 * (0: it made none). */
static uint64_t fsync_ns;

static int
fake_where(struct pc_wthread *w, struct pc_wfound *f)
{
	(void)w;
	*f = found_f;
	return found_r;
}

/* wall_io.c's answer: the thread's fsync time so far, from site 7. */
int
pc_wall_io_read(uint32_t tid, unsigned kind, uint64_t now, uint64_t run_ns,
		int end, uint64_t *total, uint32_t *nr, uint64_t *ret,
		uint64_t **entry)
{
	(void)now;
	(void)run_ns;
	(void)end;
	if (tid != TID || kind != PC_IO_SYNC || !fsync_ns)
		return 0;
	*total = fsync_ns;
	*nr = SYS_fsync;
	*ret = unit_text_at(0x700);
	*entry = NULL;
	return 1;
}

/* wall_io.c's, which the stand-in above replaces: what fsync's wait names
 * (the program's descriptor's kind, which new_wait reads from the link in
 * /proc and finds none here) */
unsigned
pc_wall_io_fd(uint32_t nr)
{
	(void)nr;
	return GMON_FD_NONE;
}

static void
start(struct pc_wthread *w)
{
	unit_preload_reset();
	ck_assert_int_eq(pc_stacks_init(4), 0);
	found_r = 0;
	fsync_ns = 0;
	memset(w, 0, sizeof(*w));
	w->tid = TID;
	w->fd = -1;
	w->seen_ns = T0;
	w->state = PC_W_RUNNING;
	w->rounds = 1;
}

/* A look at at ms of the thread's life, which has run run ms and waited
 * rq ms for a CPU so far, switched in sw times: found running (site 0)
 * or blocked in call nr at site (its pc 0x100 * site into the text). */
static void
look(struct pc_wthread *w, double at, double run, double rq, uint64_t sw,
     long nr, int site)
{
	uint64_t ss[3] = { MS(run), MS(rq), sw };

	found_r = site ? 1 : 0;
	memset(&found_f, 0, sizeof(found_f));
	found_f.key = ((uint64_t)nr << 8 | (uint64_t)site) << 1 | 1;
	found_f.nr = nr;
	found_f.ip = site ? unit_text_at(0x100 * (size_t)site) : 0;
	pc_wall_account(w, 0, ss, T0 + MS(at), fake_where);
}

/* The table's entry for the wait in call nr at site (0: [off-cpu:
 * unknown], no call), made with nothing in it where there is none. */
static uint64_t *
wait_entry(long nr, int site)
{
	struct pc_frame f[1];

	f[0].site = f[0].entry = site ? unit_text_at(0x100 * (size_t)site) : 0;
	return pc_stacks_add_offcpu(TID,
				    site ? GMON_WAIT_WORD(nr, GMON_FD_NONE, 0) :
					   GMON_WAIT_WORD(GMON_WAIT_UNSEEN,
							  0, 0),
				    f, site ? 1 : 0, GMON_STACK_CUT, 0);
}

/* ns counted off the CPU in that wait */
static uint64_t
in_wait(long nr, int site)
{
	uint64_t *e = wait_entry(nr, site);

	ck_assert_ptr_nonnull(e);
	return e[1];
}

/* ns counted waiting for a CPU under that wait's stack (site 0: alone) */
static uint64_t
in_runqueue(long nr, int site)
{
	uint64_t *e = pc_stacks_add_runqueue(TID, site ? wait_entry(nr, site) :
							 NULL,
					     0);

	ck_assert_ptr_nonnull(e);
	return e[1];
}

/* every ns the table holds for the thread */
static uint64_t
counted(void)
{
	struct gmon_stacks st;
	uint64_t sum = 0;

	unit_stacks_read_back(&st);
	for (size_t i = 0; i < st.n; i++)
		if (st.v[i].tid == TID)
			sum += st.v[i].count;
	gmon_stacks_release(&st);
	return sum;
}

/* Run-queue time is counted once. A thread seen blocked in a futex and
 * switched in 4 times since: the first ended its wake from the futex,
 * which gets a quarter of the 8 ms; the rest goes where it was
 * preempted (no CPU sample here: alone). One found in the same wait
 * again after 3 switches (a loop woken each time) keeps all of its
 * run-queue time there. */
START_TEST(test_wallacct_runqueue_once_split_after_a_wait)
{
	struct pc_wthread w;

	start(&w);
	look(&w, 10, 1, 0, 1, SYS_futex, 1);
	ck_assert_uint_eq(in_wait(SYS_futex, 1), MS(9));
	look(&w, 30, 3, 8, 5, 0, 0);
	ck_assert_uint_eq(in_runqueue(SYS_futex, 1), MS(2));
	ck_assert_uint_eq(in_runqueue(0, 0), MS(6));
	/* found running: its 10 ms off the CPU wait for the next wait */
	ck_assert_uint_eq(in_wait(SYS_futex, 1), MS(9));
	look(&w, 40, 3, 8, 5, SYS_futex, 1);
	ck_assert_uint_eq(in_wait(SYS_futex, 1), MS(29));
	/* the same wait after 3 switches: all 6 ms its own */
	look(&w, 60, 4, 14, 8, SYS_futex, 1);
	ck_assert_uint_eq(in_runqueue(SYS_futex, 1), MS(8));
	ck_assert_uint_eq(in_runqueue(0, 0), MS(6));
	ck_assert_uint_eq(counted() + MS(4), MS(60));
}
END_TEST

/* A thread's CPU and the time counted for it add up to its life, whatever
 * happened between looks: waits found and left, looks that find it
 * running, run_delay growing by more than an interval holds, an fsync
 * timed by the thread itself, and its end between two looks. */
START_TEST(test_wallacct_totals_add_up_to_the_threads_life)
{
	static const struct step {
		double at, run, rq;
		uint64_t sw;
		long nr;
		int site;
		double fsync;	/* its fsync time so far (wall_io.c) */
	} steps[] = {
		{ 10, 1, 0, 1, SYS_futex, 1, 0 },
		{ 20, 1, 0, 1, SYS_futex, 1, 0 },	/* not switched in */
		{ 35, 4, 3, 6, 0, 0, 0 },
		/* run_delay grows by more than the interval: from the
		 * time kept for later, then (none left) ahead */
		{ 50, 6, 20, 8, SYS_nanosleep, 2, 0 },
		{ 60, 6.5, 31, 9, 0, 0, 0 },
		{ 80, 7, 31, 10, SYS_fsync, 7, 20 },
		{ 90, 7, 31, 10, SYS_fsync, 7, 30 },
		{ 130, 9, 35, 16, 0, 0, 55 },
		{ 170, 12, 36, 20, SYS_accept, 3, 60 },
		{ 175, 12, 36, 20, SYS_accept, 3, 60 },
		{ 230, 20, 50, 31, SYS_futex, 4, 60 },
		{ 260, 21, 51, 34, 0, 0, 60 },
	};
	struct pc_wthread w;

	start(&w);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct step *s = &steps[i];

		fsync_ns = MS(s->fsync);
		look(&w, s->at, s->run, s->rq, s->sw, s->nr, s->site);
		/* at every look, its whole life so far: counted, kept for
		 * a later look (unknown_ns, rq_io_ns), or counted ahead of
		 * what the run queue's counter shows yet (carry_ns) */
		ck_assert_int_eq((int64_t)(counted() + MS(s->run) +
					   w.unknown_ns + w.rq_io_ns) +
					 w.carry_ns,
				 (int64_t)MS(s->at));
	}
	/* its end 40 ms after the last look, 3 ms more of CPU */
	pc_wall_ended(&w, T0 + MS(300), MS(24));
	ck_assert_uint_eq(counted() + MS(24), MS(300));
	ck_assert_uint_eq(in_wait(SYS_fsync, 7), MS(60));
}
END_TEST

/*
 * The tail rule. A thread seen in a condition variable's wait (futex),
 * found running at the next look (it woke during that interval: 9 ms
 * off the CPU, the wait's tail), then running at two more looks with
 * 95 ms off the CPU in each, in waits no look saw, then found in fsync
 * (a call it times itself), then in accept. The futex's wait gets its
 * tail, 9 ms, and no more: the 199 ms off the CPU after the thread was
 * seen past it are [off-cpu: unknown]'s. (All of it went to the futex
 * once: 208 ms, as a condition variable before an fsync loop read 0.73
 * s for 0.21 s in CI at load 15.) Accept gets its own time.
 */
START_TEST(test_wallacct_tail_is_the_left_waits_only)
{
	struct pc_wthread w;

	start(&w);
	look(&w, 10, 1, 0, 1, SYS_futex, 1);
	look(&w, 20, 2, 0, 2, 0, 0);
	look(&w, 120, 7, 0, 40, 0, 0);
	look(&w, 220, 12, 0, 80, 0, 0);
	look(&w, 230, 13, 0, 82, SYS_fsync, 7);
	ck_assert_uint_eq(in_wait(SYS_futex, 1), MS(9 + 9));
	ck_assert_uint_eq(in_wait(0, 0), MS(95 + 95 + 9));
	look(&w, 260, 14, 0, 83, SYS_accept, 3);
	ck_assert_uint_eq(in_wait(SYS_futex, 1), MS(18));
	ck_assert_uint_eq(in_wait(SYS_accept, 3), MS(29));
	ck_assert_uint_eq(counted() + MS(14), MS(260));
}
END_TEST

/* What the tail rule is for: a futex's wait left for fsync between two
 * looks keeps its tail (49 ms), which the wait found after the call
 * (accept) does not get; the fsync's own time is its own, exactly. */
START_TEST(test_wallacct_tail_stays_with_its_wait)
{
	struct pc_wthread w;

	start(&w);
	look(&w, 10, 1, 0, 1, SYS_futex, 1);
	fsync_ns = MS(20);
	look(&w, 80, 2, 0, 5, SYS_fsync, 7);
	ck_assert_uint_eq(in_wait(SYS_futex, 1), MS(9 + 49));
	ck_assert_uint_eq(in_wait(SYS_fsync, 7), MS(20));
	fsync_ns = MS(30);
	look(&w, 110, 3, 0, 8, SYS_accept, 3);
	ck_assert_uint_eq(in_wait(SYS_futex, 1), MS(58));
	ck_assert_uint_eq(in_wait(SYS_fsync, 7), MS(30));
	ck_assert_uint_eq(in_wait(SYS_accept, 3), MS(19));
	ck_assert_uint_eq(counted() + MS(3), MS(110));
}
END_TEST

Suite *
wallacct_suite(void)
{
	Suite *s = suite_create("wallacct");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_wallacct_runqueue_once_split_after_a_wait);
	tcase_add_test(t, test_wallacct_totals_add_up_to_the_threads_life);
	tcase_add_test(t, test_wallacct_tail_is_the_left_waits_only);
	tcase_add_test(t, test_wallacct_tail_stays_with_its_wait);
	suite_add_tcase(s, t);
	return s;
}
