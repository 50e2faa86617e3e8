/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The names the symbol tables show: a symbol version dropped, a
 * compiler-split piece (foo.cold) folded into its function, C++ demangled
 * with libstdc++'s demangler and shortened as pprof shows names. Called by
 * symtab.c and symtab_fde.c; symtab_short_name also by the unit tests.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symtab_int.h"

/*
 * Whether s, from its first '.', is all a compiler-split piece's suffix:
 * a tag (.cold, .part, .isra, .constprop, .lto_priv, .localalias), then
 * tags and numbers (.constprop.0.isra.0). A bare number is no piece:
 * gcc's OpenMP regions work._omp_fn.0 and work._omp_fn.1 are functions
 * of their own (and so is a nested function's inner.0).
 */
static int
piece_suffix(const char *s)
{
	static const char *const tags[] = {
		"cold", "part", "isra", "constprop", "lto_priv", "localalias",
	};
	int tagged = 0;

	while (*s == '.') {
		size_t k;
		int ok = 0;

		s++;
		for (size_t i = 0; !ok && i < sizeof(tags) / sizeof(tags[0]);
		     i++) {
			k = strlen(tags[i]);
			if (!strncmp(s, tags[i], k) &&
			    (s[k] == '.' || !s[k] || s[k] == ']')) {
				s += k;
				ok = tagged = 1;
			}
		}
		if (!ok && tagged && *s >= '0' && *s <= '9') {
			while (*s >= '0' && *s <= '9')
				s++;
			ok = *s == '.' || !*s || *s == ']';
		}
		if (!ok)
			return 0;
	}
	return tagged && (!*s || *s == ']');
}

/* The function a compiler-split piece belongs to: foo.cold, foo.part.0,
 * foo.isra.0, foo.constprop.0.isra.0 and the like all give foo, and
 * work._omp_fn.0.cold gives work._omp_fn.0. */
static size_t
base_len(const char *name)
{
	for (const char *dot = strchr(name + 1, '.'); dot;
	     dot = strchr(dot + 1, '.'))
		if (piece_suffix(dot))
			return (size_t)(dot - name);
	return strlen(name);
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* libstdc++'s demangler, found at run time so that pcprof builds and runs
 * without a C++ toolchain; NULL when it is absent. */
static demangle_fn
demangler(void)
{
	static int tried;
	static demangle_fn fn;
	void *h;

	if (!tried) {
		tried = 1;
		h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			fn = (demangle_fn)dlsym(h, "__cxa_demangle");
	}
	return fn;
}

/* The length of name without a symbol version ("memcpy@@GLIBC_2.14",
 * "memcpy@GLIBC_2.2.5"), as .symtab of a shared library spells them. */
static size_t
unversioned_len(const char *name)
{
	const char *at = strchr(name, '@');

	if (!at || at == name)
		return strlen(name);
	if (at[1] == '@')
		at++;
	return at[1] >= 'A' && at[1] <= 'Z' ?
		       (size_t)(strchr(name, '@') - name) :
		       strlen(name);
}

char *
sym_display_name(const char *name, const struct symtab_opts *o)
{
	char *plain = strndup(name, unversioned_len(name));
	size_t k;
	char *base;
	demangle_fn dm;
	char *d;
	int status = -1;

	if (!plain)
		return NULL;
	k = o->keep_pieces ? strlen(plain) : base_len(plain);
	base = strndup(plain, k);
	free(plain);
	if (!base || o->no_demangle || strncmp(base, "_Z", 2) ||
	    !(dm = demangler()))
		return base;
	d = dm(base, NULL, NULL, &status);
	if (status == 0 && d) {
		char *sh = o->full_names ? d :
					   symtab_short_name(d, o->keep_pieces);

		free(base);
		if (sh != d)
			free(d);
		return sh;
	}
	free(d);
	return base;
}

/* Whether name[i] starts the word "operator" (not part of a longer name). */
static int
at_operator(const char *name, size_t i)
{
	return !strncmp(name + i, "operator", 8) &&
	       (i == 0 || name[i - 1] == ':' || name[i - 1] == ' ') &&
	       !((name[i + 8] >= 'a' && name[i + 8] <= 'z') ||
		 (name[i + 8] >= 'A' && name[i + 8] <= 'Z') ||
		 (name[i + 8] >= '0' && name[i + 8] <= '9') ||
		 name[i + 8] == '_');
}

/*
 * What is left of a name once its brackets are gone is words: a return
 * type before the name ("unsigned long shapes::accumulate"), qualifiers
 * after it ("area const"), or an operator spelled with a word ("operator
 * new", "operator unsigned long"). Keeps the name, in place.
 */
static void
short_words(char *out)
{
	static const char *const quals[] = { "const", "volatile", "&", "&&", "noexcept" };
	size_t from = 0, k;
	char *sp;

	/* trailing qualifiers */
	while ((sp = strrchr(out, ' '))) {
		int q = 0;

		for (size_t i = 0; i < sizeof(quals) / sizeof(quals[0]); i++)
			q |= !strcmp(sp + 1, quals[i]);
		if (!q)
			break;
		*sp = 0;
	}
	k = strlen(out);
	/* the name is the last word, or everything from the word that holds
	 * "operator" on; the spaces of "(anonymous namespace)" and
	 * "{lambda(int, int)#1}" do not separate words */
	for (size_t i = 0, depth = 0; i < k; i++) {
		if (out[i] == '(' || out[i] == '{')
			depth++;
		else if ((out[i] == ')' || out[i] == '}') && depth)
			depth--;
		if (depth)
			continue;
		if (at_operator(out, i))
			break;
		if (out[i] == ' ')
			from = i + 1;
	}
	if (from && from < k)
		memmove(out, out + from, k - from + 1);
}

/* The length of the operator's own symbols at name + j ("<<=", "()"). */
static size_t
operator_len(const char *name, size_t j, size_t end)
{
	static const char *const lt[] = { "<<=", "<=>", "<<", "<=", "<" };
	size_t start = j;

	if (name[j] == '(' && name[j + 1] == ')')
		return 2;
	if (name[j] == '<') {
		/* the longest that the parameters, a space or the template
		 * arguments follow: "operator<<std::string>" is operator<
		 * with arguments, "operator<< <T>" is operator<< */
		for (size_t i = 0; i < sizeof(lt) / sizeof(lt[0]); i++) {
			size_t l = strlen(lt[i]);
			char next = name[j + l];

			if (!strncmp(name + j, lt[i], l) &&
			    (next == '(' || next == ' ' || !next ||
			     (l == 1 && next == '<')))
				return l;
		}
		return 1;
	}
	/* ==, +, ->, [], " new[]", " unsigned long": up to the parameters
	 * or the template arguments */
	while (j < end && name[j] != '(' && name[j] != '<')
		j++;
	return j - start;
}

/* Follow c into or out of template arguments and parentheses (parameters,
 * or parentheses in arguments); 0 when it is neither. */
static int
nest(char c, int *angle, int *paren)
{
	if (c == '(')
		(*paren)++;
	else if (c == ')' && *paren)
		(*paren)--;
	else if (c == '<' && !*paren)
		(*angle)++;
	else if (c == '>' && !*paren && *angle)
		(*angle)--;
	else
		return 0;
	return 1;
}

/* Copy the operator's name at name[i..) ("operator>", "operator new[]") to
 * out at *k, without the spaces around it; the index after them. */
static size_t
copy_operator(const char *name, size_t i, size_t end, char *out, size_t *k)
{
	size_t j = i + 8 + operator_len(name, i + 8, end);

	memcpy(out + *k, name + i, j - i);
	*k += j - i;
	while (*k && out[*k - 1] == ' ')
		(*k)--;	/* "operator> <int>" */
	while (j < end && name[j] == ' ')
		j++;
	return j;
}

/* Copy name[i..) up to its matching '}' (or end) to out at *k; the index
 * after it. */
static size_t
copy_braces(const char *name, size_t i, size_t end, char *out, size_t *k)
{
	int depth = 0;

	do {
		depth += name[i] == '{';
		depth -= name[i] == '}';
		out[(*k)++] = name[i++];
	} while (i < end && depth > 0);
	return i;
}

/* Whether a shortened name of k bytes can stand for the whole: not what
 * cannot be shortened safely (a function returning a function pointer, a
 * conversion to one), which is shown whole. */
static int
shortened_well(const char *out, size_t k)
{
	return k && out[k - 1] != ' ' &&
	       ((out[0] >= 'a' && out[0] <= 'z') ||
		(out[0] >= 'A' && out[0] <= 'Z') || out[0] == '_' ||
		out[0] == '~' || out[0] == '(' || out[0] == '{');
}

/* The clones of clone (" [clone .X]" each) that are functions of their
 * own, not pieces (" [clone ._omp_fn.0]"), copied to out, which has room
 * for all of them. */
static void
keep_regions(char *out, const char *clone)
{
	while (!strncmp(clone, " [clone .", 9)) {
		const char *close = strchr(clone, ']');
		size_t len =
			close ? (size_t)(close - clone) + 1 : strlen(clone);

		if (!piece_suffix(clone + 8)) {
			memmove(out, clone, len);
			out += len;
		}
		clone += len;
	}
	*out = 0;
}

char *
symtab_short_name(const char *name, int keep_clones)
{
	size_t n = strlen(name), k = 0, end = n;
	const char *clone = strstr(name, " [clone ");
	char *out = malloc(n + 1);
	int angle = 0, paren = 0;

	if (!out)
		return NULL;
	if (clone)
		end = (size_t)(clone - name);	/* foo() [clone .cold] */
	for (size_t i = 0; i < end; i++) {
		char c = name[i];

		if (!angle && !paren && at_operator(name, i)) {
			i = copy_operator(name, i, end, out, &k) - 1;
			continue;
		}
		if (!angle && !paren &&
		    !strncmp(name + i, "(anonymous namespace)", 21)) {
			memcpy(out + k, name + i, 21);	/* a component */
			k += 21;
			i += 20;
			continue;
		}
		if (nest(c, &angle, &paren))
			continue;
		if (angle || paren)
			continue;
		if (c == '{') {
			/* {lambda(int)#1}: kept whole */
			i = copy_braces(name, i, end, out, &k) - 1;
			continue;
		}
		out[k++] = c;
	}
	out[k] = 0;
	short_words(out);
	k = strlen(out);
	if (!shortened_well(out, k)) {
		free(out);
		return strdup(name);
	}
	if (clone && keep_clones) {
		memmove(out + k, clone, n - end);	/* fits: k <= end */
		out[k + n - end] = 0;
	} else if (clone) {
		keep_regions(out + k, clone);
	}
	return out;
}

/* A function's name for the call graph: "name (object)" outside the
 * executable. */
const char *
func_label(const struct symtab *st, uint32_t func, char *buf, size_t size)
{
	if (!st->nobjs || st->func_obj[func] == 0 || st->funcs[func][0] == '[')
		return st->funcs[func];
	snprintf(buf, size, "%s (%s)", st->funcs[func],
		 st->objnames[st->func_obj[func]]);
	return buf;
}
