/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof diff: printing a comparison as text, as markdown for a pull-request
 * comment, or as json. Called by diff.c; calls diff_compare.c.
 */
#include <math.h>
#include <string.h>

#include "pcprof.h"
#include "model/sequential.h"
#include "writers/diff_out.h"

static const char *const metric_names[] = { "self", "total", "program", "wall" };

static const char *const status_names[] = {
	"slower", "faster", "unchanged", "unchanged", "appeared", "gone",
};

static double
pct(double x)
{
	return 100 * x;
}

static void
print_side_text(FILE *out, const char *label, const struct side *s, double mean)
{
	fprintf(out, "%-5s %s: %d run%s, %.3f s a run at %u Hz\n", label,
		text_name(s->exe), s->nruns, s->nruns == 1 ? "" : "s", mean, s->rate);
}

/* "stage_x 20.1% slower (0.452 -> 0.544 s a run, p 3.1e-09)" */
static void
describe(FILE *out, const struct row *w, int md)
{
	const char *name = text_name(w->name);
	const char *q = md ? (strchr(name, '`') ? "" : "`") : "";

	fprintf(out, "%s%s%s %.1f%% %s (%.3f -> %.3f s a run, p %.2g)", q, name, q,
		pct(fabs(w->mn - w->mb) / w->mb),
		w->status == ST_SLOWER ? "slower" : "faster", w->mb, w->mn, w->padj);
}

static void
verdict(FILE *out, const struct result *res, const struct diff_opts *o, int md)
{
	int nslow = res->nslow, nfast = res->nfast;
	const char *b = md ? "**" : "";

	if (res->misfit) {
		fprintf(out, "%s%s: undecided%s: one machine speed does not fit the functions' "
			"changes (Fisher's p %.2g over the %zu functions it was judged on and not "
			"found slower); it would have named ", b, o->who, b, res->fit_p,
			res->fit_functions);
		describe(out, &res->blamed, md);
		if (res->nblamed > 1)
			fprintf(out, " and %d more", res->nblamed - 1);
		if (res->nfaster)
			fprintf(out, ", with %d function%s faster", res->nfaster,
				res->nfaster == 1 ? "" : "s");
		fputs("; run again on a quieter machine\n", out);
		return;
	}
	if (nslow) {
		fprintf(out, "%s%s: regression%s: ", b, o->who, b);
		describe(out, &res->rows[0], md);
		if (nslow > 1)
			fprintf(out, ", and %d more function%s slower", nslow - 1,
				nslow == 2 ? "" : "s");
	} else {
		fprintf(out, "%s%s: no significant regression%s", b, o->who, b);
	}
	if (nfast)
		fprintf(out, "%s%d function%s significantly faster",
			nslow ? "; " : ": ", nfast, nfast == 1 ? "" : "s");
	fputc('\n', out);
}

/* Whether row w is watched by the sequential gate and not settled at
 * its look: its equivalence test did not rule out the threshold. */
static int
seq_open(const struct row *w, const struct diff_opts *o)
{
	return w->tested && w->family && w->mb > 0 && w->status != ST_FASTER &&
	       w->status != ST_SLOWER &&
	       !(w->bound < fmax(o->threshold * w->mb, o->min_seconds));
}

/* "unchanged after 7 runs a side (looks at 3 to 33 runs a side, this
 * one at level 0.00052 of alpha 0.01): every change of 5% ruled out";
 * where disturbed runs were left out, the runs made a side and how many
 * of each side's were compared: "after 10 runs a side, 1 left out as
 * disturbed (9 base runs and 10 new compared; looks at ...)" */
/* the runs a side made by a look: the more of the sides' */
static int
seq_made(const struct seq *q)
{
	return q->made[0] > q->made[1] ? q->made[0] : q->made[1];
}

static void
describe_seq_runs(FILE *out, const struct result *res, const struct diff_opts *o)
{
	const struct seq *q = &res->seq;

	fprintf(out, "%s after ", seq_verdict_name(q->verdict));
	if (q->made[0] == q->made[1])
		fprintf(out, "%d run%s a side", q->made[0], q->made[0] == 1 ? "" : "s");
	else
		fprintf(out, "%d base runs and %d new", q->made[0], q->made[1]);
	if (q->left)
		fprintf(out, ", %d left out as disturbed (%d base run%s and %d new compared; ",
			q->left, q->used[0], q->used[0] == 1 ? "" : "s", q->used[1]);
	else
		fputs(" (", out);
	if (q->max > q->min)
		fprintf(out, "looks at %d to %d runs a side, this one at level %.2g of alpha %g",
			q->min, q->max, q->alpha, o->alpha);
	else
		fprintf(out, "one look, at alpha %g", o->alpha);
}

static void
describe_seq(FILE *out, const struct result *res, const struct diff_opts *o)
{
	const struct seq *q = &res->seq;

	describe_seq_runs(out, res, o);
	fputs("): ", out);
	if (q->verdict == SEQ_REGRESSED)
		fprintf(out, "%d function%s significantly slower by %g%% or more", res->nslow,
			res->nslow == 1 ? "" : "s", pct(o->threshold));
	else if (q->verdict == SEQ_UNCHANGED)
		fprintf(out, "every change of %g%% or more ruled out", pct(o->threshold));
	else
		fprintf(out, "changes of %.1f%% or more ruled out, not of %g%% (the "
			"functions marked open; the whole program %.1f%%)%s",
			pct(q->ruled_out), pct(o->threshold),
			res->prog.tested && res->prog.mb > 0 ?
			pct(res->prog.bound / res->prog.mb) : 0.0,
			seq_made(q) < q->max ? "; run more" : "; the budget's end");
	if (q->whole)
		fprintf(out, "; decided at %d runs a side by [elapsed] or waits for other "
			"threads, looked on to name what changed", q->whole);
}

/* "new runs 3.1% slower than base (a robust mean over 12 functions),
 * allowed for" */
static void
describe_speed(FILE *out, const struct result *res, const struct diff_opts *o)
{
	if (o->metric == METRIC_PROGRAM)
		fputs("measured, no allowance for machine speed", out);
	else if (o->absolute)
		fputs("as measured (--absolute)", out);
	else if (!res->speed_judged)
		fprintf(out, "as measured; not judged (fewer than %d functions "
			"with 20 samples a run)",
			o->metric == METRIC_WALL ? 5 : 3);
	else
		fprintf(out, "new runs %.1f%% %s than base (a robust mean over %zu "
			"functions), allowed for", pct(fabs(res->speed - 1)),
			res->speed >= 1 ? "slower" : "faster", res->speed_functions);
}

/* "8 runs a side in turns after a warm-up pair, 0.61 s and 0.66 s a run";
 * left: the disturbed runs the comparison left out */
static void
describe_runs(FILE *out, const struct experiment *e, int left)
{
	int again = e->repeated[0] + e->repeated[1];

	fprintf(out, "%d runs a side in turns after a warm-up pair, %.2f s (base) and "
		"%.2f s (new) of wall time a run", e->runs, e->wall[0], e->wall[1]);
	if (e->budget > 0)
		fprintf(out, " (budget %g s a side)", e->budget);
	if (again)
		fprintf(out, "; %d disturbed run%s made again (%d base, %d new)", again,
			again == 1 ? "" : "s", e->repeated[0], e->repeated[1]);
	else if (!left)
		fputs("; no run disturbed", out);
}

/* One disturbed run: "base-004 made again (0.152 s in the run queue, its
 * side's runs 0.004 s)"; short: its directory's last name (compare's). */
static void
describe_disturbed(FILE *out, const struct disturbed *d, int short_name)
{
	const char *name = d->run;
	char why[200];

	if (short_name && strrchr(name, '/') && strrchr(name, '/')[1])
		name = strrchr(name, '/') + 1;
	fprintf(out, "%s %s (%s)", text_name(name), d->again ? "made again" : "left out",
		diff_disturbed_why(d, why, sizeof(why)));
}

/* The disturbed runs, made again (compare) or left out: "disturbed: ..."
 * (md: as a list item); nothing where none. */
static void
print_disturbed(FILE *out, const struct side *b, const struct side *nw,
		const struct diff_opts *o, int md)
{
	const struct disturbed *lists[3] = { o->exp ? o->exp->again : NULL, b->left, nw->left };
	int counts[3] = { o->exp ? o->exp->nagain : 0, b->nleft, nw->nleft }, k = 0;

	for (int l = 0; l < 3; l++)
		for (int i = 0; i < counts[l]; i++) {
			fputs(k++ ? ", " : md ? "- disturbed: " : "disturbed: ", out);
			describe_disturbed(out, &lists[l][i], o->exp != NULL);
		}
	if (k)
		fputc('\n', out);
}

static void
describe_timer(FILE *out, const struct experiment *e)
{
	fprintf(out, "%s at %ld Hz", e->timer, e->hz);
	if (e->timer_note)
		fprintf(out, " (%s)", e->timer_note);
}

static void
print_experiment_text(FILE *out, const struct experiment *e, int left)
{
	fputs("runs: ", out);
	describe_runs(out, e, left);
	fputs("\ntimer: ", out);
	describe_timer(out, e);
	fprintf(out, "\ntook: %.1f s for every run, warm-up included", e->elapsed);
	if (e->dir)
		fprintf(out, "; the runs are in %s", text_name(e->dir));
	fputc('\n', out);
}

static void
print_seq_text(FILE *out, const struct result *res, const struct diff_opts *o)
{
	if (o->seq_max <= 0)
		return;
	fputs("verdict: ", out);
	describe_seq(out, res, o);
	fputc('\n', out);
}

/* A change in percent, one decimal, or two where one would read 0.0 (a
 * change too small to see is not no change). */
static const char *
change_text(char *buf, size_t size, double x)
{
	snprintf(buf, size, fabs(pct(x)) < 0.05 ? "%+.2f" : "%+.1f", pct(x));
	return buf;
}

/* A row of the text table, its shares of the base's program seconds
 * (base) and of the new side's at the base's speed (ntotal); sig: a
 * significant change, its verdict said. */
static void
print_row_text(FILE *out, const struct row *w, double base, double ntotal, int sig,
	       const struct diff_opts *o)
{
	char chg[32], open[32] = "";

	/* a row that kept the sequential gate undecided: the smallest change
	 * its runs rule out, in its verdict's place */
	if (!sig && o->seq_max > 0 && seq_open(w, o))
		snprintf(open, sizeof(open), "open %.1f%%", pct(w->bound / w->mb));

	if (w->status == ST_APPEARED)
		fprintf(out, "%9s %6s %9.3f %5.1f%% %8s %8s  %-13s ", "-", "-",
			w->mn, pct(w->mn / ntotal), "", "", "appeared");
	else if (w->status == ST_GONE)
		fprintf(out, "%9.3f %5.1f%% %9s %6s %8s %8s  %-13s ", w->mb,
			pct(w->mb / base), "-", "-", "", "", "gone");
	else if (w->status == ST_SMALL && diff_row_is_load(w->name))
		fprintf(out, "%9.3f %5.1f%% %9.3f %5.1f%% %7s%% %8.2g  %-13s ",
			w->mb, pct(w->mb / base), w->mn, pct(w->mn / ntotal),
			change_text(chg, sizeof(chg), (w->mn - w->mb) / w->mb), w->p, "(load)");
	else if (w->status == ST_SMALL)
		fprintf(out, "%9.3f %5.1f%% %9.3f %5.1f%% %+7.1f%% %8s  %-13s ",
			w->mb, pct(w->mb / base), w->mn, pct(w->mn / ntotal),
			pct((w->mn - w->mb) / w->mb), "-", "(small)");
	else
		fprintf(out, "%9.3f %5.1f%% %9.3f %5.1f%% %7s%% %8.2g  %-13s ",
			w->mb, pct(w->mb / base), w->mn, pct(w->mn / ntotal),
			change_text(chg, sizeof(chg), (w->mn - w->mb) / w->mb), w->padj,
			sig ? status_names[w->status] : open);
	fprintf(out, "%s\n", text_name(w->name));
}

/* Row w's stack where it is a wait (--metric wall): the new side's, else
 * the base's; NULL for a function. */
static const char *
row_stack(const struct row *w, const struct side *b, const struct side *nw)
{
	const char *k = diff_wall_stack(nw, w->name);

	return k ? k : diff_wall_stack(b, w->name);
}

/* The stacks of the significant waits, under the table. */
static void
print_stacks_text(FILE *out, const struct result *res, const struct side *b,
		  const struct side *nw)
{
	size_t k = 0;

	for (size_t i = 0; i < res->nrows; i++) {
		const struct row *w = &res->rows[i];
		const char *stack = row_stack(w, b, nw);

		if ((w->status != ST_SLOWER && w->status != ST_FASTER) || !stack)
			continue;
		if (!k++)
			fputs("\nthe significant waits' stacks (a run's heaviest, outermost "
			      "first; the executable's functions):\n", out);
		fprintf(out, "  %s: ", text_name(w->name));
		fprintf(out, "%s\n", text_name(stack));
	}
}

static void
print_text(FILE *out, const struct result *res, const struct side *b,
	   const struct side *nw, const struct diff_opts *o)
{
	static const char *const mdesc[] = {
		"self seconds", "total seconds (self and callees)",
		"the whole program's CPU seconds",
		"wall seconds (functions' CPU self time, each wait's off-CPU time)",
	};
	const struct row *prog = &res->prog;
	double ntotal = prog->mn / res->speed;	/* at the base's speed */
	size_t shown = 0, rest = 0;

	verdict(out, res, o, 0);
	if (o->exp)
		print_experiment_text(out, o->exp, b->nleft + nw->nleft);
	print_disturbed(out, b, nw, o, 0);
	print_seq_text(out, res, o);
	print_side_text(out, "base", b, prog->mb);
	print_side_text(out, "new", nw, prog->mn);
	fprintf(out, "compared: %s a run; alpha %g over %zu function%s (Holm); "
		"changes of %g%% and %.3g s at least\n", mdesc[o->metric], o->alpha,
		res->family, res->family == 1 ? "" : "s", pct(o->threshold),
		o->min_seconds);
	fputs("speed: ", out);
	describe_speed(out, res, o);
	fputs("\n\n", out);
	fprintf(out, "%9s %6s %9s %6s %8s %8s  %-13s %s\n", "base s", "share", "new s",
		"share", "change", "p", "verdict", "function");
	for (size_t i = 0; i < res->nrows; i++) {
		const struct row *w = &res->rows[i];
		int sig = w->status == ST_SLOWER || w->status == ST_FASTER;

		/* appeared or gone below the minimum: noise, counted only */
		if (!sig && ((o->top > 0 && shown >= (size_t)o->top) ||
			     (!w->tested && diff_row_size(w) < o->min_seconds))) {
			rest++;
			continue;
		}
		shown += !sig;
		print_row_text(out, w, prog->mb, ntotal, sig, o);
	}
	if (rest)
		fprintf(out, "(%zu more function%s, none significant)\n",
			rest, rest == 1 ? "" : "s");
	print_stacks_text(out, res, b, nw);
	if (b->nruns < 2 && nw->nruns < 2)
		fputs("\nOne run a side: only sampling noise is allowed for, not the "
		      "variation between runs;\nrun the benchmark several times a side.\n", out);
}

void
md_name(FILE *out, const char *name)
{
	const char *s = text_name(name);
	int tick = !strchr(s, '`');

	if (tick)
		fputc('`', out);
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', out);
		fputc(*s, out);
	}
	if (tick)
		fputc('`', out);
}

/* compare's experiment and the sequential verdict, as list items */
static void
md_experiment(FILE *out, const struct result *res, const struct side *b,
	      const struct side *nw, const struct diff_opts *o)
{
	if (o->exp) {
		fputs("- runs: ", out);
		describe_runs(out, o->exp, b->nleft + nw->nleft);
		fputs("\n- timer: ", out);
		describe_timer(out, o->exp);
		fputc('\n', out);
	}
	print_disturbed(out, b, nw, o, 1);
	if (o->seq_max > 0) {
		fputs("- verdict: ", out);
		describe_seq(out, res, o);
		fputc('\n', out);
	}
}

static void
print_markdown(FILE *out, const struct result *res, const struct side *b,
	       const struct side *nw, const struct diff_opts *o)
{
	const struct row *rows = res->rows;
	int nsig = res->nslow + res->nfast;

	verdict(out, res, o, 1);
	fputc('\n', out);
	md_experiment(out, res, b, nw, o);
	fprintf(out, "- compared: %s time a run, %d base run%s against %d new run%s; alpha %g "
		"(Holm), changes of %g%% and %.3g s at least\n- speed: ", metric_names[o->metric],
		b->nruns, b->nruns == 1 ? "" : "s", nw->nruns, nw->nruns == 1 ? "" : "s",
		o->alpha, pct(o->threshold), o->min_seconds);
	describe_speed(out, res, o);
	fputs("\n\n", out);
	if (nsig) {
		fputs("| function | base s | new s | change | p |\n"
		      "|---|---:|---:|---:|---:|\n", out);
		for (int i = 0; i < nsig; i++) {
			fputs("| ", out);
			md_name(out, rows[i].name);
			fprintf(out, " | %.3f | %.3f | %+.1f%% | %.2g |\n", rows[i].mb,
				rows[i].mn, pct((rows[i].mn - rows[i].mb) / rows[i].mb),
				rows[i].padj);
		}
		for (int i = 0, k = 0; i < nsig; i++) {
			const char *stack = row_stack(&rows[i], b, nw);

			if (!stack)
				continue;
			fputs(k++ ? "- " : "\nStacks (a run's heaviest, outermost first):\n\n- ", out);
			md_name(out, rows[i].name);
			fputs(": ", out);
			md_name(out, stack);
			fputc('\n', out);
		}
	} else {
		fputs("No significant change.\n", out);
	}
	for (int pass = 0; pass < 2; pass++) {
		enum status want = pass ? ST_GONE : ST_APPEARED;
		size_t k = 0;

		for (size_t i = 0; i < res->nrows; i++) {
			if (rows[i].status != want || diff_row_size(&rows[i]) < o->min_seconds)
				continue;
			fputs(k++ ? ", " : pass ? "\nGone: " : "\nAppeared: ", out);
			md_name(out, rows[i].name);
			fprintf(out, " (%.3f s)", diff_row_size(&rows[i]));
		}
		if (k)
			fputs(".\n", out);
	}
}

static void
json_side(FILE *out, const char *key, const struct side *s, double mean)
{
	fprintf(out, "\"%s\": {\"executable\": ", key);
	json_string(out, s->exe);
	fprintf(out, ", \"runs\": %d, \"rate_hz\": %u, \"program_seconds\": %.6f, "
		"\"profiles\": [", s->nruns, s->rate, mean);
	for (int r = 0; r < s->nruns; r++) {
		fputs(r ? ", [" : "[", out);
		for (int i = 0; i < s->in.runs[r].nfiles; i++) {
			fputs(i ? ", " : "", out);
			json_string(out, s->in.runs[r].files[i]);
		}
		fputc(']', out);
	}
	fputs("]}", out);
}

static void
json_number(FILE *out, double x)
{
	if (isfinite(x))
		fprintf(out, "%.6g", x);
	else
		fputs("null", out);
}

static void
json_experiment(FILE *out, const struct experiment *e)
{
	fprintf(out, "\"experiment\": {\"runs\": %d, \"warmup_pairs\": 1, "
		"\"repeated\": {\"base\": %d, \"new\": %d}, \"budget_seconds\": ",
		e->runs, e->repeated[0], e->repeated[1]);
	json_number(out, e->budget > 0 ? e->budget : NAN);
	fprintf(out, ", \"wall_seconds\": {\"base\": %.6f, \"new\": %.6f}, "
		"\"cpu_seconds\": {\"base\": %.6f, \"new\": %.6f}, \"elapsed_seconds\": %.3f, "
		"\"timer\": \"%s\", \"timer_note\": ", e->wall[0], e->wall[1], e->cpu[0],
		e->cpu[1], e->elapsed, e->timer);
	if (e->timer_note)
		json_string(out, e->timer_note);
	else
		fputs("null", out);
	fprintf(out, ", \"hz\": %ld, \"directory\": ", e->hz);
	if (e->dir)
		json_string(out, e->dir);
	else
		fputs("null", out);
	fputs(", \"commands\": {\"base\": ", out);
	json_string(out, e->cmd[0]);
	fputs(", \"new\": ", out);
	json_string(out, e->cmd[1]);
	fputs("}},\n ", out);
}

/* "disturbed": [{"run": ..., "side": "base", "why": "runqueue",
 * "value": 0.152, "side_median": 0.004, "action": "made again"}, ...] */
static void
json_disturbed(FILE *out, const struct side *b, const struct side *nw,
	       const struct diff_opts *o)
{
	static const char *const whys[] = { "runqueue", "speed", "wall_over_cpu" };
	const struct disturbed *lists[3] = { o->exp ? o->exp->again : NULL, b->left, nw->left };
	int counts[3] = { o->exp ? o->exp->nagain : 0, b->nleft, nw->nleft }, k = 0;

	fputs("\"disturbed\": [", out);
	for (int l = 0; l < 3; l++)
		for (int i = 0; i < counts[l]; i++) {
			const struct disturbed *d = &lists[l][i];

			fputs(k++ ? ", {\"run\": " : "{\"run\": ", out);
			json_string(out, d->run);
			fprintf(out, ", \"side\": \"%s\", \"why\": \"%s\", \"value\": %.6g, "
				"\"side_median\": %.6g, \"action\": \"%s\"}",
				d->side ? "new" : "base", whys[d->why], d->x, d->ref,
				d->again ? "made again" : "left out");
		}
	fputs("],\n ", out);
}

/* The sequential gate's look: "sequential": {...} */
static void
json_seq(FILE *out, const struct result *res, const struct diff_opts *o)
{
	const struct seq *q = &res->seq;

	fprintf(out, "\"sequential\": {\"verdict\": \"%s\", \"runs\": %d, "
		"\"runs_made\": {\"base\": %d, \"new\": %d}, "
		"\"runs_compared\": {\"base\": %d, \"new\": %d}, \"left_out\": %d, "
		"\"first_look_runs\": %d, \"max_runs\": %d, \"look_alpha\": %.6g, "
		"\"spending\": \"pocock\", \"undecided_fails\": %s, "
		"\"whole_decided_runs\": %d, \"ruled_out\": ",
		seq_verdict_name(q->verdict), seq_made(q), q->made[0], q->made[1], q->used[0],
		q->used[1], q->left, q->min, q->max, q->alpha,
		o->undecided_fail ? "true" : "false", q->whole);
	json_number(out, q->verdict == SEQ_UNDECIDED ? q->ruled_out : NAN);
	fputs(", \"program_ruled_out\": ", out);
	json_number(out, res->prog.tested && res->prog.mb > 0 ?
		    res->prog.bound / res->prog.mb : NAN);
	fputs("},\n ", out);
}

/* One row of the JSON's "functions". */
static void
json_row(FILE *out, const struct row *w, double base, double ntotal,
	 const struct side *b, const struct side *nw, const struct diff_opts *o)
{
	int cmp = w->status != ST_APPEARED && w->status != ST_GONE;
	const char *stack;

	fputs("{\"name\": ", out);
	json_string(out, w->name);
	fprintf(out, ", \"status\": \"%s\", \"significant\": %s, "
		"\"base_seconds\": %.6f, \"base_share\": %.6f, "
		"\"new_seconds\": %.6f, \"new_share\": %.6f, \"change_seconds\": %.6f, "
		"\"change\": ", status_names[w->status],
		w->status <= ST_FASTER ? "true" : "false",
		w->mb, w->mb / base, w->mn, w->mn / ntotal, w->mn - w->mb);
	json_number(out, cmp ? (w->mn - w->mb) / w->mb : NAN);
	fputs(", \"p_value\": ", out);
	json_number(out, cmp ? w->p : NAN);
	fputs(", \"p_adjusted\": ", out);
	json_number(out, cmp && w->family ? w->padj : NAN);
	fputs(", \"t\": ", out);
	json_number(out, cmp ? w->t : NAN);
	fputs(", \"df\": ", out);
	json_number(out, cmp ? w->df : NAN);
	if (o->seq_max > 0 && w->tested && w->family && w->mb > 0) {
		fprintf(out, ", \"undecided\": %s, \"ruled_out\": ",
			seq_open(w, o) ? "true" : "false");
		json_number(out, w->bound / w->mb);
	}
	if ((stack = row_stack(w, b, nw))) {
		fputs(", \"stack\": ", out);
		json_string(out, stack);
	}
	fputc('}', out);
}

static void
print_json(FILE *out, const struct result *res, const struct side *b,
	   const struct side *nw, const struct diff_opts *o)
{
	const struct row *prog = &res->prog;
	const struct model *mo = &res->model;
	double ntotal = prog->mn / res->speed;	/* at the base's speed */
	int nslow = res->nslow;

	fprintf(out, "{\"verdict\": \"%s\", \"exit_status\": %d, \"regressions\": %d, "
		"\"improvements\": %d, \"metric\": \"%s\", \"alpha\": %g, "
		"\"threshold\": %g, \"min_seconds\": %g, \"family_size\": %zu, "
		"\"absolute\": %s, \"speed_ratio\": %.6g, \"speed_judged\": %s, "
		"\"speed_functions\": %zu,\n ",
		nslow ? "regression" : res->misfit ? "undecided" : "pass",
		diff_exit_status(res, o), nslow,
		res->nfast, metric_names[o->metric], o->alpha, o->threshold,
		o->min_seconds, res->family, o->absolute ? "true" : "false", res->speed,
		res->speed_judged ? "true" : "false", res->speed_functions);
	if (o->exp)
		json_experiment(out, o->exp);
	json_disturbed(out, b, nw, o);
	fprintf(out, "\"speed_fit\": {\"p\": %.6g, \"functions\": %zu, \"fits\": %s, "
		"\"would_blame\": ", res->fit_p, res->fit_functions,
		res->misfit ? "false" : "true");
	if (res->misfit)
		json_string(out, res->blamed.name);
	else
		fputs("null", out);
	fputs("},\n ", out);
	if (o->seq_max > 0)
		json_seq(out, res, o);
	json_side(out, "base", b, prog->mb);
	fputs(",\n ", out);
	json_side(out, "new", nw, prog->mn);
	fprintf(out, ",\n \"model\": {\"fitted\": %s, \"seconds_per_observation\": ",
		mo->fitted ? "true" : "false");
	json_number(out, mo->fit[FIT_A].a);
	fputs(", \"relative_run_noise\": ", out);
	json_number(out, sqrt(mo->fit[FIT_K].k));
	fputs(", \"joint\": {\"seconds_per_observation\": ", out);
	json_number(out, mo->fit[FIT_JOINT].a);
	fputs(", \"relative_run_noise\": ", out);
	json_number(out, sqrt(mo->fit[FIT_JOINT].k));
	fputs("}, \"prior_df\": ", out);
	json_number(out, mo->d0);
	fprintf(out, ", \"pooled_df\": %g},\n \"functions\": [", mo->pooled_df);
	for (size_t i = 0; i < res->nrows; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		json_row(out, &res->rows[i], prog->mb, ntotal, b, nw, o);
	}
	fprintf(out, "%s]}\n", res->nrows ? "\n " : "");
}

/* The comparison in the format of o. */
void
diff_print(FILE *out, const struct result *res, const struct side *b,
	   const struct side *nw, const struct diff_opts *o)
{
	switch (o->format) {
	case DIFF_TEXT:
		print_text(out, res, b, nw, o);
		break;
	case DIFF_JSON:
		print_json(out, res, b, nw, o);
		break;
	case DIFF_MARKDOWN:
		print_markdown(out, res, b, nw, o);
		break;
	}
}
