/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The object inventory's state (PC_SCOPE=all), shared by the module's
 * three files and no others: objects.c takes the inventory, objfind.c
 * finds addresses in it from the handler, objwrite.c writes the objects'
 * files and the manifest. summary.c reads its counts through
 * pc_objects_counts. Set up by pc_objects_init, at start-up.
 */
#ifndef PC_OBJECTS_H
#define PC_OBJECTS_H

#include "pc.h"

struct pc_objects {
	struct pc_object *objs;		/* PC_MAX_OBJECTS entries, [0] unused */
	int nobjs;			/* entries used, including [0] */
	struct pc_range *ranges[2];	/* sorted by lo; one is current */
	uint32_t nranges[2];
	uint32_t range_seq[2];		/* odd while that copy is rewritten */
	int range_cur;
	struct pc_pending *pending;
	uint64_t no_object;		/* weighted samples in no object */
	uint64_t pending_dropped; /* weighted: the pending table was full */
	uint64_t pending_samples;	/* weighted, in the pending table */
	uint64_t unplaced; /* pending samples or arcs added since the
			    * last placement: 0 spares the scan */
	void *find_object;		/* glibc's _dl_find_object, or NULL */
};

extern struct pc_objects *pc_objs PC_HIDDEN;

/* objfind.c: the pending table starts small and grows (livegrow.c).
 * Start-up; not AS-safe. */
void pc_objects_pending_init(void) PC_HIDDEN;

#endif
