/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for tools/symbols/jitdump.c, the reader of perf's
 * jitdump format (jit-PID.dump) that names JIT code: arbitrary bytes as a
 * jitdump of any pid. Whatever it keeps must be functions of at least
 * one byte whose names are within the cap, and what it returns once as
 * disjoint functions must be sorted and disjoint. Seeded with
 * tests/fuzz/jitdump: dumps made like node 20's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "symbols/jit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jlines l = { 0 };
	struct symtab st;
	size_t lines;
	const char *why = jitdump_parse(data, size, 0, &l, &lines);

	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].lo >= l.v[i].hi || strlen(jit_name(&l, i)) > JIT_NAME_MAX)
			abort();
	if (why && !why[0])
		abort();
	memset(&st, 0, sizeof(st));
	jit_disjoint(&l, &st, "jitdump");
	for (size_t i = 0; i < st.nsyms; i++)
		if (st.syms[i].lo >= st.syms[i].hi ||
		    (i && st.syms[i - 1].hi > st.syms[i].lo) || st.syms[i].func >= st.nfuncs)
			abort();
	for (size_t i = 0; i < st.nfuncs; i++)
		free(st.funcs[i]);
	free(st.funcs);
	free(st.syms);
	return 0;
}
