/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writing the profile: the main program's gmon.out records (gmon/write.c)
 * through out.c's atomic file, then the stacks file when asked for, then
 * with PC_SCOPE=all the objects' files and the manifest (objwrite.c).
 * AS-safe, so that signal paths can write too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>

#include "pc.h"
#include "timeline.h"
#include "alloc.h"
#include "banned.h"

static int
write_gmon(struct gmon_sink *s)
{
	gmon_sink_header(s, pc_cfg->spare);
	pc_dump_texts(s, pc->text, pc->ntext);
	if (pc_cfg->callgraph)
		pc_arcs_write(s, 0);
	if (!pc_cfg->scope_all) {
		/* the samples outside the executable (gmon.h) */
		uint64_t c =
			__atomic_load_n(&pc_stats->outside, __ATOMIC_RELAXED);

		for (; c > UINT32_MAX; c -= UINT32_MAX)
			gmon_sink_arc(s, GMON_OUTSIDE_FROM, GMON_OUTSIDE_SELF,
				      UINT32_MAX);
		if (c)
			gmon_sink_arc(s, GMON_OUTSIDE_FROM, GMON_OUTSIDE_SELF,
				      (uint32_t)c);
	}
	return s->error;
}

/* PROFILE.timeline (timeline.h): its header, the stacks by id (the CPU
 * samples', the allocation events'), its samples, markers and
 * allocation events. */
static int
write_timeline(struct gmon_sink *s)
{
	pc_timeline_write(s);
	if (pc_cfg->stacks)
		pc_stacks_write_ids(s, PC_TL_STACK);
	pc_alloc_timeline_stacks(s);	/* the allocation events' */
	return pc_timeline_write_rings(s);
}

/* PC_STACKS=PATH: that path; PC_STACKS=1: the profile's stacks file
 * beside it (gmon_stacks_name). */
static const char *
stacks_path(const char *path, char *buf, size_t size)
{
	if (pc->stacks_path[0])
		return pc->stacks_path;
	return gmon_stacks_name(buf, size, path) ? NULL : buf;
}

int
pc_dump(const char *path)
{
	char buf[PATH_MAX];
	const char *sp;
	int r;

	pc_live_io(1);
	r = pc_dump_file(path, write_gmon);
	if (!r && pc_cfg->stacks && pc_cfg->callgraph) {
		int rs = (sp = stacks_path(path, buf, sizeof(buf))) ?
			 pc_dump_file(sp, pc_stacks_write) : -ENAMETOOLONG;

		if (rs)
			pc_dump_summary(sp ? sp : path, rs);
		/* the profile itself was written */
	}
	if (!r && pc_cfg->timeline) {
		size_t n = strlen(path);
		int rt = -ENAMETOOLONG;

		if (n + sizeof(PC_TL_SUFFIX) <= sizeof(buf)) {
			memcpy(buf, path, n);
			memcpy(buf + n, PC_TL_SUFFIX, sizeof(PC_TL_SUFFIX));
			rt = pc_dump_file(buf, write_timeline);
		}
		if (rt)
			pc_dump_summary(buf, rt);
	}
	if (!r)
		pc_alloc_dump(path);
	if (!r)
		pc_objects_dump(path);
	pc_live_io(0);
	return r;
}
