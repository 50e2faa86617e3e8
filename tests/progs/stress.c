/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The unwinder's worst case: one thread loads and unloads a plugin with
 * dlopen/dlclose (the loader's lock), two threads allocate and free
 * (malloc's locks), one thread burns CPU through a call chain, all while
 * every sample walks the stack. A deadlock hangs it; the test's timeout
 * catches that. Usage: stress SECONDS PLUGIN
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "truth.h"

static volatile int stop;
static volatile uint64_t sink;
static const char *plugin;
static long loads, allocs[2];

static void *
loader(void *arg)
{
	while (!stop) {
		void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
		int (*f)(int);

		if (!h)
			abort();
		f = (int (*)(int))dlsym(h, "plugin_value");
		sink += (uint64_t)f(3);
		dlclose(h);
		loads++;
	}
	return arg;
}

static void *
allocator(void *arg)
{
	long *count = arg;
	void *p[64] = { 0 };

	for (unsigned i = 0; !stop; i++) {
		unsigned k = (i * 2654435761u) % 64;

		free(p[k]);
		p[k] = malloc(16 + (i % 4096));
		memset(p[k], 1, 16);
		(*count)++;
	}
	for (int k = 0; k < 64; k++)
		free(p[k]);
	return NULL;
}

__attribute__((noinline)) uint64_t
burn_leaf(uint64_t x)
{
	return spin(x, SPIN_UNIT / 10);
}

__attribute__((noinline)) uint64_t
burn_middle(uint64_t x)
{
	return burn_leaf(x) ^ burn_leaf(x + 1);
}

static void *
burner(void *arg)
{
	uint64_t x = 1;

	while (!stop)
		x = burn_middle(x);
	sink = x;
	return arg;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5.0;
	struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
	pthread_t t[4];

	plugin = argc > 2 ? argv[2] : "./plugin.so";
	pthread_create(&t[0], NULL, loader, NULL);
	pthread_create(&t[1], NULL, allocator, &allocs[0]);
	pthread_create(&t[2], NULL, allocator, &allocs[1]);
	pthread_create(&t[3], NULL, burner, NULL);
	nanosleep(&ts, NULL);
	stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("loads: %ld allocs: %ld\n", loads, allocs[0] + allocs[1]);
	return 0;
}
