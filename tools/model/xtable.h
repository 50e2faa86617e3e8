/* SPDX-License-Identifier: BSD-2-Clause */
/* The export's interning tables (xtable.c). Not AS-safe. */
#ifndef PC_XTABLE_H
#define PC_XTABLE_H

#include <stddef.h>
#include <stdint.h>

/* An open-addressing table of indexes + 1, keyed by a hash the caller
 * computes and compared by the caller. */
struct table {
	uint32_t *slot;
	uint64_t *hash;
	size_t mask, used;
};

/* h with v mixed in. */
uint64_t xtable_mix(uint64_t h, uint64_t v);
/* p grown to hold need items of size bytes (*cap doubles, from 256). */
void *xtable_grow_array(void *p, size_t *cap, size_t need, size_t size);
/* The slot for h where same(arg, index) holds, or the empty one to fill;
 * its hash's place in *hp. */
uint32_t *table_find(struct table *t, uint64_t h,
		     int (*same)(const void *, uint32_t), const void *arg,
		     uint64_t **hp);
void table_free(struct table *t);

#endif
