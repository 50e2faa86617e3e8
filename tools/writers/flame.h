/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Flame graphs: call stacks with sample counts, merged into a tree and
 * written as a self-contained interactive SVG (hover for details, click to
 * zoom). For the pcprof subcommands that have stacks to show.
 */
#ifndef PC_FLAME_H
#define PC_FLAME_H

#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

/* What a frame's code is, for its colour: by object, or by its change. */
enum flame_kind {
	FLAME_KIND_NONE, /* not said: coloured by its name */
	FLAME_KIND_EXE,  /* the executable */
	FLAME_KIND_LIBC, /* libc.so */
	FLAME_KIND_LIB,  /* another shared object */
	FLAME_KIND_ANON, /* no object: [anonymous code], [unknown] */
	/* a differential graph's: the function's change (pcprof diff) */
	FLAME_KIND_SLOWER, /* significantly slower: red */
	FLAME_KIND_FASTER, /* significantly faster: blue */
	FLAME_KIND_SAME,   /* no significant change: grey */
	FLAME_KIND_OFFCPU, /* a wait of a wall-clock profile:
			      "[off-cpu: CALL]", violet */
	FLAME_KINDS
};

/* One call stack and how often it was seen. */
struct flame_stack {
	const char *const
		*frames; /* function names, root (outermost caller) first */
	size_t depth;
	double count;			/* samples */
	const unsigned char *kinds; /* per frame, enum flame_kind; or NULL */
};

/*
 * Write a self-contained interactive SVG flame graph of stacks[0..n) to out.
 * title is shown at the top. Returns 0, or -1 with errno on a write error.
 * The page's script zooms into a frame clicked, searches (a regular
 * expression: the frames that match are highlighted and their share of
 * the samples shown, nested matches counted once) and flips the graph
 * into an icicle, its root at the top. Frames are coloured by kind where
 * the stacks say it (the first stack to reach a frame does), with a
 * legend; otherwise by a hash of the name.
 *
 * Identical prefixes merge; siblings are sorted by name, so the same stacks
 * in any order give the same bytes. Stacks whose count is not positive and
 * finite are ignored; a NULL frame name reads as "[unknown]"; a frame under
 * 0.1 % of the total is left out and its samples shown in its parent's.
 * Other failures, also -1: EINVAL for a NULL out or stacks (n > 0) or a NULL
 * frames with depth > 0, ENOMEM, ERANGE when the counts add up to infinity.
 * A NULL title or unit reads as "Flame Graph" or "samples". Uses no global
 * state and no recursion. Not AS-safe.
 */
int flame_write_svg(FILE *out, const struct flame_stack *stacks, size_t n,
		    const char *title, const char *unit);	/* unit: e.g. "samples" */

/* A flame graph's time strip (flame_strip.c): when its samples were
 * taken, by thread, and the program's markers, in nanoseconds from the
 * run's start. */
struct flame_marker {
	const char *name;
	uint64_t start, end;		/* end == start: an instant */
	long lane; /* its thread's lane; -1: the process's */
};

struct flame_timeline {
	uint64_t span;			/* the strip's width */
	size_t n;			/* samples */
	const uint64_t *t;		/* each sample's time */
	const size_t *stack;		/* its stack: an index into stacks */
	const double *weight; /* its samples (its stack's count's share) */
	const size_t *lane;		/* its thread: an index into lanes */
	const char *const *lanes;	/* each thread's label */
	size_t nlanes;
	const struct flame_marker *markers;
	size_t nmarkers;
};

/*
 * flame_write_svg with a time strip above the graph where tl is not NULL:
 * each thread's samples over time, a lane each, and the markers; dragging
 * across it draws the graph of that window's samples alone (a frame left
 * out of the whole run's graph counts in its parent's), a click on it
 * the whole run's again. tl's samples are the stacks' (their weights
 * add up to the counts). The same returns, and EINVAL for a sample
 * whose stack is not one of stacks[0..n).
 */
int flame_write_svg_timeline(FILE *out, const struct flame_stack *stacks,
			     size_t n, const char *title, const char *unit,
			     const struct flame_timeline *tl);

/* flame_strip.c, for flame.c: the strip's height in pixels (0 for a NULL
 * tl); its data, for the page's script, its top at y, each sample counted
 * in the frame frame_of_stack[its stack] (the written frames' index;
 * SIZE_MAX: none, left out). */
size_t flame_strip_height(const struct flame_timeline *tl);
void flame_strip_put(FILE *out, const struct flame_timeline *tl,
		     const size_t *frame_of_stack, size_t y);

/* Write the first max characters of s as XML text or attribute value.
 * Invalid UTF-8 and the characters XML 1.0 forbids even as references
 * become U+FFFD, so the document stays well-formed whatever names hold. */
void xml_put(FILE *out, const char *s, size_t max);

#endif
