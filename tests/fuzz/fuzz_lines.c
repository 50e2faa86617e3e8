/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for tools/symbols/dwlines.c, the line-table path of pcprof
 * report --lines and annotate: arbitrary bytes as an ELF image whose DWARF
 * libdw reads; every unit's addresses (its low and high pc, and the bytes
 * after the low one) are looked up, and what comes back must be a line
 * with a file. Seeded with the test programs, built -g.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dwlines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
probe(struct dwlines *m, uint64_t a)
{
	struct dwline l;
	uint64_t end;

	if (dwlines_at(m, a, &l, &end) && (!l.file || !l.file[0] || l.line < 0))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwlines *m = dwlines_open_mem(data, size);
	Elf *elf;
	Dwarf *dw;
	Dwarf_Off off = 0, next;
	size_t hsize;
	int units = 0;

	if (!m)
		return 0;
	/* a second view of the same DWARF, to find addresses worth asking */
	elf = elf_memory((char *)data, size);
	dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	while (dw && units++ < 64 &&
	       dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Addr lo, hi;

		if (dwarf_offdie(dw, off + hsize, &cu)) {
			if (dwarf_lowpc(&cu, &lo) == 0)
				for (uint64_t k = 0; k < 64; k++)
					probe(m, lo + k);
			if (dwarf_highpc(&cu, &hi) == 0 && hi)
				probe(m, hi - 1);
		}
		off = next;
	}
	for (uint64_t a = 0; a < 0x4000; a += 0x101)
		probe(m, a);
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	dwlines_close(m);
	return 0;
}
