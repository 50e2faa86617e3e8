/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for tools/inputs/history_file.c's parser of a history
 * record (one JSON line): arbitrary bytes as a line. A line it accepts
 * must hold a commit, counts and seconds in range and its functions
 * sorted, each name at most HISTORY_NAME_MAX bytes; formatted again it
 * must parse to the same record. A refusal says why. Seeded with
 * tests/fuzz/history: records as pcprof history add writes them.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "model/history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(const struct hist_record *r)
{
	if (!r->commit || !r->commit[0] || strlen(r->commit) > HISTORY_NAME_MAX ||
	    r->runs < 1 || !isfinite(r->time) || r->cpu.mean < 0 || r->cpu.var < 0 ||
	    r->nfuncs > HISTORY_SERIES_MAX)
		abort();
	for (size_t i = 0; i < r->nfuncs; i++)
		if (strlen(r->funcs[i].name) > HISTORY_NAME_MAX || r->funcs[i].mean < 0 ||
		    (i && strcmp(r->funcs[i - 1].name, r->funcs[i].name) >= 0))
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hist_record r, back;
	const char *why = NULL;
	char *line;

	if (history_parse((const char *)data, size, &r, &why)) {
		if (!why || !why[0])
			abort();
		return 0;
	}
	check(&r);
	line = history_format(&r);
	if (history_parse(line, strlen(line) - 1, &back, &why))
		abort();
	if (strcmp(r.commit, back.commit) || r.nfuncs != back.nfuncs || r.runs != back.runs ||
	    r.cpu.mean != back.cpu.mean)
		abort();
	for (size_t i = 0; i < r.nfuncs; i++)
		if (strcmp(r.funcs[i].name, back.funcs[i].name) ||
		    r.funcs[i].mean != back.funcs[i].mean)
			abort();
	free(line);
	history_record_release(&r);
	history_record_release(&back);
	return 0;
}
