/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench: create and join COUNT threads that do nothing, one after another.
 * Linked with the objects benchmark's 100 libraries, it measures what
 * PC_SCOPE=all adds to pthread_create (an inventory of the objects).
 * Usage: spawn COUNT
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *
nothing(void *arg)
{
	return arg;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;

	for (long i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
			return 1;
	}
	printf("%ld threads\n", n);
	return 0;
}
