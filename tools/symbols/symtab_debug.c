/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Separate debug files: found by build-id under the debug root, then by
 * .gnu_debuglink beside the file, then fetched from the debuginfod servers
 * of DEBUGINFOD_URLS (libdebuginfod). Called by symtab.c for a file without
 * .symtab, and through symtab.h by lines.c and the commands (the session).
 */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/dwlines.h"
#include "symbols/symtab_int.h"

/* Symbols from a separate debug file whose build-id matches, if any. */
static int
try_debug_file(struct symtab *st, const char *path, const struct elfinfo *want,
	       struct rawvec *rv)
{
	struct elfinfo info;
	char err[256];
	int fd;
	Elf *e = sym_open_elf(path, &fd, err, sizeof(err));
	int ok = 0;

	if (!e)
		return 0;
	if (sym_read_elf(e, &info, rv, NULL, NULL, err, sizeof(err)) == 0 &&
	    info.has_symtab && rv->n > 0 &&
	    (!want->build_id_len || (info.build_id_len == want->build_id_len &&
	     !memcmp(info.build_id, want->build_id, info.build_id_len)))) {
		ok = 1;
		st->debug_path = strdup(path);
	} else {
		sym_raw_free(rv);
	}
	elf_end(e);
	close(fd);
	return ok;
}

int
sym_debug_find(struct symtab *st, const char *exe, const struct elfinfo *info,
		const struct symtab_opts *o, struct rawvec *rv)
{
	const char *root = o->debug_root ? o->debug_root : "/usr/lib/debug";
	char path[PATH_MAX * 2], dir[PATH_MAX];
	char *slash;

	if (info->build_id_len >= 2) {
		int n = snprintf(path, sizeof(path), "%s/.build-id/%02x/", root,
				 info->build_id[0]);

		for (size_t i = 1;
		     i < info->build_id_len && n < (int)sizeof(path) - 8; i++)
			n += snprintf(path + n, sizeof(path) - (size_t)n,
				      "%02x", info->build_id[i]);
		snprintf(path + n, sizeof(path) - (size_t)n, ".debug");
		if (try_debug_file(st, path, info, rv))
			return 1;
	}
	if (!info->debuglink[0] || !realpath(exe, dir))
		return 0;
	if ((slash = strrchr(dir, '/')))
		*slash = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, info->debuglink);
	if (strcmp(path, exe) && try_debug_file(st, path, info, rv))
		return 1;
	snprintf(path, sizeof(path), "%s/.debug/%s", dir, info->debuglink);
	if (try_debug_file(st, path, info, rv))
		return 1;
	snprintf(path, sizeof(path), "%s%s/%s", root, dir, info->debuglink);
	return try_debug_file(st, path, info, rv);
}

/* ------------------------------------------------------- debuginfod */

/* Whether an error from libdebuginfod means its server was not reached,
 * rather than that it has no such file. */
static int
unreachable(int r)
{
	return r == -ECONNREFUSED || r == -ETIMEDOUT || r == -EHOSTUNREACH ||
	       r == -ENETUNREACH || r == -ECONNRESET || r == -EHOSTDOWN ||
	       r == -ENETDOWN || r == -EADDRNOTAVAIL || r == -EPROTO ||
	       r == -ECONNABORTED || r == -EAGAIN || r == -ETIME;
}

/*
 * The debug file of build-id from the debuginfod servers in
 * DEBUGINFOD_URLS, through elfutils' libdebuginfod and its cache
 * (DEBUGINFOD_CACHE_PATH). A server that cannot be reached is noted once
 * and not asked again; DEBUGINFOD_TIMEOUT bounds each wait, and
 * DEBUGINFOD_RETRY_LIMIT the tries (5 s and 1 retry unless they are set).
 */
/*
 * libdebuginfod is loaded when a fetch is first wanted, as libdw loads it
 * itself: linked, it brings libcurl and some thirty libraries with it, and
 * every pcprof command paid their loading (about 10 ms of CPU, which
 * `pcprof run` adds to the run it reports) though most never fetch.
 */
static struct {
	int tried;
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int,
			      char **);
	const char *(*get_url)(debuginfod_client *);
	void (*end)(debuginfod_client *);
} dfd;

static int
debuginfod_load(void)
{
	void *h;

	if (dfd.tried)
		return dfd.begin != NULL;
	dfd.tried = 1;
	if (!(h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL)))
		return 0;
	*(void **)&dfd.begin = dlsym(h, "debuginfod_begin");
	*(void **)&dfd.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&dfd.get_url = dlsym(h, "debuginfod_get_url");
	*(void **)&dfd.end = dlsym(h, "debuginfod_end");
	if (!dfd.find_debuginfo || !dfd.get_url || !dfd.end)
		dfd.begin = NULL;
	return dfd.begin != NULL;
}

int
sym_debuginfod(struct symtab *st, const struct elfinfo *info, struct rawvec *rv,
		struct symtab_fetch *f)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL;
	int fd, ok = 0;

	if (!f || !urls || !*urls || f->down || info->build_id_len < 2)
		return 0;
	if (!f->client) {
		/* a server that does not answer holds a report up for at
		 * most twice the timeout */
		setenv("DEBUGINFOD_TIMEOUT", "5", 0);
		setenv("DEBUGINFOD_RETRY_LIMIT", "1", 0);
		if (!debuginfod_load()) {
			f->down = 1;
			snprintf(f->note, sizeof(f->note), "debuginfod: cannot load "
				 "libdebuginfod.so.1 (elfutils' libdebuginfod1); symbols "
				 "from the files on this machine only");
			return 0;
		}
		if (!(f->client = dfd.begin())) {
			f->down = 1;
			snprintf(f->note, sizeof(f->note), "debuginfod: cannot start a client");
			return 0;
		}
	}
	fd = dfd.find_debuginfo(f->client, info->build_id,
				(int)info->build_id_len, &path);
	if (fd >= 0) {
		close(fd);
		ok = try_debug_file(st, path, info, rv);
	} else if (unreachable(fd)) {
		const char *url = dfd.get_url(f->client);

		f->down = 1;
		snprintf(f->note, sizeof(f->note),
			 "debuginfod: cannot reach %.300s: %s; "
			 "symbols from the files on this machine only",
			 url ? url : urls, strerror(-fd));
	}
	free(path);
	return ok;
}

const char *
symtab_fetch_note(struct symtab_fetch *f)
{
	if (!f || !f->note[0] || f->noted)
		return NULL;
	f->noted = 1;
	return f->note;
}

void
symtab_fetch_end(struct symtab_fetch *f)
{
	if (f && f->client) {
		dfd.end(f->client);
		f->client = NULL;
	}
	if (f) {
		dwcache_free(f->dwarf);
		f->dwarf = NULL;
	}
}

char *
symtab_debug_file_of(const char *path, const struct symtab_opts *o)
{
	static const struct symtab_opts none;
	struct rawvec a = { 0 }, b = { 0 }, c = { 0 }, dbg = { 0 };
	struct symtab tmp;
	struct elfinfo info;
	char err[256], *found = NULL;
	int fd;
	Elf *e;

	elf_version(EV_CURRENT);
	if (!(e = sym_open_elf(path, &fd, err, sizeof(err))))
		return NULL;
	memset(&tmp, 0, sizeof(tmp));
	if (!o)
		o = &none;
	if (sym_read_elf(e, &info, &a, &b, &c, err, sizeof(err)) == 0 &&
	    (sym_debug_find(&tmp, path, &info, o, &dbg) ||
	     sym_debuginfod(&tmp, &info, &dbg, o->fetch))) {
		found = tmp.debug_path;
		tmp.debug_path = NULL;
	}
	sym_raw_free(&a);
	sym_raw_free(&b);
	sym_raw_free(&c);
	sym_raw_free(&dbg);
	elf_end(e);
	close(fd);
	return found;
}
