/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The least a malloc interposer can cost (bench/alloc.py --split): a
 * preloaded library whose malloc and free only jump to the next
 * definitions, found in its constructor (dlsym's own allocations go to
 * calloc, which it leaves alone). What bench/alloc.c measures under it
 * is the hop itself: the call's second indirect jump.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

static void *(*next_malloc)(size_t);
static void (*next_free)(void *);

__attribute__((constructor)) static void
resolve(void)
{
	next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
}

void *malloc(size_t n);
void free(void *p);

void *
malloc(size_t n)
{
	return next_malloc(n);
}

void
free(void *p)
{
	next_free(p);
}
