/*
 * libFuzzer target for gmon/read.c: parse arbitrary bytes and, when they
 * parse, copy the profile with gmon_profile_add, add it again and to itself,
 * and abort if any total disagrees.
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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gmon_profile p, copy;
	struct gmon_error err;
	uint64_t total;

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
