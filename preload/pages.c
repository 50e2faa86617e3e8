/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pages of a table that samples ever wrote, run by run, for the
 * writers (out.c's histograms, arcs.c's table, objwrite.c's samples in no
 * object): what was never written is not read, so its zero pages are not
 * faulted in. live.c's pc_live_resident says which pages those are. Runs
 * in a fatal signal's writer too: everything here is AS-safe.
 */
#include <unistd.h>

#include "pc.h"
#include "banned.h"

int
pc_live_each_written(const void *addr, size_t len,
		     int (*fn)(size_t lo, size_t hi, void *arg), void *arg)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t npages = (len + page - 1) / page;
	unsigned char vec[1024];
	int r;

	/* the kernel is asked about 1024 pages at a time */
	for (size_t p0 = 0; p0 < npages; p0 += sizeof(vec)) {
		size_t n =
			npages - p0 < sizeof(vec) ? npages - p0 : sizeof(vec);

		pc_live_resident((const char *)addr + p0 * page, n * page, vec);
		for (size_t i = 0; i < n; i++) {
			size_t j = i, lo, hi;

			if (!(vec[i] & 1))
				continue;
			while (j + 1 < n && (vec[j + 1] & 1))
				j++;
			lo = (p0 + i) * page;
			hi = (p0 + j + 1) * page;
			if ((r = fn(lo, hi < len ? hi : len, arg)))
				return r;
			i = j;
		}
	}
	return 0;
}
