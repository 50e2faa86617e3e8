/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bottom of pcprof: its one-line messages in err(3) style (exit status
 * 2 for bad input), escaped whatever the names in them hold, and memory
 * that is there or a message. Calls nothing in pcprof but escape.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* vasprintf */
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* The message is one line whatever the names in it hold: all of it is
 * escaped (escape.c), so callers pass names as they are. */
static void
vwarn(const char *fmt, va_list ap)
{
	char *msg;

	fflush(stdout);
	if (vasprintf(&msg, fmt, ap) < 0) {
		fputs("pcprof: out of memory\n", stderr);
		return;
	}
	fprintf(stderr, "pcprof: %s\n", text_name(msg));
	free(msg);
}

void
pc_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

void
pc_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	exit(EXIT_BAD_INPUT);
}

const char *
pc_hex(const uint8_t *b, size_t n, char *buf)
{
	for (size_t i = 0; i < n; i++)
		sprintf(buf + 2 * i, "%02x", b[i]);
	buf[2 * n] = 0;
	return buf;
}

/*
 * Memory that is there or the end of pcprof, as git's xmalloc: the one
 * exit below tools/commands/ (scripts/fatal.allow), so that no caller
 * tests for NULL. The status is pc_oom_status, which a command may set
 * (run's report keeps the program's status).
 */
int pc_oom_status = EXIT_BAD_INPUT;

void
pc_oom(void)
{
	fflush(stdout);
	fputs("pcprof: out of memory\n", stderr);
	exit(pc_oom_status);
}

static void *
there(void *p)
{
	if (!p)
		pc_oom();
	return p;
}

void *
pc_realloc(void *p, size_t n)
{
	return there(realloc(p, n ? n : 1));
}

void *
pc_malloc(size_t n)
{
	return there(malloc(n ? n : 1));
}

void *
pc_calloc(size_t n, size_t size)
{
	return there(calloc(n ? n : 1, size ? size : 1));
}

char *
pc_strdup(const char *s)
{
	return there(strdup(s));
}

char *
pc_strndup(const char *s, size_t n)
{
	return there(strndup(s, n));
}

char *
pc_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		pc_oom();
	return s;
}

FILE *
pc_memstream(char **buf, size_t *len)
{
	return there(open_memstream(buf, len));
}

void
pc_memstream_close(FILE *f)
{
	if (fclose(f))
		pc_oom();
}

int
pc_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	return -1;
}
