/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for tools/symbols/symtab.c: load symbols from arbitrary bytes as
 * an ELF image, and check what comes back is sorted, disjoint and named.
 * `make fuzz` builds it and seeds it with the test programs.
 */
#include <stdint.h>
#include <stdlib.h>

#include "symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symtab st;
	char err[512];

	if (symtab_load_mem(&st, data, size, NULL, err, sizeof(err)))
		return 0;
	for (size_t i = 0; i < st.nsyms; i++) {
		if (st.syms[i].lo >= st.syms[i].hi || st.syms[i].func >= st.nfuncs)
			abort();
		if (i && st.syms[i - 1].hi > st.syms[i].lo)
			abort();
		if (symtab_find(&st, st.syms[i].lo) != (long)i)
			abort();
	}
	for (size_t i = 0; i < st.nfuncs; i++)
		if (!st.funcs[i] || !st.funcs[i][0])
			abort();
	symtab_release(&st);
	return 0;
}
