/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whether the process that made a live file still runs: the one check,
 * shared by libpc's pc_recover (recover.c), which must not finish the file
 * of a process that runs, and pcprof, which waits for a run's background
 * processes (tools/inputs/recover.c). running.c holds no libpc state and
 * is compiled into both.
 */
#ifndef PC_RUNNING_H
#define PC_RUNNING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * 1 when process pid may still be the one that made the live file whose
 * inode is ino, having started (CLOCK_REALTIME ns, as libpc records it;
 * 0: not known) at start_ns; 0 when it has surely ended. Alive is what
 * kill(pid, 0) says, EPERM included (another user's process); a zombie
 * has ended; a process that /proc/PID/stat says started over a second
 * after start_ns, or whose /proc/PID/maps maps no such file, is another
 * process with a reused pid. What cannot be read (a non-dumpable process's
 * maps, another user's, a /proc mounted with hidepid) counts as running:
 * finishing a live file under a process that writes it would lose
 * samples, and leaving it costs a note. errno is preserved. Not AS-safe
 * (no stdio, no allocation).
 */
int pc_live_owner_runs(pid_t pid, ino_t ino, uint64_t start_ns);

/* The fields of the /proc stat file at path (/proc/PID/stat or a task's)
 * that follow the command's name, read into buf[0..size): a pointer to
 * the state letter, field 3; NULL where the file cannot be read. The
 * name, in parentheses, may hold anything but ends at the last ')'.
 * AS-safe (open, read, close). */
char *pc_proc_stat_fields(const char *path, char *buf, size_t size);

#endif
