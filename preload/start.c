/* SPDX-License-Identifier: BSD-2-Clause */
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
#include "alloc.h"
#include "live.h"

static struct pc_state boot_state;
static struct pc_stats boot_stats;
/* in the live file once it exists (live.c) */
struct pc_state *pc PC_HIDDEN = &boot_state;
struct pc_stats *pc_stats PC_HIDDEN = &boot_stats;
const char pc_timer_tag PC_HIDDEN;

/*
 * The configuration, in pages of its own: pc_start makes them read-only
 * when it ends, so that nothing can change what the handler reads. A page
 * size above CONFIG_ALIGN leaves them writable (nothing else differs).
 */
#define CONFIG_ALIGN 4096
static union {
	struct pc_config c;
	unsigned char pages[(sizeof(struct pc_config) + CONFIG_ALIGN - 1) /
			    CONFIG_ALIGN * CONFIG_ALIGN];
} store __attribute__((aligned(CONFIG_ALIGN)));
static struct pc_config *const config = &store.c;
const struct pc_config *const pc_cfg PC_HIDDEN = &store.c;

void
pc_config_recover(const struct pc_config *c)
{
	*config = *c;
}

/* Make the configuration read-only: start-up is over. */
static void
config_seal(void)
{
	long page = sysconf(_SC_PAGESIZE);

	pc_live_seal(config);
	if (page > 0 && CONFIG_ALIGN % page == 0)
		mprotect(&store, sizeof(store), PROT_READ);
}

static struct pc_settings want;	/* what the environment asks for */

/* Output name: PC_OUT, else GMON_OUT_PREFIX as glibc, else gmon.out. */
static int
read_output(void)
{
	const char *out = want.out;
	const char *prefix = want.out_prefix;
	char base[PATH_MAX];
	int prefix_mode = 0;

	if (out && *out) {
		if (pc_absolute(base, sizeof(base), out, ""))
			return -1;
	} else if (prefix && *prefix) {
		if (pc_absolute(base, sizeof(base), prefix, ""))
			return -1;
		prefix_mode = 1;
	} else if (pc_absolute(base, sizeof(base), "gmon.out", "")) {
		return -1;
	}
	return pc_names_init(base, prefix_mode, want.root);
}

/* The settings into the configuration; a bad one gets its warning and the
 * value the table gives it. */
static void
read_settings(void)
{
	pc_settings_read(&want, getenv, pc_say);
	config->hz = want.hz;
	config->interval_ns = 1000000000L / want.hz;
	config->timer = want.timer;
	config->sig = want.sig;
	config->callgraph = want.callgraph;
	config->unwinder = want.unwinder;
	config->depth = want.depth;
	config->stacks = want.stacks != 0;
	config->cpu_off = want.alloc == 2;
	if (want.stacks == 2)
		strcpy(pc->stacks_path, want.stacks_path);
	config->snapshot_sig = want.snapshot_sig;
	config->snapshot_interval_ms = want.snapshot_interval_ms;
	config->verbose = want.verbose;
	config->clock_wall = want.clock_wall;
	config->wall_hz = want.wall_hz;
	config->wall_budget = want.wall_budget;
	/* a wall profile is its stacks: the waits are nowhere else; a
	 * timeline's samples are drawn with theirs */
	if ((want.clock_wall || want.timeline) && !want.stacks)
		want.stacks = 1;
	config->stacks = want.stacks != 0;
}

/*
 * PC_TIMER=auto (the default): task-clock where a sample of it is cheap,
 * as measured here, else POSIX timers (cheap, but at most one signal a
 * kernel tick). PC_TIMER=posix or taskclock is taken as asked.
 */
static void
choose_timer(void)
{
	long cost;

	config->timer_how = GMON_TIMER_ASKED;
	if (want.timer != 2)
		return;
	cost = pc_taskclock_cost_ns(&config->timer_cost_earlier,
				    want.test_timer_cost);
	if (cost < 0) {
		config->timer = 0;
		config->timer_how = GMON_TIMER_REFUSED;
		pc_timer_note_refused((int)-cost);
		return;
	}
	config->timer_how = GMON_TIMER_MEASURED;
	config->timer_cost_ns = cost;
	config->timer = cost < PC_TASKCLOCK_CHEAP_NS ? 2 : 0;
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
		case DT_SYMTAB:
			symtab = (const ElfW(Sym) *)d->d_un.d_ptr;
			break;
		case DT_STRTAB: strtab = (const char *)d->d_un.d_ptr; break;
		case DT_JMPREL:
			rel[0] = (const ElfW(Rela) *)d->d_un.d_ptr;
			break;
		case DT_PLTRELSZ: relsz[0] = d->d_un.d_val; break;
		case DT_RELA: rel[1] = (const ElfW(Rela) *)d->d_un.d_ptr; break;
		case DT_RELASZ: relsz[1] = d->d_un.d_val; break;
		}
	}
	if (!symtab || !strtab)
		return;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; rel[k] && i < relsz[k] / sizeof(ElfW(Rela));
		     i++) {
			size_t sym = ELF64_R_SYM(rel[k][i].r_info);
			const char *name =
				sym ? strtab + symtab[sym].st_name : "";

			if (!strcmp(name, "mcount") ||
			    !strcmp(name, "_mcount") ||
			    !strcmp(name, "__monstartup"))
				config->pg_built = 1;
		}
}

/* The first object dl_iterate_phdr reports is the main program. */
static int
find_main(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find *f = data;
	const uintptr_t bin = pc_profil_bin_bytes(PC_SCALE);

	(void)size;
	config->bias = info->dlpi_addr;
	pc_note_build_id(info, config->spare + GMON_BUILDID_OFF,
			 GMON_BUILDID_SIZE);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct pc_text *t;

		if (ph->p_type == PT_DYNAMIC) {
			read_pg(info, ph);
			continue;
		}
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    !ph->p_memsz)
			continue;
		if (pc->ntext == PC_MAX_TEXT) {
			f->too_many = 1;
			continue;
		}
		t = &pc->text[pc->ntext++];
		t->link_low = ph->p_vaddr & ~(bin - 1);
		t->prof.offset = info->dlpi_addr + t->link_low;
		t->prof.scale = PC_SCALE;
		/* bins for [link_low, p_vaddr + p_memsz) rounded up to a bin */
		t->prof.bufsiz =
			(ph->p_vaddr + ph->p_memsz - t->link_low + bin - 1) /
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
	size_t bytes = 0;

	for (int i = 0; i < pc->ntext; i++) {
		struct pc_text *t = &pc->text[i];

		t->map_len = (t->prof.bufsiz + (size_t)page - 1) &
			     ~((size_t)page - 1);
		bytes += t->map_len;
	}
	/* the live file first, sized for what start-up will ask of it */
	pc_live_open(bytes, want.callgraph ? want.arcs : 0,
		     want.callgraph && want.stacks ? want.stacks_mb : 0,
		     want.scope_all, want.live_max);
	for (int i = 0; i < pc->ntext; i++) {
		struct pc_text *t = &pc->text[i];

		if (!(t->prof.buf = pc_live_alloc(t->map_len, 0)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * PC_SIGNAL=auto (the default): a real-time signal that the program has
 * left at its default action, from the top of the range down (programs
 * that use real-time signals take them from SIGRTMIN up), unblocked where
 * one is, so that SIGPROF, its handlers, masks and timers stay the
 * program's own. A -pg program's glibc profiler installs its SIGPROF
 * handler with an internal call that no interposition sees, so an asked
 * SIGPROF moves too. Start-up only.
 */
static void
choose_signal(void)
{
	sigset_t cur;
	int blocked = 0;

	if (want.sig && !(config->pg_built && want.sig == SIGPROF))
		return;
	if (want.sig)
		pc_say("the program is built with -pg, whose profiler takes SIGPROF; "
		       "sampling on a real-time signal", "", "");
	pc_real_sigmask(SIG_SETMASK, NULL, &cur);
	for (int sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
		struct sigaction old;

		if (sig == want.snapshot_sig ||
		    pc_real_sigaction(sig, NULL, &old) ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		if (sigismember(&cur, sig) != 1) {
			config->sig = sig;
			return;
		}
		if (!blocked)
			blocked = sig;	/* signals.c lets it through */
	}
	config->sig = blocked ? blocked : SIGPROF;
}

/* What can fail and leave the flat profile: call graphs, stacks and the
 * other objects, each switched off with its line. */
static void
set_up_extras(void)
{
	if (config->callgraph &&
	    (pc_unwind_init(&config->unwinder) || pc_sample_init() ||
	     pc_arcs_init(want.arcs))) {
		pc_say("cannot set up call graphs; recording the flat profile only",
		       "", "");
		config->callgraph = 0;
	}
	/* allocations' stacks are walked whatever PC_CALLGRAPH says (alloc.c) */
	if (want.alloc && !config->callgraph) {
		enum pc_unwinder u = config->unwinder;

		pc_unwind_init(&u);
	}
	if (config->stacks && !config->callgraph) {
		pc_say("PC_STACKS needs call graphs (PC_CALLGRAPH=1); no stacks file",
		       "", "");
		config->stacks = 0;
	}
	if (config->stacks && pc_stacks_init(want.stacks_mb)) {
		pc_say("cannot map memory for stacks; no stacks file", "", "");
		config->stacks = 0;
	}
	if (want.timeline &&
	    pc_timeline_init(want.timeline_max, want.alloc != 0))
		pc_say("cannot map memory for the timeline; no timeline", "",
		       "");
	else
		config->timeline = want.timeline;
	if (want.scope_all) {
		ssize_t n = readlink("/proc/self/exe", config->exe,
				     sizeof(config->exe) - 1);

		config->exe[n > 0 ? n : 0] = 0;
		/* on before the first inventory, which pc_objects_init takes */
		config->scope_all = 1;
		if (pc_objects_init()) {
			config->scope_all = 0;
			pc_say("cannot map memory for PC_SCOPE=all; profiling the program only",
			       "", "");
		}
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
	if (!f.found || pc->ntext == 0)
		return "cannot find the program's executable segment; profiling is off";
	if (f.too_many)
		pc_say("the program has more than 8 executable segments; later ones are not profiled",
		       "", "");
	choose_signal();
	if (map_counters())
		return "cannot map memory for the histogram; profiling is off";
	set_up_extras();
	choose_timer();
	if (pc_sample_install())
		return "cannot install the sampling signal handler; profiling is off";
	return NULL;
}

/*
 * Stop for good before a seccomp sandbox closes (sandbox.c calls this
 * through the pointer the constructor gives it), writing
 * nothing, then or at exit: the wall sampler's thread ends (a filter
 * with SECCOMP_FILTER_FLAG_TSYNC covers it too, and it opens files), a
 * write under way in another thread ends first (the writer lock), the
 * phase leaves PC_ON, so that no thread samples, arms a timer, scans
 * objects or writes from here on, and the calling thread's timer is
 * deleted now, while that is still allowed: strict mode allows only
 * read, write, _exit and sigreturn, and a sample's handler makes other
 * calls. The other threads' timers still fire: their handler returns at
 * once with no system call but sigreturn, and a task-clock event, not
 * granted its next overflow, stops. The live file is the profile. A
 * vfork child (another pid, its parent's memory) changes nothing. Runs
 * in the program's call, never in a handler; not AS-safe.
 */
static void
sandbox_stop(void)
{
	int saved = errno;

	if (getpid() != pc->pid)
		goto out;
	pc_wall_pause();
	pc_live_grower_pause();
	pc_write_lock();
	if (pc_phase_move(PC_ON, PC_DONE)) {
		pc_note_cpu_stop();
		pc_thread_disarm();
	}
	pc_sandbox_mark();
	pc_write_unlock();
out:
	errno = saved;
}

__attribute__((constructor)) static void
pc_start(void)
{
	const char *why;
	int saved = errno;

	/* the interposed mmap's and fsync's next definitions, whatever follows */
	pc_mappings_resolve();
	pc_wall_io_resolve();
	/* pcprof loads libpc to finish a live file (pc_recover), not to
	 * profile itself */
	if (pc_setting_text(PC_S_RECOVER, getenv)) {
		pc_alloc_start(0, 0); /* the companion's hooks: forward only */
		return;
	}
	pc_lifecycle_resolve();
	pc_finish_resolve();
	if (pc_sandbox_inherited()) {
		pc_alloc_start(0, 0);
		errno = saved;
		return;
	}
	pc_msg_init();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &pc->cpu_start);
	config->spare[0] = GMON_PC_MARK0;
	config->spare[1] = GMON_PC_MARK1;
	config->spare[2] = GMON_PC_FORMAT;
	config->spare[3] =
		(uint8_t)__builtin_ctz(pc_profil_bin_bytes(PC_SCALE));
	if ((why = set_up())) {
		config_seal();
		pc_live_done(); /* a live file made before the failure */
		pc_alloc_start(0, 0);
		pc_say(why, "", "");
		errno = saved;
		return;
	}
	config_seal();
	pc_mappings_start();
	pc_threads_init();
	pc_alloc_start(want.alloc, want.alloc_rate);
	pc_lifecycle_init();
	pc_signals_init();
	pc_wall_load();
	pc_phase_move(PC_OFF, PC_ON);
	if (pc_thread_arm())
		pc_say("cannot create a CPU-time timer for the main thread; it is not sampled",
		       "", "");
	pc_threads_adopt();
	/* libpc's own threads after the adoption, which would give them
	 * timers: they are not the program's */
	pc_snapshots_start();
	pc_wall_start();
	pc_live_grower_start();
	pc_sandbox_set_stop(sandbox_stop);
	errno = saved;
}
