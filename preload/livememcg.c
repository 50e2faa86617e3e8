/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The memory cgroup's room for a live file on tmpfs (livegrow.c): a
 * charge past the cgroup's limit would wake the OOM killer. The files'
 * paths are found once, in normal code; a round, which may run in the
 * sampling handler of a process of one thread, reads two small numbers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "pc.h"
#include "live.h"
#include "procread.h"
#include "banned.h"

/* the memory cgroup's files, found once at pc_live_grow_open (a round
 * may run in a handler: no 4 KiB read of /proc/self/cgroup there) */
static char memcg_max[PATH_MAX], memcg_cur[PATH_MAX];

/* The number in the file at path (the first line), or -1. */
static long long
read_number(const char *path)
{
	char buf[64];
	const char *p = buf;
	uint64_t v;

	/* "max": no limit */
	if (pc_read_small(path, 0, buf, sizeof(buf), NULL) <= 0 ||
	    pc_parse_u64(&p, LLONG_MAX, &v))
		return -1;
	return (long long)v;
}

/* "DIR/CGROUP/name" into dst, CGROUP this process's in /proc/self/cgroup
 * for the v2 line (ctl "") or the v1 memory line (ctl "memory"). */
static int
cgroup_file(char *dst, size_t size, const char *dir, const char *ctl,
	    const char *name)
{
	char buf[4096], *line, *end;
	size_t k = strlen(ctl);

	if (pc_read_small("/proc/self/cgroup", 0, buf, sizeof(buf), NULL) <= 0)
		return -1;
	for (line = buf; line && *line; line = end ? end + 1 : NULL) {
		char *c = strchr(line, ':');

		end = strchr(line, '\n');
		if (end)
			*end = 0;
		if (c && !strncmp(c + 1, ctl, k) && c[1 + k] == ':' &&
		    strlen(dir) + strlen(c + 2 + k) + strlen(name) + 2 < size) {
			strcpy(dst, dir);
			strcat(dst, c + 2 + k);
			strcat(dst, "/");
			strcat(dst, name);
			return 0;
		}
	}
	return -1;
}

/*
 * Whether len bytes more of tmpfs (memory, charged to this process's
 * memory cgroup) leave the cgroup an eighth of its limit, 4 MiB at least:
 * a charge past the limit would wake the OOM killer, which may take the
 * program. Cgroup v2, else v1 (the files memcg_find chose); room where neither
 * says a limit. A few hundred bytes of stack: it may run in a handler.
 */
int
pc_live_memcg_room(size_t len)
{
	long long max = memcg_max[0] ? read_number(memcg_max) : -1;
	long long cur = memcg_cur[0] ? read_number(memcg_cur) : -1;

	if (max < 0 || cur < 0 || max >= (1LL << 60))
		return 1;
	return cur + (long long)len +
		       (max / 8 > (4 << 20) ? max / 8 : (4 << 20)) <=
	       max;
}

/* The memory cgroup's limit and usage files (v2, else v1), for
 * memcg_room. Not AS-safe: start-up and a fork child. */
void
pc_live_memcg_find(void)
{
	memcg_max[0] = memcg_cur[0] = 0;
	if (!cgroup_file(memcg_max, sizeof(memcg_max), "/sys/fs/cgroup", "",
			 "memory.max") &&
	    read_number(memcg_max) >= 0 &&
	    !cgroup_file(memcg_cur, sizeof(memcg_cur), "/sys/fs/cgroup", "",
			 "memory.current"))
		return;
	memcg_max[0] = memcg_cur[0] = 0;
	if (cgroup_file(memcg_max, sizeof(memcg_max), "/sys/fs/cgroup/memory", "memory",
			"memory.limit_in_bytes") ||
	    cgroup_file(memcg_cur, sizeof(memcg_cur), "/sys/fs/cgroup/memory", "memory",
			"memory.usage_in_bytes"))
		memcg_max[0] = memcg_cur[0] = 0;
}
