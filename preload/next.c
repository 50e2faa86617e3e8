/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The next definition of a function libpc interposes (dlsym RTLD_NEXT), for
 * the interposers of signals.c, lifecycle.c, threads.c and objects.c. Kept
 * apart because dlsym is not async-signal-safe: the files that call it may
 * then include banned.h; start-up resolves what their handler paths use.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>

#include "pc.h"

void *
pc_next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}
