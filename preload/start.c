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

static void
read_settings(void)
{
	const char *s;
	long v;

	pc.hz = PC_DEFAULT_HZ;
	if ((s = getenv("PC_HZ")) && *s) {
		if (parse_long(s, &v) || v < 1 || v > PC_MAX_HZ)
			pc_say("PC_HZ='", s, "' is not a rate from 1 to 1000000; using 1000");
		else
			pc.hz = v;
	}
	pc.interval_ns = 1000000000L / pc.hz;

	/* POSIX timers by default: a task-clock sample costs about 65 us in a
	 * virtual machine like the one the benchmarks ran on (+7 % at 1000 Hz
	 * against +0.4 %; docs/benchmarks.md) */
	pc.timer_kind = PC_TIMER_POSIX;
	pc.timer_auto = 0;
	if ((s = getenv("PC_TIMER")) && *s) {
		if (!strcmp(s, "auto")) {
			pc.timer_kind = PC_TIMER_TASKCLOCK;
			pc.timer_auto = 1;
		} else if (!strcmp(s, "taskclock")) {
			pc.timer_kind = PC_TIMER_TASKCLOCK;
		} else if (strcmp(s, "posix")) {
			pc_say("PC_TIMER='", s, "' is not posix, auto or taskclock; using posix");
		}
	}

	pc.sig = SIGPROF;
	sig_chosen = 0;
	if ((s = getenv("PC_SIGNAL")) && *s) {
		int sig = parse_signal(s);

		if (sig < 0) {
			pc_say("PC_SIGNAL='", s, "' is not a signal libpc can use; using SIGPROF");
		} else {
			pc.sig = sig;
			sig_chosen = 1;
		}
	}

	pc.callgraph = 1;
	if ((s = getenv("PC_CALLGRAPH")) && *s) {
		if (!strcmp(s, "0"))
			pc.callgraph = 0;
		else if (strcmp(s, "1"))
			pc_say("PC_CALLGRAPH='", s, "' is not 0 or 1; using 1");
	}

	pc.unwinder = PC_UNWIND_AUTO;
	if ((s = getenv("PC_UNWIND")) && *s) {
		if (!strcmp(s, "dwarf"))
			pc.unwinder = PC_UNWIND_DWARF;
		else if (!strcmp(s, "fp"))
			pc.unwinder = PC_UNWIND_FP;
		else if (!strcmp(s, "libunwind"))
			pc.unwinder = PC_UNWIND_LIBUNWIND;
		else if (strcmp(s, "auto"))
			pc_say("PC_UNWIND='", s, "' is not auto, dwarf, fp or libunwind; using auto");
	}

	pc.depth = PC_DEFAULT_DEPTH;
	if ((s = getenv("PC_DEPTH")) && *s) {
		if (parse_long(s, &v) || v < 2 || v > PC_MAX_DEPTH)
			pc_say("PC_DEPTH='", s, "' is not a depth from 2 to 256; using 128");
		else
			pc.depth = (int)v;
	}

	arcs = PC_DEFAULT_ARCS;
	if ((s = getenv("PC_ARCS")) && *s) {
		if (parse_long(s, &v) || v < 1024 || v > (1L << 26))
			pc_say("PC_ARCS='", s, "' is not a count from 1024 to 67108864; using 65536");
		else
			arcs = (size_t)v;
	}

	pc.stacks = 0;
	pc.stacks_path[0] = 0;
	if ((s = getenv("PC_STACKS")) && *s && strcmp(s, "0")) {
		pc.stacks = 1;
		if (strcmp(s, "1") && absolute(pc.stacks_path, sizeof(pc.stacks_path), s, "")) {
			pc_say("PC_STACKS='", s, "' is too long a path; writing beside the profile");
			pc.stacks_path[0] = 0;
		}
	}

	stacks_mb = 32;
	if ((s = getenv("PC_STACKS_MB")) && *s) {
		if (parse_long(s, &v) || v < 1 || v > 4096)
			pc_say("PC_STACKS_MB='", s, "' is not a size from 1 to 4096; using 32");
		else
			stacks_mb = (size_t)v;
	}

	pc.snapshot_sig = 0;
	if ((s = getenv("PC_SNAPSHOT_SIGNAL")) && *s) {
		int sig = parse_signal(s);

		if (sig < 0 || sig == pc.sig)
			pc_say("PC_SNAPSHOT_SIGNAL='", s, "' is not a signal libpc can use; no snapshots on a signal");
		else
			pc.snapshot_sig = sig;
	}
	pc.snapshot_interval_ms = 0;
	if ((s = getenv("PC_SNAPSHOT_INTERVAL")) && *s) {
		char *end;
		double sec;

		errno = 0;
		sec = strtod(s, &end);
		if (errno || end == s || *end || !(sec >= 0.01 && sec <= 86400))
			pc_say("PC_SNAPSHOT_INTERVAL='", s, "' is not seconds from 0.01 to 86400; no periodic snapshots");
		else
			pc.snapshot_interval_ms = (long)(sec * 1000 + 0.5);
	}

	scope_all = 0;
	if ((s = getenv("PC_SCOPE")) && *s) {
		if (!strcmp(s, "all"))
			scope_all = 1;
		else if (strcmp(s, "main"))
			pc_say("PC_SCOPE='", s, "' is not main or all; using main");
	}

	pc.verbose = 0;
	if ((s = getenv("PC_VERBOSE")) && *s) {
		if (!strcmp(s, "1"))
			pc.verbose = 1;
		else if (strcmp(s, "0"))
			pc_say("PC_VERBOSE='", s, "' is not 0 or 1; using 0");
	}
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

__attribute__((constructor)) static void
pc_start(void)
{
	struct find f = { 0, 0 };
	int saved = errno;

	pc_msg_init();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &pc.cpu_start);
	pc.spare[0] = GMON_PC_MARK0;
	pc.spare[1] = GMON_PC_MARK1;
	pc.spare[2] = GMON_PC_FORMAT;
	pc.spare[3] = (uint8_t)__builtin_ctz(pc_profil_bin_bytes(PC_SCALE));
	read_settings();
	if (read_output()) {
		pc_say("cannot form the output path; profiling is off", "", "");
		goto out;
	}
	dl_iterate_phdr(find_main, &f);
	if (!f.found || pc.ntext == 0) {
		pc_say("cannot find the program's executable segment; profiling is off", "", "");
		goto out;
	}
	if (f.too_many)
		pc_say("the program has more than 8 executable segments; later ones are not profiled", "", "");
	if (pc.pg_built && !sig_chosen) {
		/* step aside from glibc's SIGPROF onto a free real-time signal */
		for (int sig = SIGRTMIN + 2; sig <= SIGRTMAX - 2; sig++) {
			struct sigaction old;

			if (pc_real_sigaction(sig, NULL, &old) == 0 &&
			    !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
				pc.sig = sig;
				break;
			}
		}
	}
	if (map_counters()) {
		pc_say("cannot map memory for the histogram; profiling is off", "", "");
		goto out;
	}
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
	if (pc_sample_install()) {
		pc_say("cannot install the sampling signal handler; profiling is off", "", "");
		goto out;
	}
	pc_threads_init();
	pc_lifecycle_init();
	pc_signals_init();
	pc_phase_move(PC_OFF, PC_ON);
	if (pc_thread_arm())
		pc_say("cannot create a CPU-time timer for the main thread; it is not sampled", "", "");
	pc_threads_adopt();
out:
	errno = saved;
}
