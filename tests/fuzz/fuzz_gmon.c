/*
 * libFuzzer target for gmon/read.c: parse arbitrary bytes and, when they
 * parse, copy the profile with gmon_profile_add, add it again and to itself,
 * and abort if any total disagrees. The same bytes are parsed as a stacks
 * file too (version 1 and 2), whose records must stay inside the input.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Igmon \
 *	tests/fuzz/fuzz_gmon.c gmon/read.c gmon/write.c -o /tmp/fuzz_gmon
 *   /tmp/fuzz_gmon -max_total_time=60 -max_len=65536 -artifact_prefix=/tmp/ \
 *	/tmp/fuzz_corpus tests/fuzz/corpus
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
stacks(const uint8_t *data, size_t size)
{
	struct gmon_stacks st;
	struct gmon_error err;
	size_t words = 0;

	if (gmon_stacks_parse(data, size, &st, &err))
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

	stacks(data, size);
	if (gmon_parse(data, size, &p, &err))
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
