/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stacks that libpc's cache of walks (preload/alloc_walk.c) must tell
 * apart, for tests/e2e/test_alloc39walk.py: one malloc call site (leaf)
 * reached from via_a and via_b, which are alike, so that leaf runs at the
 * same stack pointer from both (the cache's key: the same return address
 * and CFA) while the return addresses above differ; from frames of sizes
 * that vary (a variable-length array); from recursion to depths 1 to 80
 * (beyond the 64 frames kept); and, with "threads", in 3 threads at once.
 * Prints how many calls each path made and whether leaf's frame was at
 * the same address from via_a and via_b.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;
static __thread uintptr_t leaf_at;

static __attribute__((noipa)) void
leaf(size_t n)
{
	volatile char here = 0;
	char *p = malloc(n);

	p[0] = here;
	sink = p;
	free(p);
	leaf_at = (uintptr_t)&here;
}

static __attribute__((noipa)) uintptr_t
via_a(int k)
{
	leaf(64 + (size_t)(k & 0));
	return leaf_at;
}

static __attribute__((noipa)) uintptr_t
via_b(int k)
{
	leaf(64 + (size_t)(k & 0));
	return leaf_at;
}

static __attribute__((noipa)) void
via_vla(int k)
{
	volatile char buf[16 + 32 * (k % 7)];

	buf[0] = 0;
	leaf(64);
	sink = (void *)(uintptr_t)buf[0];
}

static __attribute__((noipa)) void
rec(int d)
{
	if (d > 1)
		rec(d - 1);
	else
		leaf(64);
	sink = (void *)(uintptr_t)d;
}

/* 3000 calls through via_a and 7000 through via_b, interleaved; 700
 * through via_vla; 80 recursions, 1 to 80 deep. 1 when leaf's frame was
 * at the same address from via_a and via_b. */
static void *
work(void *arg)
{
	uintptr_t a = 0, b = 0;

	(void)arg;
	for (int i = 0; i < 10000; i++) {
		if (i % 10 < 3)
			a = via_a(i);
		else
			b = via_b(i);
	}
	for (int i = 0; i < 700; i++)
		via_vla(i);
	for (int d = 1; d <= 80; d++)
		rec(d);
	return (void *)(uintptr_t)(a == b);
}

int
main(int argc, char **argv)
{
	int threads = argc > 1 && !strcmp(argv[1], "threads") ? 3 : 0;
	pthread_t t[3];
	void *same = work(NULL);

	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, work, NULL))
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("via_a 3000 via_b 7000 via_vla 700 rec 80, %d threads more\n",
	       threads);
	printf("same frame from via_a and via_b: %s\n", same ? "yes" : "no");
	return 0;
}
