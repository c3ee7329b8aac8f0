/* hb-split: how hackbench's CPU time splits between its senders and its
 * receivers, per message, on this host's kernel.
 *
 * The traffic is rt-tests hackbench's, one group, process mode: F receivers,
 * each with its own AF_UNIX SOCK_STREAM socket pair (or pipe, -p); S senders
 * (default S = F, as hackbench), each writing LOOPS rounds of one 100-byte
 * message to every receiver in turn (one write() each, retried on a short
 * write); each receiver read()s until it has S x LOOPS messages, asking for
 * the rest of one message per read (hackbench's loops). All children start
 * at a barrier (hackbench's ready/wake pipes) and the time is from the
 * release to the last exit, as hackbench prints it.
 *
 * Each child takes its own figures from the release to its last message
 * (so start-up and the barrier are left out): CPU time (sum_exec_runtime,
 * /proc/self/schedstat), voluntary switches (sleeps) and involuntary ones
 * (getrusage RUSAGE_SELF), and with -t the wall time of each write() or
 * read() (clock_gettime around the call; the vDSO clock read, ~20-40 ns,
 * is inside). Per role it prints the sum over its tasks divided by the
 * messages (every message is one send and one receive):
 *
 *   cc -O2 -o /tmp/hb-split scripts/investigate/hb-split.c
 *   hb-split [-p] [-t] [-f FDS] [-s SENDERS] [-l LOOPS]
 *   taskset -c 0 hb-split ...      # every task on one CPU
 *
 * On the shared host, run it in its own session with autogroup nice -20 (as
 * scripts/host/validate-host.sh does), so other sessions' jobs take little of
 * the CPUs, and note the vCPU placement (scripts/host/c2c.c) beside it:
 *
 *   setsid -w sh -c 'echo -20 > /proc/self/autogroup; exec "$@"' sh /tmp/hb-split -t
 *
 *   -f   receivers (default 20, hackbench's)
 *   -s   senders (default: as many as receivers; -s 1: one sender writes
 *        every receiver, nobody else writing its sockets)
 *   -l   rounds per sender (default 2000)
 *   -p   pipes (default: socket pairs, as hackbench)
 *   -t   time every call; per role: median and quartiles of all calls, and
 *        the share of calls over 5 us (they slept or were preempted)
 *
 * Output: "Time: S", then one line per role:
 *   ROLE: cpu NS/msg, vol V/msg, invol I/msg, calls C/msg [, call p25/p50/p75 ns, >5us X]
 * "calls" counts the role's write()/read() calls (a short write or read is
 * a second call). Wake-ups done are not counted here: each sleep of one
 * role needs a wake-up by the other (a sender sleeps on a full socket and
 * a receiver's read wakes it; a receiver on an empty one and a sender's
 * write wakes it), so the other role's voluntary switches per message are
 * the wake-ups a role does. To check it, count sched:sched_waking (it
 * fires in the waker's context; sched_wakeup of a queued remote wake-up
 * fires on the target CPU) by waker and wakee name (the children are named
 * hbs-send and hbs-recv):
 *
 *   perf record -e sched:sched_waking -a -o /tmp/hbs.data /tmp/hb-split
 *   perf script -i /tmp/hbs.data -F comm,trace
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DATASIZE 100 /* hackbench's default message size */
#define SLOW_NS 5000

struct snap {
	uint64_t exec_ns;
	long nvcsw, nivcsw;
};

struct slot {
	uint64_t exec_ns;
	long nvcsw, nivcsw, calls;
	uint64_t ncalls_timed;
};

static int use_pipe, timed;
static long fds = 20, senders = -1, loops = 2000;
static int ready[2], go[2];
static struct slot *slots; /* receivers 0..fds-1, then senders */
static uint32_t *times;	   /* per call wall ns, per task a region */
static long per_task_max;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + t.tv_nsec;
}

static void take(struct snap *s)
{
	char buf[128];
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		die("schedstat");
	fclose(f);
	s->exec_ns = strtoull(buf, NULL, 10);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	s->nvcsw = ru.ru_nvcsw;
	s->nivcsw = ru.ru_nivcsw;
}

static void barrier(void)
{
	char c = 0;
	if (write(ready[1], &c, 1) != 1)
		die("ready");
	if (read(go[0], &c, 1) != 1)
		die("go");
}

static void finish(int idx, const struct snap *a, long calls, long ntimed)
{
	struct snap b;
	take(&b);
	slots[idx].exec_ns = b.exec_ns - a->exec_ns;
	slots[idx].nvcsw = b.nvcsw - a->nvcsw;
	slots[idx].nivcsw = b.nivcsw - a->nivcsw;
	slots[idx].calls = calls;
	slots[idx].ncalls_timed = ntimed;
}

static void receiver(int idx, int fd)
{
	prctl(PR_SET_NAME, "hbs-recv");
	barrier();
	struct snap a;
	take(&a);
	uint32_t *t = times + (size_t)idx * per_task_max;
	char buf[DATASIZE];
	long calls = 0, nt = 0;
	for (long m = 0; m < senders * loops; m++) {
		size_t done = 0;
		while (done < DATASIZE) {
			uint64_t t0 = timed ? now_ns() : 0;
			ssize_t n = read(fd, buf + done, DATASIZE - done);
			if (timed && nt < per_task_max)
				t[nt++] = (uint32_t)(now_ns() - t0);
			calls++;
			if (n < 0) {
				if (errno == EINTR)
					continue;
				die("read");
			}
			if (n == 0) {
				fprintf(stderr, "hb-split: early EOF\n");
				exit(1);
			}
			done += n;
		}
	}
	finish(idx, &a, calls, nt);
}

static void sender(int idx, const int *out)
{
	prctl(PR_SET_NAME, "hbs-send");
	barrier();
	struct snap a;
	take(&a);
	uint32_t *t = times + (size_t)idx * per_task_max;
	char buf[DATASIZE];
	memset(buf, 'x', sizeof(buf));
	long calls = 0, nt = 0;
	for (long i = 0; i < loops; i++) {
		for (long j = 0; j < fds; j++) {
			size_t done = 0;
			while (done < DATASIZE) {
				uint64_t t0 = timed ? now_ns() : 0;
				ssize_t n = write(out[j], buf + done, DATASIZE - done);
				if (timed && nt < per_task_max)
					t[nt++] = (uint32_t)(now_ns() - t0);
				calls++;
				if (n < 0) {
					if (errno == EINTR)
						continue;
					die("write");
				}
				done += n;
			}
		}
	}
	finish(idx, &a, calls, nt);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static void role(const char *name, int first, int n, double msgs)
{
	double exec = 0, vol = 0, invol = 0, calls = 0;
	long nt = 0;
	for (int i = first; i < first + n; i++) {
		exec += slots[i].exec_ns;
		vol += slots[i].nvcsw;
		invol += slots[i].nivcsw;
		calls += slots[i].calls;
		nt += slots[i].ncalls_timed;
	}
	printf("%s: cpu %.0f ns/msg, vol %.4f/msg, invol %.4f/msg, calls %.4f/msg", name,
	       exec / msgs, vol / msgs, invol / msgs, calls / msgs);
	if (timed && nt) {
		uint32_t *all = malloc(nt * sizeof(*all));
		long k = 0, slow = 0;
		for (int i = first; i < first + n; i++)
			for (uint64_t c = 0; c < slots[i].ncalls_timed; c++) {
				uint32_t v = times[(size_t)i * per_task_max + c];
				all[k++] = v;
				slow += v > SLOW_NS;
			}
		qsort(all, nt, sizeof(*all), cmp_u32);
		printf(", call p25/p50/p75 %u/%u/%u ns, >5us %.4f", all[nt / 4], all[nt / 2],
		       all[3 * nt / 4], (double)slow / nt);
		free(all);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	int o;
	while ((o = getopt(argc, argv, "ptf:s:l:")) != -1) {
		switch (o) {
		case 'p': use_pipe = 1; break;
		case 't': timed = 1; break;
		case 'f': fds = atol(optarg); break;
		case 's': senders = atol(optarg); break;
		case 'l': loops = atol(optarg); break;
		default:
			fprintf(stderr, "usage: hb-split [-p] [-t] [-f FDS] [-s SENDERS] [-l LOOPS]\n");
			return 2;
		}
	}
	if (senders < 0)
		senders = fds;
	if (fds < 1 || senders < 1 || loops < 1) {
		fprintf(stderr, "hb-split: -f, -s and -l must be at least 1\n");
		return 2;
	}
	long ntasks = fds + senders;
	/* A sender makes loops x fds calls, a receiver senders x loops, more
	 * with short reads/writes (not timed past this). */
	per_task_max = timed ? (loops * (fds > senders ? fds : senders) * 2) : 0;
	slots = mmap(NULL, ntasks * sizeof(*slots), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED)
		die("mmap");
	if (timed) {
		times = mmap(NULL, ntasks * per_task_max * sizeof(*times), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (times == MAP_FAILED)
			die("mmap");
	}
	if (pipe(ready) || pipe(go))
		die("pipe");
	int (*chan)[2] = calloc(fds, sizeof(*chan));
	int *out = calloc(fds, sizeof(*out));
	for (long j = 0; j < fds; j++) {
		if (use_pipe ? pipe(chan[j]) : socketpair(AF_UNIX, SOCK_STREAM, 0, chan[j]))
			die("channel");
		out[j] = chan[j][1];
	}
	pid_t *pid = calloc(ntasks, sizeof(*pid));
	for (long i = 0; i < ntasks; i++) {
		if ((pid[i] = fork()) == 0) {
			if (i < fds)
				receiver(i, chan[i][0]);
			else
				sender(i, out);
			_exit(0);
		} else if (pid[i] < 0) {
			die("fork");
		}
	}
	for (long got = 0; got < ntasks;) {
		char c[64];
		ssize_t n = read(ready[0], c, ntasks - got < 64 ? ntasks - got : 64);
		if (n <= 0)
			die("ready");
		got += n;
	}
	char *c = calloc(ntasks, 1);
	uint64_t a = now_ns();
	if (write(go[1], c, ntasks) != ntasks)
		die("go");
	int bad = 0;
	for (long i = 0; i < ntasks; i++) {
		int st;
		if (waitpid(pid[i], &st, 0) < 0)
			die("waitpid");
		bad |= !WIFEXITED(st) || WEXITSTATUS(st);
	}
	uint64_t b = now_ns();
	if (bad) {
		fprintf(stderr, "hb-split: a child failed\n");
		return 1;
	}
	double msgs = (double)senders * fds * loops;
	printf("Time: %.4f\n", (b - a) / 1e9);
	role("receiver", 0, fds, msgs);
	role("sender", fds, senders, msgs);
	return 0;
}
