/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lines a whole run's report opens with (runview_out.h): one per
 * process, the timer the processes got, and the CPU time their clocks
 * measured and no sample saw, as text or as JSON. Called by runview.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writers/runview_out.h"

/* Up to this many processes get a line each (more with --processes);
 * more are summed by program, the busiest this many programs shown */
#define PROCS_SHOWN	10
/* the endings of this many processes, where the table sums them */
#define ENDINGS_SHOWN	5

struct unsampled {
	double before, tail, writing;
	int known;		/* processes whose manifest has their clocks */
};

static struct unsampled
unsampled_sum(const struct runview *v)
{
	struct unsampled u = { 0, 0, 0, 0 };

	for (size_t i = 0; i < v->nprocs; i++) {
		u.before += v->procs[i].before;
		u.tail += v->procs[i].tail;
		u.writing += v->procs[i].writing;
		u.known += v->procs[i].have_cpu;
	}
	return u;
}

/*
 * The CPU time the processes' clocks measured and no sample saw: one
 * line, so that the report accounts for all of it. Shares stay shares of
 * what was sampled.
 */
static void
print_unsampled_text(FILE *out, const struct runview *v, double sampled)
{
	struct unsampled u = unsampled_sum(v);
	double all = sampled + u.before + u.tail + u.writing;

	if (!u.known)
		return;
	fprintf(out, "Not sampled: %.3f s (%.1f%%) of the %.3f s that the processes' CPU clocks "
		"measured:\n%.3f s before libpc started (exec, loading), %.3f s in no sample "
		"(threads' last ticks), %.3f s writing\n",
		all - sampled, all > 0 ? 100 * (all - sampled) / all : 0, all,
		u.before, u.tail, u.writing);
	if ((size_t)u.known < v->nprocs)
		fprintf(out, "(%zu of the %zu processes' profiles do not record their clocks)\n",
			v->nprocs - (size_t)u.known, v->nprocs);
}

static const char *const timer_names[] = { "not said", "posix", "taskclock" };

/* ns in us to a tenth, rounded as libpc's own line says it (printf's
 * %.1f of 24.95 would say 24.9, libpc 25.0) */
static const char *
tenths_of_us(uint64_t ns, char *buf, size_t size)
{
	unsigned long long tenths = GMON_US_TENTHS(ns);

	snprintf(buf, size, "%llu.%llu", tenths / 10, tenths % 10);
	return buf;
}

/* "posix, chosen by its cost: a task-clock sample costs 18.9 us here, over
 * the 5.0 us under which libpc takes task-clock" */
static void
describe_timer(FILE *out, const struct runview_proc *p)
{
	char cost[24], cheap[24];

	fputs(timer_names[p->timer], out);
	if (p->timer_how == GMON_TIMER_ASKED)
		fputs(", as PC_TIMER asked", out);
	else if (p->timer_how == GMON_TIMER_REFUSED)
		fputs(", task-clock refused (perf_event_paranoid, or seccomp)", out);
	else if (p->timer_how == GMON_TIMER_MEASURED)
		fprintf(out, ", chosen by its cost: a task-clock sample costs %s us here, %s "
			"the %s us under which libpc takes task-clock",
			tenths_of_us(p->timer_cost, cost, sizeof(cost)),
			p->timer_cost < GMON_TASKCLOCK_CHEAP_NS ? "under" : "over",
			tenths_of_us(GMON_TASKCLOCK_CHEAP_NS, cheap, sizeof(cheap)));
}

/* The timer the processes got, when their manifests say: one line. */
static void
print_timer_text(FILE *out, const struct runview *v)
{
	size_t n[3] = { 0, 0, 0 }, first = v->nprocs;

	for (size_t i = 0; i < v->nprocs; i++) {
		n[v->procs[i].timer]++;
		if (v->procs[i].timer && first == v->nprocs)
			first = i;
	}
	if (first == v->nprocs)
		return;
	fputs("Timer: ", out);
	describe_timer(out, &v->procs[first]);
	if (n[1] && n[2])
		fprintf(out, " (posix in %zu processes, taskclock in %zu)", n[1], n[2]);
	fputc('\n', out);
}

/*
 * Where the timer gave fewer signals than the rate asked, each standing
 * for several samples (1 + its overrun): one note, for the samples are
 * then fewer than they look. POSIX timers are held to the kernel tick.
 */
static void
print_rate_note(FILE *out, const struct runview *v)
{
	uint64_t signals = 0, samples = 0;
	const struct runview_proc *first = NULL;

	for (size_t i = 0; i < v->nprocs; i++)
		if (v->procs[i].signals) {
			signals += v->procs[i].signals;
			samples += v->procs[i].signal_samples;
			first = first ? first : &v->procs[i];
		}
	if (!signals || samples <= GMON_SAMPLES_A_SIGNAL * signals)
		return;
	fprintf(out, "note: rate %u Hz asked, %.0f signals/s given by the timer (%s): each "
		"signal stands for ~%.0f samples\n", first->rate,
		(double)first->rate * (double)signals / (double)samples,
		first->timer == GMON_TIMER_TASKCLOCK ? "the task clock gives no more" :
		"POSIX timers are held to the kernel tick", (double)samples / (double)signals);
}

/* " (killed by SIGINT)": how p ended, where that is not an exit. */
static const char *
ending_of(const struct runview_proc *p, char *buf, size_t size)
{
	const char *abbrev = p->end_signal ? sigabbrev_np(p->end_signal) : NULL;

	if (p->ended == GMON_ENDED_KILLED)
		return " (killed: its profile was finished by pcprof)";
	if (p->ended != GMON_ENDED_SIGNAL)
		return "";
	if (abbrev)
		snprintf(buf, size, " (killed by SIG%s)", abbrev);
	else
		snprintf(buf, size, " (killed by signal %d)", p->end_signal);
	return buf;
}

/* The seconds column's head for the view's clock. */
static const char *
clock_head(const struct runview *v)
{
	return v->clock == PC_CLOCK_WALL ? "wall s" : v->clock == PC_CLOCK_OFF ? "off-CPU s" :
	       "CPU s";
}

/* One line a process. */
static void
print_procs(FILE *out, const struct runview *v, double total)
{
	char buf[64];

	fprintf(out, "%10s %7s %8s %7s  %s\n", clock_head(v), "share", "pid", "threads", "program");
	for (size_t i = 0; i < v->nprocs; i++) {
		const struct runview_proc *p = &v->procs[i];

		fprintf(out, "%10.3f %6.2f%% ", p->shown, total ? 100 * p->shown / total : 0);
		if (p->pid)
			fprintf(out, "%8llu", (unsigned long long)p->pid);
		else
			fprintf(out, "%8s", "-");
		if (p->threads)
			fprintf(out, " %7llu", (unsigned long long)p->threads);
		else
			fprintf(out, " %7s", "-");
		fprintf(out, "  %s%s\n", text_name(p->program), ending_of(p, buf, sizeof(buf)));
	}
}

/* A program's processes, summed. */
struct program {
	const char *name;
	size_t procs;
	double seconds;
};

static int
cmp_program_name(const void *a, const void *b)
{
	return strcmp(((const struct program *)a)->name, ((const struct program *)b)->name);
}

static int
cmp_program_cpu(const void *a, const void *b)
{
	const struct program *x = a, *y = b;

	if (x->seconds != y->seconds)
		return x->seconds > y->seconds ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The processes summed by program, busiest first: *n programs. */
static struct program *
programs_of(const struct runview *v, size_t *n)
{
	struct program *g = pc_calloc(v->nprocs + 1, sizeof(*g));
	size_t k = 0;

	for (size_t i = 0; i < v->nprocs; i++)
		g[i] = (struct program){ v->procs[i].program, 1, v->procs[i].shown };
	qsort(g, v->nprocs, sizeof(*g), cmp_program_name);
	for (size_t i = 0; i < v->nprocs; i++) {
		if (k && !strcmp(g[k - 1].name, g[i].name)) {
			g[k - 1].procs++;
			g[k - 1].seconds += g[i].seconds;
			continue;
		}
		g[k++] = g[i];
	}
	qsort(g, k, sizeof(*g), cmp_program_cpu);
	*n = k;
	return g;
}

/* The processes that did not end by an exit, where the table sums them. */
static void
print_endings(FILE *out, const struct runview *v)
{
	size_t n = 0;
	char buf[64];

	for (size_t i = 0; i < v->nprocs; i++) {
		const struct runview_proc *p = &v->procs[i];

		if (!*ending_of(p, buf, sizeof(buf)))
			continue;
		if (n++ < ENDINGS_SHOWN)
			fprintf(out, "pid %llu, %s%s\n", (unsigned long long)p->pid,
				text_name(p->program), ending_of(p, buf, sizeof(buf)));
	}
	if (n > ENDINGS_SHOWN)
		fprintf(out, "(and %zu more that did not exit)\n", n - ENDINGS_SHOWN);
}

/* One line a program, the busiest PROCS_SHOWN, then one for the rest. */
static void
print_programs(FILE *out, const struct runview *v, double total)
{
	size_t n;
	struct program *g = programs_of(v, &n);
	double rest = 0;

	fprintf(out, "%10s %7s %9s  %s\n", clock_head(v), "share", "processes", "program");
	for (size_t i = 0; i < n; i++) {
		if (i >= PROCS_SHOWN) {
			rest += g[i].seconds;
			continue;
		}
		fprintf(out, "%10.3f %6.2f%% %9zu  %s\n", g[i].seconds,
			total ? 100 * g[i].seconds / total : 0, g[i].procs, text_name(g[i].name));
	}
	if (n > PROCS_SHOWN)
		fprintf(out, "%10.3f %6.2f%% %9s  (%zu more programs)\n", rest,
			total ? 100 * rest / total : 0, "", n - PROCS_SHOWN);
	fprintf(out, "(%zu processes of %zu program%s: --processes lists each)\n", v->nprocs,
		n, n == 1 ? "" : "s");
	free(g);
	print_endings(out, v);
}

void
runview_print_text(FILE *out, const struct runview *v, const char *where, double total)
{
	fprintf(out, "Run in %s: %zu process%s, %.3f s of CPU sampled", text_name(where),
		v->nprocs, v->nprocs == 1 ? "" : "es", v->cpu_total);
	if (v->clock != PC_CLOCK_CPU)
		fprintf(out, ", %.3f s of %s time", total,
			v->clock == PC_CLOCK_WALL ? "wall (threads' CPU and off-CPU)" : "off-CPU");
	fputc('\n', out);
	print_timer_text(out, v);
	print_rate_note(out, v);
	fputc('\n', out);
	if (v->nprocs > PROCS_SHOWN && !v->all_processes)
		print_programs(out, v, total);
	else
		print_procs(out, v, total);
	print_unsampled_text(out, v, v->cpu_total);
	fputc('\n', out);
}

void
runview_print_json(FILE *out, const struct runview *v, double total)
{
	fputs("{\"processes\": [", out);
	for (size_t i = 0; i < v->nprocs; i++) {
		const struct runview_proc *p = &v->procs[i];

		fputs(i ? ",\n  " : "\n  ", out);
		fputs("{\"program\": ", out);
		json_string(out, p->program);
		fputs(", \"path\": ", out);
		json_string(out, p->exe);
		fputs(", \"profile\": ", out);
		json_string(out, p->profile);
		fprintf(out, ", \"pid\": %llu, \"threads\": %llu, \"cpu_seconds\": %.6f, "
			"\"samples\": %.6g, \"share\": %.6f", (unsigned long long)p->pid,
			(unsigned long long)p->threads, p->seconds, p->samples,
			total ? p->shown / total : 0);
		if (v->clock == PC_CLOCK_WALL)
			fprintf(out, ", \"wall_seconds\": %.6f", p->shown);
		if (v->clock != PC_CLOCK_CPU)
			fprintf(out, ", \"off_cpu_seconds\": %.6f", p->off);
		if (p->timer) {
			static const char *const hows[] = { "", "asked", "measured", "refused" };

			fprintf(out, ", \"timer\": {\"kind\": \"%s\", \"chosen\": \"%s\", "
				"\"taskclock_cost_ns\": %llu}", timer_names[p->timer],
				hows[p->timer_how], (unsigned long long)p->timer_cost);
		}
		if (p->ended == GMON_ENDED_KILLED)
			fputs(", \"killed\": true", out);
		if (p->ended == GMON_ENDED_SIGNAL)
			fprintf(out, ", \"signal\": %d", p->end_signal);
		if (p->signals)
			fprintf(out, ", \"timer_signals\": %llu, \"timer_samples\": %llu",
				(unsigned long long)p->signals,
				(unsigned long long)p->signal_samples);
		if (p->have_cpu)
			fprintf(out, ", \"not_sampled\": {\"before_start\": %.6f, "
				"\"while_sampling\": %.6f, \"writing\": %.6f}",
				p->before, p->tail, p->writing);
		fputc('}', out);
	}
	fprintf(out, "%s], \"cpu_seconds\": %.6f, ", v->nprocs ? "\n" : "", v->cpu_total);
	if (v->clock != PC_CLOCK_CPU)
		fprintf(out, "\"clock\": \"%s\", \"%s_seconds\": %.6f, ", clock_word(v->clock),
			v->clock == PC_CLOCK_WALL ? "wall" : "off_cpu", total);
	{
		struct unsampled u = unsampled_sum(v);

		fprintf(out, "\"not_sampled\": {\"before_start\": %.6f, \"while_sampling\": "
			"%.6f, \"writing\": %.6f, \"processes_with_clocks\": %d}, ",
			u.before, u.tail, u.writing, u.known);
	}
	fputs("\"profile\": ", out);
}
