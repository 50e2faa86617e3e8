/* SPDX-License-Identifier: BSD-2-Clause */
/* The timeline's markers read back as PROFILE.timeline's records, through
 * timeline.c's writer (unit_marks.c): for the suites of the marker API
 * (check_markers.c), of what calls it (check_itt.c) and of the timeline
 * (check_timeline.c). */
#ifndef PC_UNIT_MARKS_H
#define PC_UNIT_MARKS_H

#include <stddef.h>
#include <stdint.h>

#include "../preload/timeline.h"

struct unit_mark_names {
	uint64_t id[1100];
	char name[1100][PC_TL_NAME_LEN];
	size_t n;
};

struct unit_marks {
	struct pc_tl_head head;
	struct pc_tl_entry v[2048];
	size_t n;
	struct unit_mark_names names;
};

/* Each record of the timeline written so far (pc_timeline_write and its
 * rings, into a memfd), to fn with its body. */
void unit_timeline_each(void (*fn)(const struct pc_tl_rec *h,
				   const unsigned char *body, void *arg),
			void *arg);
/* The markers kept so far, and their names, into *r (large: static). */
void unit_marks_read(struct unit_marks *r);
/* The name of marker id where (a record's where), or NULL. */
const char *unit_marks_name(const struct unit_marks *r, uint64_t id);

#endif
