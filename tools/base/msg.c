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

void *
pc_realloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		pc_fatal("out of memory");
	return q;
}
