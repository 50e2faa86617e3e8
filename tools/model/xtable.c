/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The export's interning tables (export.c): open addressing of indexes
 * + 1, keyed by a hash the caller computes and compared by the caller.
 */
#include <stdlib.h>

#include "pcprof.h"
#include "model/xtable.h"

uint64_t
xtable_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

void *
xtable_grow_array(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	while (*cap < need)
		*cap = *cap ? 2 * *cap : 256;
	return pc_realloc(p, *cap * size);
}

static void
table_grow(struct table *t)
{
	size_t n = t->mask ? 2 * (t->mask + 1) : 1024;
	uint32_t *slot = pc_calloc(n, sizeof(*slot));
	uint64_t *hash = pc_calloc(n, sizeof(*hash));

	for (size_t i = 0; t->mask && i <= t->mask; i++) {
		size_t j;

		if (!t->slot[i])
			continue;
		for (j = t->hash[i] & (n - 1); slot[j]; j = (j + 1) & (n - 1))
			;
		slot[j] = t->slot[i];
		hash[j] = t->hash[i];
	}
	free(t->slot);
	free(t->hash);
	t->slot = slot;
	t->hash = hash;
	t->mask = n - 1;
}

/* The slot for h where same(arg, index) holds, or the empty one to fill. */
uint32_t *
table_find(struct table *t, uint64_t h, int (*same)(const void *, uint32_t),
	   const void *arg, uint64_t **hp)
{
	size_t i;

	if (2 * (t->used + 1) > (t->mask ? t->mask + 1 : 0))
		table_grow(t);
	for (i = h & t->mask; t->slot[i]; i = (i + 1) & t->mask)
		if (t->hash[i] == h && same(arg, t->slot[i] - 1))
			break;
	*hp = &t->hash[i];
	return &t->slot[i];
}

void
table_free(struct table *t)
{
	free(t->slot);
	free(t->hash);
}
