/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Printing an export (export_out.c): the commands choose the writer here,
 * so that the model (export.c) never calls one. None is AS-safe.
 */
#ifndef PC_EXPORT_OUT_H
#define PC_EXPORT_OUT_H

#include <stdio.h>

#include "model/export.h"

/* The writers: 0, or -1 with errno on a write error. */
int export_pprof(const struct export *x, FILE *out); /* export_pprof.c */
int export_speedscope(const struct export *x, FILE *out, const char *title);
/* speedscope_frames.c: speedscope's shared frames, then the opening of its
 * profiles (,"shared":{"frames":[...]},"profiles":[), for both writers. */
void export_speedscope_frames(const struct export *x, FILE *out);
int export_callgrind(const struct export *x, FILE *out, const char *title);
/* s's frames, the root first, into fr (room for s->depth): consecutive
 * frames of one function are one where they are two of its pieces or no
 * symbol's, as in pcprof's folded stacks, and a recursion keeps every
 * level. How many (export_text.c). */
size_t export_sample_frames(const struct export *x, const struct xp_sample *s,
			    uint32_t *fr);
/* The export's samples as folded stacks, as folded_build makes them
 * (export_folded.c): for a window's --format folded and flame graph. */
void export_folded(const struct export *x, struct folded_set *fs);
/* Each sample's line in fs (export_folded's of x) into line[i] (room for
 * x->nsamples); SIZE_MAX for a sample that has none (export_folded.c). */
void export_folded_index(const struct export *x, const struct folded_set *fs,
			 size_t *line);
/* The export's timeline in the Firefox Profiler's processed format
 * (export_firefox.c), where one was recorded (timeline_recorded); 0, or
 * -1 with errno (ENOMEM, or EINVAL where there is none). */
int export_firefox(const struct export *x, FILE *out, const char *title);
/* The export's timeline as text (timeline_out.c): each thread's time in
 * buckets, what it ran most in each, and the markers; 0, or -1 after one
 * line where none was recorded. */
PC_CHECKED int timeline_print(const struct export *x, FILE *out,
			      const char *title);
/* 0 where x holds a timeline, else -1 after one line (timeline_out.c). */
int timeline_recorded(const struct export *x);
/* speedscope's file of the export's timeline, a thread an evented
 * profile (timeline_speedscope.c). */
int export_speedscope_timeline(const struct export *x, FILE *out,
			       const char *title);

/* One line per thread (samples, share, tid, name, process) as format
 * (text, json or csv) onto out; 0, or -1 after one line where no thread
 * was recorded. */
PC_CHECKED int export_print_threads(const struct export *x, enum format format,
				    FILE *out, const char *title);
/* Write x as format (an export format) onto out; a write error is left in
 * ferror(out). pprof is not written to a terminal, and firefox needs a
 * timeline: 0, or -1 after one line. */
PC_CHECKED int export_print(const struct export *x, enum format format,
			    FILE *out, const char *title);
/* What report asks of an export: --thread's samples only, then the
 * threads (--by-thread), the file for another tool (--format), or the
 * flat profile of what is kept (report.c's writers). 0, or -1 after one
 * line. */
PC_CHECKED int export_finish(struct export *x, const struct report_opts *r,
			     FILE *out, const char *title);

#endif
