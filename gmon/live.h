/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpc's live file, DIR/.pcprof.PID.live: its name, its head (the part a
 * reader checks before it trusts the rest, which is libpc's own memory,
 * preload/live.h), and whether the process that writes it still runs.
 * libpc makes the file (preload/live.c) and finishes a dead process's
 * (preload/recover.c); pcprof finds the files of a run directory, reads
 * their heads and asks whether their processes run (tools/inputs/
 * recover.c). Nothing here prints; compiled into both.
 */
#ifndef PC_GMON_LIVE_H
#define PC_GMON_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* DIR/.pcprof.PID.live, beside the profile DIR/PROFILE */
#define GMON_LIVE_PREFIX	".pcprof."
#define GMON_LIVE_SUFFIX	".live"

/*
 * The head's first 16 bytes: "pcprof-live V\n", NUL-padded, where V is
 * the version of the head's layout in decimal. A reader of another
 * version refuses the file, by its number (version 1 had no generation
 * count). What follows the head is libpc's memory, read only by the same
 * build of libpc (hdr_size).
 */
#define GMON_LIVE_MAGIC		"pcprof-live "
#define GMON_LIVE_VERSION	2u
#define GMON_LIVE_MAGIC_SIZE	16

enum { GMON_LIVE_RUNNING = 1, GMON_LIVE_DONE = 2 };

struct gmon_live_head {
	char magic[GMON_LIVE_MAGIC_SIZE];
	uint32_t hdr_size;	/* bytes of the writer's whole header: one
				 * build of libpc's from another's */
	uint32_t state;		/* GMON_LIVE_*, atomic; 0 while made */
	int32_t pid;		/* the process that writes it */
	uint32_t start_s;	/* when it began to, in whole seconds
				 * (CLOCK_REALTIME); 0: not said (spare
				 * bytes in earlier libpc's files) */
	uint32_t gen;		/* the head's generation, atomic: odd while
				 * libpc rewrites pid, start or state
				 * (gmon_live_head_write), even when whole */
	uint32_t spare;
};

/*
 * The live file of process pid beside profile (its directory, then
 * .pcprof.PID.live) into buf, size bytes: 0, or -ENAMETOOLONG (buf then
 * ""). The name a file is moved to when another stands in its way: live,
 * then .N.live. AS-safe (a fork child, libpc's end).
 */
int gmon_live_name(char *buf, size_t size, const char *profile, long pid);
int gmon_live_aside_name(char *buf, size_t size, const char *live,
			 unsigned long n);

/* The pid that path's last part names, as a live file's name (either of
 * the above) does; 0 when it is no live file's name. AS-safe. */
long gmon_live_name_pid(const char *path);

/* A head of this version: the magic, hdr_size, pid and start (ns, kept
 * in seconds); state 0. AS-safe. */
void gmon_live_head_init(struct gmon_live_head *h, uint32_t hdr_size,
			 int32_t pid, uint64_t start_ns);

/*
 * Set h's state (GMON_LIVE_*), and where pid is not 0 its pid and start
 * too, as one change that a reader sees whole or knows torn: the
 * generation goes odd before and even after (a seqlock, whose one writer
 * is the process that owns h). AS-safe, lock-free.
 */
void gmon_live_head_write(struct gmon_live_head *h, uint32_t state, int32_t pid,
			  uint64_t start_ns);

/*
 * The first n bytes of a file, buf, as a live file's head, copied into
 * *h: 0 for one of this version; -EINVAL for no live file (too short, not
 * the magic); -EPROTO for one of another version, whose number goes into
 * *version (0 where it cannot be read). AS-safe.
 */
int gmon_live_head_read(const void *buf, size_t n, struct gmon_live_head *h,
			uint32_t *version);

/*
 * A live file's head read while its process may rewrite it: rd(ctx, buf,
 * n) reads the file's first n bytes (pread), twice; the head is whole
 * when the first read's generation is even and the second read is the
 * same, else it is read again, GMON_LIVE_TRIES times at most. What
 * gmon_live_head_read says, or -EAGAIN for a head torn on every try.
 * AS-safe where rd is.
 */
#define GMON_LIVE_TRIES	64
int gmon_live_head_load(long (*rd)(void *ctx, void *buf, size_t n), void *ctx,
			struct gmon_live_head *h, uint32_t *version);
/* gmon_live_head_load's rd for a file: a pread at 0 of the descriptor
 * that ctx points to (an int). AS-safe. */
long gmon_live_pread(void *ctx, void *buf, size_t n);

/*
 * 1 when the process that the head h of the live file whose inode is ino
 * names may still run; 0 when it has surely ended. Alive is what
 * kill(pid, 0) says, EPERM included (another user's process); a zombie
 * has ended; a process that /proc/PID/stat says started over a second
 * after the whole second h->start_s (0: not known), or whose
 * /proc/PID/maps maps no such file, is another process with a reused
 * pid. What cannot be read (EACCES: a non-dumpable process's maps,
 * another user's, a /proc mounted with hidepid) counts as running: finishing a
 * live file under a process that writes it would lose samples, and leaving it
 * costs a note. The one check, made by libpc's pc_recover and by pcprof. errno
 * is preserved. Not AS-safe (no stdio, no allocation).
 */
int gmon_live_runs(const struct gmon_live_head *h, ino_t ino);
/* The same, for a pid and start of a process's own (tests). */
int gmon_live_owner_runs(pid_t pid, ino_t ino, uint64_t start_ns);

/* The fields of the /proc stat file at path (/proc/PID/stat or a task's)
 * that follow the command's name, read into buf[0..size): a pointer to
 * the state letter, field 3; NULL where the file cannot be read. The
 * name, in parentheses, may hold anything but ends at the last ')'.
 * AS-safe (open, read, close). */
char *gmon_proc_stat_fields(const char *path, char *buf, size_t size);

#endif
