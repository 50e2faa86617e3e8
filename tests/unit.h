/* SPDX-License-Identifier: BSD-2-Clause */
/* The Check suites, one per module, collected by tests/unit.c (tools/ and
 * gmon/) and tests/unit_preload.c (libpc's tables), and the hand-made
 * inputs that several of them share. */
#ifndef PC_UNIT_H
#define PC_UNIT_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

Suite *gmon_suite(void);
Suite *profil_suite(void);
Suite *stats_suite(void);
Suite *flat_suite(void);
Suite *symtab_suite(void);
Suite *callgraph_suite(void);
Suite *flame_suite(void);
Suite *settings_suite(void);
Suite *label_suite(void);
Suite *jitdump_suite(void);
Suite *diff_model_suite(void);
Suite *diff_compare_suite(void);
Suite *runfiles_suite(void);
Suite *launch_suite(void);
Suite *runexe_suite(void);
Suite *operands_suite(void);
Suite *waits_suite(void);
Suite *wallstack_suite(void);
Suite *history_suite(void);
Suite *sequential_suite(void);
Suite *formats_suite(void);
Suite *writers_suite(void);
Suite *pprof_suite(void);
Suite *options_suite(void);
Suite *outputs_suite(void);
Suite *diff_out_suite(void);
Suite *commands_suite(void);
Suite *wallgmon_suite(void);
Suite *outfile_suite(void);
Suite *basemsg_suite(void);
Suite *dwcache_suite(void);
Suite *hostile_suite(void);
Suite *alloc_suite(void);
Suite *walllist_suite(void);
Suite *itt_suite(void);
Suite *golden_suite(void);

/* Whether the shell command shell_test succeeds (it is run with system(3)). */
int unit_have(const char *shell_test);

/* Notes that a suite left test out, and why; tests/unit.c reports it. */
void unit_skip(const char *test, const char *reason);

/* A fresh directory, /tmp/pcprof-unit-XXXXXX, named in unit_base, and it
 * removed with all in it: a suite's unchecked fixture (made and removed in
 * the runner's process, its tests' children working in it). */
extern char unit_base[64];
void unit_base_make(void);
void unit_base_remove(void);

/* dir/name, into path[0..size). */
char *unit_at(char *path, size_t size, const char *dir, const char *name);
/* A gmon file at dir/name, as libpc writes one for a program of build-id
 * id (its first GMON_BUILDID_SIZE bytes) when id is not NULL, else as
 * gprof's. */
void unit_put_gmon(const char *dir, const char *name, const uint8_t *id);
/* A manifest beside dir/profile: process pid (0: none said), one object,
 * the program exe. */
void unit_put_manifest(const char *dir, const char *profile, unsigned pid,
		       const char *exe);

struct symtab;
struct gmon_profile;

/* One symbol of a hand-made table: [lo, hi), named name; symbols of one
 * name are pieces of one function, as symtab_load folds foo.cold. */
struct unit_sym {
	uint64_t lo, hi;
	const char *name;
};

/* Fill st with v[0..n) (sorted by lo, disjoint), functions numbered in
 * order of first appearance; symtab_release frees it. */
void unit_symtab(struct symtab *st, const struct unit_sym *v, size_t n);

/* Start p empty; with libpc set, marked as libpc's (PC_SCOPE=main), so
 * that its arcs from 0 to 1 are samples outside the executable. */
void unit_profile(struct gmon_profile *p, int libpc);
/* Add to p a histogram record of counts[0..nbins) over [low, high). */
void unit_hist(struct gmon_profile *p, uint64_t low, uint64_t high,
	       uint32_t rate, const uint64_t *counts, uint32_t nbins);
/* Add to p an arc from from_pc to self_pc. */
void unit_arc(struct gmon_profile *p, uint64_t from_pc, uint64_t self_pc,
	      uint64_t count);

/* ------------------------------------ libpc's tables (tests/unit_preload.c) */

Suite *arcs_suite(void);
Suite *stacks_suite(void);
Suite *objfind_suite(void);
Suite *wallmem_suite(void);
Suite *wallreuse_suite(void);
Suite *wallparse_suite(void);
Suite *timeline_suite(void);
Suite *procread_suite(void);
Suite *names_suite(void);
Suite *msg_suite(void);
Suite *out_suite(void);
Suite *timerlimits_suite(void);
Suite *sigview_suite(void);
Suite *markers_suite(void);
Suite *summary_suite(void);
Suite *vfork_suite(void);
Suite *altstack_suite(void);
Suite *mappings_suite(void);
Suite *wallmask_suite(void);
Suite *wallacct_suite(void);

#define UNIT_TEXT_SIZE	(64 * 1024)	/* the main program's text, bytes */
#define UNIT_TEXT_LINK	0x1000		/* its link-time address */
#define UNIT_MAX_THREADS 16

struct pc_config;
struct pc_range;
struct gmon_stacks;

/* Start libpc's state afresh: sampling the text buffer (one segment, one
 * counter per 2 bytes, linked at UNIT_TEXT_LINK), no tables, no counts. */
void unit_preload_reset(void);
/* The runtime address of byte off of the text, and the byte itself; the
 * link-time address of off is UNIT_TEXT_LINK + off. */
uintptr_t unit_text_at(size_t off);
unsigned char *unit_text_bytes(size_t off);
/* The configuration, writable here (libpc's is read-only after start-up). */
struct pc_config *unit_config(void);
/* PC_SCOPE=all: an empty inventory (object 0 only), then r[0..n), sorted
 * by lo, made the ranges the handler searches, as objects.c publishes. */
void unit_objects_init(void);
void unit_objects_publish(const struct pc_range *r, uint32_t n);
/* Run fn in n threads at once, thread i given args + i * size; join them.
 * Each fn calls unit_threads_go first, which returns when all n have. */
void unit_threads(int n, void *(*fn)(void *), void *args, size_t size);
void unit_threads_go(void);
/* The stacks table as pc_stacks_write writes it, parsed into *st (the
 * stacks file as pcprof reads it); gmon_stacks_release frees it. */
void unit_stacks_read_back(struct gmon_stacks *st);

#endif
