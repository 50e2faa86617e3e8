/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpc's settings, one row each: the one place a new one is added. The
 * rows make struct pc_settings's fields (pc.h), settings.c's table, its
 * reader and the store into those fields, and the unit test's checks of
 * each row (tests/check_settings.c: its default, its ends, a value it
 * refuses with its line, and that libpc(7)'s ENVIRONMENT entry for it
 * says what doc says). Then the setting is used: start.c copies what the
 * configuration needs. Every environment variable libpc reads is a row,
 * but PC_TEST_REFUSE_PERF (taskclock.c, linked into pcprof as well).
 *
 * X(ID, NAME, field, type, parse, min, max, words, dflt, bad, want, refuse,
 *   doc): the variable NAME, read in the order of the rows (PC_SIGNAL
 * before PC_SNAPSHOT_SIGNAL), by parse (settings.c: parse_range and
 * parse_ms within [min, max], parse_word among words, whose index is the
 * value, parse_size and parse_bytes in bytes, parse_sig a signal,
 * parse_stacks, parse_text: the string as it is) into field, of type;
 * dflt when unset or empty, bad when refused, with the line
 * "libpc: NAME='VALUE' want". refuse is a value the row refuses (NULL: it
 * refuses none), doc words of its entry in libpc(7).
 */
#ifndef PC_SETTINGS_H
#define PC_SETTINGS_H

#define PC_SETTINGS(X)							\
	X(HZ, "PC_HZ", hz, long, parse_range, 1, PC_MAX_HZ, NULL,	\
	  PC_DEFAULT_HZ, PC_DEFAULT_HZ,					\
	  "is not a rate from 1 to 1000000; using 1000", "0",		\
	  "from 1 to 1000000")						\
	/* auto by default: task-clock where its sample is cheap (start.c \
	 * measures it), POSIX timers where it is dear, as in a virtual	\
	 * machine like the one the benchmarks ran on (+7 % at 1000 Hz	\
	 * against +0.4 %; docs/benchmarks.md) */			\
	X(TIMER, "PC_TIMER", timer, int, parse_word, 0, 0, timer_words, 2, 2, \
	  "is not posix, auto or taskclock; using auto", "perf",	\
	  "(the default): the task-clock event")	\
	/* auto (0) by default: a real-time signal the program leaves	\
	 * alone, so that SIGPROF and its masks stay entirely the	\
	 * program's (start.c chooses it) */				\
	X(SIGNAL, "PC_SIGNAL", sig, int, parse_sig, 0, 0, NULL, 0, 0,	\
	  "is not a signal libpc can use; using auto", "SIGKILL",	\
	  "The sampling signal, by name")				\
	X(CALLGRAPH, "PC_CALLGRAPH", callgraph, int, parse_word, 0, 0,	\
	  bit_words, 1, 1, "is not 0 or 1; using 1", "yes", "Default: 1") \
	X(UNWIND, "PC_UNWIND", unwinder, enum pc_unwinder, parse_word, 0, 0, \
	  unwind_words, PC_UNWIND_AUTO, PC_UNWIND_AUTO,			\
	  "is not auto, dwarf, fp or libunwind; using auto", "frame",	\
	  "(frame pointers)")						\
	X(DEPTH, "PC_DEPTH", depth, int, parse_range, 2, PC_MAX_DEPTH, NULL, \
	  PC_DEFAULT_DEPTH, PC_DEFAULT_DEPTH,				\
	  "is not a depth from 2 to 256; using 128", "1",		\
	  "2 to 256. Default: 128.")					\
	X(ARCS, "PC_ARCS", arcs, size_t, parse_range, 1024, 1L << 26, NULL, \
	  PC_DEFAULT_ARCS, PC_DEFAULT_ARCS,				\
	  "is not a count from 1024 to 67108864; using 65536", "1023",	\
	  "1024 to 67108864. Default: 65536")				\
	/* 0 none, 1 beside the profile, 2 at stacks_path */		\
	X(STACKS, "PC_STACKS", stacks, int, parse_stacks, 0, 0, NULL, 0, 1, \
	  "is too long a path; writing beside the profile", NULL,	\
	  "or a path: also write every distinct sampled stack")		\
	X(STACKS_MB, "PC_STACKS_MB", stacks_mb, size_t, parse_range, 1, 4096, \
	  NULL, 32, 32, "is not a size from 1 to 4096; using 32", "0",	\
	  "1 to 4096 MiB")						\
	X(SNAPSHOT_SIGNAL, "PC_SNAPSHOT_SIGNAL", snapshot_sig, int, parse_sig, \
	  0, 0, NULL, 0, 0,						\
	  "is not a signal libpc can use; no snapshots on a signal",	\
	  "STOP", "on which libpc writes a snapshot")			\
	X(SNAPSHOT_INTERVAL, "PC_SNAPSHOT_INTERVAL", snapshot_interval_ms, \
	  long, parse_ms, 10, 86400000, NULL, 0, 0,			\
	  "is not seconds from 0.01 to 86400; no periodic snapshots",	\
	  "0.001", "Seconds (0.01 to 86400)")				\
	X(SCOPE, "PC_SCOPE", scope_all, int, parse_word, 0, 0, scope_words, \
	  0, 0, "is not main or all; using main", "everything",		\
	  "(the default): the main executable's code")			\
	X(VERBOSE, "PC_VERBOSE", verbose, int, parse_word, 0, 0, bit_words, \
	  0, 0, "is not 0 or 1; using 0", "2", "one line on standard error") \
	/* wall: off-CPU samples of every blocked thread too (wall.c) */ \
	X(CLOCK, "PC_CLOCK", clock_wall, int, parse_word, 0, 0, clock_words, \
	  0, 0, "is not cpu or wall; using cpu", "real",		\
	  "(the default): CPU time only")				\
	/* the wall sampler's rounds a second; wall.c says why 100 */	\
	X(WALL_HZ, "PC_WALL_HZ", wall_hz, long, parse_range, 1, 1000, NULL, \
	  PC_DEFAULT_WALL_HZ, PC_DEFAULT_WALL_HZ,			\
	  "is not a rate from 1 to 1000; using 100", "0",		\
	  "1 to 1000. Default: 100")					\
	/* the wall sampler's CPU, in percent of one CPU: 1 by default	\
	 * (the overhead that goes unnoticed); pcprof compare asks for	\
	 * more, as a gate's power grows with the rounds */		\
	X(WALL_BUDGET, "PC_WALL_BUDGET", wall_budget, int, parse_range,	\
	  1, 100, NULL, 1, 1,						\
	  "is not a percentage from 1 to 100; using 1", "101",		\
	  "in percent of one CPU, 1 to 100")				\
	/* the most the live file may take on disk or in memory; 0: as	\
	 * much as the program's text, threads and stacks need (live.c) */ \
	X(LIVE_MAX, "PC_LIVE_MAX", live_max, uint64_t, parse_size, 64L << 10, \
	  1L << 40, NULL, 0, 0,						\
	  "is not a size from 64K to 1024G, or 0; no cap", "1K",	\
	  "may take on disk or in memory")				\
	/* the timeline (timeline.c): each sample's time and thread, and \
	 * the program's markers */					\
	X(TIMELINE, "PC_TIMELINE", timeline, int, parse_word, 0, 0, bit_words, \
	  0, 0, "is not 0 or 1; using 0", "yes", "keep a timeline")	\
	X(TIMELINE_MAX, "PC_TIMELINE_MAX", timeline_max, uint64_t,	\
	  parse_range, 64, 1L << 26, NULL, 1L << 18, 1L << 18,		\
	  "is not a count from 64 to 67108864; using 262144", "63",	\
	  "64 to 67108864")						\
	/* allocations sampled by bytes (alloc.c), only: without CPU	\
	 * samples; anything else still asks for them */		\
	X(ALLOC, "PC_ALLOC", alloc, int, parse_word, 0, 0, alloc_words, 0, 1, \
	  "is not 0, 1 or only; profiling allocations", "yes",		\
	  "profile allocations too")					\
	X(ALLOC_RATE, "PC_ALLOC_RATE", alloc_rate, uint64_t, parse_bytes, 1, \
	  4294967295L, NULL, PC_ALLOC_DEFAULT_RATE, PC_ALLOC_DEFAULT_RATE, \
	  "is not a number of bytes from 1 to 4294967295; "		\
	  "sampling one allocation in 512 KiB", "0",			\
	  "1 to 4294967295")						\
	/* the output's name (start.c, names.c): PC_OUT, else glibc's	\
	 * GMON_OUT_PREFIX; PC_ROOT, the pid of a run's first process;	\
	 * PC_RECOVER, set by pcprof in its finisher of a live file	\
	 * (start.c reads it first, alone, with pc_setting_text) */	\
	X(OUT, "PC_OUT", out, const char *, parse_text, 0, 0, NULL, 0, 0, \
	  "", NULL, "The output file.")					\
	X(OUT_PREFIX, "GMON_OUT_PREFIX", out_prefix, const char *, parse_text, \
	  0, 0, NULL, 0, 0, "", NULL, "as glibc's")			\
	X(ROOT, "PC_ROOT", root, const char *, parse_text, 0, 0, NULL, 0, 0, \
	  "", NULL, "in the first process of a run to its pid")		\
	X(RECOVER, "PC_RECOVER", recover, const char *, parse_text, 0, 0, \
	  NULL, 0, 0, "", NULL, "that finishes a live file")		\
	/* the test suite's stand-in for the task-clock probe's cost	\
	 * (timercost.c) */						\
	X(TEST_TIMER_COST_NS, "PC_TEST_TIMER_COST_NS", test_timer_cost,	\
	  const char *, parse_text, 0, 0, NULL, 0, 0, "", NULL,		\
	  "as the measured cost of a")

/* The rows' indexes: PC_S_HZ, ... */
enum pc_setting {
#define PC_SETTING_ID(id, ...) PC_S_##id,
	PC_SETTINGS(PC_SETTING_ID)
#undef PC_SETTING_ID
	PC_S_COUNT
};

#endif
