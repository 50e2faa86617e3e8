/*
 * What the pcprof subcommands share: messages in err(3) style, loading
 * profiles, and the flat profile built from a profile and a symbol table.
 */
#ifndef PC_PCPROF_H
#define PC_PCPROF_H

#include <stdint.h>
#include <stdio.h>

#include "../gmon/gmon.h"
#include "symtab.h"

#define EXIT_BAD_INPUT	2

/* "pcprof: " + message + newline on stderr. */
void pc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, then exit(2). */
void pc_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * Read and sum the profiles at paths[0..n) into p; they must agree on rate
 * and on the executable they came from. Exits with a message naming the
 * file on any bad input.
 */
void profiles_load(struct gmon_profile *p, char **paths, int n);

/* Load exe's symbols or exit with a message naming it. */
void symbols_load(struct symtab *st, const char *exe, const struct symtab_opts *o);

/* Warn when p carries a build-id that is not exe's. */
void check_build_id(const struct gmon_profile *p, const struct symtab *st,
		    const char *exe);

struct flat_row {
	uint32_t func;		/* index into symtab->funcs */
	double samples;
};

struct flat {
	double total;		/* every sample in the profile */
	double unknown;		/* samples in no symbol */
	uint32_t rate;
	struct flat_row *rows;	/* functions with samples, most first */
	size_t nrows;
};

/*
 * Credit each bin's samples to the functions it covers; a bin that
 * straddles two functions is split in proportion, as gprof does.
 */
void flat_build(struct flat *f, const struct symtab *st,
		const struct gmon_profile *p);
void flat_release(struct flat *f);

enum format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV };

struct report_opts {
	enum format format;
	long top;		/* rows to print; 0 for all */
	const char *exe;
	char **files;
	int nfiles;
};

void report_print(FILE *out, const struct flat *f, const struct symtab *st,
		  const struct report_opts *o);

int cmd_report(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_merge(int argc, char **argv);

#endif
