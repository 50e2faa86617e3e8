/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Keeping a commit's record in a history file: which commit it is (the
 * options, or git), and the record of a loaded side of runs, each
 * function's seconds a run as their mean and variance (diff_model.c's).
 * Called by history.c (history add) and diff.c (compare --keep-history).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pcprof.h"
#include "commands/compare.h"
#include "model/history.h"

/* git's first line of output for argv into buf; 0, or -1 where git is
 * missing, fails or says nothing. */
static int
git_line(const char *const argv[], char *buf, size_t size)
{
	int fd[2], st;
	ssize_t k;
	size_t len = 0;
	pid_t pid;

	if (pipe(fd))
		return -1;
	if ((pid = fork()) < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		if (!freopen("/dev/null", "w", stderr))
			_exit(127);
		execvp("git", (char *const *)argv);
		_exit(127);
	}
	close(fd[1]);
	while ((k = read(fd[0], buf + len, size - 1 - len)) > 0 ||
	       (k < 0 && errno == EINTR))
		len += k > 0 ? (size_t)k : 0;
	close(fd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	buf[len] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 && buf[0] ? 0 : -1;
}

void
history_id_resolve(struct hist_id *id)
{
	char when[64];
	const char *head[] = { "git", "rev-parse",     "--verify",
			       "-q",  "HEAD^{commit}", NULL };
	const char *show[] = { "git", "show", "-s", "--format=%ct", NULL, NULL };
	char ref[200];

	if (!id->commit) {
		if (git_line(head, id->buf, sizeof(id->buf)))
			pc_fatal("no --commit given, and no git commit here (git rev-parse HEAD failed)");
		id->commit = id->buf;
	}
	if (id->time >= 0)
		return;
	/* a commit named like an option is not asked of git */
	snprintf(ref, sizeof(ref), "%s^{commit}", id->commit);
	show[4] = ref;
	if (strlen(id->commit) < 150 && id->commit[0] != '-' &&
	    !git_line(show, when, sizeof(when)))
		id->time = strtod(when, NULL);
	else
		id->time = (double)time(NULL);
}

void
history_keep(const char *path, const struct side *s, const struct hist_id *id,
	     const struct experiment *e)
{
	const struct symtab *st = &s->in.st;
	size_t nf = st->nfuncs ? st->nfuncs : 1;
	struct hist_record r;

	memset(&r, 0, sizeof(r));
	r.commit = (char *)id->commit;
	r.time = id->time;
	r.runs = s->nruns;
	diff_mean_var(s->program, s->nruns, 1, &r.cpu.mean, &r.cpu.var);
	r.wall.mean = -1;
	if (s->elapsed) {
		/* the runs' own wall seconds (compare's, in each run's
		 * directory): history add's, and compare's but for its
		 * disturbed runs */
		diff_mean_var(s->elapsed, s->nruns, 1, &r.wall.mean,
			      &r.wall.var);
	} else if (e && e->runs > 0) {
		double n = e->runs, m = e->wall[1];

		r.wall.mean = m;
		r.wall.var =
			n > 1 ? fmax(0, (e->wall_sq[1] - n * m * m) / (n - 1)) :
				0;
	}
	r.funcs = pc_realloc(NULL, nf * sizeof(*r.funcs));
	for (size_t f = 0; f < st->nfuncs; f++) {
		struct hist_value v = { st->funcs[f], 0, 0 };

		diff_mean_var(s->self + f, s->nruns, nf, &v.mean, &v.var);
		/* a function of at least compare's smallest share that counts */
		if (v.mean > 0 && v.mean >= COMPARE_MIN_SHARE * r.cpu.mean)
			r.funcs[r.nfuncs++] = v;
	}
	r.nfuncs = history_sort_values(r.funcs, r.nfuncs);
	if (history_append(path, &r))
		exit(EXIT_BAD_INPUT);
	free(r.funcs);
}
