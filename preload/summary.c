/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PC_VERBOSE's closing line for each file written, and the one-line reason
 * when a write failed (always printed). AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"	/* PC_VERSION, from VERSION by the Makefile */
#include "pc.h"
#include "live.h"
#include "banned.h"

/* The version, for whoever holds libpc.so: dlsym(handle, "pc_version"), or
 * strings(1); the PC_VERBOSE line and the manifest say it too, so that a
 * profile says which libpc wrote it. */
__attribute__((visibility("default"))) const char pc_version[] = PC_VERSION;

/* v with one decimal, rounded */
static void
line_fixed1(struct pc_line *l, double v)
{
	uint64_t t = (uint64_t)(v * 10 + 0.5);

	pc_line_u64(l, t / 10);
	pc_line_str(l, ".");
	pc_line_u64(l, t % 10);
}

static void
line_out(struct pc_line *l)
{
	l->buf[l->len++] = '\n';
	pc_write_err(l->buf, l->len);
}

static const char *
error_text(int err)
{
	switch (-err) {
	case ELOOP:	return "it is a symbolic link";
	case EISDIR:	return "it is a directory";
	case ENOSPC:	return "no space left on the device";
	case EDQUOT:	return "disk quota exceeded";
	case EACCES:	return "permission denied";
	case EPERM:	return "operation not permitted";
	case EROFS:	return "read-only file system";
	case ENOENT:	return "no such directory";
	case ENAMETOOLONG: return "file name too long";
	case EMFILE: case ENFILE: return "too many open files";
	default:	return "write failed";
	}
}

/* "; N text" when n is not 0. */
static void
line_count(struct pc_line *l, uint64_t n, const char *text)
{
	if (!n)
		return;
	pc_line_str(l, "; ");
	pc_line_u64(l, n);
	pc_line_str(l, text);
}

/* Microseconds with one decimal, rounded as pcprof report rounds them. */
static void
line_us(struct pc_line *l, long ns)
{
	uint64_t tenths = GMON_US_TENTHS(ns);

	pc_line_u64(l, tenths / 10);
	pc_line_str(l, ".");
	pc_line_u64(l, tenths % 10);
	pc_line_str(l, " us");
}

/* Why the timer is what it is: " (task-clock refused: errno 13)", or
 * " (chosen: a task-clock sample costs 18.2 us here, over 5.0 us)". */
static void
line_timer_why(struct pc_line *l)
{
	if (pc_timer_refused()) {
		pc_line_str(l, " (task-clock refused: errno ");
		pc_line_u64(l, (uint64_t)pc_timer_refused());
		pc_line_str(l, ")");
	} else if (pc_cfg->timer_how == GMON_TIMER_MEASURED) {
		pc_line_str(l, " (chosen: a task-clock sample costs ");
		line_us(l, pc_cfg->timer_cost_ns);
		pc_line_str(l, pc_cfg->timer_cost_ns < PC_TASKCLOCK_CHEAP_NS ? " here, under " :
			    " here, over ");
		line_us(l, PC_TASKCLOCK_CHEAP_NS);
		pc_line_str(l, pc_cfg->timer_cost_earlier ? ", as measured earlier this boot)" :
			    ")");
	} else {
		pc_line_str(l, " (PC_TIMER)");
	}
}

/* The samples, the rates over cpu seconds, the threads and the timer. */
static void
line_rates(struct pc_line *l, double cpu)
{
	pc_line_u64(l, pc_stats->samples);
	pc_line_str(l, " samples (");
	pc_line_u64(l, pc_stats->signals);
	pc_line_str(l, " signals) in ");
	line_fixed1(l, cpu);
	pc_line_str(l, " s CPU; rate ");
	pc_line_u64(l, (uint64_t)pc_cfg->hz);
	pc_line_str(l, " Hz requested, ");
	pc_line_u64(l, cpu > 0 ? (uint64_t)(pc_stats->samples / cpu + 0.5) : 0);
	pc_line_str(l, " Hz effective, ");
	pc_line_u64(l, cpu > 0 ? (uint64_t)(pc_stats->signals / cpu + 0.5) : 0);
	pc_line_str(l, " signals/s; ");
	pc_line_u64(l, pc_stats->threads);
	pc_line_str(l, " threads; timer ");
	pc_line_str(l, pc_timer_kind() == PC_TIMER_TASKCLOCK ? "taskclock" : "posix");
	line_timer_why(l);
}

/* Where the samples outside the text went, and the call graph's counts. */
static void
line_scope_and_graph(struct pc_line *l)
{
	pc_line_str(l, "; ");
	pc_line_u64(l, pc_stats->outside);
	pc_line_str(l, " samples outside the text");
	if (pc_cfg->scope_all) {
		struct pc_object_counts n;

		pc_objects_counts(&n);
		pc_line_str(l, "; scope all: ");
		pc_line_u64(l, n.others);
		pc_line_str(l, " other objects, ");
		/* as the manifest counts them: JIT code's are kept by PC */
		pc_line_u64(l, n.in_none);
		pc_line_str(l, " samples in none");
	}
	if (!pc_cfg->callgraph)
		return;
	pc_line_str(l, "; call graph: ");
	pc_line_u64(l, pc_stats->stacks_walked ?
			       pc_stats->frames / pc_stats->stacks_walked :
			       0);
	pc_line_str(l, " frames a stack (");
	pc_line_str(l, pc_cfg->unwinder == PC_UNWIND_FP ? "fp" :
		     pc_cfg->unwinder == PC_UNWIND_LIBUNWIND ? "libunwind" : "dwarf");
	pc_line_str(l, "), ");
	pc_line_u64(l, pc_stats->arcs_dropped);
	pc_line_str(l, " arc samples dropped (table full)");
	if (pc_cfg->stacks) {
		pc_line_str(l, ", ");
		pc_line_u64(l, pc_stats->stacks_dropped);
		pc_line_str(l, " stack samples dropped");
	}
}

/* Threads the wall sampler had no room for, and why. */
static void
line_unfollowed(struct pc_line *l)
{
	int why;
	size_t n = pc_wall_unfollowed(&why);

	line_count(l, n, why == PC_LIVE_LOCKED ?
		   " threads not followed (the program locked its memory: mlockall)" :
		   why == PC_LIVE_UNMAPPED ? " threads not followed (no address space left)" :
		   " threads not followed (32768 at most)");
}

/* The wall sampler's figures (PC_CLOCK=wall). */
static void
line_wall(struct pc_line *l)
{
	uint64_t w[GMON_WALLINFO_WORDS];

	if (!pc_cfg->clock_wall)
		return;
	pc_wall_info(w);
	pc_line_str(l, "; wall clock: ");
	pc_line_u64(l, w[GMON_WALL_TICKS]);
	pc_line_str(l, w[GMON_WALL_TICKS] == 1 ? " round at " : " rounds at ");
	pc_line_u64(l, w[GMON_WALL_HZ]);
	pc_line_str(l, " Hz");
	if (w[GMON_WALL_HZ_LOW] < w[GMON_WALL_HZ]) {
		pc_line_str(l, " (each thread looked at ");
		if (w[GMON_WALL_HZ_LOW])
			pc_line_u64(l, w[GMON_WALL_HZ_LOW]);
		else
			pc_line_str(l, "under 1");
		pc_line_str(l, " Hz on average, to keep its cost under ");
		pc_line_u64(l, (uint64_t)pc_cfg->wall_budget);
		pc_line_str(l, " % of a CPU, at ");
		pc_line_u64(l, w[GMON_WALL_THREADS]);
		pc_line_str(l, " threads)");
	}
	pc_line_str(l, ", off-CPU stacks: ");
	pc_line_u64(l, w[GMON_WALL_FULL]);
	pc_line_str(l, " whole, ");
	pc_line_u64(l, w[GMON_WALL_CUT]);
	pc_line_str(l, " cut short, ");
	pc_line_u64(l, w[GMON_WALL_NONE]);
	pc_line_str(l, " the wait alone");
	line_count(l, w[GMON_WALL_DROPPED], " lost (the stacks table full)");
	line_unfollowed(l);
	pc_line_str(l, "; its own CPU ");
	line_fixed1(l, (double)pc_stats->wall_cpu_ns / 1e9 * 1000);
	pc_line_str(l, " ms");
}

/* The live file's size, and whether it could grow as it needed. */
static void
line_live(struct pc_line *l)
{
	int why;
	uint64_t bytes = pc_live_footprint(&why);

	if (!pc_live_active())
		return;
	pc_line_str(l, "; live file ");
	pc_line_u64(l, (bytes + 1023) / 1024);
	pc_line_str(l, " KiB");
	if (why) {
		pc_line_str(l, ", stopped growing (");
		pc_line_str(l,
			    why == PC_LIVE_CAPPED ?
				    "PC_LIVE_MAX" :
			    why == PC_LIVE_UNMAPPED ?
				    "no address space left to map more" :
			    why == PC_LIVE_LOCKED ?
				    "the program locked its memory: mlockall" :
			    why == ENOMEM ?
				    "its memory cgroup is near its limit" :
				    error_text(-why));
		pc_line_str(l, ")");
	}
	line_count(l, pc_stats->live_unplaced + pc_stats->live_waiting,
		   " samples not placed (no room in the live file)");
}

/* What the timeline kept (timeline.c). */
static void
line_timeline(struct pc_line *l)
{
	uint64_t k[4];

	pc_timeline_kept(k);
	pc_line_str(l, "; timeline ");
	pc_line_u64(l, k[0]);
	pc_line_str(l, " of ");
	pc_line_u64(l, k[1]);
	pc_line_str(l, k[1] > k[2] ? " samples kept (a uniform sample of the run: "
			      "PC_TIMELINE_MAX)" : " samples kept");
	if (k[3]) {
		pc_line_str(l, ", ");
		pc_line_u64(l, k[3]);
		pc_line_str(l, " markers");
	}
}

void
pc_dump_summary(const char *path, int err)
{
	struct timespec ts;
	double cpu = 0;
	char lbuf[PATH_MAX + 512];
	struct pc_line l = { lbuf, sizeof(lbuf), 0 };

	if (err) {
		l.len = 0;
		pc_line_str(&l, "libpc: cannot write '");
		pc_line_str(&l, path);
		pc_line_str(&l, "': ");
		pc_line_str(&l, error_text(err));
		pc_line_str(&l, "; profile not written");
		line_out(&l);
	}
	if (!pc_cfg->verbose)
		return;
	/* this image's CPU only: an exec keeps the process's clock going */
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
		cpu = (double)(ts.tv_sec - pc->cpu_start.tv_sec) +
		      (double)(ts.tv_nsec - pc->cpu_start.tv_nsec) / 1e9;
	l.len = 0;
	pc_line_str(&l, "libpc: ");
	pc_line_str(&l, err ? "not written " : "wrote ");
	pc_line_str(&l, path);
	pc_line_str(&l, ": ");
	line_rates(&l, cpu);
	line_scope_and_graph(&l);
	line_wall(&l);
	line_live(&l);
	if (pc_cfg->timeline)
		line_timeline(&l);
	pc_line_str(&l, "; signal ");
	pc_line_u64(&l, (uint64_t)__atomic_load_n(&pc_sampling_sig,
						  __ATOMIC_RELAXED));
	if (pc_cfg->pg_built)
		pc_line_str(&l, " (the program is built with -pg: SIGPROF is glibc's)");
	line_count(&l, pc_stats->snapshots, " snapshots");
	line_count(&l, pc_stats->lost_blocked,
		   " of the program's own signals held while it blocked them");
	line_count(&l, pc_stats->eintr_kept,
		   " calls ended with EINTR for the program's signal that came with a sample");
	line_count(&l, pc_stats->timer_failures,
		   " threads unsampled (no timer)");
	line_count(&l, pc_stats->no_room, " samples without a call chain (no room on their stack)");
	line_count(&l, pc_stats->foreign, " foreign signals passed on");
	pc_line_str(&l, "; libpc " PC_VERSION);
	line_out(&l);
}
