/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Known allocations from known functions, for PC_ALLOC's tests
 * (tests/e2e/test_alloc39.py): counts, sizes, frees, a leak, a realloc
 * chain and the aligned forms. "alloc39 churn MB" adds MB mebibytes of
 * 4 KiB blocks, each freed at once, in churn_site (for the sampled
 * estimates); "alloc39 threads" runs the sites in 4 threads at once;
 * "alloc39 unrealloc" runs unrealloc_site alone (a realloc that fails).
 * A last word "kill" ends the program with SIGKILL once the allocations
 * are made, with what it allocated still in use: the allocation profile
 * is then the live file's (pcprof finishes it). Built with -ljemalloc
 * and -DWITH_JEMALLOC=1, it says jemalloc's version; linked with (or
 * preloaded with) tcmalloc or mimalloc, it says which of them owns a
 * block that malloc returned. "alloc39 hooks" says which object defines
 * the malloc that the program's calls reach, and does nothing else.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#ifdef WITH_JEMALLOC
/* built with -ljemalloc (test_alloc39.py): say that jemalloc allocates */
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
#endif

static void *volatile sink;

static __attribute__((noinline)) void
small_site(void)
{
	for (int i = 0; i < 10000; i++) {
		char *p = malloc(64);

		p[0] = (char)i;
		sink = p;
		free(p);
	}
}

static __attribute__((noinline)) void
big_site(void)
{
	for (int i = 0; i < 100; i++) {
		char *p = malloc(100000);

		p[0] = (char)i;
		sink = p;
		free(p);
	}
}

static __attribute__((noinline)) void
leak_site(void)
{
	for (int i = 0; i < 7; i++) {
		char *p = malloc(1000);

		memset(p, i, 1000);
		sink = p;	/* lost: a leak of 7 blocks, 7000 bytes */
	}
}

static __attribute__((noinline)) void
calloc_site(void)
{
	for (int i = 0; i < 500; i++) {
		char *p = calloc(10, 32);

		sink = p;
		free(p);
	}
}

/* realloc(NULL, 100), then 99 more up to 10000 bytes: 100 allocations
 * of 505000 bytes in all, each freed by the next or the last free */
static __attribute__((noinline)) void
realloc_site(void)
{
	char *p = NULL;

	for (int i = 1; i <= 100; i++) {
		p = realloc(p, (size_t)i * 100);
		p[0] = (char)i;
		sink = p;
	}
	free(p);
}

static __attribute__((noinline)) void
aligned_site(void)
{
	for (int i = 0; i < 200; i++) {
		void *p = NULL, *q;

		if (posix_memalign(&p, 64, 4096))
			abort();
		q = aligned_alloc(64, 128);
		sink = p;
		sink = q;
		free(p);
		free(q);
	}
}

/* reallocarray(NULL, 1, 16), then 49 more up to 50 x 16 bytes: 50
 * allocations of 20400 bytes, each freed by the next or the last free;
 * memalign and valloc, 50 each */
static __attribute__((noinline)) void
array_site(void)
{
	char *p = NULL;

	for (int i = 1; i <= 50; i++) {
		p = reallocarray(p, (size_t)i, 16);
		p[0] = (char)i;
		sink = p;
	}
	free(p);
	for (int i = 0; i < 50; i++) {
		void *q = memalign(64, 256), *v = valloc(100);

		sink = q;
		sink = v;
		free(q);
		free(v);
	}
}

static __attribute__((noinline)) void
churn_site(long mb)
{
	for (long i = 0; i < mb * 256; i++) {
		char *p = malloc(4096);

		p[0] = (char)i;
		sink = p;
		free(p);
	}
}

/* 5 blocks of 300 bytes, each grown by a realloc of an absurd size
 * that fails (the block stays the program's, where it was), then 3 of
 * them freed: 5 allocations of 1500 bytes, 2 of 600 in use at exit. */
static void *volatile kept[5];
static volatile size_t absurd = ~(size_t)0 / 2 - 4095;

static __attribute__((noinline)) void
unrealloc_site(void)
{
	for (int i = 0; i < 5; i++) {
		kept[i] = malloc(300);
		if (!kept[i] || realloc(kept[i], absurd))
			abort();
	}
	for (int i = 0; i < 3; i++)
		free(kept[i]);
}

static void
sites(void)
{
	small_site();
	big_site();
	leak_site();
	calloc_site();
	realloc_site();
	aligned_site();
	array_site();
}

static void *
thread_main(void *arg)
{
	(void)arg;
	sites();
	return NULL;
}

/* The file name of the object that defines malloc, as the program's own
 * calls find it. */
static void
say_hooks(void)
{
	Dl_info info;
	const char *base;

	if (!dladdr(dlsym(RTLD_DEFAULT, "malloc"), &info) || !info.dli_fname) {
		printf("malloc: unknown\n");
		return;
	}
	base = strrchr(info.dli_fname, '/');
	printf("malloc: %s\n", base ? base + 1 : info.dli_fname);
}

/* Which allocator owns a block of malloc's (found by name: linked or
 * preloaded); nothing for glibc's. */
static void
say_owner(void)
{
	int (*tc_owns)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT,
			"MallocExtension_GetOwnership");
	int (*mi_owns)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT,
			"mi_is_in_heap_region");
	void *p = malloc(100);

	sink = p;
	if (tc_owns)	/* MallocExtension_kOwned */
		printf("allocator: tcmalloc %s\n", tc_owns(p) == 1 ? "owns malloc's" : "does not");
	if (mi_owns)
		printf("allocator: mimalloc %s\n", mi_owns(p) ? "owns malloc's" : "does not");
	free(p);
}

int
main(int argc, char **argv)
{
	int kill_at_end = argc > 1 && !strcmp(argv[argc - 1], "kill");

	if (argc > 1 && !strcmp(argv[1], "hooks")) {
		say_hooks();
		return 0;
	}

	argc -= kill_at_end;
	if (argc > 2 && !strcmp(argv[1], "churn")) {
		churn_site(atol(argv[2]));
	} else if (argc > 1 && !strcmp(argv[1], "unrealloc")) {
		unrealloc_site();
	} else if (argc > 1 && !strcmp(argv[1], "threads")) {
		pthread_t t[4];

		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, thread_main, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	} else {
		sites();
	}
	if (kill_at_end)
		raise(SIGKILL);
#ifdef WITH_JEMALLOC
	{
		const char *v = NULL;
		size_t len = sizeof(v);

		if (!mallctl("version", &v, &len, NULL, 0) && v)
			printf("allocator: jemalloc %s\n", v);
	}
#endif
	say_owner();
	printf("alloc39 done\n");
	return 3;
}
