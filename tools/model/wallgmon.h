/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gprof's view of a wall-clock profile (wallgmon.c): a gmon profile whose
 * histogram and arcs count wall time, for `gprof EXE gmon.wall`. Written
 * by writers/gmon_out.c; made by pcprof run --clock wall and by pcprof
 * report --format gmon. Not AS-safe.
 */
#ifndef PC_WALLGMON_H
#define PC_WALLGMON_H

#include "pcprof.h"

/*
 * The executable's profile of run's files (as gprof reads gmon.out), with
 * the off-CPU time of their stacks (FILE.stacks, or stacks_file) added in
 * samples of its CPU rate: each off-CPU stack's time in the histogram
 * bin of its innermost frame in the executable's text (the function that
 * made the call that blocked), and an arc for each two consecutive frames
 * there (caller, callee), once a stack, counted in the same units. Under
 * clock off the CPU samples and arcs are left out. Off-CPU time with no
 * frame in the text (a wait inside a library the executable never
 * called into, the runqueue) is counted on libpc's arcs of time outside
 * the executable (gmon.h), so that nothing is lost. Fractions of a sample
 * are carried from bin to bin, so the counts add up to the rounded whole.
 * 0, or -1 after one line on bad input.
 */
PC_CHECKED int wallgmon_build(struct gmon_profile *p,
			      const struct pc_inputs *in, int run,
			      const char *stacks_file, enum pc_clock clock);

#endif
