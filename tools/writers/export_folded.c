/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An export's samples as folded stacks ("root;...;leaf" and a count), as
 * folded_build makes them from the stacks files: for what only the
 * export holds, a window of the timeline (report --from, --to, --marker
 * with --format folded, and pcprof flame's).
 */
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "writers/export_out.h"

/* The frames fr[0, n) as one folded line, each name escaped. */
static char *
fold(const struct export *x, const uint32_t *fr, size_t n)
{
	size_t len = 0;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += text_escape(NULL, 0, x->strs[x->funcs[fr[i]].name],
				   TEXT_FOLDED) +
		       1;
	s = pc_malloc(len + 1);
	len = 0;
	s[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const char *name = x->strs[x->funcs[fr[i]].name];
		size_t k = text_escape(NULL, 0, name, TEXT_FOLDED);

		if (i)
			s[len++] = ';';
		text_escape(s + len, k + 1, name, TEXT_FOLDED);
		len += k;
	}
	return s;
}

void
export_folded(const struct export *x, struct folded_set *fs)
{
	uint32_t *fr = NULL;
	size_t cap = 0, k = 0;

	memset(fs, 0, sizeof(*fs));
	fs->rate = x->ngroups ? x->groups[0].rate : 0;
	fs->v = pc_calloc(x->nsamples ? x->nsamples : 1, sizeof(*fs->v));
	for (size_t i = 0; i < x->nsamples; i++) {
		const struct xp_sample *s = &x->samples[i];

		if (!(s->count > 0) || !s->depth)
			continue;
		if (s->depth > cap)
			fr = pc_realloc(fr, (cap = s->depth) * sizeof(*fr));
		fs->v[k].line = fold(x, fr, export_sample_frames(x, s, fr));
		fs->v[k].count = s->count;
		fs->total += s->count;
		k++;
	}
	free(fr);
	folded_merge(fs, k);
}

static int
cmp_line(const void *key, const void *v)
{
	return strcmp(key, ((const struct folded *)v)->line);
}

void
export_folded_index(const struct export *x, const struct folded_set *fs,
		    size_t *line)
{
	uint32_t *fr = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < x->nsamples; i++) {
		const struct xp_sample *s = &x->samples[i];
		const struct folded *f;
		char *l;

		line[i] = SIZE_MAX;
		if (!(s->count > 0) || !s->depth)
			continue;
		if (s->depth > cap)
			fr = pc_realloc(fr, (cap = s->depth) * sizeof(*fr));
		l = fold(x, fr, export_sample_frames(x, s, fr));
		f = bsearch(l, fs->v, fs->n, sizeof(*fs->v), cmp_line);
		if (f)
			line[i] = (size_t)(f - fs->v);
		free(l);
	}
	free(fr);
}
