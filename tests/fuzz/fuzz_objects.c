/*
 * libFuzzer target for gmon/objects.c, the PC_SCOPE=all manifest reader:
 * parse arbitrary bytes and, when they parse, check what the parser
 * promises: objects in order with safe file names, arcs to listed objects.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Igmon \
 *	tests/fuzz/fuzz_objects.c gmon/objects.c -o /tmp/fuzz_objects
 *   /tmp/fuzz_objects -max_total_time=60 /tmp/corpus tests/fuzz/objects
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gmon_objects o;
	struct gmon_error err;

	if (gmon_objects_parse(data, size, &o, &err))
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
