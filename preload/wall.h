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

#endif
