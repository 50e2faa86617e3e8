/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof run: start a program with libpc.so preloaded, wait for it, pass
 * its exit status through, and print the report of the profile it wrote.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"	/* PC_LIBDIR, written by the Makefile */
#include "commands/launch.h"
#include "commands/options.h"
#include "commands/alloc_report.h"
#include "commands/run_report.h"
#include "inputs/runfiles.h"
#include "model/export.h"
#include "model/wallgmon.h"
#include "writers/gmon_out.h"

static const char usage_run[] =
"usage: pcprof run [OPTIONS] -- CMD [ARGS...]\n"
"\n"
"Run CMD with libpc.so preloaded (appended to any LD_PRELOAD), wait for it,\n"
"then print its profile on standard error. The whole run is profiled: every\n"
"process CMD starts and every shared object, dlopen'ed plugin and the vDSO\n"
"in each (PC_SCOPE=all), all into one run directory, pcprof-PROG-DATE-TIME\n"
"unless -o names one. The report has one line per process, one for the CPU\n"
"time the processes' clocks measured and no sample saw, then the 25\n"
"functions with most samples over the whole run and one line for the rest\n"
"(--top 0: all of them); pcprof report DIR prints it again. The exit status\n"
"is CMD's, whatever becomes of the report; a CMD killed by a signal makes\n"
"pcprof die of the same signal. CMD is found and run as a shell does: 127\n"
"when it is not found (nor its #! interpreter), 126 when it cannot be run;\n"
"an executable file with no #! line is run by /bin/sh.\n"
"\n"
"SIGINT, SIGTERM and SIGHUP sent to pcprof are passed on to CMD (to its\n"
"whole process group, of its own, where pcprof is not in the foreground\n"
"of a terminal); pcprof waits for CMD, reports, then dies of the first.\n"
"The terminal's own ^C reaches CMD directly, and pcprof then ends as CMD\n"
"does. Every other signal that can be caught but SIGCHLD (SIGQUIT, SIGUSR1,\n"
"SIGALRM, SIGPIPE, the real-time ones with their sigqueue value...) is\n"
"passed on to CMD, and pcprof exits with CMD's status; SIGTSTP stops CMD's\n"
"group and pcprof, SIGCONT continues them. SIGKILL, which cannot be\n"
"caught, kills pcprof, and CMD with it (a parent-death signal, SIGKILL,\n"
"that CMD sees with prctl(PR_GET_PDEATHSIG) and its children do not\n"
"inherit); SIGSTOP stops pcprof alone.\n"
"\n"
"A CMD linked with AddressSanitizer gets its runtime first in LD_PRELOAD;\n"
"an ASan program that a script starts needs\n"
"ASAN_OPTIONS=verify_asan_link_order=0.\n"
"\n"
"Run options:\n"
"  -o, --output DIR   the run directory, made if it is not there (its parent\n"
"                     must be) and refused if it holds an earlier run's\n"
"                     profiles or another pcprof run is using it (CMD then\n"
"                     runs unprofiled); the first process writes\n"
"                     DIR/gmon.out\n"
"  --hz N             samples per second of thread CPU time (PC_HZ; 1000)\n"
"  --signal SIG       the sampling signal (PC_SIGNAL; auto: a free real-time one)\n"
"  --report FILE      write the report to FILE instead of standard error\n"
"                     (whole or not at all; --format pprof, speedscope and\n"
"                     callgrind need it)\n"
"  --no-report        write the profile only\n"
"  --stacks           also write GMON.stacks for flame graphs (PC_STACKS=1)\n"
"  --timeline         also write GMON.timeline: each sample's time and thread,\n"
"                     and the program's markers (PC_TIMELINE=1; --format\n"
"                     firefox, report --timeline)\n"
"  --clock wall       record a wall-clock profile (PC_CLOCK=wall): every\n"
"                     thread's CPU samples and the time it spent off the CPU,\n"
"                     with the stack it blocked at and what it waited for;\n"
"                     the report shows wall seconds (--clock cpu: CPU\n"
"                     profile, the default), and DIR/gmon.wall is written\n"
"                     beside DIR/gmon.out: the first process's wall time for\n"
"                     gprof (gprof PROG DIR/gmon.wall)\n"
"  --no-callgraph     record the flat profile only (PC_CALLGRAPH=0)\n"
"  --alloc            profile allocations too (PC_ALLOC=1): the report is\n"\
"                     the allocation sites' table and the leaks at exit\n"\
"                     (--metric M: the profile of M instead), and\n"\
"                     DIR/gmon.out.alloc is written beside DIR/gmon.out;\n"
"                     libpc-alloc.so, which holds the malloc hooks, is\n"
"                     preloaded first (without --alloc: no hooks at all)\n"
"  --no-cpu           with --alloc: the allocations alone, no CPU samples\n"
"                     (PC_ALLOC=only: no thread has a timer)\n"
"  --main-only        profile the executable's own code only (PC_SCOPE=main):\n"
"                     the report is of the first process, and its time in\n"
"                     libraries is one [outside the executable] line; DIR/PROG\n"
"                     links to the program (pcprof report DIR finds it)\n"
"  --wait             when CMD ends, wait for the processes of the run it left\n"
"                     running (in the background) and report them too\n"
"  -v, --verbose      libpc's summary line at exit (PC_VERBOSE=1)\n"
"\n"
REPORT_OPTIONS_HELP
"\n"
"Environment read by libpc.so in CMD (see libpc(7)):\n"
"  PC_OUT           output file, relative to CMD's starting directory;\n"
"                   processes started under CMD write PC_OUT.<prog>.<pid>\n"
"  GMON_OUT_PREFIX  write PREFIX.<pid> as glibc does (when PC_OUT is unset)\n"
"  PC_HZ            sampling rate per thread CPU second, 1 to 1000000 (1000)\n"
"  PC_TIMER         auto (default: task-clock where a sample of it costs under\n"
"                   5 us, as measured at start-up, else POSIX timers), posix\n"
"                   or taskclock\n"
"  PC_SIGNAL        sampling signal: auto (default: a real-time signal the\n"
"                   program leaves alone), SIGPROF, SIGRTMIN+N, a number\n"
"  PC_VERBOSE       1: one summary line on stderr at exit\n"
"  PC_CALLGRAPH     0: no call graph (default 1)\n"
"  PC_SCOPE         main (default): the executable; all: every shared\n"
"                   object, each in PC_OUT+NAME, listed in PC_OUT.objects\n"
"  PC_UNWIND        dwarf (default), fp or libunwind\n"
"  PC_DEPTH         frames walked per sample, 2 to 256 (128)\n"
"  PC_ARCS          size of the arc table, 1024 to 67108864 (65536)\n"
"  PC_STACKS        1 or a path: write sampled stacks for flame graphs\n"
"  PC_CLOCK         wall: a wall-clock profile, off-CPU time too (--clock)\n"
"  PC_WALL_HZ       the wall clock's rounds a second (100)\n"
"  PC_WALL_BUDGET   the wall clock's CPU at most, percent of one CPU (1)\n"
"  PC_ALLOC         1: profile allocations too (--alloc), into PC_OUT.alloc;\n"
"                   only: allocations alone (--alloc --no-cpu); set by\n"
"                   hand, preload libpc-alloc.so too\n"
"  PC_ALLOC_RATE    bytes between allocation samples, on average (512k);\n"
"                   1: every allocation, exact\n"
"  PC_STACKS_MB     memory for distinct stacks, 1 to 4096 (32)\n"
"  PC_TIMELINE      1: keep each sample's time and thread, and markers\n"
"  PC_TIMELINE_MAX  samples the timeline keeps, 64 to 67108864 (262144)\n"
"  PC_LIVE_MAX      the most the live file takes on disk or in memory,\n"
"                   as 512K, 64M or 1G (0: no cap, the default)\n"
"  PC_SNAPSHOT_SIGNAL    a signal that writes a snapshot of the profile\n"
"  PC_SNAPSHOT_INTERVAL  seconds between snapshots\n"
"  PC_ROOT          set by libpc: the pid of the run's first process\n"
"\n"
"libpc.so is looked for beside the pcprof binary, then in " PC_LIBDIR ".\n";

/* functions in the text report of `pcprof run` unless --top says */
#define RUN_TOP	25

enum { OPT_HZ = 300, OPT_SIGNAL, OPT_REPORT, OPT_NO_REPORT, OPT_STACKS_ON,
	OPT_NO_CALLGRAPH, OPT_ALL_OBJECTS, OPT_MAIN_ONLY, OPT_WAIT,
	OPT_TIMELINE_ON, OPT_NO_CPU };

/* Whether dir holds a file that libpc writes (gmon.out and its kin). */
static int
holds_a_profile(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int r = 0;

	if (!d)
		return 0;
	while (!r && (e = readdir(d)))
		r = !strncmp(e->d_name, "gmon.out", 8);
	closedir(d);
	return r;
}

/* The lock on the run directory, held until pcprof ends. */
static int claim_fd = -1;

/*
 * dir for this run alone, or why not. The claim is an exclusive flock of
 * the directory: two runs started at once cannot both hold it (the check
 * for profiles alone let five runs share one directory), the kernel drops
 * it when pcprof ends however it ends, so that no stale claim outlives a
 * killed run, and it puts no file in dir for reports to pass over.
 */
static const char *
claim(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return strerror(errno);
	if (flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK) {
		close(fd);
		return "another pcprof run is writing there";
	}
	/* (a file system without locks leaves the check below alone, as it
	 * was.) Looked at under the lock: a run that held it wrote its
	 * profiles before it let go. One run a directory: two runs'
	 * processes would read as one run's. */
	if (holds_a_profile(dir)) {
		close(fd);
		return "holds an earlier run's profiles (remove them or name another directory)";
	}
	claim_fd = fd;
	return NULL;
}

/*
 * The run directory in dir: want, made if it is not there, or a new
 * pcprof-PROG-YYYYMMDD-HHMMSS[-N] in the current directory; *made when
 * this run made it. It must hold no profile yet, nor be another run's.
 * NULL, or why there can be none.
 */
static const char *
run_dir(const char *want, const char *exe, char *dir, size_t size, int *made)
{
	const char *prog = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	struct stat sb;

	if (want) {
		snprintf(dir, size, "%s", want);
		if (strlen(want) >= size - 16)
			return "the name is too long";
		if (stat(want, &sb) == 0) {
			if (!S_ISDIR(sb.st_mode))
				return "not a directory";
			if (access(want, W_OK | X_OK))
				return "cannot write there";
		} else if (mkdir(want, 0777) == 0) {
			*made = 1;
		} else if (errno != EEXIST) {	/* made by another run meanwhile */
			return errno == ENOENT ? "its parent directory does not exist" :
			       strerror(errno);
		}
		return claim(want);
	}
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	for (int i = 1; i < 1000; i++) {
		if (i == 1)
			snprintf(dir, size, "pcprof-%.100s-%s", prog, stamp);
		else
			snprintf(dir, size, "pcprof-%.100s-%s-%d", prog, stamp, i);
		if (mkdir(dir, 0777) == 0) {
			*made = 1;
			return claim(dir);
		}
		if (errno != EEXIST)
			return strerror(errno);
	}
	return "too many run directories of this second";
}

/*
 * A wall-clock run's gmon file for gprof (wallgmon.h): the wall time of
 * the run's first process (profile, its program named by its manifest, or
 * exe where it has none) as gmon.wall beside its gmon.out. Made in this
 * process: what it calls returns its errors as values (issue 37), so a
 * failure is its one line and never the run's status; out of memory ends
 * pcprof with the program's status (pc_oom_status, set by cmd_run).
 */
static void
wall_gmon(const char *exe, const char *profile, const struct symtab_opts *s)
{
	struct gmon_objects o = { 0 };
	struct gmon_profile p;
	struct pc_inputs in;
	char *files[1], *path, *slash;
	int manifest;

	if (!stacks_profile_is_wall(profile))
		return;
	manifest = runfiles_has_manifest(profile);
	if (manifest && runfiles_read_manifest(profile, &o))
		return;
	files[0] = pc_strdup(profile);
	path = pc_malloc(strlen(profile) + 16);
	strcpy(path, profile);
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, RUNFILES_WALL_GMON);
	/* what a failure leaves allocated is left: pcprof ends soon; each
	 * failure said its one line, and the program's status stands
	 * (test_errors37) */
	if (!inputs_open(&in, manifest && o.n ? o.v[0].path : exe, files, 1, s,
			 INPUTS_AS_GIVEN) &&
	    !wallgmon_build(&p, &in, 0, NULL, PC_CLOCK_WALL) &&
	    !gmon_write_file(path, &p)) {
		gmon_profile_release(&p);
		inputs_close(&in);
	}
	if (manifest)
		gmon_objects_release(&o);
	free(files[0]);
	free(path);
}

/*
 * --main-only: DIR/PROG, a link to the program, beside its plain
 * gmon.out, which names no program: pcprof report DIR finds the program
 * there by its build-id (findexe.c), and gprof DIR/PROG DIR/gmon.out
 * reads it. Nothing where DIR/PROG is there already.
 */
static void
link_program(const char *dir, const char *exe)
{
	const char *prog = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	char abs[PATH_MAX], *link;

	if (!realpath(exe, abs) || asprintf(&link, "%s/%s", dir, prog) < 0)
		return;
	if (symlink(abs, link) && errno != EEXIST)
		pc_warn("cannot link '%s' to its program: %s", link, strerror(errno));
	free(link);
}

static void
setenv_or_die(const char *k, const char *v)
{
	if (setenv(k, v, 1))
		pc_fatal("cannot set %s: %s", k, strerror(errno));
}

/* What pcprof run was asked for. */
struct run_opts {
	struct report_opts r;
	struct symtab_opts s;
	const char *outdir, *report_to;
	int no_report, main_only, wait;
	int no_cpu;		/* --no-cpu: allocations alone */
	struct run_listing listing;	/* the run directory, listed once after CMD */
};

/* An option that is a libpc setting: set its variable to its value (or
 * the option's argument); 0 when c is not one. */
static int
env_option(int c, const char *arg)
{
	static const struct { int opt; const char *var, *value; } env[] = {
		{ OPT_HZ, "PC_HZ", NULL }, { OPT_SIGNAL, "PC_SIGNAL", NULL },
		{ OPT_STACKS_ON, "PC_STACKS", "1" },
		{ OPT_TIMELINE_ON, "PC_TIMELINE", "1" },
		{ OPT_NO_CALLGRAPH, "PC_CALLGRAPH", "0" },
		{ 'v', "PC_VERBOSE", "1" },
	};

	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		if (c == env[i].opt) {
			setenv_or_die(env[i].var, env[i].value ? env[i].value : arg);
			return 1;
		}
	return 0;
}

/* pcprof run's options: the report's and libpc's settings */
static const struct option run_longopts[] = {
	REPORT_LONGOPTS,
	{ "output", required_argument, NULL, 'o' },
	{ "hz", required_argument, NULL, OPT_HZ },
	{ "signal", required_argument, NULL, OPT_SIGNAL },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "no-report", no_argument, NULL, OPT_NO_REPORT },
	{ "stacks", no_argument, NULL, OPT_STACKS_ON },
	{ "timeline", no_argument, NULL, OPT_TIMELINE_ON },
	{ "no-callgraph", no_argument, NULL, OPT_NO_CALLGRAPH },
	{ "all-objects", no_argument, NULL, OPT_ALL_OBJECTS },	/* the default */
	{ "main-only", no_argument, NULL, OPT_MAIN_ONLY },
	{ "wait", no_argument, NULL, OPT_WAIT },
	{ "no-cpu", no_argument, NULL, OPT_NO_CPU },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0, 0, 0, 0 }
};

/* --alloc, --metric: libpc profiles allocations too (--no-cpu: alone, no
 * thread sampled). */
static void
alloc_environment(const struct run_opts *o)
{
	if (o->no_cpu && !alloc_asked(&o->r))
		pc_fatal("--no-cpu: nothing left to record; with --alloc (or --metric), the "
			 "allocations alone");
	if (alloc_asked(&o->r))
		setenv_or_die("PC_ALLOC", o->no_cpu ? "only" : "1");
}

/* Parse the options into o (libpc's settings go to the environment);
 * -1 to go on, or the status to exit with. */
static int
run_options(int argc, char **argv, struct run_opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "+ho:v", run_longopts, NULL)) != -1) {
		if (env_option(c, optarg))
			continue;
		switch (c) {
		case 'h':
			report_usage(stdout, usage_run);
			return 0;
		case 'o':
			o->outdir = optarg;
			break;
		case OPT_REPORT:
			o->report_to = optarg;
			break;
		case OPT_NO_REPORT:
		case OPT_WAIT:
		case OPT_NO_CPU:
			*(c == OPT_WAIT ? &o->wait : c == OPT_NO_CPU ? &o->no_cpu :
			  &o->no_report) = 1;
			break;
		case OPT_ALL_OBJECTS:
		case OPT_MAIN_ONLY:
			o->main_only = c == OPT_MAIN_ONLY;
			break;
		default:
			if (!report_option(c, optarg, &o->r, &o->s)) {
				report_usage(stderr, usage_run);
				return EXIT_BAD_INPUT;
			}
		}
	}
	if (optind >= argc) {
		report_usage(stderr, usage_run);
		return EXIT_BAD_INPUT;
	}
	/* a file for another tool goes to a file, not into the program's
	 * standard error */
	if (FORMAT_IS_EXPORT(o->r.format) && !o->report_to && !o->no_report)
		pc_fatal("--format %s: a file for another tool: name it with --report FILE",
			 export_format_name(o->r.format));
	/* a screenful for people; everything for machines */
	if (o->r.top < 0)
		o->r.top = o->r.format == FORMAT_TEXT ? RUN_TOP : 0;
	/* --clock wall (or off, the waits alone): libpc records the wall
	 * clock, stacks and all; cpu, as without */
	if (o->r.clock == PC_CLOCK_WALL || o->r.clock == PC_CLOCK_OFF)
		setenv_or_die("PC_CLOCK", "wall");
	else if (o->r.clock == PC_CLOCK_CPU)
		unsetenv("PC_CLOCK");
	alloc_environment(o);
	return -1;
}

/* The child's environment: libpc preloaded (launch_preload, the ASan
 * runtime first where exe links it) unless
 * unprofiled, writing output (PATH_MAX + 16 bytes) in dir or, with no
 * dir, gmon.out here. */
static void
set_environment(const char *lib, int unprofiled, int main_only, const char *exe,
		const char *dir, char *output)
{
	if (!unprofiled && launch_preload(lib, exe))
		pc_fatal("cannot set LD_PRELOAD: %s", strerror(errno));
	if (!unprofiled)
		launch_itt(lib);
	if (!unprofiled)
		launch_alloc(lib);
	if (dir[0]) {
		/* absolute: processes that change directory write here too */
		char abs[PATH_MAX];

		snprintf(output, PATH_MAX + 16, "%s/gmon.out",
			 !unprofiled && realpath(dir, abs) ? abs : dir);
	} else {
		snprintf(output, PATH_MAX + 16, "gmon.out");
	}
	setenv_or_die("PC_OUT", output);
	setenv_or_die("PC_SCOPE", main_only ? "main" : "all");
	unsetenv("GMON_OUT_PREFIX");
}

/* One line on why the run's first process wrote no profile. */
static void
no_profile(const char *output, int status)
{
	if (WIFSIGNALED(status))
		pc_warn("'%s': no profile was written (the program was killed by a signal)",
			output);
	/* ASan's status when it will not start behind libpc.so: launch_preload
	 * puts its runtime first only for a command that links it itself,
	 * not for one that a script starts */
	else if (WEXITSTATUS(status) == 1)
		pc_warn("'%s': no profile was written (the program exited with status 1 "
			"without returning from main or calling exit; if AddressSanitizer "
			"refused to start above, run again with "
			"ASAN_OPTIONS=verify_asan_link_order=0 or its runtime first in "
			"LD_PRELOAD)", output);
	else
		pc_warn("'%s': no profile was written (the program did not return from main "
			"or call exit)", output);
}

/*
 * --wait: the processes of the run that CMD left running, waited for
 * until they end or pcprof is told to stop: CMD's orphans, which came to
 * pcprof (a subreaper), reaped as they end, and any other process whose
 * live file in dir says it still runs (one that left the tree).
 */
static void
wait_for_the_rest(const char *dir)
{
	while (!launch_stopped()) {
		pid_t p = waitpid(-1, NULL, WNOHANG);

		if (p > 0)
			continue;
		if (p < 0 && errno == ECHILD && !recover_running(dir))
			return;
		nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
	}
}

/*
 * The processes that CMD left running, in one line: pcprof's descendants,
 * CMD's orphans having come to it, whether or not they have loaded
 * libpc yet. With report, those with a live file that runs are left to
 * the report, which names them; then only those with none, not under
 * libpc yet, which no report could name.
 */
static void
name_the_rest(const char *dir, const char *cmd, int report)
{
	pid_t *pid;
	size_t n = launch_descendants(&pid), k = 0;
	char list[512] = "", prog[256];
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		if (report && recover_live_runs(dir, pid[i]))
			continue;
		if (k++ < 4 && len < sizeof(list)) {
			recover_program_of(pid[i], prog, sizeof(prog));
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						"%spid %d, %s", k > 1 ? "; " : "",
						(int)pid[i], prog);
		}
	}
	free(pid);
	if (!k)
		return;
	/* raw names: pc_warn escapes the whole line once */
	if (report)
		pc_warn("%zu process%s that '%s' started still running with no profile yet "
			"(%s%s): the report leaves %s out (pcprof run --wait waits for them)",
			k, k == 1 ? "" : "es", cmd, list, k > 4 ? "; ..." : "",
			k == 1 ? "it" : "them");
	else
		pc_warn("%zu process%s that '%s' started still running (%s%s); `pcprof report "
			"%s` when %s (pcprof run --wait waits for them)", k, k == 1 ? "" : "es",
			cmd, list, k > 4 ? "; ..." : "", dir, k == 1 ? "it ends" : "they end");
}

/*
 * What a profiled run does once CMD has ended, before its report: --wait
 * for what CMD left running; dir listed, once, into o->listing, which
 * the report reads; the profiles of processes that ended without writing theirs
 * (killed) finished; one line on those still running that the report
 * does not name (without a report, all of them); a wall-clock run's
 * gmon.wall; --main-only's link to its program.
 */
static void
after_the_command(struct run_opts *o, const char *dir, const char *exe,
		  const char *output, const char *cmd)
{
	struct stat sb;

	if (o->wait)
		wait_for_the_rest(dir);
	/* no directory (a program run unprofiled), or one gone: the report
	 * says why, in its one line */
	if (dir[0] && !access(dir, R_OK | X_OK) && !recover_list(&o->listing, dir) &&
	    recover_listed(&o->listing, 0) >= 0)
		o->r.listing = &o->listing;
	if (!o->wait || launch_stopped())
		name_the_rest(dir, cmd, !o->no_report && !o->main_only);
	if (stat(output, &sb) == 0)
		wall_gmon(exe, output, &o->s);
	if (o->main_only && dir[0])
		link_program(dir, exe);
}

int
cmd_run(int argc, char **argv)
{
	struct symtab_fetch fetch = { 0 };	/* the report's */
	struct run_opts o = { .r = { .format = FORMAT_TEXT, .top = -1 },
			      .s = { .fetch = &fetch } };
	const char *why;
	char lib[PATH_MAX], exe[PATH_MAX];
	char dir[PATH_MAX] = "", output[PATH_MAX + 16];
	int unprofiled = 0, made = 0, status, had_before, err;
	struct stat before, after;
	struct launch cmd = { .group = LAUNCH_GROUP_UNLESS_FRONT,
			      .stops = LAUNCH_STOPS_PASS };

	if ((status = run_options(argc, argv, &o)) >= 0)
		return status;
	/* found before anything is made: a mistyped command leaves nothing */
	if ((err = launch_find(argv[optind], exe, sizeof(exe))))
		return launch_not_found(argv[optind], exe, err);
	if (libpc_find(lib, sizeof(lib)))
		pc_fatal("cannot find libpc.so beside pcprof or in %s", PC_LIBDIR);
	if ((why = launch_why_unprofilable(exe))) {
		pc_warn("'%s' cannot be profiled: %s; running it unprofiled", exe, why);
		o.no_report = 1;
	} else if ((why = run_dir(o.outdir, exe, dir, sizeof(dir), &made))) {
		pc_warn("'%s': %s; running '%s' unprofiled", o.outdir ? o.outdir : dir,
			why, argv[optind]);
		o.no_report = unprofiled = 1;
	}
	/* CMD's orphans (its background processes) come to pcprof, which
	 * names them or, with --wait, waits for them after CMD, whether or
	 * not they have loaded libpc yet */
	if (!unprofiled && prctl(PR_SET_CHILD_SUBREAPER, 1) && o.wait)
		pc_warn("cannot wait for CMD's background processes: %s", strerror(errno));
	cmd.exe = exe;
	cmd.argv = argv + optind;
	set_environment(lib, unprofiled, o.main_only, exe, dir, output);
	had_before = stat(output, &before) == 0;
	if (!launch_run(&cmd)) {
		if (made)
			rmdir(dir);	/* nothing ran to write in it */
		return launch_end_like(cmd.status);
	}
	status = cmd.status;
	/* out of memory in what follows ends pcprof as CMD ended */
	pc_oom_status = WIFEXITED(status) ? WEXITSTATUS(status) :
			WIFSIGNALED(status) ? 128 + WTERMSIG(status) : EXIT_BAD_INPUT;
	if (!unprofiled)
		after_the_command(&o, dir, exe, output, argv[optind]);
	if (!o.no_report) {
		if (stat(output, &after) || (had_before && after.st_ino == before.st_ino &&
		    after.st_mtime == before.st_mtime && after.st_dev == before.st_dev))
			no_profile(output, status);
		else
			run_report(exe, o.main_only || alloc_asked(&o.r) ? output : dir,
				   o.main_only || alloc_asked(&o.r), o.report_to, status,
				   &o.r, &o.s);
	}
	return launch_end_like(status);
}
