/*
 * libpc.so start-up: read the environment, find the main program's text and
 * load bias with dl_iterate_phdr, map the counters, install the sampler and
 * arm the main thread's timer. Runs once, from the library's constructor,
 * before main(). Nothing here may abort the host program: a bad setting gets
 * a warning and a default, a failure switches profiling off.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pc.h"

struct pc_state pc PC_HIDDEN;

/* ------------------------------------------------------------ settings */

static int
parse_long(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

/* "SIGPROF", "PROF", "27", "SIGRTMIN+2", "RTMAX-1" */
static int
parse_signal(const char *s)
{
	static const struct { const char *name; int sig; } names[] = {
		{ "PROF", SIGPROF }, { "VTALRM", SIGVTALRM }, { "ALRM", SIGALRM },
		{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "URG", SIGURG },
		{ "WINCH", SIGWINCH }, { "IO", SIGIO }, { "PWR", SIGPWR },
	};
	long v;

	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name))
			return names[i].sig;
	if (!strncmp(s, "RTMIN", 5) || !strncmp(s, "RTMAX", 5)) {
		int base = s[3] == 'I' ? SIGRTMIN : SIGRTMAX;

		if (s[5] == 0)
			return base;
		if ((s[5] == '+' || s[5] == '-') && !parse_long(s + 6, &v) &&
		    v >= 0 && v <= 64) {
			v = s[5] == '+' ? base + v : base - v;
			return v >= SIGRTMIN && v <= SIGRTMAX ? (int)v : -1;
		}
		return -1;
	}
	if (parse_long(s, &v) || v < 1 || v >= NSIG)
		return -1;
	/* signals whose default meaning the host relies on, or that the
	 * kernel will not let us catch */
	switch (v) {
	case SIGKILL: case SIGSTOP: case SIGSEGV: case SIGBUS: case SIGFPE:
	case SIGILL: case SIGABRT: case SIGTRAP: case SIGCHLD: case SIGCONT:
	case SIGTSTP: case SIGTTIN: case SIGTTOU: case SIGSYS:
		return -1;
	}
	return (int)v;
}

/* Make path absolute against the working directory at start-up. */
static int
absolute(char *dst, size_t size, const char *path, const char *suffix)
{
	size_t n = 0, k;

	if (path[0] != '/') {
		if (!getcwd(dst, size))
			return -1;
		n = strlen(dst);
		if (n + 1 >= size)
			return -1;
		if (n > 1 || dst[0] != '/')
			dst[n++] = '/';
	}
	k = strlen(path);
	if (n + k + strlen(suffix) >= size)
		return -1;
	memcpy(dst + n, path, k);
	strcpy(dst + n + k, suffix);
	return 0;
}

/* Output name: PC_OUT, else GMON_OUT_PREFIX as glibc, else gmon.out. */
static int
read_output(void)
{
	const char *out = getenv("PC_OUT");
	const char *prefix = getenv("GMON_OUT_PREFIX");
	char base[PATH_MAX];
	int prefix_mode = 0;

	if (out && *out) {
		if (absolute(base, sizeof(base), out, ""))
			return -1;
	} else if (prefix && *prefix) {
		if (absolute(base, sizeof(base), prefix, ""))
			return -1;
		prefix_mode = 1;
	} else if (absolute(base, sizeof(base), "gmon.out", "")) {
		return -1;
	}
	return pc_names_init(base, prefix_mode);
}

static size_t arcs;		/* PC_ARCS */
static int sig_chosen;		/* PC_SIGNAL was given */
static size_t stacks_mb;	/* PC_STACKS_MB */
static int scope_all;		/* PC_SCOPE=all */

/*
 * The settings, one entry each: the variable, how its value is read, its
 * bounds or words, its default, the value a bad one gets, and the end of
 * the warning a bad one prints ("libpc: NAME='VALUE' " + want). parse
 * stores the value in *v and returns 0, or -1 for a bad value.
 */
struct setting {
	const char *name;
	int (*parse)(const struct setting *, const char *s, long *v);
	long min, max;			/* parse_range, parse_ms */
	const char *const *words;	/* parse_word: the value is the index */
	long dflt, bad;
	const char *want;
};

enum {
	S_HZ, S_TIMER, S_SIGNAL, S_CALLGRAPH, S_UNWIND, S_DEPTH, S_ARCS,
	S_STACKS, S_STACKS_MB, S_SNAPSHOT_SIGNAL, S_SNAPSHOT_INTERVAL, S_SCOPE,
	S_VERBOSE, S_COUNT
};

static long value[S_COUNT];
static const struct setting settings[S_COUNT];

static int
parse_range(const struct setting *e, const char *s, long *v)
{
	return parse_long(s, v) || *v < e->min || *v > e->max ? -1 : 0;
}

static int
parse_word(const struct setting *e, const char *s, long *v)
{
	for (long i = 0; e->words[i]; i++)
		if (!strcmp(s, e->words[i])) {
			*v = i;
			return 0;
		}
	return -1;
}

/* A signal; the snapshot signal must not be the sampling one. */
static int
parse_sig(const struct setting *e, const char *s, long *v)
{
	*v = parse_signal(s);
	if (e == &settings[S_SNAPSHOT_SIGNAL] && *v == value[S_SIGNAL])
		return -1;
	return *v < 0 ? -1 : 0;
}

/* Seconds, to milliseconds within [min, max]. */
static int
parse_ms(const struct setting *e, const char *s, long *v)
{
	char *end;
	double sec;

	errno = 0;
	sec = strtod(s, &end);
	if (errno || end == s || *end || !(sec * 1000 >= (double)e->min &&
					   sec * 1000 <= (double)e->max))
		return -1;
	*v = (long)(sec * 1000 + 0.5);
	return 0;
}

/* PC_STACKS: 0 (none), 1 (beside the profile) or a path (2). */
static int
parse_stacks(const struct setting *e, const char *s, long *v)
{
	(void)e;
	*v = !strcmp(s, "0") ? 0 : !strcmp(s, "1") ? 1 : 2;
	if (*v == 2 && absolute(pc.stacks_path, sizeof(pc.stacks_path), s, "")) {
		pc.stacks_path[0] = 0;
		return -1;
	}
	return 0;
}

static const char *const timer_words[] = { "posix", "taskclock", "auto", NULL };
static const char *const bit_words[] = { "0", "1", NULL };
static const char *const unwind_words[] = {	/* enum pc_unwinder's order */
	"auto", "dwarf", "fp", "libunwind", NULL
};
static const char *const scope_words[] = { "main", "all", NULL };

static const struct setting settings[S_COUNT] = {
	[S_HZ] = { "PC_HZ", parse_range, 1, PC_MAX_HZ, NULL, PC_DEFAULT_HZ,
		   PC_DEFAULT_HZ, "is not a rate from 1 to 1000000; using 1000" },
	/* POSIX timers by default: a task-clock sample costs about 65 us in
	 * a virtual machine like the one the benchmarks ran on (+7 % at
	 * 1000 Hz against +0.4 %; docs/benchmarks.md) */
	[S_TIMER] = { "PC_TIMER", parse_word, 0, 0, timer_words, 0, 0,
		      "is not posix, auto or taskclock; using posix" },
	[S_SIGNAL] = { "PC_SIGNAL", parse_sig, 0, 0, NULL, SIGPROF, SIGPROF,
		       "is not a signal libpc can use; using SIGPROF" },
	[S_CALLGRAPH] = { "PC_CALLGRAPH", parse_word, 0, 0, bit_words, 1, 1,
			  "is not 0 or 1; using 1" },
	[S_UNWIND] = { "PC_UNWIND", parse_word, 0, 0, unwind_words,
		       PC_UNWIND_AUTO, PC_UNWIND_AUTO,
		       "is not auto, dwarf, fp or libunwind; using auto" },
	[S_DEPTH] = { "PC_DEPTH", parse_range, 2, PC_MAX_DEPTH, NULL,
		      PC_DEFAULT_DEPTH, PC_DEFAULT_DEPTH,
		      "is not a depth from 2 to 256; using 128" },
	[S_ARCS] = { "PC_ARCS", parse_range, 1024, 1L << 26, NULL,
		     PC_DEFAULT_ARCS, PC_DEFAULT_ARCS,
		     "is not a count from 1024 to 67108864; using 65536" },
	[S_STACKS] = { "PC_STACKS", parse_stacks, 0, 0, NULL, 0, 1,
		       "is too long a path; writing beside the profile" },
	[S_STACKS_MB] = { "PC_STACKS_MB", parse_range, 1, 4096, NULL, 32, 32,
			  "is not a size from 1 to 4096; using 32" },
	[S_SNAPSHOT_SIGNAL] = { "PC_SNAPSHOT_SIGNAL", parse_sig, 0, 0, NULL, 0, 0,
				"is not a signal libpc can use; no snapshots on a signal" },
	[S_SNAPSHOT_INTERVAL] = { "PC_SNAPSHOT_INTERVAL", parse_ms, 10, 86400000,
				  NULL, 0, 0,
				  "is not seconds from 0.01 to 86400; no periodic snapshots" },
	[S_SCOPE] = { "PC_SCOPE", parse_word, 0, 0, scope_words, 0, 0,
		      "is not main or all; using main" },
	[S_VERBOSE] = { "PC_VERBOSE", parse_word, 0, 0, bit_words, 0, 0,
			"is not 0 or 1; using 0" },
};

/* Read every setting from the environment; a bad one gets its warning
 * and the value the table gives it. */
static void
read_settings(void)
{
	for (int i = 0; i < S_COUNT; i++) {
		const struct setting *e = &settings[i];
		const char *s = getenv(e->name);
		char name[32], why[128];
		size_t n = strlen(e->name), k = strlen(e->want);

		value[i] = e->dflt;
		if (!s || !*s)
			continue;
		if (e->parse(e, s, &value[i]) == 0) {
			sig_chosen |= i == S_SIGNAL;
			continue;
		}
		value[i] = e->bad;
		memcpy(name, e->name, n);
		memcpy(name + n, "='", 3);
		memcpy(why, "' ", 2);
		memcpy(why + 2, e->want, k + 1);
		pc_say(name, s, why);
	}
	pc.hz = value[S_HZ];
	pc.interval_ns = 1000000000L / pc.hz;
	pc.timer_kind = value[S_TIMER] ? PC_TIMER_TASKCLOCK : PC_TIMER_POSIX;
	pc.timer_auto = value[S_TIMER] == 2;
	pc.sig = (int)value[S_SIGNAL];
	pc.callgraph = (int)value[S_CALLGRAPH];
	pc.unwinder = (enum pc_unwinder)value[S_UNWIND];
	pc.depth = (int)value[S_DEPTH];
	arcs = (size_t)value[S_ARCS];
	pc.stacks = value[S_STACKS] != 0;
	stacks_mb = (size_t)value[S_STACKS_MB];
	pc.snapshot_sig = (int)value[S_SNAPSHOT_SIGNAL];
	pc.snapshot_interval_ms = value[S_SNAPSHOT_INTERVAL];
	scope_all = value[S_SCOPE] == 1;
	pc.verbose = (int)value[S_VERBOSE];
}

/* --------------------------------------------------------- the program */

struct find {
	int found;
	int too_many;
};

/*
 * Whether the program was built with -pg: it imports mcount. glibc's -pg
 * runtime then installs its own SIGPROF handler with an internal call that
 * no interposition sees, so libpc must sample on another signal.
 */
static void
read_pg(const struct dl_phdr_info *info, const ElfW(Phdr) *ph)
{
	const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) *rel[2] = { NULL, NULL };
	size_t relsz[2] = { 0, 0 };

	for (; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)d->d_un.d_ptr; break;
		case DT_STRTAB: strtab = (const char *)d->d_un.d_ptr; break;
		case DT_JMPREL: rel[0] = (const ElfW(Rela) *)d->d_un.d_ptr; break;
		case DT_PLTRELSZ: relsz[0] = d->d_un.d_val; break;
		case DT_RELA: rel[1] = (const ElfW(Rela) *)d->d_un.d_ptr; break;
		case DT_RELASZ: relsz[1] = d->d_un.d_val; break;
		}
	}
	if (!symtab || !strtab)
		return;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; rel[k] && i < relsz[k] / sizeof(ElfW(Rela)); i++) {
			size_t sym = ELF64_R_SYM(rel[k][i].r_info);
			const char *name = sym ? strtab + symtab[sym].st_name : "";

			if (!strcmp(name, "mcount") || !strcmp(name, "_mcount") ||
			    !strcmp(name, "__monstartup"))
				pc.pg_built = 1;
		}
}

/* The first object dl_iterate_phdr reports is the main program. */
static int
find_main(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find *f = data;
	const uintptr_t bin = pc_profil_bin_bytes(PC_SCALE);

	(void)size;
	pc.bias = info->dlpi_addr;
	pc_note_build_id(info, pc.spare + GMON_BUILDID_OFF, GMON_BUILDID_SIZE);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct pc_text *t;

		if (ph->p_type == PT_DYNAMIC) {
			read_pg(info, ph);
			continue;
		}
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_memsz)
			continue;
		if (pc.ntext == PC_MAX_TEXT) {
			f->too_many = 1;
			continue;
		}
		t = &pc.text[pc.ntext++];
		t->link_low = ph->p_vaddr & ~(bin - 1);
		t->prof.offset = info->dlpi_addr + t->link_low;
		t->prof.scale = PC_SCALE;
		/* bins for [link_low, p_vaddr + p_memsz) rounded up to a bin */
		t->prof.bufsiz = (ph->p_vaddr + ph->p_memsz - t->link_low + bin - 1) /
				 bin * sizeof(uint32_t);
	}
	f->found = 1;
	return 1;	/* stop after the first */
}

/*
 * Counters live in anonymous memory: the kernel gives a page only when a
 * sample first lands in it, so text that never runs costs address space and
 * nothing else, and the writer can skip it with mincore().
 */
static int
map_counters(void)
{
	long page = sysconf(_SC_PAGESIZE);

	for (int i = 0; i < pc.ntext; i++) {
		struct pc_text *t = &pc.text[i];
		void *m;

		t->map_len = (t->prof.bufsiz + (size_t)page - 1) & ~((size_t)page - 1);
		m = mmap(NULL, t->map_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return -errno;
		t->prof.buf = m;
	}
	return 0;
}

/* Step aside from glibc's SIGPROF (a -pg program's) onto a free real-time
 * signal, unless PC_SIGNAL chose one. */
static void
avoid_pg_signal(void)
{
	if (!pc.pg_built || sig_chosen)
		return;
	for (int sig = SIGRTMIN + 2; sig <= SIGRTMAX - 2; sig++) {
		struct sigaction old;

		if (pc_real_sigaction(sig, NULL, &old) == 0 &&
		    !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
			pc.sig = sig;
			return;
		}
	}
}

/* What can fail and leave the flat profile: call graphs, stacks and the
 * other objects, each switched off with its line. */
static void
set_up_extras(void)
{
	if (pc.callgraph && (pc_unwind_init() || pc_arcs_init(arcs))) {
		pc_say("cannot set up call graphs; recording the flat profile only", "", "");
		pc.callgraph = 0;
	}
	if (pc.stacks && !pc.callgraph) {
		pc_say("PC_STACKS needs call graphs (PC_CALLGRAPH=1); no stacks file", "", "");
		pc.stacks = 0;
	}
	if (pc.stacks && pc_stacks_init(stacks_mb)) {
		pc_say("cannot map memory for stacks; no stacks file", "", "");
		pc.stacks = 0;
	}
	if (scope_all) {
		ssize_t n = readlink("/proc/self/exe", pc.exe, sizeof(pc.exe) - 1);

		pc.exe[n > 0 ? n : 0] = 0;
		if (pc_objects_init())
			pc_say("cannot map memory for PC_SCOPE=all; profiling the program only", "", "");
	}
}

/* Everything the flat profile needs; a reason not to profile, or NULL. */
static const char *
set_up(void)
{
	struct find f = { 0, 0 };

	read_settings();
	if (read_output())
		return "cannot form the output path; profiling is off";
	dl_iterate_phdr(find_main, &f);
	if (!f.found || pc.ntext == 0)
		return "cannot find the program's executable segment; profiling is off";
	if (f.too_many)
		pc_say("the program has more than 8 executable segments; later ones are not profiled", "", "");
	avoid_pg_signal();
	if (map_counters())
		return "cannot map memory for the histogram; profiling is off";
	set_up_extras();
	if (pc_sample_install())
		return "cannot install the sampling signal handler; profiling is off";
	return NULL;
}

__attribute__((constructor)) static void
pc_start(void)
{
	const char *why;
	int saved = errno;

	pc_msg_init();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &pc.cpu_start);
	pc.spare[0] = GMON_PC_MARK0;
	pc.spare[1] = GMON_PC_MARK1;
	pc.spare[2] = GMON_PC_FORMAT;
	pc.spare[3] = (uint8_t)__builtin_ctz(pc_profil_bin_bytes(PC_SCALE));
	if ((why = set_up())) {
		pc_say(why, "", "");
		errno = saved;
		return;
	}
	pc_threads_init();
	pc_lifecycle_init();
	pc_signals_init();
	pc_phase_move(PC_OFF, PC_ON);
	if (pc_thread_arm())
		pc_say("cannot create a CPU-time timer for the main thread; it is not sampled", "", "");
	pc_threads_adopt();
	errno = saved;
}
