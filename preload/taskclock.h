/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one way pcprof and libpc.so open a task-clock event, shared by both
 * (taskclock.c is compiled into each): libpc's timers and its start-up
 * cost probe (timer.c, timercost.c), and pcprof compare's check of whether
 * the commands it runs may have one.
 */
#ifndef PC_TASKCLOCK_H
#define PC_TASKCLOCK_H

#include <stdint.h>

/*
 * A disabled task-clock event on the calling thread, overflowing every
 * period_ns of its CPU time in user mode only (exclude_kernel, exclude_hv:
 * what perf_event_paranoid 2 lets an ordinary process have; the count
 * itself runs on in the kernel), close-on-exec:
 * the descriptor, or -errno where it is refused (perf_event_paranoid,
 * seccomp); PC_TEST_REFUSE_PERF set in the environment refuses it with
 * -EACCES, the test suite's stand-in. errno is preserved. The environment
 * is read on the first call only; after it, AS-safe (a system call): libpc
 * makes its first call at start-up (the main thread's timer, PC_TIMER=auto's
 * probe), so a fork child's, which may run in the program's signal handler,
 * calls no getenv.
 */
int pc_taskclock_open(uint64_t period_ns);
/* The same, on thread tid of this process (0: the calling thread): libpc
 * opens one for another thread whose event the program closed
 * (close_range). AS-safe after the first call. */
int pc_taskclock_open_for(uint64_t period_ns, int tid);

#endif
