/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program that locks its memory, for the tests of libpc's address space
 * (tests/e2e/test_mem34.py); run as a user that is not root, whose
 * RLIMIT_MEMLOCK weighs everything mapped.
 *   mem34_lock need
 *       prints "vm KIB": the address space it has mapped before the lock
 *   mem34_lock LIMIT_KIB FLAGS MALLOC_KIB SECONDS [PLUGIN]
 *       sets RLIMIT_MEMLOCK (soft) to LIMIT_KIB, calls mlockall(FLAGS: cur,
 *       fut, onfault joined by '+'), spins SECONDS / 2 in lock_work, mallocs
 *       MALLOC_KIB and touches every page, spins SECONDS / 2 more (in
 *       PLUGIN's plugin_spin, loaded then, where one is named: plugspin.so);
 *       prints what each step gave. Exit 0, or 1 when mlockall failed, 2
 *       when malloc did, 4 when the plugin could not be loaded.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "truth.h"

static volatile uint64_t sink;

__attribute__((noinline)) void
lock_work(double seconds)
{
	double t0 = process_cpu();

	while (process_cpu() - t0 < seconds)
		sink = spin(sink, TRUTH_BLOCK * SPIN_UNIT);
}

/* SECONDS of CPU in the plugin's plugin_spin, loaded now: 0, or -1. */
static int
plugin_work(const char *path, double seconds)
{
	void *h = dlopen(path, RTLD_NOW);
	uint64_t (*f)(uint64_t) = h ? (uint64_t (*)(uint64_t))dlsym(h, "plugin_spin") : NULL;
	double t0 = process_cpu();

	if (!f) {
		printf("dlopen %s: failed\n", path);
		return -1;
	}
	while (process_cpu() - t0 < seconds)
		sink = f(sink);
	printf("plugin: ok\n");
	return 0;
}

static long
vm_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmSize:", 7))
			kib = atol(line + 7);
	if (f)
		fclose(f);
	return kib;
}

static int
flags_of(const char *s)
{
	int flags = 0;

	if (strstr(s, "cur"))
		flags |= MCL_CURRENT;
	if (strstr(s, "fut"))
		flags |= MCL_FUTURE;
#ifdef MCL_ONFAULT
	if (strstr(s, "onfault"))
		flags |= MCL_ONFAULT;
#endif
	return flags;
}

int
main(int argc, char **argv)
{
	struct rlimit rl;
	size_t kib;
	char *p;

	if (argc == 2 && !strcmp(argv[1], "need")) {
		printf("vm %ld\n", vm_kib());
		return 0;
	}
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: mem34_lock need | LIMIT_KIB FLAGS MALLOC_KIB SECONDS "
			"[PLUGIN]\n");
		return 3;
	}
	getrlimit(RLIMIT_MEMLOCK, &rl);
	rl.rlim_cur = (rlim_t)atol(argv[1]) << 10;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		printf("setrlimit: %s\n", strerror(errno));
	if (mlockall(flags_of(argv[2]))) {
		printf("mlockall: %s\n", strerror(errno));
		return 1;
	}
	printf("mlockall: ok\n");
	lock_work(atof(argv[4]) / 2);
	kib = (size_t)atol(argv[3]);
	p = malloc(kib << 10);
	if (!p) {
		printf("malloc %zu KiB: %s\n", kib, strerror(errno));
		return 2;
	}
	for (size_t i = 0; i < kib << 10; i += 4096)
		p[i] = 1;
	printf("malloc %zu KiB: ok\n", kib);
	if (argc == 6) {
		if (plugin_work(argv[5], atof(argv[4]) / 2))
			return 4;
	} else {
		lock_work(atof(argv[4]) / 2);
	}
	free(p);
	printf("spun\n");
	return 0;
}
