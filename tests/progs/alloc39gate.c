/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gate on allocations' builds (tests/e2e/test_alloc39.py): three
 * sites with known allocations, built as it is and with -DMORE=1, where
 * grow_site makes 1 % more allocations of its size (1010 blocks of 1000
 * bytes, not 1000), the others unchanged. "alloc39gate N" repeats the
 * work N times (the sampled runs' samples).
 */
#include <stdio.h>
#include <stdlib.h>

#ifndef MORE
#define MORE 0
#endif

static void *volatile sink;
static volatile int calls;

static __attribute__((noinline)) void
churn(size_t size, int n)
{
	for (int i = 0; i < n; i++) {
		char *p = malloc(size);

		p[0] = (char)i;
		sink = p;
		free(p);
	}
}

static __attribute__((noinline)) void
grow_site(void)
{
	churn(1000, MORE ? 1010 : 1000);
	calls++;	/* a call, not a jump: the site is on the stack */
}

static __attribute__((noinline)) void
steady_site(void)
{
	churn(4000, 1000);
	calls++;
}

static __attribute__((noinline)) void
small_site(void)
{
	churn(32, 20000);
	calls++;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < n; i++) {
		grow_site();
		steady_site();
		small_site();
	}
	printf("alloc39gate done\n");
	return 0;
}
