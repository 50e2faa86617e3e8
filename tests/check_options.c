/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report options that report and run share (commands/options.c), and
 * diff's and compare's (diff_option, commands/diff.c), as their getopt
 * loops read them: each row an argv and what it parses to
 * (the options set, as "name=value" in struct order, those left at their
 * default not shown) or the one line and exit status 2 of a bad value.
 * Each row runs in a child of its own, since a bad value ends pcprof.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcprof.h"
#include "commands/options.h"
#include "model/diff.h"
#include "model/sequential.h"
#include "symbols/symtab.h"
#include "unit.h"

static const struct option longopts[] = {
	REPORT_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

/* pcprof diff's and compare's (commands/diff.c's parse_args) */
static const struct option diff_longopts[] = {
	DIFF_LONGOPTS,
	{ "flame", required_argument, NULL, OPT_FLAME },
	{ "looks", required_argument, NULL, OPT_LOOKS },
	{ NULL, 0, NULL, 0 },
};

static void
put_str(const char *name, const char *v)
{
	if (v)
		printf(" %s=%s", name, v);
}

static void
put_int(const char *name, long v)
{
	if (v)
		printf(" %s=%ld", name, v);
}

/* What r and s hold that is not their default, on stdout. */
static void
print_opts(const struct report_opts *r, const struct symtab_opts *s)
{
	static const char *const formats[] = {
		"text",       "json",      "csv",     "folded", "pprof",
		"speedscope", "callgrind", "firefox", "gmon",
	};

	if (r->format)
		printf(" format=%s", formats[r->format]);
	put_int("top", r->top);
	put_int("callgraph", r->callgraph);
	put_int("by_object", r->by_object);
	put_int("lines", r->lines);
	put_str("stacks", r->stacks);
	put_str("process", r->process);
	put_int("all_processes", r->all_processes);
	put_int("by_thread", r->by_thread);
	put_str("thread", r->thread);
	if (r->clock)
		printf(" clock=%s", clock_word(r->clock));
	put_int("alloc", r->alloc);
	if (r->window & WINDOW_FROM)
		printf(" from=%g", r->from);
	if (r->window & WINDOW_TO)
		printf(" to=%g", r->to);
	put_str("marker", r->marker);
	put_int("window", r->window);
	put_int("keep_pieces", s->keep_pieces);
	put_int("no_demangle", s->no_demangle);
	put_int("full_names", s->full_names);
	put_str("debug_root", s->debug_root);
}

/* What o holds that is not diff's default, on stdout. */
static void
print_diff_opts(const struct diff_opts *o)
{
	static const char *const metrics[] = { "self", "total", "program",
					       "wall", "alloc", "alloc-bytes" };
	static const char *const formats[] = { "text", "json", "markdown" };
	const struct diff_opts d = DIFF_OPTS_DEFAULT;

	if (o->metric != d.metric)
		printf(" metric=%s", metrics[o->metric]);
	if (o->format != d.format)
		printf(" format=%s", formats[o->format]);
	if (o->alpha != d.alpha)
		printf(" alpha=%g", o->alpha);
	if (o->threshold != d.threshold)
		printf(" threshold=%g", o->threshold);
	if (o->min_seconds != d.min_seconds)
		printf(" min_seconds=%g", o->min_seconds);
	if (o->top != d.top)
		printf(" top=%ld", o->top);
	put_int("absolute", o->absolute);
	put_str("flame", o->flame);
	put_int("seq_min", o->seq_min);
	put_int("seq_max", o->seq_max);
	put_int("replay", o->replay);
	put_int("undecided_fail", o->undecided_fail);
	put_int("threshold_set", o->threshold_set);
	put_str("marker", o->marker);
}

/* The child: argv parsed as `pcprof report` (diff 0) or `pcprof diff`
 * (diff 1) parses its options. */
static void
parse(char **argv, int diff)
{
	struct report_opts r;
	struct diff_opts o = DIFF_OPTS_DEFAULT;
	struct symtab_opts s;
	int argc = 0, c;

	memset(&r, 0, sizeof(r));
	memset(&s, 0, sizeof(s));
	while (argv[argc])
		argc++;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", diff ? diff_longopts : longopts,
				NULL)) != -1)
		if (c == '?' || c == ':' ||
		    !(diff ? diff_option(c, optarg, &o, &s) :
			     report_option(c, optarg, &r, &s))) {
			printf("not a %s option: %s", diff ? "diff" : "report",
			       argv[optind - 1]);
			fflush(stdout);
			_exit(1);
		}
	printf("ok");
	if (diff) {
		print_diff_opts(&o);
		memset(&r, 0, sizeof(r));
	}
	print_opts(&r, &s);
	fflush(stdout);
	_exit(0);
}

/* argv's parse, run in a child: "STATUS: what it printed" into buf. */
static void
run_parse(char **argv, int diff, char *buf, size_t size)
{
	int fd[2], status;
	size_t n;
	ssize_t k;
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		parse(argv, diff);
	}
	close(fd[1]);
	n = (size_t)snprintf(buf, size, "?: ");
	while (n + 1 < size && (k = read(fd[0], buf + n, size - n - 1)) > 0)
		n += (size_t)k;
	buf[n] = 0;
	close(fd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	buf[0] = (char)('0' + WEXITSTATUS(status));
	/* the message's newline */
	if (n > 3 && buf[n - 1] == '\n')
		buf[n - 1] = 0;
}

#define ARGV(...)	{ "pcprof", __VA_ARGS__, NULL }
#define FORMATS	"not text, json, csv, folded, pprof, speedscope, callgrind, firefox or gmon"
#define CLOCKS	"not wall, cpu or off (or, of allocations, alloc, alloc-bytes, inuse or " \
		"inuse-bytes)"

/*
 * Cases: no option; every --format word, a bad one, the last of two wins,
 * --opt=value; --top a count, 0, negative, trailing junk, empty; every
 * --clock word and a bad one; --metric an allocation metric, a clock that
 * is none (its own message), a word that is neither (--clock's message);
 * --from and --to in seconds, with exponents, negative, 1e9, not numbers;
 * --marker; the flags; the options with a name; the symbol options; an
 * option that is no report option; a missing argument.
 */
static const struct {
	const char *argv[8];
	const char *want;
} rows[] = {
	{ { "pcprof", NULL }, "0: ok" },
	{ ARGV("--format", "text"), "0: ok" },
	{ ARGV("--format", "json"), "0: ok format=json" },
	{ ARGV("--format", "csv"), "0: ok format=csv" },
	{ ARGV("--format", "folded"), "0: ok format=folded" },
	{ ARGV("--format", "pprof"), "0: ok format=pprof" },
	{ ARGV("--format", "speedscope"), "0: ok format=speedscope" },
	{ ARGV("--format", "callgrind"), "0: ok format=callgrind" },
	{ ARGV("--format", "firefox"), "0: ok format=firefox" },
	{ ARGV("--format", "gmon"), "0: ok format=gmon" },
	{ ARGV("--format=csv"), "0: ok format=csv" },
	{ ARGV("--format", "csv", "--format", "json"), "0: ok format=json" },
	{ ARGV("--format", "JSON"), "2: pcprof: --format 'JSON': " FORMATS },
	{ ARGV("--format", ""), "2: pcprof: --format '': " FORMATS },
	{ ARGV("--top", "5"), "0: ok top=5" },
	{ ARGV("--top", "0"), "0: ok" },
	{ ARGV("--top", "-1"), "2: pcprof: --top '-1': not a count" },
	{ ARGV("--top", "5x"), "2: pcprof: --top '5x': not a count" },
	{ ARGV("--top", ""), "2: pcprof: --top '': not a count" },
	{ ARGV("--clock", "wall"), "0: ok clock=wall" },
	{ ARGV("--clock", "cpu"), "0: ok clock=cpu" },
	{ ARGV("--clock", "off"), "0: ok clock=off" },
	{ ARGV("--clock", "alloc-bytes"), "0: ok clock=alloc-bytes" },
	{ ARGV("--clock", "Wall"), "2: pcprof: --clock 'Wall': " CLOCKS },
	{ ARGV("--metric", "inuse"), "0: ok clock=inuse" },
	{ ARGV("--metric", "inuse-bytes"), "0: ok clock=inuse-bytes" },
	{ ARGV("--metric", "alloc"), "0: ok clock=alloc" },
	{ ARGV("--metric", "wall"),
	  "2: pcprof: --metric 'wall': not alloc, alloc-bytes, inuse or inuse-bytes" },
	{ ARGV("--metric", "bytes"),
	  "2: pcprof: --metric 'bytes': not alloc, alloc-bytes, inuse or inuse-bytes" },
	{ ARGV("--from", "1.5", "--to", "2e1"),
	  "0: ok from=1.5 to=20 window=3" },
	{ ARGV("--to", "0"), "0: ok to=0 window=2" },
	{ ARGV("--from", "-1"),
	  "2: pcprof: --from '-1': not a time in seconds" },
	{ ARGV("--to", "1e9"), "2: pcprof: --to '1e9': not a time in seconds" },
	{ ARGV("--from", "1s"),
	  "2: pcprof: --from '1s': not a time in seconds" },
	{ ARGV("--to", ""), "2: pcprof: --to '': not a time in seconds" },
	{ ARGV("--from", "nan"),
	  "2: pcprof: --from 'nan': not a time in seconds" },
	{ ARGV("--marker", "phase one"), "0: ok marker=phase one window=4" },
	{ ARGV("--callgraph", "--by-object", "--lines", "--processes",
	       "--by-thread", "--alloc"),
	  "0: ok callgraph=1 by_object=1 lines=1 all_processes=1 by_thread=1 alloc=1" },
	{ ARGV("--process", "git", "--thread", "42", "--stacks-file",
	       "s.stacks"),
	  "0: ok stacks=s.stacks process=git thread=42" },
	{ ARGV("--keep-pieces", "--no-demangle", "--full-names", "--debug-dir",
	       "/d"),
	  "0: ok keep_pieces=1 no_demangle=1 full_names=1 debug_root=/d" },
	{ ARGV("--callgrap"), "0: ok callgraph=1" }, /* getopt's abbreviation */
	{ ARGV("--nope"), "1: not a report option: --nope" },
	{ ARGV("--top"), "1: not a report option: --top" },
};

START_TEST(test_report_options_parse_or_say_why)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[512];

		run_parse((char **)rows[i].argv, 0, buf, sizeof(buf));
		ck_assert_msg(!strcmp(buf, rows[i].want),
			      "row %zu (%s %s): got '%s', want '%s'", i,
			      rows[i].argv[1] ? rows[i].argv[1] : "",
			      rows[i].argv[1] && rows[i].argv[2] ?
				      rows[i].argv[2] :
				      "",
			      buf, rows[i].want);
	}
}
END_TEST

/*
 * pcprof diff's and compare's options (diff_option). Cases: no option;
 * every --metric word and a bad one; --alpha inside (0, 1), at its ends,
 * negative, not a number; --threshold in percent, with a % sign, not
 * finite; --min-seconds, which takes no %; --format's words and a report
 * format; --top; --absolute, --flame, --marker; --undecided's words and
 * another; --looks from 1 to 1000 (the first look at SEQ_MIN_RUNS); a
 * symbol option; a report option that is none of diff's.
 */
static const struct {
	const char *argv[8];
	const char *want;
} diff_rows[] = {
	{ { "pcprof", NULL }, "0: ok" },
	{ ARGV("--metric", "total"), "0: ok metric=total" },
	{ ARGV("--metric", "program"), "0: ok metric=program" },
	{ ARGV("--metric", "wall"), "0: ok metric=wall" },
	{ ARGV("--metric", "alloc"), "0: ok metric=alloc" },
	{ ARGV("--metric", "alloc-bytes"), "0: ok metric=alloc-bytes" },
	{ ARGV("--metric", "self"), "0: ok" },
	{ ARGV("--metric", "cpu"),
	  "2: pcprof: --metric 'cpu': not self, total, program, wall, alloc or alloc-bytes" },
	{ ARGV("--alpha", "0.05"), "0: ok alpha=0.05" },
	{ ARGV("--alpha", "0"), "2: pcprof: --alpha '0': not between 0 and 1" },
	{ ARGV("--alpha", "1"), "2: pcprof: --alpha '1': not between 0 and 1" },
	{ ARGV("--alpha", "-0.1"), "2: pcprof: --alpha '-0.1': not a number" },
	{ ARGV("--alpha", "x"), "2: pcprof: --alpha 'x': not a number" },
	{ ARGV("--threshold", "2"), "0: ok threshold=0.02 threshold_set=1" },
	{ ARGV("--threshold", "2.5%"),
	  "0: ok threshold=0.025 threshold_set=1" },
	{ ARGV("--threshold", "inf"),
	  "2: pcprof: --threshold 'inf': not a number of percent" },
	{ ARGV("--threshold", "5%%"),
	  "2: pcprof: --threshold '5%%': not a number of percent" },
	{ ARGV("--min-seconds", "0.5"), "0: ok min_seconds=0.5" },
	{ ARGV("--min-seconds", "1%"),
	  "2: pcprof: --min-seconds '1%': not a number" },
	{ ARGV("--format", "markdown"), "0: ok format=markdown" },
	{ ARGV("--format", "json"), "0: ok format=json" },
	{ ARGV("--format", "csv"),
	  "2: pcprof: --format 'csv': not text, json or markdown" },
	{ ARGV("--top", "3"), "0: ok top=3" },
	{ ARGV("--top", "-3"), "2: pcprof: --top '-3': not a count" },
	{ ARGV("--absolute", "--flame", "d.svg", "--marker", "m"),
	  "0: ok absolute=1 flame=d.svg marker=m" },
	{ ARGV("--undecided", "fail"), "0: ok undecided_fail=1" },
	{ ARGV("--undecided", "pass"), "0: ok" },
	{ ARGV("--undecided", "maybe"),
	  "2: pcprof: --undecided 'maybe': not pass or fail" },
	{ ARGV("--looks", "8"), "0: ok seq_min=3 seq_max=8 replay=1" },
	{ ARGV("--looks", "0"),
	  "2: pcprof: --looks '0': not a count of runs from 1 to 1000" },
	{ ARGV("--looks", "1001"),
	  "2: pcprof: --looks '1001': not a count of runs from 1 to 1000" },
	{ ARGV("--no-demangle"), "0: ok no_demangle=1" },
	{ ARGV("--callgraph"), "1: not a diff option: --callgraph" },
};

START_TEST(test_diff_options_parse_or_say_why)
{
	ck_assert_int_eq(SEQ_MIN_RUNS, 3);	/* as the rows say */
	for (size_t i = 0; i < sizeof(diff_rows) / sizeof(diff_rows[0]); i++) {
		char buf[512];

		run_parse((char **)diff_rows[i].argv, 1, buf, sizeof(buf));
		ck_assert_msg(!strcmp(buf, diff_rows[i].want),
			      "row %zu (%s %s): got '%s', want '%s'", i,
			      diff_rows[i].argv[1] ? diff_rows[i].argv[1] : "",
			      diff_rows[i].argv[1] && diff_rows[i].argv[2] ?
				      diff_rows[i].argv[2] :
				      "",
			      buf, diff_rows[i].want);
	}
}
END_TEST

/* Every clock's word reads back as itself (clock_word and clock_named
 * agree), and the report options' help names every --format word. */
START_TEST(test_clock_words_round_trip)
{
	for (enum pc_clock c = PC_CLOCK_CPU; c <= PC_CLOCK_INUSE_BYTES; c++)
		ck_assert_int_eq(clock_named(clock_word(c)), c);
	for (const char *w =
		     "pprof\0speedscope\0callgrind\0folded\0csv\0json\0";
	     *w; w += strlen(w) + 1)
		ck_assert_msg(strstr(REPORT_OPTIONS_HELP, w) != NULL,
			      "help lacks %s", w);
}
END_TEST

Suite *
options_suite(void)
{
	Suite *s = suite_create("options");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_report_options_parse_or_say_why);
	tcase_add_test(t, test_diff_options_parse_or_say_why);
	tcase_add_test(t, test_clock_words_round_trip);
	suite_add_tcase(s, t);
	return s;
}
