/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writing a gmon profile as gprof reads it (gmon_out.c): pcprof merge's
 * sums and the gmon file of a wall-clock profile's wall time. Not AS-safe.
 */
#ifndef PC_GMON_OUT_H
#define PC_GMON_OUT_H

#include "pcprof.h"

/* p onto fd: its histograms with counts above 65535 carried in extra
 * records, its arcs sorted and equal ones summed (p's arcs are sorted in
 * place). 0, or a negative errno. */
int gmon_write_fd(int fd, struct gmon_profile *p);
/* p written whole to path, or not at all, through out_open (base/outfile.c): a
 * temporary file beside it renamed into place, so that a symlink there is
 * replaced, never written through, and a failure (EFBIG, ENOSPC) leaves
 * no file. 0, or -1 after one line naming the file. */
PC_CHECKED int gmon_write_file(const char *path, struct gmon_profile *p);

#endif
