/*
 * Flame graphs: call stacks with sample counts, merged into a tree and
 * written as a self-contained interactive SVG (hover for details, click to
 * zoom). For the pcprof subcommands that have stacks to show.
 */
#ifndef PC_FLAME_H
#define PC_FLAME_H

#include <stdio.h>
#include <stddef.h>

/* One call stack and how often it was seen. */
struct flame_stack {
	const char *const *frames;	/* function names, root (outermost caller) first */
	size_t depth;
	double count;			/* samples */
};

/*
 * Write a self-contained interactive SVG flame graph of stacks[0..n) to out.
 * title is shown at the top. Returns 0, or -1 with errno on a write error.
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

#endif
