/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How pcprof writes names: strings as text, as JSON and as CSV fields.
 * Every name that text, CSV or folded stacks show goes through text_escape
 * here, and so does every message (msg.c); every JSON string goes through
 * json_string. Calls nothing else in pcprof.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

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
		else if (is_control(cp) || (cp == ';' && (flags & TEXT_FOLDED)))
			for (size_t i = 0; i < len; i++) {
				char e[4] = { '\\', 'x', hex[p[i] >> 4],
					      hex[p[i] & 15] };

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

char *
text_unescape(char *s)
{
	static const char hex[] = "0123456789abcdef";
	char *r = s, *w = s;

	while (*r) {
		const char *hi, *lo;

		if (*r != '\\' || !r[1]) {
			*w++ = *r++;
		} else if (r[1] == 'n' || r[1] == 'r' || r[1] == 't' ||
			   r[1] == '\\') {
			*w++ = r[1] == 'n' ? '\n' :
			       r[1] == 'r' ? '\r' :
			       r[1] == 't' ? '\t' :
					     '\\';
			r += 2;
		} else if (r[1] == 'x' && r[2] && r[3] &&
			   (hi = strchr(hex, r[2])) &&
			   (lo = strchr(hex, r[3]))) {
			*w++ = (char)((hi - hex) << 4 | (lo - hex));
			r += 4;
		} else {
			*w++ = *r++;	/* no escape of text_escape's */
		}
	}
	*w = 0;
	return s;
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

/*
 * One character of a JSON string at p as JSON holds it, into e (12 bytes
 * at most); its length, and in *len the bytes of p it stands for. Valid
 * UTF-8 stays as it is; a byte that is not part of valid UTF-8 is
 * \u00XX, its Latin-1 reading, so that the text is valid UTF-8 whatever
 * a name holds. C0 controls, DEL and C1 controls are \u00XX, U+2028 and
 * U+2029 \u2028 and \u2029 (line ends to JavaScript before ES2019), and
 * the quote and the backslash are escaped.
 */
static size_t
json_char(const unsigned char *p, char *e, size_t *len)
{
	long cp;

	*len = utf8_next(p, &cp);
	if (cp == '"' || cp == '\\') {
		e[0] = '\\';
		e[1] = (char)cp;
		return 2;
	}
	if (cp < 0)
		cp = p[0];
	else if (!is_control(cp) && cp != 0x2028 && cp != 0x2029) {
		memcpy(e, p, *len);
		return *len;
	}
	return (size_t)snprintf(e, 12, "\\u%04lx", (unsigned long)cp);
}

void
json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	while (*p) {
		char e[12];
		size_t len, k = json_char(p, e, &len);

		fwrite(e, 1, k, out);
		p += len;
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
