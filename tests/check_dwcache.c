/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dwlines_open_in (dwlines.c): a command's cache of DWARF files. Two
 * handles on one file, through the cache, find the lines that a handle
 * of its own finds, share the units read, and a file with no DWARF or
 * none at all is NULL each time. The file is this test program, built
 * with -g.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "symbols/dwlines.h"
#include "unit.h"

/* The link-time address of fn in this program. */
static uint64_t
link_addr(void *fn)
{
	Dl_info di;

	ck_assert(dladdr(fn, &di) && di.dli_fbase);
	return (uint64_t)((uintptr_t)fn - (uintptr_t)di.dli_fbase);
}

static void
same_line(struct dwlines *a, struct dwlines *b, uint64_t addr)
{
	struct dwline x, y;

	ck_assert_int_eq(dwlines_at(a, addr, &x, NULL), 1);
	ck_assert_int_eq(dwlines_at(b, addr, &y, NULL), 1);
	ck_assert_str_eq(x.file, y.file);
	ck_assert_int_eq(x.line, y.line);
	ck_assert_int_gt(x.line, 0);
}

START_TEST(test_two_handles_on_one_file_share_its_dwarf)
{
	struct dwcache *c = NULL;
	char err[256];
	struct dwlines *a, *b, *own;
	void *fns[] = { (void *)link_addr, (void *)same_line,
			(void *)dwcache_suite };

	a = dwlines_open_in(&c, "/proc/self/exe", err, sizeof(err));
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(err, "");
	ck_assert_ptr_nonnull(c);
	b = dwlines_open_in(&c, "/proc/self/exe", err, sizeof(err));
	own = dwlines_open("/proc/self/exe", err, sizeof(err));
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(own);
	ck_assert(a != b);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		same_line(a, own, link_addr(fns[i]));
		same_line(b, own, link_addr(fns[i]));
	}
	/* the units a read are b's: read once */
	ck_assert_uint_eq(dwlines_units(a), dwlines_units(own));
	ck_assert_uint_eq(dwlines_units(b), dwlines_units(own));
	ck_assert_ptr_null(dwlines_error(a));
	ck_assert_ptr_null(dwlines_error(b));
	/* no file, twice; a handle closed before the cache */
	ck_assert_ptr_null(dwlines_open_in(&c, "/no/such/file", err,
					   sizeof(err)));
	ck_assert_ptr_null(dwlines_open_in(&c, "/no/such/file", err,
					   sizeof(err)));
	dwlines_close(a);
	same_line(b, own, link_addr(fns[0]));
	dwlines_close(b);
	dwlines_close(own);
	dwcache_free(c);
	/* without a cache it is dwlines_open */
	a = dwlines_open_in(NULL, "/proc/self/exe", err, sizeof(err));
	ck_assert_ptr_nonnull(a);
	dwlines_close(a);
}
END_TEST

Suite *
dwcache_suite(void)
{
	Suite *s = suite_create("dwcache");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_two_handles_on_one_file_share_its_dwarf);
	suite_add_tcase(s, t);
	return s;
}
