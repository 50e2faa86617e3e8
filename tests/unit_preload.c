/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Runs the Check suites of libpc's lock-free tables (arcs.c, stacks.c,
 * objfind.c), linked alone with gmon/: this file stands in for start-up and
 * live.c, giving them the state they read (pc, pc_cfg, pc_stats, pc_objs)
 * over a main-program text that is a buffer here, and anonymous memory for
 * their tables. Check forks each test, so each starts from unit_preload_reset.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../preload/pc.h"
#include "../preload/live.h"
#include "../preload/objects.h"
#include "unit.h"

static struct pc_state state;
struct pc_state *pc = &state;
static struct pc_stats stats;
struct pc_stats *pc_stats = &stats;
static struct pc_config config;
const struct pc_config *const pc_cfg = &config;
static struct pc_objects objs_state;
struct pc_objects *pc_objs = &objs_state;
static struct pc_live_tables tables;

/* the main program's text: real bytes, so that arcs.c may read a call */
static unsigned char text[UNIT_TEXT_SIZE] __attribute__((aligned(4096)));

struct pc_live_tables *
pc_live_tables(void)
{
	return &tables;
}

void *
pc_live_alloc(size_t len, int meta)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return m == MAP_FAILED ? NULL : m;
}

/* start.c: the value of libpc's timers' signals (timerlimits.c) */
const char pc_timer_tag;
/* signals.c: the sampling signal (sigview.c) */
int pc_sampling_sig;

/* sandbox.c: no sandbox here, so livegrow.c's grower may be woken */
int
pc_sandboxed(void)
{
	return 0;
}

/* livegrow.c runs as in a process without a live file: every table is
 * backed in full, every counter stored in place */
void
pc_live_resident(const void *addr, size_t len, unsigned char *vec)
{
	ck_assert_int_eq(mincore((void *)addr, len, vec), 0);
}

void
unit_preload_reset(void)
{
	memset(&state, 0, sizeof(state));
	memset(&stats, 0, sizeof(stats));
	memset(&config, 0, sizeof(config));
	memset(&tables, 0, sizeof(tables));
	memset(text, 0, sizeof(text));
	state.pid = getpid();
	state.ntext = 1;
	state.text[0].prof.offset = (uintptr_t)text;
	state.text[0].prof.bufsiz = UNIT_TEXT_SIZE / 2 * sizeof(uint32_t);
	state.text[0].prof.scale = PC_SCALE;
	config.hz = 1000;
	config.bias = (uintptr_t)text - UNIT_TEXT_LINK;
}

uintptr_t
unit_text_at(size_t off)
{
	ck_assert(off < UNIT_TEXT_SIZE);
	return (uintptr_t)text + off;
}

unsigned char *
unit_text_bytes(size_t off)
{
	return text + off;
}

struct pc_config *
unit_config(void)
{
	return &config;
}

void
unit_objects_init(void)
{
	memset(&objs_state, 0, sizeof(objs_state));
	objs_state.objs = calloc(PC_MAX_OBJECTS, sizeof(*objs_state.objs));
	objs_state.ranges[0] = calloc(PC_MAX_RANGES, sizeof(struct pc_range));
	objs_state.ranges[1] = calloc(PC_MAX_RANGES, sizeof(struct pc_range));
	objs_state.pending = calloc(PC_PENDING, sizeof(*objs_state.pending));
	ck_assert(objs_state.objs && objs_state.ranges[0] &&
		  objs_state.ranges[1] && objs_state.pending);
	objs_state.nobjs = 1;
	config.scope_all = 1;
	pc_objects_pending_init();
}

/*
 * Make r[0..n) (sorted by lo) the ranges the handler searches, as
 * objects.c's publish does: the copy not current is made odd, rewritten,
 * made even and current, so that a reader of that copy from before the
 * switch sees its sequence move and looks again.
 */
void
unit_objects_publish(const struct pc_range *r, uint32_t n)
{
	int c = !__atomic_load_n(&objs_state.range_cur, __ATOMIC_RELAXED);

	__atomic_fetch_add(&objs_state.range_seq[c], 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(objs_state.ranges[c], r, n * sizeof(*r));
	__atomic_store_n(&objs_state.nranges[c], n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&objs_state.range_seq[c], 1, __ATOMIC_RELEASE);
	__atomic_store_n(&objs_state.range_cur, c, __ATOMIC_RELEASE);
}

void
unit_stacks_read_back(struct gmon_stacks *st)
{
	int fd = memfd_create("stacks", 0);
	struct gmon_sink s;
	struct gmon_error err;
	struct stat sb;
	void *m;

	ck_assert_int_ge(fd, 0);
	gmon_sink_init(&s, fd);
	ck_assert_int_eq(pc_stacks_write(&s), 0);
	ck_assert_int_eq(gmon_sink_flush(&s), 0);
	ck_assert_int_eq(fstat(fd, &sb), 0);
	m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert(m != MAP_FAILED);
	ck_assert_int_eq(gmon_stacks_parse(m, (size_t)sb.st_size, st, &err), 0);
	munmap(m, (size_t)sb.st_size);
	close(fd);
}

/* the threads of unit_threads start their work together, for the most
 * contention a fixed amount of work can have */
static pthread_barrier_t go;

void
unit_threads_go(void)
{
	pthread_barrier_wait(&go);
}

void
unit_threads(int n, void *(*fn)(void *), void *args, size_t size)
{
	pthread_t t[UNIT_MAX_THREADS];

	ck_assert(n <= UNIT_MAX_THREADS);
	ck_assert_int_eq(pthread_barrier_init(&go, NULL, (unsigned)n), 0);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, fn,
						(char *)args + i * size),
				 0);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&go);
}

int
main(void)
{
	SRunner *sr;
	int failed;

	/* Check's timeout, 4 s of wall time a test by default, read when
	 * each suite makes its cases: make check runs the suites beside the
	 * end-to-end tests, and on a busy machine (CI at load 10 to 30) a
	 * test of a second's CPU waited past it for a core (the sequential
	 * levels' Monte Carlo); a hang still ends */
	setenv("CK_DEFAULT_TIMEOUT", "120", 0);
	sr = srunner_create(arcs_suite());
	srunner_add_suite(sr, stacks_suite());
	srunner_add_suite(sr, objfind_suite());
	srunner_add_suite(sr, wallmem_suite());
	srunner_add_suite(sr, wallreuse_suite());
	srunner_add_suite(sr, wallparse_suite());
	srunner_add_suite(sr, timeline_suite());
	srunner_add_suite(sr, procread_suite());
	srunner_add_suite(sr, names_suite());
	srunner_add_suite(sr, msg_suite());
	srunner_add_suite(sr, out_suite());
	srunner_add_suite(sr, timerlimits_suite());
	srunner_add_suite(sr, sigview_suite());
	srunner_add_suite(sr, markers_suite());
	srunner_add_suite(sr, summary_suite());
	srunner_add_suite(sr, vfork_suite());
	srunner_add_suite(sr, altstack_suite());
	srunner_add_suite(sr, mappings_suite());
	srunner_add_suite(sr, wallmask_suite());
	srunner_add_suite(sr, wallacct_suite());
	srunner_add_suite(sr, alloc_suite());
	srunner_add_suite(sr, walllist_suite());
	srunner_add_suite(sr, itt_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
