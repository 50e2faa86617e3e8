/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Samples by source line (lines.c), for pcprof report --lines and pcprof
 * annotate: libdw reads the line tables of the objects that were sampled.
 */
#ifndef PC_LINES_H
#define PC_LINES_H

#include "base/base.h"
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

struct pc_inputs;
struct gmon_profile;
struct lines_module;
struct symtab_opts;

/* One source line of one function, or where the code has no line
 * information (file NULL) one offset of it. */
struct line_row {
	const char *file;	/* the source file, as DWARF names it */
	int line;
	uint32_t func;		/* the function the code is in (symtab) */
	const char *inlined;	/* the function inlined there, or NULL */
	uint64_t offset; /* no line information: from the symbol's start */
	double samples;
};

struct lines {
	struct line_row *rows;	/* most samples first */
	size_t nrows, cap;
	double total;		/* every sample, as the flat profile's */
	double unknown;		/* in no symbol */
	double outside;		/* outside the executable (PC_SCOPE=main) */
	double nolines;		/* in code with no line information */
	uint32_t rate;
	int have_lines;		/* some sampled object had line tables */
	/* private */
	const struct pc_inputs *in;
	const struct symtab_opts *so;
	struct lines_module *mods;
	size_t nmods;
};

/* The lines of p's samples, named with in's symbols and objects; separate
 * debug files are looked for as so says. The rows' strings live until
 * lines_release. 0, or -1 after lines_check's line. */
PC_CHECKED int lines_build(struct lines *L, const struct pc_inputs *in,
			   const struct gmon_profile *p,
			   const struct symtab_opts *so);
void lines_release(struct lines *L);
/* -1 after one line naming the file if an object's DWARF that L read
 * (or lines_at looked in since) is corrupt, else 0. lines_build checks
 * it. */
int lines_check(const struct lines *L);
/* The line of link-time address addr of object obj (0: the executable),
 * as lines_build credits it: 1 with *file, *line and *inlined (or NULL)
 * set, 0 where no line covers it. */
int lines_at(struct lines *L, uint32_t obj, uint64_t addr, const char **file,
	     int *line, const char **inlined);
/* The same, the whole line (dwlines.h): with where inlined code is called. */
struct dwline;
int lines_line_at(struct lines *L, uint32_t obj, uint64_t addr,
		  struct dwline *out);

/* lines_out.c: print L as ro->format (text, json or csv), ro->top rows. */
struct symtab;
struct report_opts;
void lines_print(FILE *out, const struct lines *L, const struct symtab *st,
		 const struct report_opts *ro);

#endif
