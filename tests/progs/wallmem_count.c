/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A preloaded malloc watcher for tests/e2e/test_mem34.py: every
 * allocation made in a thread named "pc-wall" (libpc's wall sampler) is
 * told as one line, "malloc in pc-wall" (or calloc, ...), appended to the
 * file that WALLMEM_COUNT_LOG names (that thread has a descriptor table
 * of its own, without the program's descriptor 2), and handed to glibc's
 * as any other. Such a thread would get a malloc arena of glibc's: 64 MiB
 * of address space. Goes first in LD_PRELOAD.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static void
check(const char *what)
{
	char name[17] = "", line[64];
	const char *log = getenv("WALLMEM_COUNT_LOG");
	size_t n = strlen(what);
	int fd;

	if (!log || prctl(PR_GET_NAME, name, 0, 0, 0) || strcmp(name, "pc-wall"))
		return;
	memcpy(line, what, n);
	memcpy(line + n, " in pc-wall\n", 12);
	if ((fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666)) < 0)
		return;
	if (write(fd, line, n + 12) < 0)
		n = 0;
	close(fd);
}

void *
malloc(size_t n)
{
	check("malloc");
	return __libc_malloc(n);
}

void *
calloc(size_t n, size_t k)
{
	check("calloc");
	return __libc_calloc(n, k);
}

void *
realloc(void *p, size_t n)
{
	check("realloc");
	return __libc_realloc(p, n);
}

void *
memalign(size_t a, size_t n)
{
	check("memalign");
	return __libc_memalign(a, n);
}

void *
aligned_alloc(size_t a, size_t n)
{
	check("aligned_alloc");
	return __libc_memalign(a, n);
}

int
posix_memalign(void **p, size_t a, size_t n)
{
	check("posix_memalign");
	*p = __libc_memalign(a, n);
	return *p ? 0 : 12;
}
