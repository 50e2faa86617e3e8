/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fsync_cancel DIR: a thread that calls fsync and fdatasync in a loop
 * (nothing else in the loop is a cancellation point) is cancelled after
 * a jittered while and joined. Both calls are cancellation points in
 * glibc; a stand-in that made the system call itself would never let the
 * cancel through, and the join would wait for ever.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fd;

static void *
loop(void *arg)
{
	(void)arg;
	for (;;) {
		fsync(fd);
		fdatasync(fd);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	char path[4096];
	pthread_t t;
	void *ret;
	struct timespec ts;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/fsync_cancel.dat", argv[1]);
	if ((fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644)) < 0 || write(fd, "x", 1) != 1)
		return 3;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (pthread_create(&t, NULL, loop, NULL))
		return 4;
	usleep(30000 + (useconds_t)(ts.tv_nsec % 20000));
	pthread_cancel(t);
	pthread_join(t, &ret);
	printf("cancelled: %s\n", ret == PTHREAD_CANCELED ? "yes" : "no");
	unlink(path);
	return 0;
}
