/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Profiles for the tools people already read them in (export.c): the
 * samples of one process, or of every process of a run, as a neutral set
 * of stacks of locations (an address in an object, its function and
 * source line) with counts, by process. export_pprof.c, export_text.c
 * write it as go tool pprof, speedscope and callgrind_annotate read it
 * (writers/export_out.h).
 *
 * Nothing is left out: the samples no symbol covers are "[unknown]", those
 * of a PC_SCOPE=main profile outside the executable "[outside the
 * executable]", and where stacks were recorded the samples that have none
 * (a full stacks table) "[no stack recorded]".
 */
#ifndef PC_EXPORT_H
#define PC_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "pcprof.h"

struct xp_map {			/* an object */
	uint32_t file;		/* string: its path, or its name */
	uint32_t build_id;	/* string: hex; 0 for none */
	uint64_t lo, hi;	/* its locations' link-time addresses */
	int has_lines;		/* some location has a source line */
};

struct xp_func {
	uint32_t name;		/* string */
	uint32_t map;		/* 1 + index into maps; 0 for none */
	uint32_t file;		/* string: the source file of its first line
				 * seen; 0 where not known */
	int line;		/* that line */
	int start_line;		/* the line it is declared at; 0 where not
				 * known */
};

struct xp_loc {
	uint32_t map;		/* 1 + index into maps; 0 for none */
	uint64_t addr;		/* link-time address in the object */
	uint32_t func;		/* the function whose symbol holds it */
	uint32_t file;		/* string: its source file; 0 where not known */
	int line;
	uint32_t inlined;	/* 1 + the function inlined there, or 0 */
	uint32_t call_file;	/* inlined: where func calls it (string, 0 if */
	int call_line;		/* not known) */
	uint64_t sym;		/* 1 + the link address its symbol starts at
				 * (a function's pieces differ), 0 for none */
};

struct xp_sample {
	size_t first; /* into pool: location indexes, the leaf first */
	uint32_t depth;
	uint32_t group;
	uint32_t thread;	/* 1 + index into threads; 0 where not known */
	int off; /* off-CPU: its leaf is a wait ("[off-cpu: ..]") */
	uint32_t wait_pid;	/* off-CPU in wait4 or waitid: the child waited
				 * for (its leaf names the site alone); 0 */
	double count;		/* samples (off-CPU time in samples at the
				 * group's rate) */
	uint32_t kind;		/* alloc_all: count's gmon_alloc_kind */
	uint64_t t;		/* a window's (window.c): its CLOCK_MONOTONIC
				 * ns, from the timeline; else 0 */
};

struct xp_thread {		/* a thread of a process, from its stacks */
	uint32_t group;
	uint64_t tid;
	uint32_t name;		/* string: the last name libpc saw; 0 if none */
	double samples;		/* all of it: CPU and off-CPU */
	double off;		/* of which off-CPU */
};

struct xp_group {		/* a process */
	uint32_t name;		/* string: "PROGRAM" */
	uint64_t pid;		/* 0 where not known */
	uint32_t rate;		/* samples per CPU second */
	double samples;
	uint64_t wall_hz;	/* a wall profile's off-CPU rate (the lowest
				 * it adapted to); 0 for none */
};

struct xp_arc { /* a call-graph arc, where there are no stacks */
	uint32_t caller, callee;	/* funcs */
	double samples;		/* with the arc on the stack */
};

struct xp_index;

struct export {
	char **strs;		/* strs[0] is "" */
	size_t nstrs;
	struct xp_map *maps;
	size_t nmaps;
	struct xp_func *funcs;
	size_t nfuncs;
	struct xp_loc *locs;
	size_t nlocs;
	struct xp_sample *samples;
	size_t nsamples;
	uint32_t *pool;
	size_t npool;
	struct xp_group *groups;
	size_t ngroups;
	struct xp_arc *arcs;
	size_t narcs;
	struct xp_thread *threads;
	size_t nthreads;
	int stacks;		/* some group's samples are whole stacks */
	enum pc_clock clock;	/* what the samples are (set before export_add):
				 * cpu, wall or off, never auto */
	uint64_t time_ns; /* when the first process started; 0 if not known */
	uint64_t duration_ns;	/* from then to the last profile's writing */
	double total;		/* samples */
	double off;		/* of which off-CPU */
	char *source;		/* the first profile read, for messages */
	struct timelines *timeline;	/* PROFILE.timeline's, or NULL
					 * (model/timeline.h) */
	int alloc_all;		/* an allocation metric's clock: the samples
				 * of all four metrics, each of its kind */
	uint64_t alloc_rate;	/* an allocation profile's rate in bytes */
	int alloc_files;	/* allocation profiles read: the processes'
				 * summed where several */
	/* private */
	struct xp_index *ix;
	uint64_t end_ns;
	size_t cap_strs, cap_maps, cap_funcs, cap_locs, cap_samples, cap_pool,
	       cap_groups, cap_arcs, cap_threads;
};

/* An empty export of CPU samples (x->clock: set it before export_add for
 * another). */
void export_init(struct export *x);
/*
 * Add the samples of in's run 0 (loaded: inputs_load) as one group, named
 * program with pid: from its stacks files (FILE.stacks, or stacks_file)
 * where there are any, else one location per sampled address and the
 * call-graph arcs. Under x->clock wall or off, a wall profile's off-CPU
 * records are samples too, their leaf the wait (stack_weight). Source lines
 * come from the objects' DWARF (lines.c), separate debug files looked for as so
 * says. 0, or -1 after one line on bad input.
 */
PC_CHECKED int export_add(struct export *x, const struct pc_inputs *in,
			  const struct symtab_opts *so, const char *stacks_file,
			  const char *program, uint64_t pid);
void export_release(struct export *x);

/* The location "[no stack recorded]" (export.c). */
uint32_t export_no_stack_loc(struct export *x);

/* window.c: keep only the timeline's samples from r->from to r->to
 * seconds after the run's start and, with r->marker, inside the markers
 * of that name (a thread's marker: that thread's samples; a marker
 * file's: every thread's), as the export's samples (whole stacks) and
 * its timeline's; 0, or -1 after one line where there is no timeline or
 * no such marker. */
PC_CHECKED int export_keep_window(struct export *x,
				  const struct report_opts *r);

/* Keep only the samples of the threads that which names (a tid, or a
 * thread name); 0, or -1 after one line when none is. */
PC_CHECKED int export_keep_thread(struct export *x, const char *which);

/* A thread's time in one wait (the leaf function of its off-CPU
 * samples). */
struct thread_wait {
	uint32_t thread, func;
	double samples;
};

/* export_threads.c: every thread's waits summed, by thread then most
 * first; how many in *n. The caller frees it. */
struct thread_wait *export_thread_waits(const struct export *x, size_t *n);

/* The export's leaves as a flat profile of its own symbol table (function
 * i is funcs[i], in its object), for report_print. The names stay x's;
 * export_flat_release frees the rest. */
void export_flat(const struct export *x, struct symtab *st, struct flat *f);
void export_flat_release(struct symtab *st, struct flat *f);
/* The children that the export's waits for a child waited for, by site
 * and pid, into *v (wait_children_add's; sorted by site, then time), in
 * seconds. */
struct wait_child;
void export_wait_children(const struct export *x, struct wait_child **v,
			  size_t *n, size_t *cap);
/* The call graph of the export's stacks, in export_flat's functions: each
 * function's total (the samples whose stack holds it, once) and each
 * caller-callee arc's samples (once a stack). callgraph_release frees it. */
void export_callgraph(const struct export *x, struct callgraph *cg);

/* -1 after one line if r asks for what an export does not take
 * (--callgraph, --by-object, --lines: it holds them all), else 0. */
struct report_opts;
PC_CHECKED int export_refuse(const struct report_opts *r);
/* "pprof", "speedscope" or "callgrind". */
const char *export_format_name(enum format format);

#endif
