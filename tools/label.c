/*
 * How reports write names: a function as "name (object)" outside the
 * executable, and strings as JSON and as CSV fields.
 */
#include <stdio.h>
#include <string.h>

#include "pcprof.h"

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
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
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
