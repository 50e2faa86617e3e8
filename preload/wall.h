/* SPDX-License-Identifier: BSD-2-Clause */
/* The wall sampler's parts (wall.c, wall_unwind.c): not the handler's. */
#ifndef PC_WALL_H
#define PC_WALL_H

#include <stdint.h>

#include "pc.h"

/* How a blocked thread's walk ended. */
enum pc_wall_walk { PC_WALL_FULL, PC_WALL_CUT, PC_WALL_TRUNCATED };

/* wall_unwind.c: load libunwind's remote unwinder; 0 or -1. */
int pc_wall_unwind_init(void) PC_HIDDEN;

/* wall_unwind.c: the frames of a thread blocked at ip with stack pointer
 * sp into f[0..max), f[0] ip itself; *how says how the walk ended.
 * Returns the number of frames (at least 1). Reads memory only with
 * process_vm_readv. */
int pc_wall_unwind(uintptr_t ip, uintptr_t sp, struct pc_frame *f, int max,
		   int *how) PC_HIDDEN;

/* wall_unwind.c: whether the last walk, of thread tid seen blocked in call
 * nr, args arg, at sp and ip, holds though the thread was switched in
 * during it: it is in that call still (the kernel woke it inside the call,
 * as fsync's I/O does, and it never went back to its stack), or every
 * stack word the walk read is the same, read again. */
int pc_wall_walk_holds(uint32_t tid, long nr, const unsigned long arg[6],
		      unsigned long sp, unsigned long ip) PC_HIDDEN;

#endif
