/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for gmon/objects.c, the PC_SCOPE=all manifest reader:
 * parse arbitrary bytes and, when they parse, check what the parser
 * promises: objects in order with safe file names, arcs to listed objects.
 * The bytes are also read part by part as pcprof reads files
 * (tools/inputs/files.c), which must end as the whole parse does.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Igmon \
 *	tests/fuzz/fuzz_objects.c gmon/objects.c -o /tmp/fuzz_objects
 *   /tmp/fuzz_objects -max_total_time=60 /tmp/corpus tests/fuzz/objects
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Read part by part from a first read of first bytes (each part a copy
 * of that much alone), on to what the parser needs and at least twice
 * as far: the end must be the whole parse's, r and whole. */
static void
parts(const uint8_t *data, size_t size, size_t first, int r, const struct gmon_error *whole)
{
	size_t have = first < size ? first : size;
	struct gmon_objects o;
	struct gmon_error err;
	int got;

	for (;;) {
		uint8_t *copy = malloc(have ? have : 1);

		if (!copy)
			abort();
		memcpy(copy, data, have);
		got = gmon_objects_parse_part(copy, have, size, &o, &err);
		free(copy);
		if (got != -EAGAIN)
			break;
		if (have >= size || err.need <= have || err.need > size)
			abort();
		have = have > size / 2 ? size : 2 * have;
		if (err.need > have)
			have = (size_t)err.need;
	}
	if (!got)
		gmon_objects_release(&o);
	if (got != r || (r && (err.offset != whole->offset || strcmp(err.what, whole->what))))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gmon_objects o;
	struct gmon_error err;
	int r = gmon_objects_parse(data, size, &o, &err);

	parts(data, size, size ? 1 + data[size - 1] % 61 : 0, r, &err);
	if (r)
		return 0;
	if (o.n == 0 || o.rate == 0)
		abort();
	for (size_t i = 0; i < o.n; i++) {
		const struct gmon_object *ob = &o.v[i];

		if (!ob->path || ob->build_id_len > sizeof(ob->build_id))
			abort();
		if (ob->file && (strchr(ob->file, '/') || !strcmp(ob->file, "..") ||
				 !strcmp(ob->file, ".") || !ob->file[0]))
			abort();
	}
	for (size_t i = 0; i < o.narcs; i++)
		if (o.arcs[i].from_pc >> GMON_OBJ_SHIFT >= o.n ||
		    o.arcs[i].self_pc >> GMON_OBJ_SHIFT >= o.n)
			abort();
	gmon_objects_release(&o);
	return 0;
}
