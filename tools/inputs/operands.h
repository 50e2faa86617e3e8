/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof report's operands resolved once (operands.c), before any report
 * starts: what each operand is (a run's directory, a profile, an
 * executable), the run's processes, their profiles and manifests, the
 * processes --process picks and the one program a report of one program
 * reads; the reports read this and ask no operand again. None is
 * AS-safe; each says one line on bad input.
 */
#ifndef PC_OPERANDS_H
#define PC_OPERANDS_H

#include <limits.h>
#include <stddef.h>

#include "pcprof.h"
#include "inputs/runexe.h"

/* What the operands are, and so which report reads them. */
enum operands_kind {
	OPERANDS_PROGRAM,	/* EXE first (or nothing there): runexe.h's */
	OPERANDS_PLAIN,		/* a plain profile whose program its build-id
				 * found: exe */
	OPERANDS_RUN,		/* profiles or directories: the run's */
};

/* One process of the run: its profile and its manifest (NULL: none). */
struct operand_proc {
	char *profile;
	struct gmon_objects *man;
	uint64_t pid;		/* its manifest's, or its name's; 0: none */
	int chosen;		/* --process names it (all where none) */
};

struct operands {
	char **argv;		/* the command line's operands, as given */
	int argc;
	int peek;		/* runfiles_peek's answer for argv[0] */
	char **ops;		/* the operands, each profile's own files as
				 * their profile (runexe_operands); n of them */
	int n;
	int own_ops;		/* ops is malloc'ed here */
	struct run_listing own;	/* the first operand's directory, listed */
	struct run_listing *listing;	/* own, the caller's, or NULL */
	enum operands_kind kind;
	char exe[PATH_MAX];	/* OPERANDS_PLAIN */
	/* OPERANDS_RUN, of operands_gather: */
	int one;		/* a report of one program (re) */
	int view;		/* a report of the run's processes (procs) */
	struct runexe re;	/* one: that program and its profiles */
	struct operand_proc *procs;	/* view: every process, in order */
	size_t nprocs;
	int wall;		/* view: a chosen process recorded wall time */
};

/*
 * argv[0..argc) (argc > 0) of pcprof report, with r's listing (NULL
 * where none) and --process, told apart into o: its kind, and for
 * OPERANDS_PLAIN the executable (said in a note). 0, or -1 after one
 * line.
 */
PC_CHECKED int operands_resolve(struct operands *o, char **argv, int argc,
				struct run_listing *listing);
/* The same for operands given as they are (pcprof run's directory):
 * OPERANDS_RUN, ops borrowed. */
void operands_of_run(struct operands *o, char **ops, int n,
		     struct run_listing *listing);
/*
 * An OPERANDS_RUN o's processes, read once: with one, the one program
 * (--process process narrows it; several programs are an error that
 * lists them); with view, the run's processes that process picks (their
 * manifests said, profiles with none an error) and whether any recorded
 * wall time. 0, or -1 after one line.
 */
PC_CHECKED int operands_gather(struct operands *o, const char *process,
			       int one, int view);
void operands_release(struct operands *o);

/*
 * A whole run (runview.c): the report of o's processes (operands_gather's
 * view), one line per process, then the functions summed over the
 * processes. 0, or -1 after one line on bad input.
 */
int runview_report_resolved(struct operands *o, struct report_opts *r,
			    const struct symtab_opts *so, FILE *out);
/* The JSON report's head of that run, up to its "profile": key, whose
 * value the caller writes, then the closing brace: a report of one
 * program (--callgraph, --lines) has the run report's shape. 0, or -1
 * after one line. */
PC_CHECKED int runview_json_resolved(struct operands *o,
				     const struct report_opts *r,
				     const struct symtab_opts *so, FILE *out);

#endif
