/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The tracer of scripts/argv_walk.py: linked into a pcprof built with
 * -finstrument-functions, it writes a line for each function's entry and
 * exit ("E OFFSET" or "X OFFSET", the function's address less the
 * executable's load address, in hexadecimal) to the file ARGVWALK_OUT
 * names, until a function whose offset ARGVWALK_STOP lists (hexadecimal,
 * comma-separated) is entered. Not part of pcprof.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define NI __attribute__((no_instrument_function))

static int fd = -2, on = 1;
static uintptr_t base;
static uint64_t stops[16];
static int nstops;
static char buf[1 << 16];
static size_t used;

NI static void
flush(void)
{
	if (fd >= 0 && used)
		(void)!write(fd, buf, used);
	used = 0;
}

NI __attribute__((destructor)) static void
done(void)
{
	flush();
}

NI static void
start(void *fn)
{
	const char *out = getenv("ARGVWALK_OUT"), *s = getenv("ARGVWALK_STOP");
	Dl_info di;

	fd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) :
		   -1;
	if (dladdr(fn, &di))
		base = (uintptr_t)di.dli_fbase;
	while (s && *s && nstops < 16) {
		char *end;

		stops[nstops++] = strtoull(s, &end, 16);
		s = *end == ',' ? end + 1 : NULL;
	}
}

NI static void
put(char what, void *fn)
{
	uint64_t off;
	char tmp[16];
	int k = 0;

	if (fd == -2)
		start(fn);
	if (!on || fd < 0)
		return;
	off = (uint64_t)((uintptr_t)fn - base);
	if (used + 24 > sizeof(buf))
		flush();
	buf[used++] = what;
	buf[used++] = ' ';
	do
		tmp[k++] = "0123456789abcdef"[off & 15];
	while (off >>= 4);
	while (k)
		buf[used++] = tmp[--k];
	buf[used++] = '\n';
	if (what == 'E')
		for (int i = 0; i < nstops; i++)
			if (stops[i] == (uint64_t)((uintptr_t)fn - base)) {
				on = 0;
				flush();
			}
}

NI void __cyg_profile_func_enter(void *fn, void *site);
NI void __cyg_profile_func_exit(void *fn, void *site);

void
__cyg_profile_func_enter(void *fn, void *site)
{
	put('E', fn);
}

void
__cyg_profile_func_exit(void *fn, void *site)
{
	put('X', fn);
}
