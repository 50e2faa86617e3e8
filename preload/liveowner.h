/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one answer to "does the process that made this live file still
 * run?", shared by libpc's pc_recover (recover.c) and pcprof, which may
 * compile liveowner.c into itself as it does taskclock.c.
 */
#ifndef PC_LIVEOWNER_H
#define PC_LIVEOWNER_H

#include <sys/stat.h>
#include <sys/types.h>

/*
 * Whether process pid, which made the live file st describes (its inode
 * and its ctime, as fstat or stat gives them), still runs: 1 or 0.
 * - kill(pid, 0) fails with ESRCH: no such process, 0. It succeeds or
 *   fails with EPERM (another user's process): there is one.
 * - /proc/PID/stat, where readable, gives the process's start (field 22):
 *   one that began more than a second after the file's inode last changed
 *   is another process that took the pid, 0. (The file is made after its
 *   process began, and changes no more once it has died.)
 * - /proc/PID/maps, where readable, must map the file (an image that
 *   replaced the one that made it through a raw execve does not): else 0.
 *   Where it cannot be read (EACCES: a non-dumpable process, or another
 *   user's), the process that is there is taken for the file's: 1.
 * Every doubt falls on "runs": a live file is never finished under a
 * process that still writes it. errno is preserved. Not AS-safe (it reads
 * /proc), but it allocates nothing and uses no stdio.
 */
int pc_live_owner_runs(pid_t pid, const struct stat *st);

#endif
