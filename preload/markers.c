/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The marker API of include/pcprof/marker.h: pcprof_mark_begin, _end,
 * _instant and pcprof_count, which a program declares weak and calls
 * where libpc is loaded. Each is one entry of the timeline's marker ring
 * (timeline.c), the name interned by its pointer into a small lock-free
 * table of the live file. Without PC_TIMELINE they return at once.
 *
 * They may be called from any thread and from signal handlers: no lock,
 * no allocation, only clock_gettime and, at a thread's first marker,
 * gettid. A name's slot is claimed by compare-and-swap; a thread that
 * finds a slot being claimed probes on, so that a name may get two ids,
 * which pcprof merges by name.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "pc.h"
#include "timeline.h"
#include "banned.h"

#define MAX_PROBE	32

static PC_TLS uint32_t my_tid;

/* The id of the name at p (1 + its slot), or 0 when the table has no
 * room. AS-safe. */
static uint64_t
name_id(const char *p)
{
	struct pc_tl_name_slot *t = pc_timeline_names();
	uint64_t key = (uint64_t)(uintptr_t)p;
	uint64_t h = (key >> 3) * 0x9e3779b97f4a7c15ULL;

	for (uint32_t probe = 0; probe < MAX_PROBE; probe++) {
		size_t i = (size_t)((h >> 40) + probe) % PC_TL_NAMES;
		struct pc_tl_name_slot *k = &t[i];
		uint32_t seen;

		if (pc_slot_claim(&k->state, &seen)) {
			size_t n = 0;

			/* the program's string, read once: a name longer
			 * than the slot is cut */
			while (n < PC_TL_NAME_LEN - 1 && p[n])
				n++;
			memcpy(k->name, p, n);
			k->name[n] = 0;
			k->key = key;
			pc_slot_publish(&k->state);
			return i + 1;
		}
		if (seen == PC_SLOT_READY && k->key == key)
			return i + 1;
	}
	return 0;
}

static uint32_t
tid_here(void)
{
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	return my_tid;
}

/* One marker of kind, at CLOCK_MONOTONIC ns at (0: now). AS-safe. */
static void
mark(uint32_t kind, const char *name, uint64_t value, uint64_t at)
{
	int saved;
	uint64_t id;

	if (!pc_timeline_on() || !pc_on() || !name)
		return;
	saved = errno;
	id = name_id(name);
	if (id)
		pc_timeline_mark_at(kind, tid_here(), id, value, at);
	else
		pc_timeline_mark_lost();
	errno = saved;
}

PC_EXPORT void pcprof_mark_begin(const char *name);
PC_EXPORT void pcprof_mark_end(const char *name);
PC_EXPORT void pcprof_mark_instant(const char *name);
PC_EXPORT void pcprof_count(const char *name, long long value);
PC_EXPORT void pcprof_mark_begin_at(const char *name, unsigned long long ns);
PC_EXPORT void pcprof_mark_end_at(const char *name, unsigned long long ns);
PC_EXPORT void pcprof_mark_instant_at(const char *name, unsigned long long ns);

void
pcprof_mark_begin(const char *name)
{
	mark(PC_TL_BEGIN, name, 0, 0);
}

void
pcprof_mark_end(const char *name)
{
	mark(PC_TL_END, name, 0, 0);
}

void
pcprof_mark_instant(const char *name)
{
	mark(PC_TL_INSTANT, name, 0, 0);
}

void
pcprof_count(const char *name, long long value)
{
	mark(PC_TL_COUNT, name, (uint64_t)value, 0);
}

/* The same at a time the program gives: an event another clock timed,
 * or one seen after the fact (ITT's _ex calls, libpc-itt.so). */
void
pcprof_mark_begin_at(const char *name, unsigned long long ns)
{
	mark(PC_TL_BEGIN, name, 0, ns);
}

void
pcprof_mark_end_at(const char *name, unsigned long long ns)
{
	mark(PC_TL_END, name, 0, ns);
}

void
pcprof_mark_instant_at(const char *name, unsigned long long ns)
{
	mark(PC_TL_INSTANT, name, 0, ns);
}

void
pc_markers_forked(void)
{
	my_tid = 0;
}
