/* hb1x1: one hackbench sender and one receiver (rt-tests hackbench
 * `-g 1 -f 1`, perf bench sched messaging with one fd), with a choice of
 * where each runs -- which neither hackbench nor perf bench offers.
 *
 * The message traffic is hackbench's: the sender writes LOOPS messages of
 * 100 bytes, one write() each, to one pipe or AF_UNIX SOCK_STREAM socket
 * pair; the receiver read()s until it has all LOOPS x 100 bytes, asking for
 * one whole message per read (hackbench's receiver loop). Both start at a
 * barrier (hackbench's ready/wake pipes), and the time is from the release
 * to the last exit, as hackbench prints it.
 *
 *   cc -O2 -pthread -o /tmp/hb1x1 scripts/investigate/hb1x1.c
 *   hb1x1 [-p] [-T] [-l LOOPS] [-c RECV_CPU,SEND_CPU] [-w NS]
 *
 *   -p   a pipe (default: a socket pair, as hackbench)
 *   -T   threads (default: processes, as hackbench)
 *   -c   pin the receiver and the sender to these CPUs (default: unpinned)
 *   -w   the sender also spins NS ns of user time after each message
 *        (clock_gettime polling): how the balance of the two ends sets how
 *        often the receiver empties the channel and sleeps
 *
 * It prints "Time: S" like hackbench, then for the receiver and the sender
 * their CPU per message and voluntary (sleeps) and involuntary switches
 * (getrusage: wait4's for processes, RUSAGE_THREAD for threads);
 * scripts/investigate/hb-underload.sh wraps it (and the real hackbench) in perf stat.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DATASIZE 100 /* hackbench's default message size */

static int use_pipe, use_threads, rcpu = -1, scpu = -1;
static long loops = 100;
static long work_ns; /* -w */
static int chan[2], ready[2], go[2];
static struct rusage ru[2]; /* receiver, sender (thread mode) */

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s))
		die("sched_setaffinity");
}

static void barrier(void)
{
	char c = 0;
	if (write(ready[1], &c, 1) != 1)
		die("ready");
	if (read(go[0], &c, 1) != 1)
		die("go");
}

static void *receiver(void *arg)
{
	(void)arg;
	pin(rcpu);
	barrier();
	char buf[DATASIZE];
	long left = loops * DATASIZE;
	while (left > 0) {
		ssize_t n = read(chan[0], buf, DATASIZE);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("read");
		}
		left -= n;
	}
	if (use_threads)
		getrusage(RUSAGE_THREAD, &ru[0]);
	return NULL;
}

static void *sender(void *arg)
{
	(void)arg;
	pin(scpu);
	barrier();
	char buf[DATASIZE];
	memset(buf, 'x', sizeof(buf));
	for (long i = 0; i < loops; i++) {
		size_t done = 0;
		while (done < DATASIZE) {
			ssize_t n = write(chan[1], buf + done, DATASIZE - done);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				die("write");
			}
			done += n;
		}
		if (work_ns) {
			struct timespec a, b;
			clock_gettime(CLOCK_MONOTONIC, &a);
			do
				clock_gettime(CLOCK_MONOTONIC, &b);
			while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < work_ns);
		}
	}
	if (use_threads)
		getrusage(RUSAGE_THREAD, &ru[1]);
	return NULL;
}

int main(int argc, char **argv)
{
	int o;
	while ((o = getopt(argc, argv, "pTl:c:w:")) != -1) {
		switch (o) {
		case 'p': use_pipe = 1; break;
		case 'T': use_threads = 1; break;
		case 'l': loops = atol(optarg); break;
		case 'w': work_ns = atol(optarg); break;
		case 'c':
			if (sscanf(optarg, "%d,%d", &rcpu, &scpu) != 2) {
				fprintf(stderr, "hb1x1: -c wants RECV_CPU,SEND_CPU, not '%s'\n", optarg);
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: hb1x1 [-p] [-T] [-l LOOPS] [-c RECV_CPU,SEND_CPU] [-w NS]\n");
			return 2;
		}
	}
	if (work_ns < 0) {
		fprintf(stderr, "hb1x1: -w must not be negative\n");
		return 2;
	}
	if (loops < 1) {
		fprintf(stderr, "hb1x1: -l must be at least 1\n");
		return 2;
	}
	if (use_pipe ? pipe(chan) : socketpair(AF_UNIX, SOCK_STREAM, 0, chan))
		die("channel");
	if (pipe(ready) || pipe(go))
		die("pipe");
	pthread_t t[2];
	pid_t p[2];
	void *(*fn[2])(void *) = { receiver, sender };
	for (int i = 0; i < 2; i++) {
		if (use_threads) {
			if (pthread_create(&t[i], NULL, fn[i], NULL))
				die("pthread_create");
		} else if ((p[i] = fork()) == 0) {
			fn[i](NULL);
			_exit(0);
		} else if (p[i] < 0) {
			die("fork");
		}
	}
	char c[2];
	for (int got = 0; got < 2;) {
		ssize_t n = read(ready[0], c, 2 - got);
		if (n <= 0)
			die("ready");
		got += n;
	}
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (write(go[1], c, 2) != 2)
		die("go");
	for (int i = 0; i < 2; i++) {
		if (use_threads)
			pthread_join(t[i], NULL);
		else
			wait4(p[i], NULL, 0, &ru[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("Time: %.4f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	static const char *role[2] = { "receiver", "sender" };
	for (int i = 0; i < 2; i++) {
		double us = (ru[i].ru_utime.tv_sec + ru[i].ru_stime.tv_sec) * 1e6 +
			    ru[i].ru_utime.tv_usec + ru[i].ru_stime.tv_usec;
		printf("%s: cpu %.0f ns/msg, voluntary %ld, involuntary %ld\n", role[i],
		       us * 1e3 / loops, ru[i].ru_nvcsw, ru[i].ru_nivcsw);
	}
	return 0;
}
