/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The processes that pcprof run's command left running: pcprof is the
 * command's child subreaper (PR_SET_CHILD_SUBREAPER), so that a process
 * the command put in the background and then left, before that process
 * loaded libpc.so or wrote anything, is still pcprof's descendant; run.c
 * names them when the command ends, or waits for them (--wait).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcprof.h"
#include "commands/launch.h"

/* pid's parent from /proc/PID/stat (after the comm, which may hold
 * spaces and parentheses), or -1, and -1 for a process that has ended
 * (a zombie its parent has not reaped runs no more). */
static pid_t
parent_of(pid_t pid)
{
	char path[64], buf[512], *close, state;
	FILE *f;
	size_t n;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	if (!(close = strrchr(buf, ')')) ||
	    sscanf(close + 1, " %c %d", &state, &ppid) != 2 ||
	    state == 'Z' || state == 'X')
		return -1;
	return (pid_t)ppid;
}

/* The processes of pid[0..n) whose parent (ppid[i]) is parent, added
 * to found[*k...]. */
static void
children_of(pid_t parent, const pid_t *pid, const pid_t *ppid, size_t n,
	    pid_t *found, size_t *k)
{
	for (size_t i = 0; i < n; i++)
		if (ppid[i] == parent && pid[i] != parent)
			found[(*k)++] = pid[i];
}

size_t
launch_descendants(pid_t **out)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t *pid = NULL, *ppid = NULL, *found;
	size_t n = 0, k = 0;

	*out = NULL;
	/* the orphans that came to pcprof and have ended: reaped, as any
	 * parent would (pcprof's only other child, CMD, is reaped already) */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = pc_realloc(pid, (n + 1) * sizeof(*pid));
		ppid = pc_realloc(ppid, (n + 1) * sizeof(*ppid));
		pid[n] = (pid_t)strtol(e->d_name, NULL, 10);
		ppid[n] = parent_of(pid[n]);
		n++;
	}
	closedir(d);
	/* breadth first from pcprof: a process once, its children after
	 * it (a tree: each has one parent, read once) */
	found = pc_realloc(NULL, (n + 1) * sizeof(*found));
	children_of(getpid(), pid, ppid, n, found, &k);
	for (size_t at = 0; at < k; at++)
		children_of(found[at], pid, ppid, n, found, &k);
	free(pid);
	free(ppid);
	*out = found;
	return k;
}
