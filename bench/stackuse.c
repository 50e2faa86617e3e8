/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench: how deep below a thread's stack pointer a signal handler (the
 * kernel's signal frame and the handler's own frames) or the exit path
 * writes, for bench/live.py. The thread runs on a stack of our own
 * (pthread_attr_setstack): a shared mapping of FILE, filled with a
 * pattern, whose first page holds a header with the stack pointer to
 * measure from. live.py reads FILE afterwards and finds the lowest word
 * that is no longer the pattern; the file outlives the process, so the
 * exit path can be measured too.
 *
 *   stackuse handler FILE SECONDS [signal]
 *	the thread spins in a leaf function (no calls, no stack of its own)
 *	for SECONDS of its CPU time, PAD bytes below its start; the mark is
 *	the leaf's stack pointer. With "signal", the main thread sends it
 *	SIGUSR1 every 2 ms, caught by an empty handler: the kernel's frame
 *	alone.
 *   stackuse exit FILE SECONDS
 *	the main thread spins for SECONDS (so that the profile has samples),
 *	then the thread, blocked in read() until then, calls exit(); the
 *	mark is the thread function's stack pointer.
 *   stackuse fork FILE SECONDS
 *	as exit, but the thread calls fork(), on a stack of private memory
 *	that the child gets a copy of: the child writes its copy into FILE
 *	and ends with _exit(0), the parent waits for it and returns. The
 *	mark is the thread function's stack pointer; what is below it was
 *	written by the parent's fork handlers and the child's.
 *   stackuse fatal FILE SECONDS
 *	the main thread spins for SECONDS, then takes the stack as its
 *	alternate signal stack (sigaltstack) and writes through a null
 *	pointer: SIGSEGV, whose default action the program keeps, so that
 *	only a profiler's handler runs there before the process dies. The
 *	mark is the top of the alternate stack.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STACK_BYTES	(1024 * 1024)
#define PAD		(256 * 1024)	/* between the thread's start and the leaf */
#define PATTERN		UINT64_C(0x5ca1ab1edeadbea7)

/* The first page of FILE; live.py reads it with struct "<8Q". */
struct header {
	uint64_t magic;			/* PATTERN */
	uint64_t stack_off;		/* where the stack starts in FILE */
	uint64_t stack_len;
	uint64_t mark_off;		/* the stack pointer measured from */
	uint64_t signals;		/* SIGUSR1s caught (mode signal) */
	uint64_t spare[3];
};

static struct header *hdr;
static char *stack;
static int file_fd;
static volatile int stop;
static volatile uint64_t caught;
static int pipefd[2];

static uintptr_t
stack_pointer(void)
{
	uintptr_t sp;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	return sp;
}

/* Nothing below its stack pointer but what a signal puts there. */
__attribute__((noinline)) static uint64_t
leaf(uint64_t x)
{
	hdr->mark_off = stack_pointer() - (uintptr_t)stack + hdr->stack_off;
	while (!stop) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static void *
spinner(void *arg)
{
	/* the thread's exit path (libpc's and glibc's) runs up here, far
	 * above the leaf: it must not reach the leaf's stack pointer */
	char *pad = alloca(PAD);

	__asm__ volatile("" : : "r"(pad) : "memory");
	return (void *)(uintptr_t)leaf((uintptr_t)arg + (uintptr_t)pad[0]);
}

static void *
exiter(void *arg)
{
	char c;

	(void)arg;
	hdr->mark_off = stack_pointer() - (uintptr_t)stack + hdr->stack_off;
	while (read(pipefd[0], &c, 1) < 0)
		;
	exit(0);
}

static void *
forker(void *arg)
{
	char c;
	pid_t pid;
	int status;

	(void)arg;
	hdr->mark_off = stack_pointer() - (uintptr_t)stack + hdr->stack_off;
	while (read(pipefd[0], &c, 1) < 0)
		;
	pid = fork();
	if (pid == 0) {
		/* the file's stack pages are the parent's stack no more: the
		 * child's copy goes there */
		if (pwrite(file_fd, stack, STACK_BYTES, (off_t)hdr->stack_off) != STACK_BYTES)
			_exit(2);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return (void *)1;
	return NULL;
}

static void
empty(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	caught++;
}

static double
cpu_of(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t t;
	clockid_t clock;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int fd, exit_mode, fork_mode, fatal_mode, sig_mode;
	double seconds;
	char *m;

	if (argc < 4 || (strcmp(argv[1], "handler") && strcmp(argv[1], "exit") &&
			 strcmp(argv[1], "fork") && strcmp(argv[1], "fatal"))) {
		fprintf(stderr, "usage: stackuse handler|exit|fork|fatal FILE SECONDS [signal]\n");
		return 2;
	}
	fatal_mode = !strcmp(argv[1], "fatal");
	fork_mode = !strcmp(argv[1], "fork");
	exit_mode = !strcmp(argv[1], "exit") || fork_mode;
	sig_mode = argc > 4 && !strcmp(argv[4], "signal");
	seconds = atof(argv[3]);
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(page + STACK_BYTES))) {
		perror("stackuse: open");
		return 2;
	}
	m = mmap(NULL, page + STACK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("stackuse: mmap");
		return 2;
	}
	hdr = (struct header *)m;
	stack = m + page;
	if (fork_mode) {
		stack = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stack == MAP_FAILED) {
			perror("stackuse: mmap");
			return 2;
		}
		file_fd = fd;
	} else
		close(fd);
	for (size_t i = 0; i < STACK_BYTES / 8; i++)
		((uint64_t *)stack)[i] = PATTERN;
	hdr->magic = PATTERN;
	hdr->stack_off = page;
	hdr->stack_len = STACK_BYTES;
	if (sig_mode) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = empty;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigaction(SIGUSR1, &sa, NULL);
	}
	if (exit_mode && pipe(pipefd)) {
		perror("stackuse: pipe");
		return 2;
	}
	if (fatal_mode) {
		volatile int *volatile null = NULL;
		volatile uint64_t x = 1;
		double start = cpu_of(CLOCK_THREAD_CPUTIME_ID);
		stack_t ss;

		while (cpu_of(CLOCK_THREAD_CPUTIME_ID) - start < seconds)
			for (int i = 0; i < 100000; i++)
				x = x * 6364136223846793005ULL + 1;
		ss.ss_sp = stack;
		ss.ss_size = STACK_BYTES;
		ss.ss_flags = 0;
		hdr->mark_off = hdr->stack_off + STACK_BYTES;
		if (sigaltstack(&ss, NULL)) {
			perror("stackuse: sigaltstack");
			return 2;
		}
		*null = 1;
		return 1;	/* a handler that returned and did not end us */
	}
	pthread_attr_init(&attr);
	if (pthread_attr_setstack(&attr, stack, STACK_BYTES) ||
	    pthread_create(&t, &attr, fork_mode ? forker : exit_mode ? exiter : spinner,
			   NULL)) {
		fprintf(stderr, "stackuse: pthread_create failed\n");
		return 2;
	}
	if (exit_mode) {
		volatile uint64_t x = 1;
		double start = cpu_of(CLOCK_THREAD_CPUTIME_ID);

		while (cpu_of(CLOCK_THREAD_CPUTIME_ID) - start < seconds)
			for (int i = 0; i < 100000; i++)
				x = x * 6364136223846793005ULL + 1;
		void *r;

		if (write(pipefd[1], "x", 1) != 1)
			return 2;
		if (!fork_mode)
			for (;;)
				pause();
		pthread_join(t, &r);
		if (r) {
			fprintf(stderr, "stackuse: the fork child failed\n");
			return 1;
		}
		return 0;
	}
	if (pthread_getcpuclockid(t, &clock))
		return 2;
	while (cpu_of(clock) < seconds) {
		struct timespec ms = { 0, 2000000 };

		if (sig_mode)
			pthread_kill(t, SIGUSR1);
		nanosleep(&ms, NULL);
	}
	stop = 1;
	pthread_join(t, NULL);
	hdr->signals = caught;
	munmap(m, page + STACK_BYTES);
	return 0;
}
