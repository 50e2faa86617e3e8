/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * export_pprof.c on the fixed model (check_fixture.c), read back as go
 * tool pprof reads it: gunzipped by zlib and decoded by protobuf-c from
 * profile.proto, then checked (every id and string index in range, the
 * samples adding up to the model's) and printed as text, compared with
 * its golden file (tests/golden/pprof*.txt; UPDATE_GOLDEN=1 rewrites
 * them). The gzip bytes themselves are zlib's, so only what they decode
 * to is golden.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "model/export.h"
#include "writers/export_out.h"
#include "check_fixture.h"
#include "unit.h"

typedef Perftools__Profiles__Profile Profile;

/* gz[0..n) gunzipped, in a buffer to free; its length in *len. */
static uint8_t *
gunzip(const uint8_t *gz, size_t n, size_t *len)
{
	size_t cap = 1 << 16;
	uint8_t *buf = malloc(cap);
	z_stream z;
	int r;

	ck_assert_ptr_nonnull(buf);
	memset(&z, 0, sizeof(z));
	ck_assert_int_eq(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)n;
	do {
		if (z.total_out == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		z.next_out = buf + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		r = inflate(&z, Z_NO_FLUSH);
	} while (r == Z_OK);
	ck_assert_msg(r == Z_STREAM_END, "not a whole gzip stream: %d", r);
	ck_assert_uint_eq(z.avail_in, 0);
	*len = z.total_out;
	inflateEnd(&z);
	return buf;
}

static const char *
s_of(const Profile *p, int64_t i)
{
	ck_assert_msg(i >= 0 && (size_t)i < p->n_string_table, "string %lld of %zu",
		      (long long)i, p->n_string_table);
	return p->string_table[i];
}

static const Perftools__Profiles__Function *
func_of(const Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	ck_abort_msg("no function %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Location *
loc_of(const Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	ck_abort_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

static void
dump_head(FILE *out, const Profile *p)
{
	ck_assert_str_eq(s_of(p, 0), "");
	fputs("sample_type", out);
	for (size_t i = 0; i < p->n_sample_type; i++)
		fprintf(out, " %s/%s", s_of(p, p->sample_type[i]->type),
			s_of(p, p->sample_type[i]->unit));
	ck_assert_ptr_nonnull(p->period_type);
	fprintf(out, "\nperiod %lld %s/%s\ntime_nanos %lld duration_nanos %lld\n",
		(long long)p->period, s_of(p, p->period_type->type),
		s_of(p, p->period_type->unit), (long long)p->time_nanos,
		(long long)p->duration_nanos);
	if (p->default_sample_type)
		fprintf(out, "default_sample_type %s\n",
			s_of(p, p->default_sample_type));
	for (size_t i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = p->mapping[i];

		fprintf(out,
			"mapping %llu %s build_id '%s' [%#llx, %#llx)%s%s%s\n",
			(unsigned long long)m->id, s_of(p, m->filename),
			s_of(p, m->build_id),
			(unsigned long long)m->memory_start,
			(unsigned long long)m->memory_limit,
			m->has_functions ? " functions" : "",
			m->has_filenames ? " filenames" : "",
			m->has_line_numbers ? " lines" : "");
	}
	for (size_t i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];

		fprintf(out, "function %llu %s (%s) %s:%lld\n",
			(unsigned long long)f->id, s_of(p, f->name),
			s_of(p, f->system_name), s_of(p, f->filename),
			(long long)f->start_line);
	}
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		ck_assert(l->mapping_id <= p->n_mapping);
		fprintf(out, "location %llu mapping %llu %#llx:",
			(unsigned long long)l->id,
			(unsigned long long)l->mapping_id,
			(unsigned long long)l->address);
		for (size_t j = 0; j < l->n_line; j++)
			fprintf(out, " %s:%lld",
				s_of(p,
				     func_of(p, l->line[j]->function_id)->name),
				(long long)l->line[j]->line);
		fputc('\n', out);
	}
}

/* The profile as text, each sample its stack root first (the leaf's
 * inlined functions innermost), values and labels; the first value's sum
 * into *sum. */
static void
dump(FILE *out, const Profile *p, int64_t *sum)
{
	dump_head(out, p);
	*sum = 0;
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		fputs("sample", out);
		for (size_t j = s->n_location_id; j-- > 0; ) {
			const Perftools__Profiles__Location *l =
				loc_of(p, s->location_id[j]);

			for (size_t k = l->n_line; k-- > 0; )
				fprintf(out, "%s%s",
					j + 1 == s->n_location_id &&
							k + 1 == l->n_line ?
						" " :
						";",
					s_of(p,
					     func_of(p, l->line[k]->function_id)
						     ->name));
		}
		for (size_t j = 0; j < s->n_value; j++)
			fprintf(out, " %lld", (long long)s->value[j]);
		for (size_t j = 0; j < s->n_label; j++) {
			const Perftools__Profiles__Label *lb = s->label[j];

			if (lb->str)
				fprintf(out, " %s=%s", s_of(p, lb->key),
					s_of(p, lb->str));
			else
				fprintf(out, " %s=%lld", s_of(p, lb->key),
					(long long)lb->num);
		}
		fputc('\n', out);
		ck_assert_uint_ge(s->n_value, 1);
		*sum += s->value[0];
	}
}

/* The model under clock (-1: the allocation profile), written as pprof, decoded
 * and compared with name; its samples sum to samples. */
static void
pprof_golden(int clock, const char *name, int64_t samples)
{
	char *gz = NULL;
	size_t gzlen = 0, len;
	FILE *f = open_memstream(&gz, &gzlen);
	struct export x;
	uint8_t *raw;
	Profile *p;
	int64_t sum;

	ck_assert_ptr_nonnull(f);
	if (clock < 0)
		fixture_alloc_export(&x, 1);
	else
		fixture_export(&x, (enum pc_clock)clock, 0);
	ck_assert_int_eq(export_pprof(&x, f), 0);
	export_release(&x);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_uint_gt(gzlen, 2);
	ck_assert_msg((uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b, "not gzip");
	raw = gunzip((const uint8_t *)gz, gzlen, &len);
	p = perftools__profiles__profile__unpack(NULL, len, raw);
	ck_assert_msg(p != NULL, "%s: not a Profile message", name);
	f = golden_open();
	dump(f, p, &sum);
	ck_assert_int_eq(sum, samples);
	golden_check(f, name);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
}

/*
 * A CPU profile: samples and cpu nanoseconds at 100 Hz, each location's
 * function (the inlined helper inside work's location), the labels of
 * process and thread (none for the sample of no thread), and the
 * recursion kept level by level.
 */
START_TEST(test_pprof_decodes_to_the_model)
{
	pprof_golden(PC_CLOCK_CPU, "pprof.txt", 82);
}
END_TEST

/* A wall profile's: wall nanoseconds, the off-CPU wait a location. */
START_TEST(test_pprof_of_a_wall_view)
{
	pprof_golden(PC_CLOCK_WALL, "pprof-wall.txt", 102);
}
END_TEST

/* An allocation profile's: Go's heap profile's four types, the metric
 * asked for the default, the rate the period; each record one value. */
START_TEST(test_pprof_of_an_allocation_profile)
{
	pprof_golden(-1, "pprof-alloc.txt", 154);
}
END_TEST

/*
 * pprof carries names as data (length-prefixed strings; go tool pprof
 * escapes what it prints): a function, thread and object name of control
 * characters, line ends and bytes of no valid UTF-8 reads back as it
 * was, byte for byte, each in the string table once.
 */
START_TEST(test_pprof_keeps_hostile_names_as_they_were)
{
	static const struct {
		const char *tame, *hostile;
	} v[] = {
		{ "ns::f<a;b>\"q\"", "f\x01\x1b[31m\t\n\x7f\xc2\x85\xff;\"" },
		{ "worker", "wo\nrk\x1b\xff,er" },
		{ "/usr/bin/demo", "/usr/bin/de\nmo\xff" },
	};
	char *gz = NULL;
	size_t gzlen = 0, len;
	FILE *f = open_memstream(&gz, &gzlen);
	struct export x;
	uint8_t *raw;
	Profile *p;

	ck_assert_ptr_nonnull(f);
	fixture_export(&x, PC_CLOCK_CPU, 0);
	for (size_t i = 0; i < x.nstrs; i++)
		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
			if (!strcmp(x.strs[i], v[k].tame)) {
				free(x.strs[i]);
				x.strs[i] = strdup(v[k].hostile);
			}
	ck_assert_int_eq(export_pprof(&x, f), 0);
	export_release(&x);
	ck_assert_int_eq(fclose(f), 0);
	raw = gunzip((const uint8_t *)gz, gzlen, &len);
	p = perftools__profiles__profile__unpack(NULL, len, raw);
	ck_assert_ptr_nonnull(p);
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		size_t n = 0;

		for (size_t i = 0; i < p->n_string_table; i++)
			n += !strcmp(p->string_table[i], v[k].hostile);
		ck_assert_msg(n == 1, "name %zu: %zu times", k, n);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
}
END_TEST

Suite *
pprof_suite(void)
{
	Suite *s = suite_create("pprof");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_pprof_decodes_to_the_model);
	tcase_add_test(t, test_pprof_of_a_wall_view);
	tcase_add_test(t, test_pprof_of_an_allocation_profile);
	tcase_add_test(t, test_pprof_keeps_hostile_names_as_they_were);
	suite_add_tcase(s, t);
	return s;
}
