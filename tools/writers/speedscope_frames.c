/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * speedscope's shared frames, which its sampled export (export_text.c)
 * and its evented one (timeline_speedscope.c) both write.
 */
#include <stdio.h>

#include "writers/export_out.h"

/* speedscope's shared frames, one a function of x, then the opening of
 * its profiles: ,"shared":{"frames":[...]},"profiles":[ */
void
export_speedscope_frames(const struct export *x, FILE *out)
{
	fputs(",\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < x->nfuncs; i++) {
		const struct xp_func *f = &x->funcs[i];

		fputs(i ? ",{\"name\":" : "{\"name\":", out);
		json_string(out, x->strs[f->name]);
		if (f->file) {
			fputs(",\"file\":", out);
			json_string(out, x->strs[f->file]);
			fprintf(out, ",\"line\":%d", f->line);
		}
		fputc('}', out);
	}
	fputs("]},\"profiles\":[", out);
}
