/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for tools/commands/launch.c, the one launcher of pcprof's
 * commands: real commands run through it (true, false, sh), a command not
 * found or not runnable given a shell's status, a script with no #! line
 * run by /bin/sh, a command's signal in its status, its CPU usage, the
 * environment and process group it gets, and the stop signals passed on
 * or made to end it. Each test runs in Check's child, so that the
 * handlers and environment it sets go with it. No test waits on a clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pcprof.h"
#include "commands/launch.h"
#include "unit.h"

/* unit_base/name with text in it, of mode mode, into path. */
static const char *
put(char *path, size_t size, const char *name, const char *text, mode_t mode)
{
	FILE *f;

	snprintf(path, size, "%s/%s", unit_base, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
	return path;
}

/* The first line of the file at path, without its newline, into buf. */
static const char *
first_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	ck_assert_ptr_nonnull(f);
	if (!fgets(buf, (int)size, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/* sh -c script, found as a shell finds sh, run to its end as l says;
 * what it wrote to its standard output (captured) into out. */
static void
sh_run(struct launch *l, const char *script, char *out, size_t size)
{
	static char sh[PATH_MAX];
	static char *argv[4] = { (char *)"sh", (char *)"-c" };
	size_t n = 0;
	ssize_t k;

	ck_assert_int_eq(launch_find("sh", sh, sizeof(sh)), 0);
	argv[2] = (char *)script;
	l->exe = sh;
	l->argv = argv;
	l->capture = 1;
	ck_assert_int_eq(launch_start(l), 0);
	while (n + 1 < size && (k = read(l->output, out + n, size - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = 0;
	close(l->output);
	ck_assert_int_eq(launch_wait(l), 1);
}

/* exe with no arguments run to its end, say_as unset: launch_wait's. */
static int
run_file(struct launch *l, const char *exe)
{
	static char *argv[2];

	argv[0] = (char *)exe;
	memset(l, 0, sizeof(*l));
	l->exe = exe;
	l->argv = argv;
	return launch_run(l);
}

START_TEST(test_find_as_a_shell_finds)
{
	char out[PATH_MAX], path[PATH_MAX];
	char cwd[PATH_MAX];

	ck_assert_int_eq(launch_find("true", out, sizeof(out)), 0);
	ck_assert_int_eq(access(out, X_OK), 0);
	ck_assert_str_eq(strrchr(out, '/'), "/true");
	ck_assert_int_eq(
		launch_find("pcprof-unit-no-such-command", out, sizeof(out)),
		ENOENT);
	ck_assert_int_eq(launch_find(unit_base, out, sizeof(out)), EISDIR);
	put(path, sizeof(path), "plain", "true\n", 0644);
	ck_assert_int_eq(launch_find(path, out, sizeof(out)), EACCES);
	ck_assert_str_eq(out, path);
	/* not executable, found in PATH and named when no later entry has
	 * one that is; an empty entry is the current directory */
	setenv("PATH", unit_base, 1);
	ck_assert_int_eq(launch_find("plain", out, sizeof(out)), EACCES);
	ck_assert_str_eq(out, path);
	put(path, sizeof(path), "mine", "true\n", 0755);
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(unit_base), 0);
	setenv("PATH", "/pcprof-unit-not-there:", 1);
	ck_assert_int_eq(launch_find("mine", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "mine");
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_int_eq(launch_not_found("x", "x", ENOENT), 127);
	ck_assert_int_eq(launch_not_found("./x", "./x", ENOENT), 127);
	ck_assert_int_eq(launch_not_found("x", "/bin/x", EACCES), 126);
}
END_TEST

START_TEST(test_exit_statuses_come_back)
{
	char t[PATH_MAX], f[PATH_MAX];
	struct launch l;

	ck_assert_int_eq(launch_find("true", t, sizeof(t)), 0);
	ck_assert_int_eq(launch_find("false", f, sizeof(f)), 0);
	ck_assert_int_eq(run_file(&l, t), 1);
	ck_assert(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 0);
	ck_assert_int_eq(l.exec_err, 0);
	ck_assert_int_gt(l.pid, 0);
	ck_assert_int_eq(launch_end_like(l.status), 0);
	ck_assert_int_eq(run_file(&l, f), 1);
	ck_assert(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 1);
	ck_assert_int_eq(launch_end_like(l.status), 1);
}
END_TEST

/* What a shell gives a command that never ran: 127 for no such file (or
 * no interpreter), 126 for one that cannot be run; launch_wait says 0. */
START_TEST(test_commands_that_cannot_run)
{
	char path[PATH_MAX];
	struct launch l;

	snprintf(path, sizeof(path), "%s/not-there", unit_base);
	ck_assert_int_eq(run_file(&l, path), 0);
	ck_assert_int_eq(l.exec_err, ENOENT);
	ck_assert(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 127);

	put(path, sizeof(path), "not-runnable", "true\n", 0644);
	ck_assert_int_eq(run_file(&l, path), 0);
	ck_assert_int_eq(l.exec_err, EACCES);
	ck_assert(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 126);

	put(path, sizeof(path), "no-interpreter",
	    "#!/pcprof-unit-not-there/sh\ntrue\n", 0755);
	ck_assert_int_eq(run_file(&l, path), 0);
	ck_assert_int_eq(l.exec_err, ENOENT);
	ck_assert(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 127);
}
END_TEST

/* With say_as, the child says why itself and exits 127, which launch_wait
 * reports as a command that ran. */
START_TEST(test_say_as_leaves_it_to_the_child)
{
	char path[PATH_MAX], log[PATH_MAX], line[512], want[PATH_MAX + 64];
	char *argv[2] = { path, NULL };
	struct launch l = { 0 };

	snprintf(path, sizeof(path), "%s/not-there", unit_base);
	snprintf(log, sizeof(log), "%s/say-as.log", unit_base);
	l.exe = path;
	l.argv = argv;
	l.input = "/dev/null";
	l.log = log;
	l.say_as = "unit";
	ck_assert_int_eq(launch_run(&l), 1);
	ck_assert(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 127);
	snprintf(want, sizeof(want), "unit: '%s': %s", path, strerror(ENOENT));
	ck_assert_str_eq(first_line(log, line, sizeof(line)), want);
}
END_TEST

/* A script with no #! line is read by /bin/sh, with the file as $0 and
 * the arguments given; its output goes to the log, its input from input. */
START_TEST(test_script_without_hash_bang_runs_in_sh)
{
	char path[PATH_MAX], in[PATH_MAX], log[PATH_MAX], line[PATH_MAX + 64],
		want[PATH_MAX + 64];
	char *argv[3] = { path, (char *)"one two", NULL };
	struct launch l = { 0 };

	put(path, sizeof(path), "script", "read x; echo \"$0|$1|$x\"\n", 0755);
	put(in, sizeof(in), "script.in", "from input\n", 0644);
	snprintf(log, sizeof(log), "%s/script.log", unit_base);
	l.exe = path;
	l.argv = argv;
	l.input = in;
	l.log = log;
	ck_assert_int_eq(launch_run(&l), 1);
	ck_assert(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 0);
	snprintf(want, sizeof(want), "%s|one two|from input", path);
	ck_assert_str_eq(first_line(log, line, sizeof(line)), want);
}
END_TEST

START_TEST(test_signal_shows_in_the_status)
{
	struct launch l = { 0 };
	char out[64];

	sh_run(&l, "kill -USR1 $$", out, sizeof(out));
	ck_assert(WIFSIGNALED(l.status));
	ck_assert_int_eq(WTERMSIG(l.status), SIGUSR1);
}
END_TEST

/* launch_end_like ends pcprof by the command's signal. */
START_TEST(test_end_like_ends_by_the_commands_signal)
{
	launch_end_like(W_EXITCODE(0, SIGUSR1));
}
END_TEST

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double
seconds(struct timeval tv)
{
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

/* The usage of the command and of the children it waited for: a loop in
 * a subshell of sh counts, and no more CPU than the time it took. */
START_TEST(test_usage_is_measured)
{
	struct launch l = { 0 };
	char out[64];
	double start = now(), wall, cpu;

	sh_run(&l,
	       "(i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done); echo $i",
	       out, sizeof(out));
	wall = now() - start;
	cpu = seconds(l.ru.ru_utime) + seconds(l.ru.ru_stime);
	ck_assert_str_eq(out, "\n");	/* the loop ran in the subshell */
	ck_assert(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 0);
	ck_assert_msg(cpu > 0 && cpu < wall, "cpu %g s, wall %g s", cpu, wall);
}
END_TEST

/* LD_PRELOAD: libpc after what is preloaded already (libc.so.6, loaded
 * in any case, stands for both); PC_OUT as given; the child has it. */
START_TEST(test_environment_given)
{
	struct launch l = { 0 };
	char out[256];

	unsetenv("LD_PRELOAD");
	ck_assert_int_eq(launch_preload("libc.so.6", NULL), 0);
	ck_assert_str_eq(getenv("LD_PRELOAD"), "libc.so.6");
	ck_assert_int_eq(launch_preload("libc.so.6", "/bin/sh"), 0);
	ck_assert_str_eq(getenv("LD_PRELOAD"), "libc.so.6:libc.so.6");
	l.pc_out = "/pcprof-unit/out";
	sh_run(&l, "printf '%s|%s' \"$LD_PRELOAD\" \"$PC_OUT\"", out,
	       sizeof(out));
	ck_assert_str_eq(out, "libc.so.6:libc.so.6|/pcprof-unit/out");
}
END_TEST

/* launch_alloc: with PC_ALLOC set (not 0), libpc-alloc.so beside lib
 * first in LD_PRELOAD, before an allocator preloaded already, after an
 * ASan runtime that is first; nothing without PC_ALLOC, or with no
 * companion beside lib. */
/* t with each "D/" in it made dir's path: the template is read once, left
 * to right (replaced in the result again, a directory whose random name
 * ended in D, one in 62, was replaced over and over past the buffer) */
static void
with_dir(char *out, size_t size, const char *t, const char *dir)
{
	size_t n = 0;

	for (; *t && n + 1 < size; t++) {
		if (t[0] == 'D' && t[1] == '/')
			n += (size_t)snprintf(out + n, size - n, "%s", dir);
		else
			out[n++] = *t;
		ck_assert_uint_lt(n, size);
	}
	out[n] = 0;
}

START_TEST(test_alloc_hooks_go_first)
{
	static const struct {
		const char *pc_alloc, *preload, *want;	/* D: the directory */
	} cases[] = {
		{ NULL, "D/libpc.so", "D/libpc.so" },
		{ "0", "D/libpc.so", "D/libpc.so" },
		{ "1", "D/libpc.so", "D/libpc-alloc.so:D/libpc.so" },
		{ "only", "/x/libtcmalloc_minimal.so.4:D/libpc.so",
		  "D/libpc-alloc.so:/x/libtcmalloc_minimal.so.4:D/libpc.so" },
		{ "1", "libasan.so.8:D/libpc.so", "libasan.so.8:D/libpc-alloc.so:D/libpc.so" },
		{ "1", "/usr/lib/libasan.so.8", "/usr/lib/libasan.so.8:D/libpc-alloc.so" },
		{ "1", "", "D/libpc-alloc.so" },
	};
	char dir[] = "/tmp/pcprof-unit-XXXXXX", lib[64], hooks[64], a[128],
	     b[128];
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(lib, sizeof(lib), "%s/libpc.so", dir);
	snprintf(hooks, sizeof(hooks), "%s/libpc-alloc.so", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* D for the directory in each case */
		with_dir(a, sizeof(a), cases[i].preload, dir);
		with_dir(b, sizeof(b), cases[i].want, dir);
		if (cases[i].pc_alloc)
			setenv("PC_ALLOC", cases[i].pc_alloc, 1);
		else
			unsetenv("PC_ALLOC");
		/* no companion yet: nothing changes */
		setenv("LD_PRELOAD", a, 1);
		launch_alloc(lib);
		ck_assert_str_eq(getenv("LD_PRELOAD"), a);
		ck_assert_int_ge(fd = open(hooks, O_WRONLY | O_CREAT, 0644), 0);
		close(fd);
		launch_alloc(lib);
		ck_assert_msg(!strcmp(getenv("LD_PRELOAD"), b),
			      "case %zu: '%s', not '%s'", i,
			      getenv("LD_PRELOAD"), b);
		unlink(hooks);
	}
	unsetenv("PC_ALLOC");
	unsetenv("LD_PRELOAD");
	rmdir(dir);
}
END_TEST

/* The process group of the command that sh_run runs as group says. */
static pid_t
group_of(enum launch_group group, pid_t *pid)
{
	struct launch l = { 0 };
	char out[64];

	l.group = group;
	/* field 5 of /proc/PID/stat; sh's name, field 2, has no space */
	sh_run(&l, "read a b c d pgrp rest < /proc/$$/stat; echo $pgrp", out,
	       sizeof(out));
	*pid = l.pid;
	return (pid_t)atol(out);
}

START_TEST(test_process_group)
{
	int fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
	int front = fd >= 0 && tcgetpgrp(fd) == getpgrp();
	pid_t pid;

	if (fd >= 0)
		close(fd);
	ck_assert_int_eq(group_of(LAUNCH_GROUP_OWN, &pid), pid);
	ck_assert_int_eq(group_of(LAUNCH_GROUP_SAME, &pid), getpgrp());
	ck_assert_int_eq(group_of(LAUNCH_GROUP_UNLESS_FRONT, &pid),
			 front ? getpgrp() : pid);
}
END_TEST

/* LAUNCH_STOPS_PASS: a SIGTERM sent to pcprof (here by the command
 * itself) is passed to the command, whose end is waited for; pcprof then
 * ends by it. */
START_TEST(test_stop_passed_on)
{
	struct launch l = { 0 };
	char out[64];

	l.group = LAUNCH_GROUP_OWN;
	l.stops = LAUNCH_STOPS_PASS;
	sh_run(&l, "trap 'echo passed; exit 3' TERM; kill -TERM $PPID; "
	       "while :; do :; done", out, sizeof(out));
	ck_assert_str_eq(out, "passed\n");
	ck_assert(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 3);
	ck_assert_int_eq(launch_stopped(), SIGTERM);
	launch_end_like(l.status);
}
END_TEST

/* LAUNCH_STOPS_END: a SIGTERM sent to pcprof is not passed on as it
 * came: the command's whole group is sent SIGTERM, and ends by it. */
START_TEST(test_stop_ends_the_command)
{
	struct launch l = { 0 };
	char out[64];

	launch_catch_stops(0);
	l.group = LAUNCH_GROUP_OWN;
	l.stops = LAUNCH_STOPS_END;
	sh_run(&l, "kill -TERM $PPID; while :; do sleep 1; done", out,
	       sizeof(out));
	ck_assert(WIFSIGNALED(l.status));
	ck_assert_int_eq(WTERMSIG(l.status), SIGTERM);
	ck_assert_int_eq(launch_stopped(), SIGTERM);
}
END_TEST

Suite *
launch_suite(void)
{
	Suite *s = suite_create("launch");
	TCase *t = tcase_create("core");
	struct sigaction sa;

	tcase_add_unchecked_fixture(t, unit_base_make, unit_base_remove);
	tcase_add_test(t, test_find_as_a_shell_finds);
	tcase_add_test(t, test_exit_statuses_come_back);
	tcase_add_test(t, test_commands_that_cannot_run);
	tcase_add_test(t, test_say_as_leaves_it_to_the_child);
	tcase_add_test(t, test_script_without_hash_bang_runs_in_sh);
	tcase_add_test(t, test_signal_shows_in_the_status);
	tcase_add_test_raise_signal(
		t, test_end_like_ends_by_the_commands_signal, SIGUSR1);
	tcase_add_test(t, test_usage_is_measured);
	tcase_add_test(t, test_environment_given);
	tcase_add_test(t, test_alloc_hooks_go_first);
	tcase_add_test(t, test_process_group);
	/* a SIGTERM ignored when pcprof started is never caught, as a shell
	 * leaves it: then these have nothing to see */
	if (sigaction(SIGTERM, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN) {
		unit_skip("launch's stop tests", "SIGTERM is ignored");
	} else {
		tcase_add_test_raise_signal(t, test_stop_passed_on, SIGTERM);
		tcase_add_test(t, test_stop_ends_the_command);
	}
	suite_add_tcase(s, t);
	return s;
}
