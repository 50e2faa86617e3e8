/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procread.c: the one way libpc reads a small file whole (a /proc or
 * cgroup file, a manifest's head, the timer cost's cache) and the decimal
 * numbers in it, without stdio or malloc.
 */
#ifndef PC_PROCREAD_H
#define PC_PROCREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct stat;

/*
 * At most size - 1 bytes (size > 0) of the file at path into buf, read
 * until its end or buf is full, and a NUL after them. The file is opened
 * O_RDONLY | O_CLOEXEC | flags (O_NOFOLLOW, O_NONBLOCK where the caller
 * asks). With sb, the file's stat goes there, and anything but a regular
 * file is refused unread. The bytes read (0: an empty file), or -1 where
 * it cannot be opened or read (buf then ""). errno is left as found.
 * AS-safe: open, fstat, read, close.
 */
ssize_t pc_read_small(const char *path, int flags, char *buf, size_t size,
		      struct stat *sb);

/* The decimal digits at *p as a number into *v, *p moved past them: 0,
 * or -1 where *p is not a digit or the number passes max (*p and *v
 * then as they were). AS-safe. */
int pc_parse_u64(const char **p, uint64_t max, uint64_t *v);

#endif
