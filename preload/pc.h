/*
 * libpc.so's shared state and the functions its files call in each other.
 * Everything here has hidden visibility; preload/libpc.map lists what the
 * library exports.
 */
#ifndef PC_PC_H
#define PC_PC_H

#include <limits.h>
#include <signal.h>
#include <stdint.h>

#include "../gmon/gmon.h"
#include "profil.h"

#define PC_HIDDEN	__attribute__((visibility("hidden")))
#define PC_MAX_TEXT	8		/* executable PT_LOADs of the main program */
#define PC_DEFAULT_HZ	1000
#define PC_MAX_HZ	1000000
#define PC_SCALE	0x10000		/* 2-byte bins: exact at any alignment */

/* One executable segment of the main program and its counters. */
struct pc_text {
	struct pc_profil prof;		/* runtime offset, counters */
	uintptr_t link_low;		/* prof.offset - load bias */
	size_t map_len;			/* bytes mapped for prof.buf */
};

struct pc_state {
	/* read by the signal handler */
	volatile int running;		/* 0: samples are dropped */
	int sig;			/* sampling signal */
	int ntext;
	struct pc_text text[PC_MAX_TEXT];

	/* statistics, updated with relaxed atomics */
	uint64_t signals;		/* handler runs for our timer */
	uint64_t samples;		/* sum of 1 + si_overrun */
	uint64_t outside;		/* weighted samples outside the text */
	uint64_t foreign;		/* signals that were not our timer's */
	uint64_t threads;		/* threads whose timer was armed */
	uint64_t timer_failures;	/* threads left unsampled */

	/* configuration, fixed after start-up */
	long hz;
	long interval_ns;
	int verbose;
	uintptr_t bias;
	uint8_t spare[GMON_SPARE_SIZE];
	char path[PATH_MAX];		/* absolute output path */
	char prefix[PATH_MAX];		/* GMON_OUT_PREFIX, absolute, or "" */
	struct sigaction old_action;	/* the disposition we replaced */
};

extern struct pc_state pc PC_HIDDEN;

/* start.c: a fixed message on stderr, prefixed "libpc: ". AS-safe. */
void pc_say(const char *a, const char *b, const char *c) PC_HIDDEN;

/* sample.c: install the handler for pc.sig. Not AS-safe; 0 or -errno. */
int pc_sample_install(void) PC_HIDDEN;

/* threads.c: arm/disarm the calling thread's CPU-time timer. AS-safe. */
int pc_thread_arm(void) PC_HIDDEN;
void pc_thread_disarm(void) PC_HIDDEN;
/* threads.c: set up pthread_create interposition. Not AS-safe. */
int pc_threads_init(void) PC_HIDDEN;

/* dump.c: write pc's histogram to path atomically. AS-safe; 0 or -errno. */
int pc_dump(const char *path) PC_HIDDEN;
/* dump.c: the closing summary line for PC_VERBOSE. AS-safe. */
void pc_dump_summary(const char *path, int err) PC_HIDDEN;

/* lifecycle.c: at-exit and fork handling. Not AS-safe. */
void pc_lifecycle_init(void) PC_HIDDEN;

#endif
