/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Allocation churn for PC_ALLOC's safety tests: 8 threads of malloc,
 * calloc, realloc and free of varied sizes (blocks handed between threads
 * too), threads that start and exit, forks whose children allocate and
 * exit, dlopen and dlclose of a library in a loop, and a signal handler
 * that allocates (on a thread that is only sleeping, so that it never
 * interrupts malloc). Prints what it did; the same plain and profiled.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS	8
#define ROUNDS	5000

static void *volatile shared[64];
static void *volatile sink;	/* malloc and free that the compiler keeps */
static volatile sig_atomic_t handled;	/* the handler's runs */
static volatile int stop;

static uint64_t
next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *
churn(void *arg)
{
	uint64_t s = (uint64_t)(uintptr_t)arg * 2654435761u + 1;
	void *mine[32] = { 0 };

	for (int i = 0; i < ROUNDS; i++) {
		unsigned k = (unsigned)(next(&s) % 32), sz = (unsigned)(next(&s) % 5000) + 1;

		switch (next(&s) % 4) {
		case 0:
			free(mine[k]);
			mine[k] = malloc(sz);
			break;
		case 1:
			free(mine[k]);
			mine[k] = calloc(1, sz);
			break;
		case 2:
			mine[k] = realloc(mine[k], sz);
			break;
		default:
			/* a block handed to whichever thread takes it next */
			free(__atomic_exchange_n(&shared[k], mine[k], __ATOMIC_ACQ_REL));
			mine[k] = NULL;
		}
		if (mine[k])
			memset(mine[k], 1, 1);
	}
	for (int k = 0; k < 32; k++)
		free(mine[k]);
	return NULL;
}

static void *
short_lived(void *arg)
{
	char *p = malloc(100 + (size_t)(uintptr_t)arg);

	sink = p;
	free(p);
	return NULL;
}

static void
on_usr1(int sig)
{
	char *p = malloc(200);

	(void)sig;
	sink = p;
	free(p);
	handled = handled + 1;
}

static void *
sleeper(void *arg)
{
	(void)arg;
	while (!stop) {
		struct timespec ts = { 0, 200000 };

		nanosleep(&ts, NULL);
	}
	return NULL;
}

int
main(void)
{
	pthread_t t[THREADS], sl;
	int forks = 0, opens = 0, shorts = 0;

	signal(SIGUSR1, on_usr1);
	pthread_create(&sl, NULL, sleeper, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < 4; i++) {
		pid_t pid = fork();
		void *h;
		pthread_t s;

		if (pid == 0) {
			char *p = malloc(1000);

			sink = p;
			free(p);
			p = strdup("child");
			exit(p[0] == 'c' ? 0 : 1);
		}
		if (pid > 0 && waitpid(pid, NULL, 0) == pid)
			forks++;
		if ((h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL))) {
			opens += dlsym(h, "cos") != NULL;
			dlclose(h);
		}
		if (!pthread_create(&s, NULL, short_lived, (void *)(uintptr_t)i) &&
		    !pthread_join(s, NULL))
			shorts++;
		pthread_kill(sl, SIGUSR1);
		/* each signal taken before the next is sent (a busy machine
		 * could leave two pending at once, one delivery), 5 s at most */
		for (int w = 0; handled < i + 1 && w < 50000; w++)
			nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	stop = 1;
	pthread_join(sl, NULL);
	for (int k = 0; k < 64; k++)
		free(shared[k]);
	printf("stress: %d forks, %d dlopens, %d short threads, handler %s\n", forks, opens,
	       shorts, handled ? "ran" : "did not run");
	return 0;
}
