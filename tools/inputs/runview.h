/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A whole run's processes (runview.c), as runview.c reads and sums them
 * and runview_out.c prints them: one struct runview_proc a process, its
 * functions' rows summed over the processes by object and name.
 */
#ifndef PC_RUNVIEW_H
#define PC_RUNVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "pcprof.h"

struct runview_proc {
	char *profile;		/* the process's gmon file */
	struct gmon_objects *manifest;	/* its manifest, until read_proc's
					 * inputs take it */
	char *exe;		/* its program, as its manifest records it */
	const char *program;	/* the program's file name, in exe */
	uint64_t pid;		/* 0 where not known */
	uint64_t threads;	/* 0 where not known */
	double seconds;		/* CPU seconds sampled, all objects */
	double shown;		/* the seconds of the view's clock: CPU, wall
				 * (CPU and off-CPU) or off-CPU */
	double off;		/* off-CPU seconds (a wall-clock profile's) */
	double samples;
	uint32_t rate;
	/* the process's CPU clock as the manifest read it (have_cpu): */
	int have_cpu, ended, end_signal;
	/* the timer's signals and the samples they stood for (0: not said) */
	uint64_t signals, signal_samples;
	uint64_t started, cpu_start, cpu_stop, cpu_write;
	/* CPU seconds not sampled: before libpc started in this image (the
	 * exec and the dynamic loader, or the fork), while sampling ran but
	 * in no sample (each thread's last tick, mostly; any signal lost),
	 * and while libpc wrote the profile */
	double before, tail, writing;
	int timer, timer_how;	/* GMON_TIMER_*, as the manifest says */
	uint64_t timer_cost;	/* ns, 0 when not measured */
};

struct runview_row {
	char *name, *object;
	double samples, seconds;
};

struct wait_child;

struct runview {
	struct runview_proc *procs;
	size_t nprocs;
	struct runview_row *rows;
	size_t nrows, cap;
	size_t left_out;	/* profiles with no manifest */
	int all_processes;	/* --processes: a line for each, however many */
	enum pc_clock clock;	/* the view's: cpu, wall or off */
	double cpu_total;	/* every process's CPU seconds sampled */
	struct wait_child *children; /* the waits for children: by site, pid */
	size_t nchildren, cap_children;
};

#endif
