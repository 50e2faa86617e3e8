/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the pcprof subcommands share (base/base.h below all of it): loading
 * profiles, and the flat profile built from a profile and a symbol table.
 */
#ifndef PC_PCPROF_H
#define PC_PCPROF_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "../gmon/gmon.h"
#include "base/base.h"
#include "symbols/symtab.h"

/* files.c: the gmon.out, stacks file or objects manifest at path parsed
 * into its struct (gmon.h): 0, or -1 after one line naming the file; never
 * blocks on a FIFO, never reads a directory or an empty file, and reads
 * no more of a file than its beginning shows to be of the format (a
 * 1 GiB file of zeros costs one read of 64 KiB). */
PC_CHECKED int pc_read_gmon(const char *path, struct gmon_profile *p);
PC_CHECKED int pc_read_stacks(const char *path, struct gmon_stacks *ss);
PC_CHECKED int pc_read_objects(const char *path, struct gmon_objects *o);
/* pc_read_stacks, or 1, unsaid, where there is no file at path: one
 * lookup where access(2) and the read were two. */
PC_CHECKED int pc_read_stacks_if(const char *path, struct gmon_stacks *ss);
/* pc_read_objects, or 1, unsaid, where there is no file at path. */
PC_CHECKED int pc_read_objects_if(const char *path, struct gmon_objects *o);
/* Each of paths[0..n) read into o[i], malloc'ed (pc_read_objects_if where
 * absent_ok[i], o[i] NULL where absent), in order, in one call: 0, or -1
 * after one line at the first that cannot be read (o[i..n) not set). */
PC_CHECKED int pc_read_objects_each(char *const *paths, size_t n,
				    const unsigned char *absent_ok,
				    struct gmon_objects **o);
/* pc_read_gmon, and the file's mtime as the read's fstat saw it. */
PC_CHECKED int pc_read_gmon_at(const char *path, struct gmon_profile *p,
			       struct timespec *mtime);

/*
 * profile.c: read and sum the profiles at paths[0..n) into p; they must agree
 * on rate and on the executable they came from. 0, or -1 after one line naming
 * the file on any bad input.
 */
PC_CHECKED int profiles_load(struct gmon_profile *p, char **paths, int n);
/* The same, with each file's mtime as it was read into mtimes[0..n). */
PC_CHECKED int profiles_load_at(struct gmon_profile *p, char **paths, int n,
				struct timespec *mtimes);

/* symbols.c: print the note of o's debuginfod session (a server not
 * reached), once. */
void symbols_notes(const struct symtab_opts *o);

/* symbols.c: load exe's symbols: 0, or -1 after one line naming it; but
 * when whole (its profile has an objects manifest beside it: PC_SCOPE=all),
 * an executable with no symbols is a warning and an empty table. */
PC_CHECKED int symbols_load_whole(struct symtab *st, const char *exe,
			const struct symtab_opts *o, int whole);

/*
 * PC_SCOPE=all (whole.c): the objects that manifests list, placed in one
 * symbol table's address space at object << 48 | address. A struct whole
 * is kept for as long as that table: an object that several manifests
 * list is placed once.
 */
struct whole;
struct whole *whole_new(void);
/*
 * For each of run's files with a manifest beside it (runfiles_manifest),
 * add every object's symbols to st and its samples and arcs to run's
 * profile. Returns how many manifests were read, or -1 after one line on
 * bad input.
 */
struct pc_run;
int whole_load(struct whole *w, struct symtab *st, struct pc_run *run,
	       const char *exe, const struct symtab_opts *so);
/* An address in the stacks of the latest whole_load's files[file], in
 * st's numbering (as it is where w is NULL or that file had no manifest). */
uint64_t whole_addr(const struct whole *w, int file, uint64_t a);
/* The file and build-id of object obj (1..) of the table, as its manifest
 * lists it; NULL for none or one with no file ("[vdso]", "[jit]"). */
const char *whole_object(const struct whole *w, uint32_t obj,
			 const uint8_t **id, size_t *idlen);
void whole_free(struct whole *w);

/* The profiles of one run of a command's inputs. */
struct pc_run {
	char **files;			/* the gmon files summed into it */
	unsigned char *manifest; /* per file: FILE.objects is beside it */
	struct gmon_objects **objects;	/* per file: its manifest, once read
					 * (runfiles_manifest) */
	int nfiles;
	struct gmon_profile prof;	/* once inputs_load has read them */
	struct timespec *mtimes;	/* per file: its mtime as inputs_load
					 * read it */
};

/*
 * What a command reads, resolved once from its operands (inputs.c): the
 * executable and its symbols, and one or more runs of profiles. A
 * directory stands for the profiles in it that libpc wrote for the
 * executable, and of several files those recorded for another program are
 * left out (runfiles.c); whether each profile has a manifest beside it is
 * asked there once, and its manifest read there once. inputs_load then reads
 * each run's profiles, checks their build-id, and through the manifests adds
 * every object's symbols and samples to the one table.
 */
struct pc_inputs {
	const char *exe;
	struct symtab st;
	struct pc_run *runs;
	int nruns;
	int whole;			/* some profile has a manifest */
	struct whole *objects;		/* the manifests' objects */
	int alloc;	/* stacks_load reads each profile's allocation
			 * profile (FILE.alloc) for its stacks */
};

#define INPUTS_AS_GIVEN	1	/* the operands are the profiles, as they are */
#define INPUTS_EACH_RUN	2	/* each operand is a run of its own (diff) */
#define INPUTS_STRICT	4	/* another build-id's profile is an error */
#define INPUTS_WHOLE	8	/* each operand is a profile whose manifest
				 * the caller has read: not looked for again */

/* findexe.c: the executable whose build-id starts with id, looked for
 * beside the profile gmon and in the current directory; its path into
 * out. 0 when found. */
int findexe(const char *gmon, const uint8_t id[GMON_BUILDID_SIZE], char *out,
	    size_t size);

/* No operands means gmon.out. 0, or -1 after one line on bad input. */
PC_CHECKED int inputs_open(struct pc_inputs *in, const char *exe,
			   char **operands, int n, const struct symtab_opts *so,
			   int flags);
PC_CHECKED int inputs_load(struct pc_inputs *in, const struct symtab_opts *so,
			   int flags);
/* An address in the stacks of run 0's files[file], in in->st's numbering. */
uint64_t inputs_addr(const struct pc_inputs *in, int file, uint64_t a);
void inputs_close(struct pc_inputs *in);
/*
 * The functions of /tmp/perf-PID.map (jitmap.c) into st, when the file is
 * a plain one of user uid that no one else may write (else one note line);
 * the number of functions, or -1 where there is none to believe. path is
 * the map's name.
 */
int jitmap_load(uint64_t pid, uid_t uid, uint64_t started, struct symtab *st,
		char *path, size_t pathlen);
/* The same from DIR/jit-PID.dump, a jitdump (jitdump.c). */
int jitdump_load(const char *dir, uint64_t pid, uid_t uid, uint64_t started,
		 struct symtab *st, char *path, size_t pathlen);



/* symbols.c: warn when p carries a build-id that is not exe's. */
void check_build_id(const struct gmon_profile *p, const struct symtab *st,
		    const char *exe);

struct flat_row {
	uint32_t func;		/* index into symtab->funcs */
	double samples;
};

struct flat {
	double total;		/* every sample in the profile */
	double unknown;		/* samples in no symbol */
	double outside;		/* outside the executable, where only it
				 * was recorded (PC_SCOPE=main) */
	uint32_t rate;
	double off;		/* of total, off-CPU time (a wall-clock
				 * profile's waits, as samples at rate) */
	struct flat_row *rows;	/* functions with samples, most first */
	size_t nrows;
};

/*
 * Credit each bin's samples to the functions it covers: all of them to a
 * function whose code shares the bin only with padding, and in proportion
 * to their bytes to two functions that share it. A bin no symbol covers
 * is unknown.
 */
void flat_build(struct flat *f, const struct symtab *st,
		const struct gmon_profile *p);
/*
 * The walk under flat_build: every sampled bin of p, each symbol's share
 * of it given as give(arg, symbol index, lo, hi, samples), [lo, hi) the
 * symbol's bytes in the bin; the samples of bins no symbol covers are
 * added to *unknown. Returns the samples of every bin.
 */
typedef void flat_give_fn(void *arg, size_t sym, uint64_t lo, uint64_t hi,
			  double samples);
double flat_walk(const struct symtab *st, const struct gmon_profile *p,
		 flat_give_fn *give, void *arg, double *unknown);
void flat_release(struct flat *f);
/* qsort order of flat rows: most samples first, then by function. */
int flat_row_cmp(const void *a, const void *b);

/* Arcs mapped to functions and summed (callgraph.c). */
struct cg_arc {
	uint32_t caller, callee;	/* symtab->funcs indexes */
	double samples;
};

struct callgraph {
	struct cg_arc *arcs;	/* sorted by caller, callee */
	size_t narcs;
	double *total;		/* per function: self plus callees, samples */
	double unresolved;	/* arc samples whose ends are in no symbol */
};

void callgraph_build(struct callgraph *cg, const struct symtab *st,
		     const struct gmon_profile *p, const struct flat *f);
void callgraph_release(struct callgraph *cg);
/* qsort's order of arcs: by caller, then callee. */
int callgraph_cmp_arc(const void *a, const void *b);
/* writers/callgraph_out.c: the text view, the top functions by total. */
void callgraph_print(FILE *out, const struct callgraph *cg,
		     const struct flat *f, const struct symtab *st, long top);

/* stackfile.c: the stacks of run's files[file] (FILE.stacks, or
 * FILE.alloc where in->alloc), or of
 * stacks_file where it is given, read into ss and checked to be of that
 * run: 0; or 1 where there is no such file and it is not required; or -1
 * after one line on bad input. */
struct gmon_stacks;
int stacks_load(const struct pc_inputs *in, int run, int file,
		const char *stacks_file, int required, struct gmon_stacks *ss);

/*
 * The time a report shows (--clock). A wall-clock profile (PC_CLOCK=wall:
 * its stacks file is version 3) holds CPU samples and off-CPU records, and
 * is shown as wall time unless asked otherwise; cpu is the CPU samples
 * alone (the report of a CPU profile), off the off-CPU records alone.
 */
enum pc_clock {
	PC_CLOCK_AUTO,
	PC_CLOCK_CPU,
	PC_CLOCK_WALL,
	PC_CLOCK_OFF,
	/* an allocation profile's (PROFILE.alloc, --metric): allocations,
	 * bytes allocated, and of them those in use at the end, in the
	 * order of gmon.h's enum gmon_alloc_kind */
	PC_CLOCK_ALLOC,
	PC_CLOCK_ALLOC_BYTES,
	PC_CLOCK_INUSE,
	PC_CLOCK_INUSE_BYTES
};
#define CLOCK_IS_ALLOC(c)	((c) >= PC_CLOCK_ALLOC)
/* The gmon_alloc_kind of an allocation metric. */
#define CLOCK_ALLOC_KIND(c)	((unsigned)((c) - PC_CLOCK_ALLOC))
/* "objects" or "bytes": an allocation metric's unit. */
#define CLOCK_UNIT(c)		(((c) - PC_CLOCK_ALLOC) & 1 ? "bytes" : "objects")
/* "cpu", "wall" or "off" (auto: "cpu"); "alloc", "alloc-bytes", "inuse"
 * or "inuse-bytes". */
const char *clock_word(enum pc_clock c);
/* --clock's word (commands/options.c): exits 2 with one line for another. */
enum pc_clock clock_named(const char *arg);
/* stackfile.c: whether the stacks of run's files (or stacks_file) were
 * recorded with the wall clock (a version 3 header with GMON_STACKS_WALL);
 * a missing or unreadable file is not. */
int stacks_are_wall(const struct pc_inputs *in, int run,
		    const char *stacks_file);
/* The same of the stacks beside one profile, gmon. */
int stacks_profile_is_wall(const char *gmon);
/* Whether any of profiles[0..n) is (stacks_profile_is_wall), in one call. */
int stacks_any_wall(char *const *profiles, size_t n);
/* stackfile.c: the clock a report of run shows when asked for *clock,
 * into *clock: auto is wall for a wall-clock profile, else cpu; 0, or -1
 * after one line for wall or off of a CPU profile. */
PC_CHECKED int clock_resolve(const struct pc_inputs *in, int run,
			     const char *stacks_file, enum pc_clock *clock);
/* stackfile.c: what record k of ss weighs under clock c, in samples at
 * ss's rate (the CPU rate): a CPU sample's count, an off-CPU record's
 * nanoseconds as rate / 1e9 a nanosecond; 0 where c leaves it out (off-CPU
 * records under cpu, CPU samples under off). */
double stack_weight(const struct gmon_stacks *ss, const struct gmon_stack *k,
		    enum pc_clock c);
/* The root frame of a stack whose walk stopped early: the depth limit, or
 * (off-CPU) a frame it could not unwind. */
#define TRUNCATED_NAME	"[truncated]"
#define CUT_NAME	"[unwind stopped]"

/* Collapsed stacks (stackfile.c). A pc outside the objects profiled is
 * this frame. */
#define FOLDED_OUTSIDE_NAME	"[libraries]"
struct folded {
	char *line;		/* "root;...;leaf", each frame escaped
				 * (TEXT_FOLDED): ';' only between frames */
	double count;
};

struct folded_set {
	struct folded *v;	/* sorted by line, distinct */
	size_t n;
	double total;
	uint32_t rate;
};

/* Read FILE.stacks for each of run's files in in (or stacks_file
 * alone), named with in's symbols. Of profiles with manifests, only the
 * last run that inputs_load read can be placed (inputs_addr). 0, or -1
 * after one line on bad input. */
PC_CHECKED int folded_build(struct folded_set *fs, const struct pc_inputs *in,
			    int run, const char *stacks_file,
			    enum pc_clock clock);

/* commands/flame.c: the flame graph of folded_build's stacks under clock
 * (clock_resolve's) onto out, titled
 * title (NULL: the executable, its samples and rate); each frame coloured by
 * kind(name, arg) (enum flame_kind), or by its object where kind is NULL. 0, or
 * -1 with errno on a write error. */
int flame_of_run(FILE *out, const struct pc_inputs *in, int run,
		 const char *stacks_file, enum pc_clock clock,
		 const char *title,
		 unsigned char (*kind)(const char *name, void *arg), void *arg);
/* stackfile.c: fs->v[0..k), whole lines, sorted and made one line each
 * (the same names from different addresses are one stack: their counts
 * summed) into fs->v[0..fs->n). */
void folded_merge(struct folded_set *fs, size_t k);
void folded_print(FILE *out, const struct folded_set *fs);
void folded_release(struct folded_set *fs);

enum format {
	FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV, FORMAT_FOLDED,
	/* for other tools (export.h) */
	FORMAT_PPROF, FORMAT_SPEEDSCOPE, FORMAT_CALLGRIND, FORMAT_FIREFOX,
	/* for gprof: the executable's gmon file, of the clock's time
	 * (model/wallgmon.h) */
	FORMAT_GMON,
};
#define FORMAT_IS_EXPORT(f)	((f) >= FORMAT_PPROF && (f) != FORMAT_GMON)

struct run_listing;
struct report_opts {
	enum format format;
	long top;		/* rows to print; 0 for all */
	int callgraph;		/* text: print the call graph too */
	int by_object;		/* one row per object */
	int lines;		/* one row per source line (lines.c) */
	const char *stacks;	/* --stacks FILE for the folded format */
	const char *exe;
	char **files;
	int nfiles;
	const char *process;	/* --process PID|NAME (runview.c) */
	int all_processes; /* --processes: of a whole run, a line for each */
	int by_thread;		/* --by-thread: one row per thread (stacks) */
	const char *thread;	/* --thread TID|NAME: only its samples */
	int timeline;		/* report --timeline: the text timeline */
	enum pc_clock clock;	/* --clock; resolved (never auto) once read */
	int alloc;		/* --alloc: the allocation sites' table */
	/* --from, --to (seconds from the run's start), --marker NAME: only
	 * the timeline's samples in that window (model/window.c) */
	double from, to;
	const char *marker;
	int window;		/* WINDOW_* of those given */
	/* a wall view's: the children each wait for a child waited for,
	 * listed under its row (seconds; waits.h) */
	const struct wait_child *children;
	size_t nchildren;
	/* pcprof run's directory, listed once and its live files finished
	 * (inputs/runfiles.h): the whole run's report reads it, not the
	 * directory again */
	struct run_listing *listing;
};

enum { WINDOW_FROM = 1, WINDOW_TO = 2, WINDOW_MARKER = 4 };

void report_print(FILE *out, const struct flat *f, const struct symtab *st,
		  const struct callgraph *cg, const struct report_opts *o);

/*
 * recover.c: a run directory listed once (recover_list), for every stage
 * of a command that reads it: the live files to finish (recover_listed),
 * then the profiles (runfiles_of_listing). Each name is "DIR/NAME", dot
 * files too, sorted; "." and ".." are not there.
 */
struct run_listing {
	char *dir;
	char **names;
	unsigned char *types;	/* per name: readdir's d_type (DT_UNKNOWN
				 * where it does not say); NULL: none */
	size_t n;
};
/* dir listed into l (what l held released first; l zeroed or listed
 * before): 0, or -1 after one line where it cannot be read. */
PC_CHECKED int recover_list(struct run_listing *l, const char *dir);
void recover_listing_release(struct run_listing *l);
/* The profiles that processes left unfinished among l's names (libpc's
 * live files) finished with libpc's own writer, and l listed again where
 * that made files: how many were finished. Those whose processes still
 * run are left alone, and named in one line when say_running; a live file
 * of another version is then -1 after one line (and left alone, unsaid,
 * otherwise). */
int recover_listed(struct run_listing *l, int say_running);

/* recover.c: libpc.so beside this pcprof, else the installed one (0, or
 * -1 when neither is readable). */
int libpc_find(char *out, size_t size);
/* recover.c: the processes that made a live file in dir and still run
 * (a run's background processes), each checked to be the one that maps
 * the file, not another that took its pid. */
size_t recover_running(const char *dir);
/* recover.c: whether process pid has a live file in dir and runs (the
 * check recover_listed names it by). */
int recover_live_runs(const char *dir, pid_t pid);
/* recover.c: the program that process pid runs, into buf (size bytes):
 * its executable's file name, or its comm. */
void recover_program_of(pid_t pid, char *buf, size_t size);
/* recover.c: pcprof __finish FILE, the process that finishes one. */
int cmd_finish(int argc, char **argv);
/* commands/launch.h: starting the commands of run and compare. */

int cmd_report(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_annotate(int argc, char **argv);

#endif
