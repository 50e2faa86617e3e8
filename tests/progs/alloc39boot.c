/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A dlsym that allocates, as glibc's did before 2.34 (each thread's
 * dlerror state, on its first call): preloaded after libpc-alloc.so
 * (test_alloc39boot.py), it takes a block on each of its first calls,
 * and the calls the hooks make while they find their next definitions
 * are served from their static arena. It frees those blocks at exit,
 * once the hooks know glibc's free (one of them grown by realloc first),
 * and says on standard error how many came from libpc-alloc.so's arena.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HELD	256

static void *held[HELD];
static int nheld;

void *
dlsym(void *restrict h, const char *restrict name)
{
	static void *(*real)(void *, const char *);
	void *p;
	int k;

	if (!real)
		real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym",
							      "GLIBC_2.34");
	/* the slot taken before malloc, which calls here again */
	k = __atomic_fetch_add(&nheld, 1, __ATOMIC_RELAXED);
	if (k < HELD && (p = malloc(24 + (size_t)k))) {
		memset(p, 'b', 24);
		held[k] = p;
	}
	return real ? real(h, name) : NULL;
}

static __attribute__((destructor)) void
release(void)
{
	int boot = 0;

	for (int k = 0; k < nheld && k < HELD; k++) {
		Dl_info d;

		if (!held[k])
			continue;
		if (dladdr(held[k], &d) && d.dli_fname &&
		    strstr(d.dli_fname, "libpc-alloc.so"))
			boot++;
		if (k == 0) {
			char *q = realloc(held[k], 4096);

			if (!q || q[23] != 'b')
				abort();
			held[k] = q;
		}
		free(held[k]);
	}
	fprintf(stderr, "dlsym: %d of its blocks from libpc-alloc.so\n", boot);
}
