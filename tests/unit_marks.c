/* SPDX-License-Identifier: BSD-2-Clause */
/* The timeline's markers read back (unit_marks.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../preload/pc.h"
#include "unit.h"
#include "unit_marks.h"

void
unit_timeline_each(void (*fn)(const struct pc_tl_rec *h,
			       const unsigned char *body, void *arg),
		   void *arg)
{
	int fd = memfd_create("timeline", 0);
	struct gmon_sink s;
	unsigned char *buf;
	size_t at = 0;
	off_t len;

	ck_assert_int_ge(fd, 0);
	gmon_sink_init(&s, fd);
	ck_assert_int_eq(pc_timeline_write(&s), 0);
	ck_assert_int_eq(pc_timeline_write_rings(&s), 0);
	ck_assert_int_eq(gmon_sink_flush(&s), 0);
	len = lseek(fd, 0, SEEK_END);
	buf = mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert(buf != MAP_FAILED);
	while (at < (size_t)len) {
		struct pc_tl_rec h;

		memcpy(&h, buf + at, sizeof(h));
		at += sizeof(h);
		fn(&h, buf + at, arg);
		at += h.len;
	}
	munmap(buf, (size_t)len);
	close(fd);
}

static void
mark_rec(const struct pc_tl_rec *h, const unsigned char *body, void *arg)
{
	struct unit_marks *r = arg;
	struct unit_mark_names *nm = &r->names;

	if (h->tag == PC_TL_HEAD)
		memcpy(&r->head, body, sizeof(r->head));
	if (h->tag == PC_TL_MARK && r->n < 2048)
		memcpy(&r->v[r->n++], body, sizeof(r->v[0]));
	if (h->tag == PC_TL_NAME && nm->n < 1100) {
		ck_assert_uint_lt(h->len, 8 + PC_TL_NAME_LEN);
		memcpy(&nm->id[nm->n], body, 8);
		memcpy(nm->name[nm->n], body + 8, h->len - 8);
		nm->name[nm->n++][h->len - 8] = 0;
	}
}

void
unit_marks_read(struct unit_marks *r)
{
	memset(r, 0, sizeof(*r));
	unit_timeline_each(mark_rec, r);
}

const char *
unit_marks_name(const struct unit_marks *r, uint64_t id)
{
	for (size_t i = 0; i < r->names.n; i++)
		if (r->names.id[i] == id)
			return r->names.name[i];
	return NULL;
}
