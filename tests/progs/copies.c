/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Code run from a second mapping of its own file, as V8 runs its embedded
 * builtins: the pages holding copied_work are mapped again from
 * /proc/self/exe (PROT_READ | PROT_EXEC, MAP_PRIVATE) and called there,
 * for SECONDS of CPU, beside direct_work called where the loader put it
 * for half as long. Both are timed with the thread CPU clock.
 * Usage: copies SECONDS
 *        copies churn N [keep]  map, call, remap and unmap copies N
 *                         times (with keep, leave them mapped), then make
 *                         mmap and munmap fail; prints what each returned
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "truth.h"

static volatile uint64_t sink;

/* no calls and no data: it runs the same from any address */
__attribute__((noinline, aligned(64))) uint64_t
copied_work(uint64_t x, long n)
{
	return spin_exact(x + 3, n);
}

__attribute__((noinline)) uint64_t
direct_work(uint64_t x, long n)
{
	return spin_exact(x + 5, n);
}

static uintptr_t bias;
static const ElfW(Phdr) *phdr;
static int phnum;

static int
first(struct dl_phdr_info *i, size_t size, void *data)
{
	(void)size;
	(void)data;
	bias = i->dlpi_addr;
	phdr = i->dlpi_phdr;
	phnum = i->dlpi_phnum;
	return 1;
}

/* copied_work's file offset, or -1 */
static off_t
file_offset(void)
{
	uintptr_t link = (uintptr_t)copied_work - bias;

	for (int i = 0; i < phnum; i++)
		if (phdr[i].p_type == PT_LOAD && (phdr[i].p_flags & PF_X) &&
		    link >= phdr[i].p_vaddr && link < phdr[i].p_vaddr + phdr[i].p_filesz)
			return (off_t)(link - phdr[i].p_vaddr + phdr[i].p_offset);
	return -1;
}

/* copied_work in a new copy of its pages (at fixed, if not NULL); *m
 * the mapping, 2 pages */
static uint64_t (*copy_of_work(void *fixed, char **m))(uint64_t, long)
{
	long pg = sysconf(_SC_PAGESIZE);
	off_t off = file_offset(), start = off & ~(off_t)(pg - 1);
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (off < 0 || fd < 0)
		return NULL;
	*m = mmap(fixed, 2 * pg, PROT_READ | PROT_EXEC,
		  MAP_PRIVATE | (fixed ? MAP_FIXED : 0), fd, start);
	close(fd);
	if (*m == MAP_FAILED)
		return NULL;
	return (uint64_t (*)(uint64_t, long))(void *)(*m + (off - start));
}

static int
churn(long n, int keep)
{
	long pg = sysconf(_SC_PAGESIZE), i;
	uint64_t x = 1;
	char *m, *r;
	void *bad;

	for (i = 0; i < n; i++) {
		uint64_t (*f)(uint64_t, long) = copy_of_work(NULL, &m);

		if (!f)
			return 1;
		x = f(x, 1000);
		if (i % 3 == 1) {		/* moved elsewhere */
			r = mremap(m, 2 * pg, 2 * pg, MREMAP_MAYMOVE);
			if (r == MAP_FAILED)
				return 1;
			m = r;
		} else if (i % 3 == 2) {	/* a fresh copy right over it */
			if (!copy_of_work(m, &m))
				return 1;
		}
		if (!keep && munmap(m, 2 * pg))
			return 1;
	}
	printf("%lu\n", (unsigned long)x);
	errno = 0;
	bad = mmap(NULL, pg, PROT_READ | PROT_EXEC, MAP_PRIVATE, 1000, 0);
	printf("bad fd: %s %s\n", bad == MAP_FAILED ? "failed" : "mapped", strerror(errno));
	errno = 0;
	bad = mmap(NULL, pg, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		   open("/proc/self/exe", O_RDONLY), 1);
	printf("odd offset: %s %s\n", bad == MAP_FAILED ? "failed" : "mapped", strerror(errno));
	errno = 0;
	i = munmap((void *)1, (size_t)pg);
	printf("munmap of nothing: %ld %s\n", i, strerror(errno));
	return 3;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double t[2] = { 0, 0 }, start;
	uint64_t (*f)(uint64_t, long), x = 1;
	char *m;

	dl_iterate_phdr(first, NULL);
	if (argc > 2 && !strcmp(argv[1], "churn"))
		return churn(atol(argv[2]), argc > 3 && !strcmp(argv[3], "keep"));
	if (!(f = copy_of_work(NULL, &m)))
		return 1;
	start = process_cpu();
	while (process_cpu() - start < seconds) {
		/* 8 ms blocks each: a block of one tick (16 units) let the
		 * sample after a preemption at its clock read fall past its
		 * end, into the copy's (copied_work 0.82 of the pair against
		 * a truth of 0.67 at a load of 12) */
		TIMED_BLOCK(t[0], x = f(x, vary(2 * SPIN_UNIT)));
		TIMED_CALLS(t[1], 2 * TRUTH_BLOCK, x = direct_work(x, vary(SPIN_UNIT)));
	}
	sink = x;
	printf("truth: {\"copied_work\": %.6f, \"direct_work\": %.6f, \"cpu\": %.6f}\n",
	       t[0], t[1], process_cpu());
	return 0;
}
