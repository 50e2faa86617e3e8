/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dlopen a plugin, run its plugin_spin for SECONDS of CPU, dlclose it, then
 * run main_after for SECONDS more (so that something else may be mapped
 * where the plugin was). Both are timed with the thread CPU clock.
 * Usage: plugrun PLUGIN.so SECONDS
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include "truth.h"

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t
main_after(uint64_t x)
{
	return spin(x + 9, 2 * SPIN_UNIT);
}

int
main(int argc, char **argv)
{
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	double t[2] = { 0, 0 }, start;
	uint64_t (*fn)(uint64_t);
	uint64_t x = 1;
	void *h;

	if (argc < 2 || !(h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, "plugrun: %s\n", dlerror());
		return 1;
	}
	fn = (uint64_t (*)(uint64_t))dlsym(h, "plugin_spin");
	if (!fn)
		return 1;
	start = process_cpu();
	while (process_cpu() - start < seconds) {
		TIMED_BLOCK(t[0], x = fn(x));
	}
	/* what the program can see of dlclose must not change under libpc */
	errno = 77;
	if (dlclose(h))
		return 1;
	printf("after dlclose: errno %d, dlerror %s\n", errno, dlerror() ? "set" : "clear");
	start = process_cpu();
	while (process_cpu() - start < seconds) {
		TIMED_BLOCK(t[1], x = main_after(x));
	}
	sink = x;
	printf("truth: {\"plugin_spin\": %.6f, \"main_after\": %.6f, \"cpu\": %.6f}\n",
	       t[0], t[1], process_cpu());
	return 0;
}
