/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for gmon/read.c: parse arbitrary bytes and, when they
 * parse, copy the profile with gmon_profile_add, add it again and to itself,
 * and abort if any total disagrees. The same bytes are parsed as a stacks
 * file too (version 1 and 2), whose records must stay inside the input.
 * Both are also read part by part as pcprof reads files (tools/inputs/files.c),
 * which must end as the whole parse does.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Igmon \
 *	tests/fuzz/fuzz_gmon.c gmon/read.c gmon/write.c -o /tmp/fuzz_gmon
 *   /tmp/fuzz_gmon -max_total_time=60 -max_len=65536 -artifact_prefix=/tmp/ \
 *	/tmp/fuzz_corpus tests/fuzz/corpus
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One _part parse of have bytes (a copy of that much alone) of size. */
static int
part(int stacks, const uint8_t *data, size_t have, size_t size, struct gmon_error *err)
{
	uint8_t *copy = malloc(have ? have : 1);
	struct gmon_stacks st;
	struct gmon_profile p;
	int r;

	if (!copy)
		abort();
	memcpy(copy, data, have);
	r = stacks ? gmon_stacks_parse_part(copy, have, size, &st, err) :
	    gmon_parse_part(copy, have, size, &p, err);
	if (!r && stacks)
		gmon_stacks_release(&st);
	else if (!r)
		gmon_profile_release(&p);
	free(copy);
	return r;
}

/* Read part by part from a first read of first bytes, on to what the
 * parser needs and at least twice as far: the end must be the whole
 * parse's, r and whole. */
static void
parts(int stacks, const uint8_t *data, size_t size, size_t first, int r,
      const struct gmon_error *whole)
{
	size_t have = first < size ? first : size;
	struct gmon_error err;
	int got;

	while ((got = part(stacks, data, have, size, &err)) == -EAGAIN) {
		if (have >= size || err.need <= have || err.need > size)
			abort();
		have = have > size / 2 ? size : 2 * have;
		if (err.need > have)
			have = (size_t)err.need;
	}
	if (got != r || (r && (err.offset != whole->offset || strcmp(err.what, whole->what))))
		abort();
}

static void
stacks(const uint8_t *data, size_t size)
{
	struct gmon_stacks st;
	struct gmon_error err;
	size_t words = 0;
	int r = gmon_stacks_parse(data, size, &st, &err);

	parts(1, data, size, size ? 1 + data[size - 1] % 61 : 0, r, &err);
	if (r)
		return;
	for (size_t i = 0; i < st.n; i++) {
		if (st.v[i].depth == 0 || st.v[i].depth > GMON_STACK_MAX_DEPTH ||
		    (st.v[i].flags & GMON_STACK_THREAD))
			abort();
		words += st.v[i].depth;
	}
	/* every word and name came from the input */
	if (8 * words + 16 * st.nthreads > size)
		abort();
	for (size_t i = 0; i < st.nthreads; i++)
		if (strlen(st.threads[i].name) > GMON_THREAD_NAME_SIZE)
			abort();
	gmon_stacks_release(&st);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gmon_profile p, copy;
	struct gmon_error err;
	uint64_t total;

	int r;

	stacks(data, size);
	r = gmon_parse(data, size, &p, &err);
	parts(0, data, size, size ? 1 + data[size - 1] % 61 : 0, r, &err);
	if (r)
		return 0;
	total = gmon_profile_samples(&p);
	for (size_t i = 1; i < p.nhists; i++)
		if (p.hists[i - 1].high > p.hists[i].low)
			abort();	/* promised sorted and disjoint */

	/* into an empty profile: a copy with the same totals */
	memset(&copy, 0, sizeof(copy));
	if (gmon_profile_add(&copy, &p, &err) ||
	    gmon_profile_samples(&copy) != total ||
	    copy.nhists != p.nhists || copy.narcs != p.narcs)
		abort();
	/* every range now matches: the counts double, nothing is added */
	if (gmon_profile_add(&copy, &p, &err) ||
	    gmon_profile_samples(&copy) != 2 * total ||
	    copy.nhists != p.nhists || copy.narcs != 2 * p.narcs)
		abort();
	/* and a profile added to itself */
	if (gmon_profile_add(&copy, &copy, &err) ||
	    gmon_profile_samples(&copy) != 4 * total ||
	    copy.narcs != 4 * p.narcs)
		abort();

	gmon_profile_release(&copy);
	gmon_profile_release(&p);
	return 0;
}
