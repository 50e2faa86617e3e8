/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * launch.c: starting a command the way pcprof's commands do, in one
 * place: found as a shell finds it, with libpc.so preloaded, in a process
 * group of its own, SIGINT, SIGTERM and SIGHUP passed on or made to end
 * it (and for run every other signal passed on, and a SIGKILL of pcprof
 * made to kill it), waited for with its resource usage. run.c, compare_runs.c
 * and annotate.c (objdump) call it. None of it is AS-safe.
 */
#ifndef PC_LAUNCH_H
#define PC_LAUNCH_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

/* The process group the command gets. */
enum launch_group {
	LAUNCH_GROUP_SAME,		/* pcprof's (objdump) */
	LAUNCH_GROUP_OWN,		/* its own, always (compare) */
	LAUNCH_GROUP_UNLESS_FRONT,	/* its own unless pcprof is in the
					 * foreground of its terminal (run) */
};

/* What SIGINT, SIGTERM and SIGHUP sent to pcprof do to the command. */
enum launch_stops {
	LAUNCH_STOPS_NONE,	/* nothing: pcprof's dispositions stand */
	LAUNCH_STOPS_PASS,	/* passed on as they come, and so is every
				 * other signal that can be caught but
				 * SIGCHLD; the command gets
				 * PR_SET_PDEATHSIG SIGKILL (run) */
	LAUNCH_STOPS_END,	/* the command's group gets SIGTERM, then
				 * SIGKILL; launch_catch_stops installs it
				 * (compare) */
};

struct launch {
	const char *exe;	/* the file to run (launch_find's) */
	char **argv;
	enum launch_group group;
	enum launch_stops stops;
	const char *input;	/* standard input from this file, */
	const char *log;	/* output and errors to this one, or NULL */
	int capture;		/* 1: standard output into a pipe */
	const char *pc_out;	/* PC_OUT in the child, or NULL */
	/* NULL: a file exec refuses as ENOEXEC is run by /bin/sh, and
	 * launch_wait says why one could not run, with a shell's status;
	 * else the child says it on its standard error, prefixed by this,
	 * and exits 127 */
	const char *say_as;
	/* filled in */
	pid_t pid;
	int output;		/* capture's end to read (close-on-exec) */
	int exec_err;		/* the errno of an exec that failed, or 0 */
	int status;		/* the wait status */
	struct rusage ru; /* the command's and its waited-for children's */
};

/* The file a shell runs for cmd, into out: 0, or why there is none to run
 * (ENOENT; EACCES or EISDIR for a file found that cannot be run, named in
 * out). launch_not_found: one line on that, and the shell's status (127,
 * 126). */
int launch_find(const char *cmd, char *out, size_t size);
int launch_not_found(const char *cmd, const char *file, int err);

/* Why LD_PRELOAD would do nothing for the program at path (setuid,
 * static), or NULL. */
const char *launch_why_unprofilable(const char *path);

/* LD_PRELOAD for the commands: lib after what is preloaded already and,
 * when exe is not NULL, the ASan runtime that exe links before all of it.
 * setenv's 0 or -1. */
int launch_preload(const char *lib, const char *exe);
/* With the timeline on (PC_TIMELINE=1), INTEL_LIBITTNOTIFY64 for the
 * commands: libpc-itt.so beside lib, the ITT collector that gives
 * programs' ITT tasks, frames and counters as markers, unless the
 * variable names a collector already or there is none beside lib. */
void launch_itt(const char *lib);
/* With allocations asked for (PC_ALLOC set, not 0), libpc-alloc.so
 * beside lib, the malloc hooks, first in LD_PRELOAD (after an ASan
 * runtime that is first): before an allocator preloaded there, whose
 * malloc it forwards to. Nothing where there is none beside lib. */
void launch_alloc(const char *lib);

/* Catch SIGINT, SIGTERM and SIGHUP for LAUNCH_STOPS_END, with sa_flags
 * flags, unless they were ignored when pcprof started; the first call
 * also ignores SIGPIPE (the commands get it as found). */
void launch_catch_stops(int flags);
/* The stop signal pcprof was sent (the first for LAUNCH_STOPS_PASS, the
 * last for LAUNCH_STOPS_END), or 0. */
int launch_stopped(void);

/* Start l: 0 once its command runs, or the errno of an exec that failed
 * (l->exec_err; the child has ended and launch_wait reaps it). */
int launch_start(struct launch *l);
/* Wait for l's command to end, into l->status and l->ru: 1, or 0 when it
 * never ran (without say_as said in one line, l->status 126 or 127 as a
 * shell has it). launch_run: both. */
int launch_wait(struct launch *l);
int launch_run(struct launch *l);

/* descendants.c: pcprof's descendants now that run, breadth first (its
 * children, then theirs), its ended children reaped first: how many,
 * their pids in *out (malloc'd). Not AS-safe. */
size_t launch_descendants(pid_t **out);

/* End by the signal pcprof was stopped by, else as status says: the exit
 * code, where no signal ends pcprof. */
int launch_end_like(int status);
/* The same, stdio left unflushed: AS-safe (a fault's handler). */
int launch_end_like_from_handler(int status);

#endif
