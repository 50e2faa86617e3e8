/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fixed model that the writers' suites print (check_fixture.c), and
 * their golden files: what a writer prints from it is compared byte for
 * byte with tests/golden/NAME. UPDATE_GOLDEN=1 build/tests/unit writes
 * the golden files afresh from what the writers print (then read the
 * diff before committing it).
 */
#ifndef PC_CHECK_FIXTURE_H
#define PC_CHECK_FIXTURE_H

#include <stdio.h>

#include "pcprof.h"

struct export;

/*
 * The fixed export: one process, "demo" (pid 100, 100 samples a second),
 * of two threads, demo (tid 100) and worker (tid 101), in two objects
 * (/usr/bin/demo, with source lines, and /lib/libc.so.6), whose stacks
 * are main;work (40 samples), main;work;fib;fib (25, recursion),
 * main;work;memcpy (10), main;work (helper inlined);ns::f<a;b>"q" (5, a
 * name that needs escaping in every format), main alone (2, of no
 * thread), and under a wall or off clock main;work;[off-cpu: nanosleep]
 * (20 samples' time off the CPU); with timeline set, the timeline of
 * those samples over 0.25 s and four markers (an interval, an instant,
 * a counter of two values, a marker file's interval). Built afresh
 * each call; export_release frees it.
 */
void fixture_export(struct export *x, enum pc_clock clock, int timeline);

/*
 * The same process's allocation profile (pcprof run --alloc) at one
 * sample in 4096 bytes, under --metric alloc-bytes: at main;work 100
 * allocations of 409600 bytes, 10 of them in use at exit; at
 * main;work;fib;fib 50 of 204800, none in use; at main;work;memcpy one of
 * 1 MiB, in use (256 samples); at main;work;[off-cpu: nanosleep] 3 of
 * 12288, in use (a site whose leaf is no function's: work's). With all,
 * the records of every kind (--alloc, pprof: x->alloc_all), else those
 * of alloc-bytes alone, as export_add reads them.
 */
void fixture_alloc_export(struct export *x, int all);

/*
 * The allocation events of x's timeline (fixture_export's, made with
 * timeline set; as PC_ALLOC with PC_TIMELINE records them at rate 1):
 * demo allocates 4096 bytes at main;work and frees them, 1 MiB at
 * main;work;memcpy kept, then 512 at main;work at the address the 4096
 * had, kept; worker allocates 64 at main;work;fib;fib and frees them,
 * then 128 of no stack recorded, kept. Retained at the end: demo's
 * 1049088 bytes, worker's 128.
 */
void fixture_timeline_allocs(struct export *x);

/* A stream in memory for a writer to print into. */
FILE *golden_open(void);
/* Close out (golden_open's) and compare what it holds with
 * tests/golden/name; under UPDATE_GOLDEN=1, write it there instead. Fails
 * the test, naming the first line that differs. */
void golden_check(FILE *out, const char *name);
/* The same of bytes already in memory. */
void golden_check_bytes(const void *buf, size_t len, const char *name);
/* Notes name as checked where its test was skipped (a tool missing), so
 * that golden_suite does not call it stale. */
void golden_skipped(const char *name);

#endif
