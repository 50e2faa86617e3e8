/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Naming waits (waits.h): the system call table is generated from the
 * kernel's <asm/unistd_64.h> by the Makefile, so that it is the one the
 * recording machine's libc was built against, never a list typed here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gmon/gmon.h"
#include "pcprof.h"
#include "symbols/waits.h"
#include "gen/syscalls.h"	/* syscall_names[], by number */

const char *
syscall_name(unsigned nr)
{
	if (nr >= sizeof(syscall_names) / sizeof(syscall_names[0]))
		return NULL;
	return syscall_names[nr];
}

/* The descriptor kinds' words, in enum gmon_fd_kind's order. */
static const char *const fd_words[GMON_FD_KINDS] = {
	"", "file", "pipe", "socket", "tty", "eventfd", "other"
};

uint32_t
wait_pid(uint64_t w)
{
	const char *call;

	if (!GMON_IS_WAIT(w))
		return 0;
	call = syscall_name(GMON_WAIT_CALL(w));
	/* only a wait for a child carries a pid (gmon.h) */
	if (!call || (strcmp(call, "wait4") && strcmp(call, "waitid")))
		return 0;
	return GMON_WAIT_PID(w);
}

char *
wait_name(uint64_t w, char *buf, size_t size)
{
	unsigned nr = GMON_WAIT_CALL(w), fd = GMON_WAIT_FD(w);
	const char *call = syscall_name(nr);
	char num[32];
	int n;

	if (nr == GMON_WAIT_RUNQUEUE)
		call = "runqueue";
	else if (nr == GMON_WAIT_NOCALL)
		call = "fault";
	else if (nr == GMON_WAIT_UNSEEN)
		call = "unknown";
	else if (!call) {
		snprintf(num, sizeof(num), "syscall %u", nr);
		call = num;
	}
	n = snprintf(buf, size, WAIT_PREFIX "%s", call);
	if (n < 0 || (size_t)n >= size)
		return buf;
	if (fd != GMON_FD_NONE)
		n += snprintf(buf + n, size - (size_t)n, " %s",
			      fd < GMON_FD_KINDS ? fd_words[fd] : "other");
	if (n >= 0 && (size_t)n < size && wait_pid(w))
		n += snprintf(buf + n, size - (size_t)n, " pid %u",
			      (unsigned)wait_pid(w));
	if (n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "]");
	return buf;
}

int
wait_name_is(const char *name)
{
	return !strncmp(name, WAIT_PREFIX, sizeof(WAIT_PREFIX) - 1);
}

/* The calls whose wait lasts until another thread or process acts. */
static const char *const calls_on_others[] = {
	"futex", "wait4", "waitid", "poll", "ppoll", "select", "pselect6",
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "accept", "accept4",
	"pause", "rt_sigsuspend", "rt_sigtimedwait", "msgrcv", "semop",
	"semtimedop",
};

/* whether the n bytes at s are one of names[0..count) */
static int
one_of(const char *s, size_t n, const char *const *names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (strlen(names[i]) == n && !strncmp(s, names[i], n))
			return 1;
	return 0;
}

int
wait_name_on_others(const char *name)
{
	const char *call = name + sizeof(WAIT_PREFIX) - 1, *end, *sp;
	size_t n;

	if (!wait_name_is(name) || !(end = strchr(call, ']')))
		return 0;
	sp = memchr(call, ' ', (size_t)(end - call));
	n = (size_t)((sp ? sp : end) - call);
	if (one_of(call, n, calls_on_others,
		   sizeof(calls_on_others) / sizeof(*calls_on_others)))
		return 1;
	/* a read or write of a pipe, socket, eventfd or tty (fd_words) */
	return sp && one_of(sp + 1, (size_t)(end - sp - 1),
			    fd_words + GMON_FD_PIPE,
			    GMON_FD_EVENTFD - GMON_FD_PIPE + 1);
}

char *
wait_site_name(uint64_t w, char *buf, size_t size)
{
	/* the pid's bits (gmon.h's GMON_WAIT_WORD) cleared */
	return wait_name(w & ~((uint64_t)UINT32_MAX << 16), buf, size);
}

void
wait_children_add(struct wait_child **v, size_t *n, size_t *cap,
		  const char *site, uint32_t pid, double samples)
{
	struct wait_child *c;

	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].pid == pid && !strcmp((*v)[i].site, site)) {
			(*v)[i].samples += samples;
			return;
		}
	if (*n == *cap) {
		size_t room = *cap ? 2 * *cap : 16;

		c = pc_realloc(*v, room * sizeof(*c));
		*v = c;
		*cap = room;
	}
	c = &(*v)[(*n)++];
	c->site = pc_strdup(site);
	c->pid = pid;
	c->samples = samples;
}

static int
cmp_child(const void *a, const void *b)
{
	const struct wait_child *x = a, *y = b;
	int c = strcmp(x->site, y->site);

	if (c)
		return c;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void
wait_children_sort(struct wait_child *v, size_t n)
{
	if (n)
		qsort(v, n, sizeof(*v), cmp_child);
}

void
wait_children_free(struct wait_child *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].site);
	free(v);
}
