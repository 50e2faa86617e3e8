/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The experiment of pcprof compare: the base and new commands run in
 * turns through the launcher, a warm-up pair first, a disturbed run made
 * again, each checked for its status and profile; the programs and timer
 * the runs had, from their manifests. cmd_compare (compare.c) calls it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands/compare.h"
#include "commands/launch.h"
#include "inputs/runfiles.h"
#include "model/sequential.h"
#include "model/stats.h"

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
			    sb.st_size > (off_t)sizeof(text) ?
				    sb.st_size - (off_t)sizeof(text) :
				    0);
	if (fd >= 0)
		close(fd);
	if (len <= 0)
		return;
	for (end = (size_t)len;
	     end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' '); end--)
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
	pc_fatal(
		"compare: the %s command (%s) exited with status %d: '%s'; its last output: %s",
		sides[side], name, WEXITSTATUS(status), c->cmd[side].line,
		last);
}

/*
 * One run of side's command into DIR/name: its wall and CPU seconds. The
 * command has a process group of its own (a stop ends all of it), input
 * from /dev/null, output to the run's log, where an exec that fails says
 * so.
 */
static void
run_once(struct compare *c, int side, const char *name, double *wall,
	 double *cpu)
{
	char run[PATH_MAX + 64], out[PATH_MAX + 80], log[PATH_MAX + 80];
	struct launch l = { .exe = c->cmd[side].exe,
			    .argv = c->cmd[side].argv,
			    .group = LAUNCH_GROUP_OWN,
			    .stops = LAUNCH_STOPS_END,
			    .input = "/dev/null",
			    .log = log,
			    .pc_out = out,
			    .say_as = "pcprof compare" };
	struct timespec t0, t1;

	snprintf(run, sizeof(run), "%s/%s", c->dir, name);
	snprintf(out, sizeof(out), "%s/gmon.out", run);
	snprintf(log, sizeof(log), "%s/output", run);
	if (launch_stopped())
		compare_stop_now();
	if (mkdir(run, 0777))
		pc_fatal("'%s': %s", run, strerror(errno));
	compare_note_made(name);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	launch_run(&l);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (launch_stopped())
		compare_stop_now();
	*wall = (double)(t1.tv_sec - t0.tv_sec) +
		(double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	*cpu = (double)l.ru.ru_utime.tv_sec +
	       (double)l.ru.ru_utime.tv_usec / 1e6 +
	       (double)l.ru.ru_stime.tv_sec +
	       (double)l.ru.ru_stime.tv_usec / 1e6;
	check_run(c, side, name, l.status, out, log);
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

/* Which of side's kept runs' figures (q, rq) to weigh: its measured
 * runs', the warm-up's with them while there are fewer than two (index 0
 * is the warm-up's): *n from *from. */
static void
kept_span(const struct compare *c, int side, int *from, int *n)
{
	*from = c->nq[side] >= 3 ? 1 : 0;
	*n = c->nq[side] - *from;
}

/*
 * Whether run i of side (not the warm-up) was disturbed, into d: its wall
 * time over its CPU time DISTURBED times the median of the side's kept
 * runs, and 10 ms over it at least; or (a wall profile) its seconds in
 * the run queue standing out from theirs (diff_outlier_above).
 */
static int
run_disturbed(const struct compare *c, int side, int i, double wall, double cpu,
	      double rq, struct disturbed *d)
{
	double q = cpu > 0 ? wall / cpu : 0, ref = median_ratio(c, side);
	int from, n;

	d->side = side;
	d->again = 1;
	if (i < 0)
		return 0;
	/* a wall profile's program waits: its wall time is not its CPU's,
	 * and the run queue says directly what the ratio would guess */
	if (c->d.metric != METRIC_WALL && q > 0 && ref > 0 &&
	    q > DISTURBED * ref && wall - ref * cpu >= 0.01) {
		d->why = DIST_WALL_CPU;
		d->x = q;
		d->ref = ref;
		return 1;
	}
	/* against two kept runs at least: the warm-up's alone could be the
	 * odd one */
	kept_span(c, side, &from, &n);
	d->why = DIST_RUNQUEUE;
	d->x = rq;
	return c->d.metric == METRIC_WALL && n >= 2 &&
	       diff_outlier_above(rq, c->rq[side] + from, n,
				  diff_runq_floor(c->rq[side] + from, n, wall),
				  &d->ref);
}

/* A disturbed run made again: counted, named, said. */
static void
note_again(struct compare *c, const char *name, const struct disturbed *d)
{
	struct disturbed *v =
		pc_realloc(c->e.again, ((size_t)c->e.nagain + 1) * sizeof(*v));
	char why[200];

	c->e.again = v;
	v[c->e.nagain] = *d;
	if (asprintf((char **)&v[c->e.nagain].run, "%s/%s", c->dir, name) < 0)
		pc_fatal("out of memory");
	c->e.nagain++;
	c->e.repeated[d->side]++;
	if (!c->quiet)
		pc_warn("compare: %s was disturbed (%s); made again", name,
			diff_disturbed_why(d, why, sizeof(why)));
}

/* The wall seconds of run name, in its directory (RUN_ELAPSED_FILE),
 * for pcprof diff and history add. */
static void
write_elapsed(const struct compare *c, const char *name, double wall)
{
	char path[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", c->dir, name,
		 RUN_ELAPSED_FILE);
	if (!(f = fopen(path, "we")))
		pc_fatal("'%s': %s", path, strerror(errno));
	fprintf(f, "%.9f\n", wall);
	if (fclose(f))
		pc_fatal("'%s': %s", path, strerror(errno));
}

/* Run i of side (-1: the warm-up), made again while it was disturbed
 * (run_disturbed), AGAIN_MAX times in a row at most. */
static void
kept_run(struct compare *c, int side, int i)
{
	static const char *const sides[] = { "base", "new" };
	char name[64], dir[PATH_MAX + 64];
	double wall, cpu, rq = 0;
	struct disturbed d;

	if (i < 0)
		snprintf(name, sizeof(name), "warmup-%s", sides[side]);
	else
		snprintf(name, sizeof(name), "%s-%03d", sides[side], i + 1);
	snprintf(dir, sizeof(dir), "%s/%s", c->dir, name);
	for (int again = 0; ; again++) {
		run_once(c, side, name, &wall, &cpu);
		/* the warm-up's, once its program is known (compare_experiment)
		 */
		if (c->d.metric == METRIC_WALL && i >= 0)
			if ((rq = diff_dir_runqueue(dir, c->exe[side])) < 0)
				exit(EXIT_BAD_INPUT);
		if (!run_disturbed(c, side, i, wall, cpu, rq, &d))
			break;
		if (again >= AGAIN_MAX) {
			if (!c->quiet)
				pc_warn("compare: %s was disturbed %d times in a row; kept",
					name, again + 1);
			break;
		}
		note_again(c, name, &d);
		compare_remove_run(c, name);
	}
	c->rq[side][c->nq[side]] = rq;
	c->q[side][c->nq[side]++] = cpu > 0 ? wall / cpu : 0;
	if (i >= 0) {
		write_elapsed(c, name, wall);
		if (asprintf(&c->names[side][i], "%s/%s", c->dir, name) < 0)
			pc_fatal("out of memory");
		c->e.wall[side] += wall;
		c->e.wall_sq[side] += wall * wall;
		c->e.cpu[side] += cpu;
	} else {
		c->e.wall[side] = wall; /* the warm-up's, until the runs */
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
		    strcmp(ent->d_name + k - strlen(GMON_OBJECTS_SUFFIX),
			   GMON_OBJECTS_SUFFIX))
			continue;
		if (asprintf(&m, "%s/%.*s", run,
			     (int)(k - strlen(GMON_OBJECTS_SUFFIX)),
			     ent->d_name) < 0)
			pc_fatal("out of memory");
		if (runfiles_read_manifest(m, &o))
			exit(EXIT_BAD_INPUT);
		if (o.n && !strcmp(strrchr(o.v[0].path, '/') ?
					   strrchr(o.v[0].path, '/') + 1 :
					   o.v[0].path,
				   want))
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
	if (runfiles_read_manifest(m, &o))
		exit(EXIT_BAD_INPUT);
	if (c->taskclock && o.timer == GMON_TIMER_POSIX) {
		c->e.timer = "posix";
		c->e.timer_note = "task-clock refused in the commands: at most one signal a "
				  "kernel tick; give a larger budget";
	}
	gmon_objects_release(&o);
}

/* The sequential look after n pairs: the verdict of the first n runs a
 * side (diff_look). */
static enum seq_verdict
compare_look(struct compare *c, int n)
{
	struct diff_opts o = c->d;
	struct side sides[2];

	/* nothing written, nothing kept: only the verdict */
	o.flame = NULL;
	o.keep_history = NULL;
	o.exp = NULL;
	o.replay = 0;
	memset(sides, 0, sizeof(sides));
	for (int s = 0; s < 2; s++) {
		sides[s].exe = c->exe[s];
		sides[s].args = c->names[s];
		sides[s].nruns = n;
	}
	return diff_look(sides, &o, &c->s, &c->d.seq_whole);
}

/* The runs in turns, up to n pairs, a look at each of the sequential
 * gate's looks (every pair from the third up to 20 runs a side, then
 * every tenth more), until one decides: the pairs made. */
static int
runs_in_turns(struct compare *c, int n)
{
	int look = seq_next_look(0, c->d.seq_min, n);

	for (int i = 0; i < n; i++) {
		enum seq_verdict v;

		kept_run(c, 0, i);
		kept_run(c, 1, i);
		if (i + 1 < look || i + 1 >= n)
			continue;
		look = seq_next_look(look, c->d.seq_min, n);
		v = compare_look(c, i + 1);
		if (!c->quiet)
			pc_warn("compare: after %d run%s a side: %s%s", i + 1,
				i ? "s" : "", seq_verdict_name(v),
				c->d.seq_whole && v == SEQ_UNDECIDED ?
				" (regressed by [elapsed] or waits on other "
				"threads alone: looking on)" : "");
		if (v != SEQ_UNDECIDED)
			return i + 1;
	}
	return n;
}

/*
 * --min-seconds unless given: 0.1 % of the base warm-up run's CPU time, or
 * with --metric wall, whose rows are waits, of its wall time (its CPU
 * time let rows of a third of a millisecond into Holm's family, 19 rows
 * where 8 were worth a test, and a wait 20 % longer was missed).
 */
static double
default_min_seconds(const struct compare *c)
{
	return COMPARE_MIN_SHARE * (c->d.metric == METRIC_WALL ?
					    c->e.wall[0] :
					    c->e.cpu_warmup);
}

/* The warm-up pair, the number of runs, then the runs in turns. */
void
compare_experiment(struct compare *c)
{
	struct timespec t0, t1;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int s = 0; s < 2; s++)
		if (!(c->q[s] = malloc((MAX_RUNS + 1) * sizeof(double))) ||
		    !(c->rq[s] = malloc((MAX_RUNS + 1) * sizeof(double))))
			pc_fatal("out of memory");
	kept_run(c, 0, -1);
	kept_run(c, 1, -1);
	note_timer(c);
	for (int s = 0; s < 2; s++) {
		char dir[PATH_MAX + 64];

		side_program(c, s, c->exe[s], sizeof(c->exe[s]));
		snprintf(dir, sizeof(dir), "%s/warmup-%s", c->dir, s ? "new" : "base");
		if (c->d.metric == METRIC_WALL)
			if ((c->rq[s][0] = diff_dir_runqueue(dir, c->exe[s])) <
			    0)
				exit(EXIT_BAD_INPUT);
	}
	if (c->d.min_seconds < 0)
		c->d.min_seconds = default_min_seconds(c);
	n = c->runs;
	if (!n) {
		double longer = fmax(c->e.wall[0], c->e.wall[1]);

		n = longer > 0 ?
			    (int)fmin(MAX_RUNS, floor(c->budget / longer)) :
			    MAX_RUNS;
		n = n < MIN_RUNS ? MIN_RUNS : n;
	}
	if (!c->quiet)
		pc_warn("compare: warm-up pair %.2f s and %.2f s: %s%d runs a side in turns%s",
			c->e.wall[0], c->e.wall[1], c->runs ? "" : "up to ", n,
			c->runs ?
				"" :
				" to fill the budget, a look after each pair from the third to the "
				"20th, then at each tenth more");
	c->e.runs = n;
	c->e.wall[0] = c->e.wall[1] = 0;
	for (int s = 0; s < 2; s++)
		if (!(c->names[s] = calloc((size_t)n, sizeof(char *))))
			pc_fatal("out of memory");
	/* the sequential gate's looks: every pair from the first look up to
	 * the budget's last, which the verdict itself makes */
	c->d.seq_min = c->runs ? n : MIN_RUNS;
	c->d.seq_max = n;
	n = runs_in_turns(c, n);
	c->e.runs = n;
	for (int s = 0; s < 2; s++) {
		c->e.wall[s] /= n;
		c->e.cpu[s] /= n;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c->e.elapsed = (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

