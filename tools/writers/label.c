/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How reports write names: a function as "name (object)" outside the
 * executable, and strings as text, as JSON and as CSV fields. Every name
 * that text or CSV shows goes through text_escape here, and so does every
 * message (files.c). Calls nothing else in pcprof.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"

size_t
utf8_next(const unsigned char *p, long *cp)
{
	size_t len;
	long v, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		v = p[0] & 0x1f;
		min = 0x80;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		v = p[0] & 0x0f;
		min = 0x800;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		v = p[0] & 0x07;
		min = 0x10000;
	} else {
		*cp = -1;
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80) {
			*cp = -1;
			return 1;
		}
		v = v << 6 | (p[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) {
		*cp = -1;
		return 1;
	}
	*cp = v;
	return len;
}

/* Append s[0..k) to buf (size bytes), counting in *n what would be there. */
static void
put(char *buf, size_t size, size_t *n, const char *s, size_t k)
{
	for (size_t i = 0; i < k; i++, (*n)++)
		if (*n + 1 < size)
			buf[*n] = s[i];
}

/* Whether a character (utf8_next's cp, -1 for a byte of no valid
 * character) acts on a terminal: C0, DEL, C1. */
static int
is_control(long cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f);
}

size_t
text_escape(char *buf, size_t size, const char *s, unsigned flags)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p) {
		long cp;
		size_t len = utf8_next(p, &cp);

		if (cp == '\\')
			put(buf, size, &n, "\\\\", 2);
		else if (cp == '\n')
			put(buf, size, &n, "\\n", 2);
		else if (cp == '\r')
			put(buf, size, &n, "\\r", 2);
		else if (cp == '\t')
			put(buf, size, &n, flags & TEXT_KEEP_TAB ? "\t" : "\\t",
			    flags & TEXT_KEEP_TAB ? 1 : 2);
		else if (is_control(cp))
			for (size_t i = 0; i < len; i++) {
				char e[4] = { '\\', 'x', hex[p[i] >> 4], hex[p[i] & 15] };

				put(buf, size, &n, e, 4);
			}
		else
			put(buf, size, &n, (const char *)p, len);
		p += len;
	}
	if (size)
		buf[n < size ? n : size - 1] = 0;
	return n;
}

/*
 * s escaped with flags: s itself when nothing needs it, else a copy in
 * one of TEXT_SLOTS buffers, reused in turn. Out of memory, it ends
 * pcprof as pc_fatal would (which it cannot call: files.c calls here).
 */
#define TEXT_SLOTS	8

static const char *
escaped(const char *s, unsigned flags)
{
	static char *slot[TEXT_SLOTS];
	static size_t cap[TEXT_SLOTS];
	static unsigned next;
	size_t n;
	unsigned k;

	/* every escape is longer than what it stands for */
	if (!s || (n = text_escape(NULL, 0, s, flags)) == strlen(s))
		return s;
	k = next++ % TEXT_SLOTS;
	if (cap[k] < n + 1) {
		char *p = realloc(slot[k], n + 1);

		if (!p) {
			fflush(stdout);
			fputs("pcprof: out of memory\n", stderr);
			exit(EXIT_BAD_INPUT);
		}
		slot[k] = p;
		cap[k] = n + 1;
	}
	text_escape(slot[k], n + 1, s, flags);
	return slot[k];
}

const char *
text_name(const char *s)
{
	return escaped(s, 0);
}

const char *
text_source(const char *s)
{
	return escaped(s, TEXT_KEEP_TAB);
}

void
json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

void
csv_string(FILE *out, const char *s)
{
	const char *e = text_name(s);

	/* escaped, the field holds no line break: only a comma or a quote
	 * makes it quoted */
	if (!strpbrk(e, ",\"")) {
		fputs(e, out);
		return;
	}
	fputc('"', out);
	for (; *e; e++) {
		if (*e == '"')
			fputc('"', out);
		fputc(*e, out);
	}
	fputc('"', out);
}

const char *
func_label(const struct symtab *st, uint32_t func, char *buf, size_t size)
{
	if (!st->nobjs || st->func_obj[func] == 0 || st->funcs[func][0] == '[')
		return st->funcs[func];
	snprintf(buf, size, "%s (%s)", st->funcs[func], st->objnames[st->func_obj[func]]);
	return buf;
}
