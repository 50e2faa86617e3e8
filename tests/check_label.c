/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for tools/writers/label.c's writing of names: text_escape, the
 * one escaper that text, CSV and messages go through, against a table of the edge
 * cases, read back by an unescaper of its own to show that the mapping has one
 * reading; and csv_string's quoting of what it escaped. json_string, valid
 * UTF-8 whatever a name holds; folded frames' semicolons, and text_unescape.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "unit.h"

#define N(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The cases: plain ASCII and valid UTF-8 (2, 3 and 4 bytes) unchanged;
 * the backslash doubled; newline, carriage return and tab in C's form;
 * other C0 controls, ESC's sequences, DEL; C1 controls in UTF-8 (U+0080,
 * U+009B, the CSI of 8-bit terminals) while U+00A0 stays; bytes of no
 * valid character: a lone continuation byte, an overlong form, a
 * surrogate, a code point over U+10FFFF, a sequence cut short at the end
 * and one cut short by an ASCII byte, 0xff; and the names of the e2e test.
 */
static const struct {
	const char *in, *out;
} cases[] = {
	{ "", "" },
	{ "main", "main" },
	{ "std::vector<int>::push_back(int&&)", "std::vector<int>::push_back(int&&)" },
	{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5" },
	{ "a\\b", "a\\\\b" },
	{ "\\x41", "\\\\x41" },
	{ "line\nbreak\r\tend", "line\\nbreak\\r\\tend" },
	{ "\x01\x07\x08\x1f", "\\x01\\x07\\x08\\x1f" },
	{ "\x1b]0;owned\a", "\\x1b]0;owned\\x07" },
	{ "\x1b[2J", "\\x1b[2J" },
	{ "del\x7f", "del\\x7f" },
	{ "\xc2\x80|\xc2\x9b|\xc2\x9f|\xc2\xa0", "\\xc2\\x80|\\xc2\\x9b|\\xc2\\x9f|\xc2\xa0" },
	{ "\x9b" "31m", "\\x9b31m" },
	{ "\xc0\xaf", "\\xc0\\xaf" },
	{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },
	{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },
	{ "end\xe2\x82", "end\\xe2\\x82" },
	{ "\xe2\x82x", "\\xe2\\x82x" },
	{ "\xff", "\\xff" },
	{ "\x1b]0;owned\a\n\\x", "\\x1b]0;owned\\x07\\n\\\\x" },
	{ "odd\x1b[2J\awork\x7f", "odd\\x1b[2J\\x07work\\x7f" },
};

START_TEST(test_escape_table)
{
	for (size_t i = 0; i < N(cases); i++) {
		char buf[256];
		size_t n = text_escape(buf, sizeof(buf), cases[i].in, 0);

		ck_assert_msg(!strcmp(buf, cases[i].out), "case %zu: got '%s'",
			      i, buf);
		ck_assert_uint_eq(n, strlen(cases[i].out));
		ck_assert_str_eq(text_name(cases[i].in), cases[i].out);
	}
}
END_TEST

/* Each escape back to its bytes: -1 for a text no escaper could write. */
static int
unescape(const char *s, char *out)
{
	size_t k = 0;

	while (*s) {
		unsigned v;

		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return -1;	/* left raw: a control */
		if (*s != '\\') {
			out[k++] = *s++;
			continue;
		}
		switch (s[1]) {
		case '\\': out[k++] = '\\'; s += 2; break;
		case 'n': out[k++] = '\n'; s += 2; break;
		case 'r': out[k++] = '\r'; s += 2; break;
		case 't': out[k++] = '\t'; s += 2; break;
		case 'x':
			if (sscanf(s + 2, "%2x", &v) != 1 || !s[2] || !s[3])
				return -1;
			out[k++] = (char)v;
			s += 4;
			break;
		default:
			return -1;
		}
	}
	out[k] = 0;
	return 0;
}

/* Random bytes (no NUL), ASCII and the bytes around the edges likely:
 * every escaped text reads back to the name, holds no C0 control or DEL,
 * and is valid UTF-8 with no C1 control. */
START_TEST(test_escape_reads_back)
{
	static const unsigned char some[] = {
		'a',  '\\', 'x',  '1',  '\n', '\t', 0x1b, 0x7f,
		0x80, 0x9b, 0xbf, 0xc2, 0xc3, 0xa9, 0xe2, 0x82,
		0xac, 0xed, 0xa0, 0xf0, 0x9f, 0xf4, 0x90, 0xff,
	};
	unsigned seed = 12345;

	for (int round = 0; round < 20000; round++) {
		char in[24], esc[128], back[24];
		size_t len = 1 + (seed = seed * 1103515245u + 12345u) % 20;

		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			in[i] = (char)(seed >> 24 & 1 ?
					       some[(seed >> 8) % N(some)] :
					       1 + (seed >> 8) % 255);
		}
		in[len] = 0;
		/*
		 * Check's assertions each write to a pipe (its mark points), so
		 * 20,000 rounds of them take seconds on a busy machine and hit
		 * the suite's timeout: test plainly, and fail with the message.
		 */
		if (text_escape(esc, sizeof(esc), in, 0) >= sizeof(esc))
			ck_abort_msg("round %d: escape does not fit", round);
		if (unescape(esc, back) != 0 || strcmp(back, in))
			ck_abort_msg("round %d: '%s' does not read back", round,
				     esc);
		for (const unsigned char *p = (const unsigned char *)esc; *p;) {
			long cp;

			p += utf8_next(p, &cp);
			if (cp < 0x20 || cp == 0x7f ||
			    (cp >= 0x80 && cp <= 0x9f))
				ck_abort_msg(
					"round %d: character %ld left in '%s'",
					round, cp, esc);
		}
		if (strcmp(text_unescape(esc), in))
			ck_abort_msg(
				"round %d: text_unescape gives another name",
				round);
	}
}
END_TEST

/* As snprintf: the whole length whatever the room, and the text cut to
 * the room (an escape too) and NUL-terminated, nothing written past it. */
START_TEST(test_escape_measures_and_cuts)
{
	char buf[6];

	ck_assert_uint_eq(text_escape(NULL, 0, "a\x1b" "b", 0), 6);
	memset(buf, 'z', sizeof(buf));
	ck_assert_uint_eq(text_escape(buf, 4, "a\x1b" "b", 0), 6);
	ck_assert_str_eq(buf, "a\\x");
	ck_assert_int_eq(buf[4], 'z');
	ck_assert_uint_eq(text_escape(buf, 1, "abc", 0), 3);
	ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(test_keep_tab_keeps_only_tabs)
{
	char buf[64];

	text_escape(buf, sizeof(buf), "\tif (x)\x1b\n", TEXT_KEEP_TAB);
	ck_assert_str_eq(buf, "\tif (x)\\x1b\\n");
	ck_assert_str_eq(text_source("\t\tx"), "\t\tx");
}
END_TEST

/* text_name hands back the name itself when nothing needs escaping, and
 * eight escaped names at once stay apart. */
START_TEST(test_text_name_slots)
{
	const char *plain = "plain_name", *v[8];
	char in[8][8];

	ck_assert_ptr_eq(text_name(plain), plain);
	ck_assert_ptr_null(text_name(NULL));
	for (int i = 0; i < 8; i++) {
		snprintf(in[i], sizeof(in[i]), "%d\n", i);
		v[i] = text_name(in[i]);
	}
	for (int i = 0; i < 8; i++) {
		char want[8];

		snprintf(want, sizeof(want), "%d\\n", i);
		ck_assert_str_eq(v[i], want);
	}
}
END_TEST

static char *
csv_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	csv_string(f, s);
	fclose(f);
	return buf;
}

/* A CSV field: escaped first, so that no line break is left in it, then
 * quoted for a comma or a quote, with a quote doubled. */
START_TEST(test_csv_escapes_then_quotes)
{
	static const struct {
		const char *in, *out;
	} v[] = {
		{ "plain", "plain" },
		{ "a,b", "\"a,b\"" },
		{ "say \"hi\"", "\"say \"\"hi\"\"\"" },
		{ "two\nlines", "two\\nlines" },
		{ "x,\x1b[0m\r\n", "\"x,\\x1b[0m\\r\\n\"" },
	};

	for (size_t i = 0; i < N(v); i++) {
		char *got = csv_of(v[i].in);

		ck_assert_str_eq(got, v[i].out);
		free(got);
	}
}
END_TEST

static char *
json_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	json_string(f, s);
	fclose(f);
	return buf;
}

/*
 * JSON strings, valid UTF-8 whatever the name holds. The cases: ASCII and
 * valid UTF-8 of 2, 3 and 4 bytes unchanged, up to U+10FFFF, U+FFFF and
 * U+E000 after the surrogates; the quote and the backslash; C0 controls,
 * DEL and C1 controls (U+0080..U+009F, in UTF-8) as \u00XX, U+00A0 kept;
 * U+2028 and U+2029 escaped; bytes of no valid character, each as the
 * \u00XX of its Latin-1 reading: a lone continuation byte, overlong forms
 * of '/' (2, 3 and 4 bytes) and of NUL (C0 80), the surrogates U+D800 and
 * U+DFFF in UTF-8 and a pair of them (CESU-8), U+110000 and the 5- and
 * 6-byte forms, F5..FF, sequences cut short at the end and by an ASCII
 * byte or by a new lead byte; a semicolon and the thread name of the e2e
 * test; and a NUL, which ends the name (a C string).
 */
START_TEST(test_json_table)
{
	static const struct {
		const char *in, *out;
	} v[] = {
		{ "", "\"\"" },
		{ "main", "\"main\"" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5",
		  "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5\"" },
		{ "\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"" },
		{ "\xef\xbf\xbf|\xee\x80\x80",
		  "\"\xef\xbf\xbf|\xee\x80\x80\"" },
		{ "say \"hi\" \\o/", "\"say \\\"hi\\\" \\\\o/\"" },
		{ "\x01\n\t\x1b[2J\x7f",
		  "\"\\u0001\\u000a\\u0009\\u001b[2J\\u007f\"" },
		{ "\xc2\x80|\xc2\x9f|\xc2\xa0",
		  "\"\\u0080|\\u009f|\xc2\xa0\"" },
		{ "\xe2\x80\xa8\xe2\x80\xa9", "\"\\u2028\\u2029\"" },
		{ "\x80", "\"\\u0080\"" },
		{ "\xc0\xaf|\xe0\x80\xaf|\xf0\x80\x80\xaf",
		  "\"\\u00c0\\u00af|\\u00e0\\u0080\\u00af|\\u00f0\\u0080\\u0080\\u00af\"" },
		{ "\xc0\x80", "\"\\u00c0\\u0080\"" },
		{ "\xed\xa0\x80|\xed\xbf\xbf",
		  "\"\\u00ed\\u00a0\\u0080|\\u00ed\\u00bf\\u00bf\"" },
		{ "\xed\xa0\xbd\xed\xb8\x80",
		  "\"\\u00ed\\u00a0\\u00bd\\u00ed\\u00b8\\u0080\"" },
		{ "\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"" },
		{ "\xf8\x88\x80\x80\x80",
		  "\"\\u00f8\\u0088\\u0080\\u0080\\u0080\"" },
		{ "\xfc\x84\x80\x80\x80\x80",
		  "\"\\u00fc\\u0084\\u0080\\u0080\\u0080\\u0080\"" },
		{ "\xf5\xfe\xff", "\"\\u00f5\\u00fe\\u00ff\"" },
		{ "end\xe2\x82", "\"end\\u00e2\\u0082\"" },
		{ "\xf0\x9f\x94", "\"\\u00f0\\u009f\\u0094\"" },
		{ "\xe2\x82x", "\"\\u00e2\\u0082x\"" },
		{ "\xe2\xc3\xa9", "\"\\u00e2\xc3\xa9\"" },
		{ "semi;colon", "\"semi;colon\"" },
		{ "\x1b]0;owned\a\n\\x",
		  "\"\\u001b]0;owned\\u0007\\u000a\\\\x\"" },
		{ "a\0b", "\"a\"" },
	};

	for (size_t i = 0; i < N(v); i++) {
		char *got = json_of(v[i].in);

		ck_assert_msg(!strcmp(got, v[i].out), "case %zu: got %s", i,
			      got);
		free(got);
	}
}
END_TEST

/* Random bytes: each JSON string is valid UTF-8 with no control
 * character, DEL or C1 control left raw, and its only quotes are the two
 * at its ends or escaped ones. */
START_TEST(test_json_is_valid_utf8)
{
	unsigned seed = 54321;

	for (int round = 0; round < 20000; round++) {
		char in[24], *got;
		size_t len = 1 + (seed = seed * 1103515245u + 12345u) % 20, n;

		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			in[i] = (char)(1 + (seed >> 8) % 255);
		}
		in[len] = 0;
		got = json_of(in);
		n = strlen(got);
		if (n < 2 || got[0] != '"' || got[n - 1] != '"')
			ck_abort_msg("round %d: not a string: %s", round, got);
		for (const unsigned char *p = (const unsigned char *)got + 1;
		     p < (const unsigned char *)got + n - 1; ) {
			long cp;

			if (*p == '\\' &&
			    (p[1] == '\\' || p[1] == '"' || p[1] == 'u')) {
				p += p[1] == 'u' ? 6 : 2;
				continue;
			}
			p += utf8_next(p, &cp);
			if (cp < 0x20 || cp == '"' || cp == '\\' ||
			    cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
				ck_abort_msg("round %d: character %ld in %s",
					     round, cp, got);
		}
		free(got);
	}
}
END_TEST

/* A folded frame: a semicolon as \x3b, so that it does not end the
 * frame, and text_unescape reads every escaped text back. */
START_TEST(test_folded_frame_and_unescape)
{
	static const char *const names[] = {
		"a;b",
		"semi;colon\xff",
		"x\\x3b;",
		"\x1b]0;owned\a\n\\x",
		"plain",
		"\\",
		"caf\xc3\xa9;\xc0\xaf",
		"tab\there\r",
	};
	char buf[64];

	text_escape(buf, sizeof(buf), "a;b\\x3b", TEXT_FOLDED);
	ck_assert_str_eq(buf, "a\\x3bb\\\\x3b");
	text_escape(buf, sizeof(buf), "a;b", 0);
	ck_assert_str_eq(buf, "a;b");
	for (size_t i = 0; i < N(names); i++) {
		text_escape(buf, sizeof(buf), names[i], TEXT_FOLDED);
		ck_assert_ptr_null(strchr(buf, ';'));
		ck_assert_str_eq(text_unescape(buf), names[i]);
	}
}
END_TEST

Suite *
label_suite(void)
{
	Suite *s = suite_create("label");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_escape_table);
	tcase_add_test(t, test_escape_reads_back);
	tcase_add_test(t, test_escape_measures_and_cuts);
	tcase_add_test(t, test_keep_tab_keeps_only_tabs);
	tcase_add_test(t, test_text_name_slots);
	tcase_add_test(t, test_csv_escapes_then_quotes);
	tcase_add_test(t, test_json_table);
	tcase_add_test(t, test_json_is_valid_utf8);
	tcase_add_test(t, test_folded_frame_and_unescape);
	suite_add_tcase(s, t);
	return s;
}
