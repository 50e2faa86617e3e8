/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The names of an off-CPU stack's leaf, a wait word (gmon.h's
 * GMON_WAIT_WORD): "[off-cpu: CALL]" with the x86_64 system call's name
 * (from the kernel's header, made into build/gen/syscalls.h at build
 * time), the kind of descriptor it waits on and the child a wait4 waits
 * for. Used wherever stacks are named (stackfile.c, export.c, diff).
 */
#ifndef PC_WAITS_H
#define PC_WAITS_H

#include <stddef.h>
#include <stdint.h>

/* What every wait's name starts with: the flame graph colours by it and
 * search finds it. */
#define WAIT_PREFIX	"[off-cpu: "

/* The name of x86_64 system call nr ("clock_nanosleep"), or NULL for a
 * number the kernel's header does not name. */
const char *syscall_name(unsigned nr);

/*
 * The name of wait word w into buf (size bytes, NUL-terminated, as
 * snprintf does): "[off-cpu: read pipe]", "[off-cpu: wait4 pid 42]",
 * "[off-cpu: runqueue]", "[off-cpu: fault]" (blocked outside a call),
 * "[off-cpu: syscall 999]" (a number with no name). Returns buf.
 */
char *wait_name(uint64_t w, char *buf, size_t size);

/* Whether name is a wait's (starts with WAIT_PREFIX). */
int wait_name_is(const char *name);

/* The process a wait word's wait4 or waitid waits for; 0 for none. */
uint32_t wait_pid(uint64_t w);

#endif
