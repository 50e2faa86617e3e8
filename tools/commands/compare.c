/*
 * pcprof compare: the CI gate in one command. Runs a base and a new
 * command in turns under libpc.so (base, new, base, new, ...), each run
 * recorded whole in a directory of its own, after one warm-up pair that is
 * discarded; makes a run again when it was clearly disturbed (its wall
 * time far above its CPU time, where the side's other runs' are not);
 * fixes the number of runs from the budget and the warm-up pair's
 * length; then gates on the runs with pcprof diff's test (diff_gate), its
 * verdict headed by the experiment's figures. Exit 0, 1 (a significant
 * regression) or 2 (bad usage, a command that fails or writes no
 * profile); on 2 nothing it made is left behind.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"	/* PC_LIBDIR, written by the Makefile */
#include "pcprof.h"
#include "inputs/runfiles.h"
#include "commands/options.h"
#include "model/diff.h"
#include "model/stats.h"

static const char usage_compare[] =
"usage: pcprof compare [OPTIONS] --base CMD [ARGS...] --new CMD [ARGS...]\n"
"\n"
"Run the base and the new command in turns under libpc.so, base, new, base,\n"
"new, ..., each run profiled whole, after a warm-up pair that is discarded,\n"
"then compare them function by function as pcprof diff does and exit 1 if\n"
"the new command is significantly slower anywhere: a CI performance gate in\n"
"one line. The number of runs is fixed after the warm-up pair, so that the\n"
"measured runs of each side take about --budget; a run whose wall time is\n"
"far above its CPU time, where the side's other runs' are not, was\n"
"disturbed (another process had its CPU) and is made again. Each command\n"
"must do a fixed amount of work and exit 0; its standard input is\n"
"/dev/null and its output goes to a file in its run's directory. The first\n"
"--new after --base ends the base command.\n"
"\n"
"Options:\n"
"  --budget TIME      wall time of each side's measured runs: 60 (seconds),\n"
"                     90s, 2m, 1h (default 60s; 3 to 1000 runs a side)\n"
"  --runs N           N runs a side instead, 2 to 1000\n"
"  -o, --output DIR   keep the runs in DIR (made if missing, else empty):\n"
"                     DIR/base-001, DIR/new-001, ... (default: a temporary\n"
"                     directory, removed)\n"
"  --program PATH     the program whose processes are compared, when the\n"
"                     command is a script that runs it (default: CMD)\n"
"  --timer T          taskclock (default where perf events are allowed) or\n"
"                     posix (one signal a kernel tick at most)\n"
"  --hz N             samples a CPU second (default 10000 with taskclock,\n"
"                     1000 with posix)\n"
"  -q, --quiet        no progress lines on standard error\n"
"  --flame FILE       also write the differential flame graph (SVG) of the\n"
"                     new side's last run (the runs record their stacks)\n"
"  --threshold PCT    smallest change that fails, percent of the function's\n"
"                     base seconds (default 2)\n"
"  --min-seconds S    and in seconds a run (default 0.1 % of the base warm-up\n"
"                     run's CPU time)\n"
"  --metric, --alpha, --format text|json|markdown, --top, --absolute,\n"
"  --keep-pieces, --no-demangle, --full-names, --debug-dir DIR\n"
"                     as for pcprof diff\n"
"\n"
"Exit status: 0 no significant regression, 1 a significant regression,\n"
"2 bad usage, a command that failed, or runs that could not be compared.\n";

enum { OPT_BUDGET = 700, OPT_RUNS, OPT_PROGRAM, OPT_TIMER, OPT_HZ_C };

/* the smallest change that fails: 2 % of the function's seconds, and
 * 0.1 % of the base warm-up run's CPU time (not pcprof diff's 5 % and
 * 0.01 s a run, which let a gate that runs short runs miss a 5 % slowdown) */
#define COMPARE_THRESHOLD	0.02
#define COMPARE_MIN_SHARE	0.001
/* the fewest runs a side that measure run-to-run variation, by budget */
#define MIN_RUNS	3
/* and the most: a run shorter than a thousandth of the budget is a
 * benchmark too short to time */
#define MAX_RUNS	1000
/* a run whose wall / CPU is this much over its side's median was disturbed */
#define DISTURBED	1.25
/* and a disturbed run is made again this often in a row, at most */
#define AGAIN_MAX	3

struct command {
	char **argv;
	int argc;
	char exe[PATH_MAX];
	char *line;		/* argv as one line, for the output */
};

struct compare {
	struct diff_opts d;
	struct symtab_opts s;
	struct experiment e;
	struct command cmd[2];
	double budget;
	int runs, quiet, taskclock, budget_given;
	long hz;
	const char *program;
	char lib[PATH_MAX];
	char dir[PATH_MAX];	/* the runs' directory, absolute */
	int made_dir;		/* it was made here (else it was empty) */
	char **names[2];	/* the measured runs' directories */
	char exe[2][PATH_MAX];	/* the program each side's runs compare */
	double *q[2];		/* wall / CPU of a side's kept runs, the
				 * warm-up's first */
	int nq[2];
};

/*
 * What is removed at exit unless the runs are to be kept: the run
 * directories compare made in cleanup_dir, each with the files in it
 * (libpc writes files only), by descriptor and never through a symlink;
 * then cleanup_dir itself if compare made it and it is empty by then.
 * Nothing else in it is touched.
 */
static const char *cleanup_dir;
static int cleanup_self;
static char **made;		/* names of run directories in cleanup_dir */
static size_t nmade;
static volatile sig_atomic_t stop_sig;
static sigset_t stop_set;	/* the signals that stop compare: */
static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
#define NSTOP (sizeof(stop_sigs) / sizeof(stop_sigs[0]))

/* Remove run directory name from the directory open as top. */
static void
remove_run_dir(int top, const char *name)
{
	int fd = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;

	if (fd >= 0 && (d = fdopendir(fd))) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(fd, e->d_name, 0);
		closedir(d);
	} else if (fd >= 0) {
		close(fd);
	}
	unlinkat(top, name, AT_REMOVEDIR);
}

static void
cleanup(void)
{
	int top;

	if (!cleanup_dir)
		return;
	top = open(cleanup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0)
		return;
	for (size_t i = 0; i < nmade; i++)
		if (made[i])
			remove_run_dir(top, made[i]);
	close(top);
	if (cleanup_self)
		rmdir(cleanup_dir);
}

/* Note a run directory made in cleanup_dir, to be removed on a failure. */
static void
note_made(const char *name)
{
	char **v = realloc(made, (nmade + 1) * sizeof(*v));

	if (!v || !(v[nmade] = strdup(name)))
		pc_fatal("out of memory");
	made = v;
	nmade++;
}

/* The process group of the run under way, 0 between runs. */
static volatile sig_atomic_t child_group;

/* A stop asked for: the run under way is ended from here (no wake-up to
 * lose), with SIGKILL at the second asking. AS-safe. */
static void
on_signal(int sig)
{
	int saved = errno;
	pid_t g = (pid_t)child_group;

	if (g > 0)
		kill(-g, stop_sig ? SIGKILL : SIGTERM);
	stop_sig = sig;
	errno = saved;
}

/* "60", "90s", "2m", "1h": seconds. */
static double
parse_budget(const char *arg)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(arg, &end);
	if (end != arg && !errno && isfinite(x) && x > 0) {
		if (!strcmp(end, "") || !strcmp(end, "s"))
			return x;
		if (!strcmp(end, "m"))
			return 60 * x;
		if (!strcmp(end, "h"))
			return 3600 * x;
	}
	pc_fatal("--budget '%s': not a time (60, 90s, 2m, 1h)", arg);
}

static long
parse_count(const char *opt, const char *arg, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (end == arg || *end || errno || v < lo || v > hi)
		pc_fatal("%s '%s': not a whole number from %ld to %ld", opt, arg, lo, hi);
	return v;
}

/* compare's own options; 0 when c is not one. */
static int
compare_option(struct compare *c, int opt, const char *arg)
{
	switch (opt) {
	case OPT_BUDGET:
		c->budget = parse_budget(arg);
		c->budget_given = 1;
		return 1;
	case OPT_RUNS:
		c->runs = (int)parse_count("--runs", arg, 2, MAX_RUNS);
		return 1;
	case 'o':
		if (!*arg || strlen(arg) >= sizeof(c->dir) - 64)
			pc_fatal("-o '%s': %s", arg, *arg ? "the name is too long" : "no name");
		snprintf(c->dir, sizeof(c->dir), "%s", arg);
		return 1;
	case OPT_PROGRAM:
		c->program = arg;
		return 1;
	case OPT_TIMER:
		if (strcmp(arg, "taskclock") && strcmp(arg, "posix"))
			pc_fatal("--timer '%s': not taskclock or posix", arg);
		c->taskclock = !strcmp(arg, "taskclock");
		return 1;
	case OPT_HZ_C:
		c->hz = parse_count("--hz", arg, 1, 1000000);
		return 1;
	case 'q':
		c->quiet = 1;
		return 1;
	}
	return 0;
}

/* The options before --base; -1 to go on, or the status to exit with. */
static int
parse_options(struct compare *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		DIFF_LONGOPTS,
		{ "flame", required_argument, NULL, OPT_FLAME },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "runs", required_argument, NULL, OPT_RUNS },
		{ "output", required_argument, NULL, 'o' },
		{ "program", required_argument, NULL, OPT_PROGRAM },
		{ "timer", required_argument, NULL, OPT_TIMER },
		{ "hz", required_argument, NULL, OPT_HZ_C },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+ho:q", longopts, NULL)) != -1) {
		if (compare_option(c, opt, optarg) || diff_option(opt, optarg, &c->d, &c->s))
			continue;
		if (opt == 'h') {
			fputs(usage_compare, stdout);
			return 0;
		}
		fputs(usage_compare, stderr);
		return EXIT_BAD_INPUT;
	}
	if (c->runs && c->budget_given)
		pc_fatal("compare: --budget and --runs: give one (the runs a side, or the time "
			 "to fill with them)");
	if (optind < argc) {
		pc_warn("compare: '%s': an argument before --base", argv[optind]);
		fputs(usage_compare, stderr);
		return EXIT_BAD_INPUT;
	}
	return -1;
}

/* argv as one line, each word quoted where a shell would need it. */
static char *
command_line(char **argv, int argc)
{
	size_t cap = 1;
	char *s, *p;

	for (int i = 0; i < argc; i++)
		cap += 4 * strlen(argv[i]) + 3;
	if (!(s = p = malloc(cap)))
		pc_fatal("out of memory");
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		int plain = *a && !a[strcspn(a, " \t\n'\"\\$`|&;<>()*?[]{}~!#")];

		if (i)
			*p++ = ' ';
		if (plain) {
			p = stpcpy(p, a);
			continue;
		}
		*p++ = '\'';
		for (; *a; a++)
			p = *a == '\'' ? stpcpy(p, "'\\''") : (*p = *a, p + 1);
		*p++ = '\'';
	}
	*p = 0;
	return s;
}

/* One command, its words from..to (exclusive), resolved as execvp would. */
static void
set_command(struct command *cmd, const char *side, char **argv, int from, int to)
{
	const char *why;

	if (from >= to)
		pc_fatal("compare: --%s names no command", side);
	cmd->argc = to - from;
	if (!(cmd->argv = calloc((size_t)cmd->argc + 1, sizeof(*cmd->argv))))
		pc_fatal("out of memory");
	memcpy(cmd->argv, argv + from, (size_t)cmd->argc * sizeof(*cmd->argv));
	cmd->line = command_line(cmd->argv, cmd->argc);
	if (run_find_command(cmd->argv[0], cmd->exe, sizeof(cmd->exe)))
		pc_fatal("compare: the %s command '%s': command not found", side, cmd->argv[0]);
	if ((why = run_why_unprofilable(cmd->exe)))
		pc_fatal("compare: the %s command '%s' cannot be profiled: %s", side,
			 cmd->exe, why);
}

/* Split the command line at --base and --new; -1 to go on, or a status. */
static int
parse_args(struct compare *c, int argc, char **argv)
{
	int ib = -1, in = -1, r;

	for (int i = 1; i < argc && in < 0; i++) {
		if (ib < 0 && !strcmp(argv[i], "--base"))
			ib = i;
		else if (ib >= 0 && !strcmp(argv[i], "--new"))
			in = i;
		else if (ib < 0 && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
			fputs(usage_compare, stdout);
			return 0;
		}
	}
	if (ib < 0) {
		pc_warn("compare: no --base command");
		fputs(usage_compare, stderr);
		return EXIT_BAD_INPUT;
	}
	if ((r = parse_options(c, ib, argv)) >= 0)
		return r;
	if (in < 0) {
		pc_warn("compare: no --new command after --base");
		fputs(usage_compare, stderr);
		return EXIT_BAD_INPUT;
	}
	set_command(&c->cmd[0], "base", argv, ib + 1, in);
	set_command(&c->cmd[1], "new", argv, in + 1, argc);
	return -1;
}

/* Whether this process may open a task-clock event on itself, as libpc
 * will in the commands (perf_event_paranoid, seccomp); 0 or an errno. */
static int
taskclock_refused(void)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = 100000;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	if (getenv("PC_TEST_REFUSE_PERF"))
		return EACCES;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* The runs' directory: -o's, made or empty, or a new temporary one. */
static void
make_dir(struct compare *c)
{
	char abs[PATH_MAX];

	if (!c->dir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(c->dir, sizeof(c->dir), "%s/pcprof-compare-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(c->dir))
			pc_fatal("'%s': %s", c->dir, strerror(errno));
		c->made_dir = 1;
	} else if (mkdir(c->dir, 0777) == 0) {
		c->made_dir = 1;
	} else if (errno != EEXIST) {
		pc_fatal("'%s': %s", c->dir, strerror(errno));
	} else {
		DIR *d = opendir(c->dir);
		struct dirent *ent;
		int n = 0;

		if (!d)
			pc_fatal("'%s': %s", c->dir, strerror(errno));
		while ((ent = readdir(d)))
			n += strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..");
		closedir(d);
		if (n)
			pc_fatal("'%s': not empty (name a new or an empty directory for the runs)",
				 c->dir);
	}
	if (!realpath(c->dir, abs))
		pc_fatal("'%s': %s", c->dir, strerror(errno));
	snprintf(c->dir, sizeof(c->dir), "%s", abs);
	cleanup_dir = c->dir;
	cleanup_self = c->made_dir;
	atexit(cleanup);
}

/* libpc's settings for every run; PC_OUT is set in each run's child. */
static void
set_environment(const struct compare *c)
{
	const char *preload = getenv("LD_PRELOAD");
	char hz[32], *v;
	int stacks = c->d.flame != NULL;

	if (preload && *preload) {
		if (asprintf(&v, "%s:%s", preload, c->lib) < 0)
			pc_fatal("out of memory");
	} else if (!(v = strdup(c->lib))) {
		pc_fatal("out of memory");
	}
	snprintf(hz, sizeof(hz), "%ld", c->hz);
	if (setenv("LD_PRELOAD", v, 1) || setenv("PC_SCOPE", "all", 1) ||
	    setenv("PC_TIMER", c->taskclock ? "taskclock" : "posix", 1) ||
	    setenv("PC_HZ", hz, 1) ||
	    /* stacks need the call graph; self time does not, and the walk
	     * costs the program time */
	    setenv("PC_CALLGRAPH", stacks || c->d.metric == METRIC_TOTAL ? "1" : "0", 1) ||
	    (stacks && setenv("PC_STACKS", "1", 1)))
		pc_fatal("cannot set libpc's environment: %s", strerror(errno));
	free(v);
	unsetenv("GMON_OUT_PREFIX");
	unsetenv("PC_OUT");
	if (!stacks)
		unsetenv("PC_STACKS");
}

/* SIGPIPE as compare found it, for the commands: compare ignores it, so
 * that a closed output fails its write (and the runs are cleaned up)
 * instead of killing it. */
static struct sigaction pipe_as_found;

/* fd onto want, with its close-on-exec flag clear: 0, or -1. */
static int
onto(int fd, int want)
{
	if (fd == want)
		return fcntl(fd, F_SETFD, 0);
	return dup2(fd, want) < 0 ? -1 : 0;
}

/*
 * The run's child: a process group of its own (compare stops all of it),
 * input from /dev/null, output to the run's log, the signals as compare
 * was given them (exec resets those compare catches; an ignored one
 * stays ignored, as it would have without compare).
 */
static void __attribute__((noreturn))
child(const struct command *cmd, const char *out, const char *log, const sigset_t *mask)
{
	int in = open("/dev/null", O_RDONLY);
	int lf = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);

	setpgid(0, 0);
	sigaction(SIGPIPE, &pipe_as_found, NULL);
	/* compare's handlers are not the command's: until exec resets them,
	 * a stop must end it */
	for (size_t i = 0; i < NSTOP; i++) {
		struct sigaction sa;

		if (sigaction(stop_sigs[i], NULL, &sa) == 0 && sa.sa_handler == on_signal)
			signal(stop_sigs[i], SIG_DFL);
	}
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (in < 0 || lf < 0 || onto(in, 0) || onto(lf, 1) || onto(lf, 2))
		_exit(126);
	if (in > 2)
		close(in);
	if (lf > 2)
		close(lf);
	setenv("PC_OUT", out, 1);
	execv(cmd->exe, cmd->argv);
	fprintf(stderr, "pcprof compare: '%s': %s\n", cmd->exe, strerror(errno));
	_exit(127);
}

/* The last line of the run's output (its last 4 KiB read), quoted, for
 * the message of a failed run. */
static void
last_line(const char *log, char *buf, size_t size)
{
	char text[4096];
	int fd = open(log, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	ssize_t len = -1;
	size_t end, start, k;

	snprintf(buf, size, "none");
	if (fd >= 0 && fstat(fd, &sb) == 0)
		len = pread(fd, text, sizeof(text),
			    sb.st_size > (off_t)sizeof(text) ? sb.st_size - (off_t)sizeof(text) : 0);
	if (fd >= 0)
		close(fd);
	if (len <= 0)
		return;
	for (end = (size_t)len; end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' '); end--)
		;
	for (start = end; start > 0 && text[start - 1] != '\n'; start--)
		;
	if (end == start)
		return;
	/* as it is, up to a NUL: pc_fatal's message escapes what it holds */
	k = end - start < size - 3 ? end - start : size - 3;
	k = strnlen(text + start, k);
	buf[0] = '"';
	memcpy(buf + 1, text + start, k);
	buf[1 + k] = '"';
	buf[2 + k] = 0;
}

/* A signal asked compare to stop: the command has ended; clean up and
 * end as the signal would have. */
static void
stop_now(void)
{
	int sig = stop_sig;

	cleanup();
	cleanup_dir = NULL;
	signal(sig, SIG_DFL);
	raise(sig);
	_exit(128 + sig);
}

/* A run that failed, or wrote no profile: exit with one line saying so. */
static void
check_run(const struct compare *c, int side, const char *name, int status,
	  const char *out, const char *log)
{
	static const char *const sides[] = { "base", "new" };
	char last[240];
	struct stat sb;

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		if (stat(out, &sb) == 0 && S_ISREG(sb.st_mode))
			return;
		pc_fatal("compare: the %s command (%s) wrote no profile: '%s' exited 0 without "
			 "returning from main or calling exit, or never ran under libpc.so",
			 sides[side], name, c->cmd[side].line);
	}
	last_line(log, last, sizeof(last));
	if (WIFSIGNALED(status))
		pc_fatal("compare: the %s command (%s) was killed by signal %d (%s): '%s'; its "
			 "last output: %s", sides[side], name, WTERMSIG(status),
			 strsignal(WTERMSIG(status)), c->cmd[side].line, last);
	pc_fatal("compare: the %s command (%s) exited with status %d: '%s'; its last output: %s",
		 sides[side], name, WEXITSTATUS(status), c->cmd[side].line, last);
}

/* One run of side's command into DIR/name: its wall and CPU seconds. */
static void
run_once(struct compare *c, int side, const char *name, double *wall, double *cpu)
{
	char run[PATH_MAX + 64], out[PATH_MAX + 80], log[PATH_MAX + 80];
	struct timespec t0, t1;
	struct rusage ru;
	sigset_t old;
	int status;
	pid_t pid;

	snprintf(run, sizeof(run), "%s/%s", c->dir, name);
	snprintf(out, sizeof(out), "%s/gmon.out", run);
	snprintf(log, sizeof(log), "%s/output", run);
	if (stop_sig)
		stop_now();
	if (mkdir(run, 0777))
		pc_fatal("'%s': %s", run, strerror(errno));
	note_made(name);
	fflush(NULL);
	/* a stop asked for between here and the wait is seen after the fork */
	sigprocmask(SIG_BLOCK, &stop_set, &old);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((pid = fork()) < 0)
		pc_fatal("cannot fork: %s", strerror(errno));
	if (pid == 0)
		child(&c->cmd[side], out, log, &old);
	setpgid(pid, pid);	/* either may run first */
	child_group = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (stop_sig)		/* asked before the group was known */
		kill(-pid, SIGTERM);
	while (wait4(pid, &status, 0, &ru) != pid)
		if (errno != EINTR)
			pc_fatal("wait4: %s", strerror(errno));
	child_group = 0;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (stop_sig)
		stop_now();
	*wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	check_run(c, side, name, status, out, log);
}

/* The median wall / CPU of side's kept measured runs, the warm-up's with
 * them while there are fewer than two (q[side][0] is the warm-up's), or
 * 0 with none. */
static double
median_ratio(const struct compare *c, int side)
{
	int from = c->nq[side] >= 3 ? 1 : 0, n = c->nq[side] - from;
	double *v, m;

	if (n <= 0)
		return 0;
	if (!(v = malloc((size_t)n * sizeof(*v))))
		pc_fatal("out of memory");
	memcpy(v, c->q[side] + from, (size_t)n * sizeof(*v));
	m = stats_median(v, (size_t)n);
	free(v);
	return m;
}

/* Remove a disturbed run's directory (the last one made). */
static void
remove_run(const struct compare *c, const char *name)
{
	int top = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (top >= 0) {
		remove_run_dir(top, name);
		close(top);
	}
	if (nmade && made[nmade - 1] && !strcmp(made[nmade - 1], name)) {
		free(made[nmade - 1]);
		made[--nmade] = NULL;
	}
}

/* Run i of side (-1: the warm-up), made again while it was disturbed:
 * its wall time over its CPU time DISTURBED times the median of the
 * side's kept runs, and 10 ms over it at least. */
static void
kept_run(struct compare *c, int side, int i)
{
	static const char *const sides[] = { "base", "new" };
	char name[64];
	double wall, cpu, q, ref;

	if (i < 0)
		snprintf(name, sizeof(name), "warmup-%s", sides[side]);
	else
		snprintf(name, sizeof(name), "%s-%03d", sides[side], i + 1);
	for (int again = 0; ; again++) {
		run_once(c, side, name, &wall, &cpu);
		q = cpu > 0 ? wall / cpu : 0;
		ref = median_ratio(c, side);
		if (i < 0 || !(q > 0 && ref > 0) || q <= DISTURBED * ref || wall - ref * cpu < 0.01)
			break;
		if (again >= AGAIN_MAX) {
			if (!c->quiet)
				pc_warn("compare: %s was disturbed %d times in a row (%.2f times its "
					"CPU time in wall time, the side's runs %.2f); kept", name,
					again + 1, q, ref);
			break;
		}
		c->e.repeated[side]++;
		if (!c->quiet)
			pc_warn("compare: %s was disturbed (%.2f s of wall time for %.2f s of CPU, "
				"%.2f times; the side's other runs: %.2f times); made again", name,
				wall, cpu, q, ref);
		remove_run(c, name);
	}
	c->q[side][c->nq[side]++] = q;
	if (i >= 0) {
		if (asprintf(&c->names[side][i], "%s/%s", c->dir, name) < 0)
			pc_fatal("out of memory");
		c->e.wall[side] += wall;
		c->e.cpu[side] += cpu;
	} else {
		c->e.wall[side] = wall;		/* the warm-up's, until the runs */
		if (side == 0)
			c->e.cpu_warmup = cpu;
	}
}

/* The executable side's runs are compared by: --program's process in the
 * warm-up run's manifests, or the command itself. */
static void
side_program(const struct compare *c, int side, char *exe, size_t size)
{
	static const char *const sides[] = { "base", "new" };
	char run[PATH_MAX + 64];
	DIR *d;
	struct dirent *ent;
	const char *want = c->program;

	snprintf(exe, size, "%s", c->cmd[side].exe);
	if (!want)
		return;
	want = strrchr(want, '/') ? strrchr(want, '/') + 1 : want;
	snprintf(run, sizeof(run), "%s/warmup-%s", c->dir, sides[side]);
	if (!(d = opendir(run)))
		pc_fatal("'%s': %s", run, strerror(errno));
	exe[0] = 0;
	while (!exe[0] && (ent = readdir(d))) {
		struct gmon_objects o;
		char *m;
		size_t k = strlen(ent->d_name);

		/* a manifest: the profile m it is beside names the program */
		if (k < strlen(GMON_OBJECTS_SUFFIX) ||
		    strcmp(ent->d_name + k - strlen(GMON_OBJECTS_SUFFIX), GMON_OBJECTS_SUFFIX))
			continue;
		if (asprintf(&m, "%s/%.*s", run, (int)(k - strlen(GMON_OBJECTS_SUFFIX)),
			     ent->d_name) < 0)
			pc_fatal("out of memory");
		runfiles_read_manifest(m, &o);
		if (o.n && !strcmp(strrchr(o.v[0].path, '/') ? strrchr(o.v[0].path, '/') + 1 :
				   o.v[0].path, want))
			snprintf(exe, size, "%s", o.v[0].path);
		gmon_objects_release(&o);
		free(m);
	}
	closedir(d);
	if (!exe[0])
		pc_fatal("compare: --program '%s': the %s command ran no such program",
			 c->program, sides[side]);
}

/* What timer the warm-up runs got, from their first manifest. */
static void
note_timer(struct compare *c)
{
	char m[PATH_MAX + 80], *name;
	struct gmon_objects o;
	int r;

	c->e.timer = c->taskclock ? "taskclock" : "posix";
	snprintf(m, sizeof(m), "%s/warmup-new/gmon.out", c->dir);
	name = runfiles_manifest_name(m);
	r = access(name, R_OK);
	free(name);
	if (r)
		return;
	runfiles_read_manifest(m, &o);
	if (c->taskclock && o.timer == GMON_TIMER_POSIX) {
		c->e.timer = "posix";
		c->e.timer_note = "task-clock refused in the commands: at most one signal a "
				  "kernel tick; give a larger budget";
	}
	gmon_objects_release(&o);
}

/* The warm-up pair, the number of runs, then the runs in turns. */
static void
experiment(struct compare *c)
{
	struct timespec t0, t1;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int s = 0; s < 2; s++)
		if (!(c->q[s] = malloc((MAX_RUNS + 1) * sizeof(double))))
			pc_fatal("out of memory");
	kept_run(c, 0, -1);
	kept_run(c, 1, -1);
	note_timer(c);
	for (int s = 0; s < 2; s++)
		side_program(c, s, c->exe[s], sizeof(c->exe[s]));
	if (c->d.min_seconds < 0)
		c->d.min_seconds = COMPARE_MIN_SHARE * c->e.cpu_warmup;
	n = c->runs;
	if (!n) {
		double longer = fmax(c->e.wall[0], c->e.wall[1]);

		n = longer > 0 ? (int)fmin(MAX_RUNS, floor(c->budget / longer)) : MAX_RUNS;
		n = n < MIN_RUNS ? MIN_RUNS : n;
	}
	if (!c->quiet)
		pc_warn("compare: warm-up pair %.2f s and %.2f s: %d runs a side in turns%s",
			c->e.wall[0], c->e.wall[1], n, c->runs ? "" : " to fill the budget");
	c->e.runs = n;
	c->e.wall[0] = c->e.wall[1] = 0;
	for (int s = 0; s < 2; s++)
		if (!(c->names[s] = calloc((size_t)n, sizeof(char *))))
			pc_fatal("out of memory");
	for (int i = 0; i < n; i++) {
		kept_run(c, 0, i);
		kept_run(c, 1, i);
	}
	for (int s = 0; s < 2; s++) {
		c->e.wall[s] /= n;
		c->e.cpu[s] /= n;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c->e.elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* SIGINT, SIGTERM and SIGHUP stop compare (unless they were ignored when
 * it started); SIGPIPE is ignored, as found kept for the commands. */
static void
catch_signals(int flags)
{
	struct sigaction ign;

	if (!flags) {
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		sigaction(SIGPIPE, &ign, &pipe_as_found);
	}
	sigemptyset(&stop_set);
	for (size_t i = 0; i < NSTOP; i++) {
		struct sigaction sa, old;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sa.sa_flags = flags;
		sigfillset(&sa.sa_mask);
		sigaddset(&stop_set, stop_sigs[i]);
		if (sigaction(stop_sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(stop_sigs[i], &sa, NULL);
	}
}

int
cmd_compare(int argc, char **argv)
{
	static struct compare c;	/* cleanup() reads its directory at exit */
	struct symtab_fetch fetch = { 0 };
	struct side sides[2];
	int r, keep;

	c.d = (struct diff_opts)DIFF_OPTS_DEFAULT;
	c.d.who = "pcprof compare";
	/* a gate that is to catch a 5 % slowdown must not ask for 5 % */
	c.d.threshold = COMPARE_THRESHOLD;
	c.d.min_seconds = -1;	/* from the warm-up run, unless given */
	c.s.fetch = &fetch;
	c.budget = 60;
	c.taskclock = -1;
	if ((r = parse_args(&c, argc, argv)) >= 0)
		return r;
	keep = c.dir[0] != 0;
	if (libpc_find(c.lib, sizeof(c.lib)))
		pc_fatal("cannot find libpc.so beside pcprof or in %s", PC_LIBDIR);
	if (c.taskclock < 0)
		c.taskclock = !taskclock_refused();
	if (!c.hz)
		c.hz = c.taskclock ? 10000 : 1000;
	c.e.hz = c.hz;
	c.e.budget = c.runs ? 0 : c.budget;
	c.e.cmd[0] = c.cmd[0].line;
	c.e.cmd[1] = c.cmd[1].line;
	make_dir(&c);
	c.e.dir = keep ? c.dir : NULL;
	set_environment(&c);
	catch_signals(0);
	experiment(&c);
	/* the analysis: a stop is taken once the verdict is out, and no
	 * read or write of it fails with EINTR meanwhile */
	catch_signals(SA_RESTART);
	c.d.exp = &c.e;
	memset(sides, 0, sizeof(sides));
	for (int s = 0; s < 2; s++) {
		sides[s].exe = c.exe[s];
		sides[s].args = c.names[s];
		sides[s].nruns = c.e.runs;
	}
	r = diff_gate(sides, &c.d, &c.s);
	symtab_fetch_end(&fetch);
	if (stop_sig)
		stop_now();
	if (keep)
		cleanup_dir = NULL;
	return r;
}
