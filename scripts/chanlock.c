/* chanlock: serialisation of two writers on one channel's lock on this host
 * (docs/syscall-costs.md, "Two writers on one channel: the lock").
 *
 * hackbench's senders all write into each receiver's channel; the kernel
 * serialises them on the channel's lock (pipe_write holds pipe->mutex for
 * the copy into the ring; an AF_UNIX stream write holds the peer's
 * unix_state_lock around queueing the skb on its receive queue). Three
 * cases, 100-byte write()s timed one by one in wall time (CLOCK_MONOTONIC),
 * nobody reading meanwhile (the pipe enlarged with F_SETPIPE_SZ, the
 * socket's send buffer with SO_SNDBUFFORCE, so no write blocks; the
 * channel is drained between chunks, outside the timing):
 *
 *   alone:    one writer on CPU A, its own channel;
 *   separate: writers on CPUs A and B at once, each into its own channel
 *             (what two busy vCPUs cost each other without sharing);
 *   shared:   writers on CPUs A and B at once into ONE channel.
 *
 * shared - separate is the extra of a contended call: the channel's cache
 * lines moving between the CPUs plus the wait for the lock. Also a bare
 * syscall (getppid) and the core-to-core latency (CAS ping-pong, as
 * scripts/c2c.c) before and after every chunk: the host moves the two
 * vCPUs between one core's two threads (~27 ns) and two cores (~122 ns).
 *
 *   cc -O2 -pthread -o /tmp/chanlock scripts/chanlock.c
 *   nice -n -20 /tmp/chanlock [CPU_A CPU_B]     (default 0 1; ~1 min)
 *   nice -n -20 /tmp/chanlock --rw [CPU_A CPU_B]
 *
 * --rw: a writer on CPU A and a READER on CPU B (hackbench's one sender
 * and one receiver) instead of two writers. separate: the writer writes
 * one channel while the reader reads another, pre-filled with N messages
 * (so it never finds it empty); shared: the reader reads the channel the
 * writer writes, pre-filled the same way. shared - separate per side is
 * what the pair costs each other on one channel's lock and lines; the
 * shared case's calls per microsecond (both sides) bounds the lock's
 * serialisation of a read and a write.
 *
 * Output per channel kind: median [quartiles] over CHUNKS chunks of each
 * case's median ns per call (the two writers' calls pooled), of
 * shared - separate, of the c2c latency; and the shared case's calls per
 * microsecond of both writers together (the lock's throughput).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MSG 100
#define N 2000 /* calls per writer per chunk */
#define CHUNKS 31

static int cpu_a = 0, cpu_b = 1;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof s, &s)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof *v, cmpd);
	return v[n / 2];
}

/* A channel: fds [read, write], sized so that 2 N writes never block. */
static void chan_open(int sock, int fd[2])
{
	if (sock) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fd)) {
			perror("socketpair");
			exit(1);
		}
		int sz = 16 << 20;
		if (setsockopt(fd[1], SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof sz)) {
			perror("SO_SNDBUFFORCE");
			exit(1);
		}
	} else {
		if (pipe(fd)) {
			perror("pipe");
			exit(1);
		}
		if (fcntl(fd[1], F_SETPIPE_SZ, 1 << 20) < 0) {
			perror("F_SETPIPE_SZ");
			exit(1);
		}
	}
	fcntl(fd[0], F_SETFL, O_NONBLOCK);
}

static void drain(int fd)
{
	static char big[1 << 16];
	while (read(fd, big, sizeof big) > 0)
		;
}

static _Alignas(64) _Atomic int ready;
static _Alignas(64) _Atomic int start;

struct side {
	int cpu, fd;
	double t[N];
	double t0, t1;
};

static void *writer(void *arg)
{
	struct side *s = arg;
	char buf[MSG];
	memset(buf, 'x', sizeof buf);
	pin(s->cpu);
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&start))
		;
	s->t0 = now_ns();
	for (int i = 0; i < N; i++) {
		double a = now_ns();
		if (write(s->fd, buf, MSG) != MSG) {
			perror("write");
			exit(1);
		}
		s->t[i] = now_ns() - a;
	}
	s->t1 = now_ns();
	return NULL;
}

static void *reader(void *arg)
{
	struct side *s = arg;
	char buf[MSG];
	pin(s->cpu);
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&start))
		;
	s->t0 = now_ns();
	for (int i = 0; i < N; i++) {
		double a = now_ns();
		if (read(s->fd, buf, MSG) != MSG) {
			perror("read (pre-filled channel ran dry)");
			exit(1);
		}
		s->t[i] = now_ns() - a;
	}
	s->t1 = now_ns();
	return NULL;
}

static struct side sa, sb;
static double pool[2 * N];

/* One chunk of a case: 0 alone, 1 separate, 2 shared. Returns the median
 * ns per call; *rate = calls per us of both writers (shared case). */
static double chunk(int sock, int kind, double *rate)
{
	int f1[2], f2[2];
	chan_open(sock, f1);
	chan_open(sock, f2);
	sa.cpu = cpu_a;
	sb.cpu = cpu_b;
	sa.fd = f1[1];
	sb.fd = kind == 2 ? f1[1] : f2[1];
	atomic_store(&ready, 0);
	atomic_store(&start, 0);
	pthread_t ta, tb;
	pthread_create(&ta, NULL, writer, &sa);
	if (kind)
		pthread_create(&tb, NULL, writer, &sb);
	while (atomic_load(&ready) < (kind ? 2 : 1))
		usleep(100); /* off the writers' CPUs' way */
	atomic_store(&start, 1);
	pthread_join(ta, NULL);
	int n = N;
	memcpy(pool, sa.t, sizeof sa.t);
	if (kind) {
		pthread_join(tb, NULL);
		memcpy(pool + N, sb.t, sizeof sb.t);
		n = 2 * N;
		double b = sa.t0 < sb.t0 ? sa.t0 : sb.t0, e = sa.t1 > sb.t1 ? sa.t1 : sb.t1;
		*rate = 2.0 * N / ((e - b) / 1000.0);
	}
	drain(f1[0]);
	drain(f2[0]);
	close(f1[0]);
	close(f1[1]);
	close(f2[0]);
	close(f2[1]);
	return median(pool, n);
}

/* One --rw chunk: the writer (CPU A) into f1, the reader (CPU B) from f1
 * (shared) or from f2 (separate), each pre-filled with N messages. Sets
 * the two sides' median ns per call; returns calls per us of both. */
static double rw_chunk(int sock, int shared, double *wmed, double *rmed)
{
	int f1[2], f2[2];
	char buf[MSG];
	memset(buf, 'y', sizeof buf);
	chan_open(sock, f1);
	chan_open(sock, f2);
	int rfd = shared ? f1[0] : f2[0], pre = shared ? f1[1] : f2[1];
	for (int i = 0; i < N; i++)
		if (write(pre, buf, MSG) != MSG) {
			perror("pre-fill");
			exit(1);
		}
	sa.cpu = cpu_a;
	sa.fd = f1[1];
	sb.cpu = cpu_b;
	sb.fd = rfd;
	atomic_store(&ready, 0);
	atomic_store(&start, 0);
	pthread_t ta, tb;
	pthread_create(&ta, NULL, writer, &sa);
	pthread_create(&tb, NULL, reader, &sb);
	while (atomic_load(&ready) < 2)
		usleep(100);
	atomic_store(&start, 1);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	memcpy(pool, sa.t, sizeof sa.t);
	*wmed = median(pool, N);
	memcpy(pool, sb.t, sizeof sb.t);
	*rmed = median(pool, N);
	double b = sa.t0 < sb.t0 ? sa.t0 : sb.t0, e = sa.t1 > sb.t1 ? sa.t1 : sb.t1;
	drain(f1[0]);
	drain(f2[0]);
	close(f1[0]);
	close(f1[1]);
	close(f2[0]);
	close(f2[1]);
	return 2.0 * N / ((e - b) / 1000.0);
}

static _Alignas(64) _Atomic int cas_line;
static void *cas_pong(void *arg)
{
	(void)arg;
	pin(cpu_b);
	for (long i = 0; i < 2000L * 51; i++) {
		int want = 0;
		while (!atomic_compare_exchange_weak_explicit(&cas_line, &want, 1,
							      memory_order_relaxed,
							      memory_order_relaxed))
			want = 0;
	}
	return NULL;
}

static double c2c(void)
{
	double s[51];
	pthread_t t;
	atomic_store(&cas_line, 0);
	pin(cpu_a);
	pthread_create(&t, NULL, cas_pong, NULL);
	for (int k = 0; k < 51; k++) {
		double t0 = now_ns();
		for (int i = 0; i < 2000; i++) {
			int want = 1;
			while (!atomic_compare_exchange_weak_explicit(&cas_line, &want, 0,
								      memory_order_relaxed,
								      memory_order_relaxed))
				want = 1;
		}
		s[k] = (now_ns() - t0) / 2000 / 2.0;
	}
	pthread_join(t, NULL);
	return median(s, 51);
}

static double getppid_ns(void)
{
	double s[51];
	pin(cpu_a);
	for (int k = 0; k < 51; k++) {
		double t0 = now_ns();
		for (int i = 0; i < 1000; i++)
			syscall(SYS_getppid);
		s[k] = (now_ns() - t0) / 1000;
	}
	return median(s, 51);
}

static void q(const char *name, double *v)
{
	double c[CHUNKS];
	memcpy(c, v, sizeof c);
	qsort(c, CHUNKS, sizeof *c, cmpd);
	printf(" %s %.0f [%.0f-%.0f]", name, c[CHUNKS / 2], c[CHUNKS / 4], c[3 * CHUNKS / 4]);
}

int main(int argc, char **argv)
{
	int rw = argc >= 2 && !strcmp(argv[1], "--rw");
	if (rw) {
		argv++;
		argc--;
	}
	if (argc >= 3) {
		cpu_a = atoi(argv[1]);
		cpu_b = atoi(argv[2]);
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	double la[3];
	getloadavg(la, 3);
	printf("# chanlock: CPUs %d,%d; %d chunks of %d calls per writer; load %.2f %.2f %.2f\n",
	       cpu_a, cpu_b, CHUNKS, N, la[0], la[1], la[2]);
	for (int sock = 0; rw && sock < 2; sock++) {
		double ws[CHUNKS], rs[CHUNKS], wh[CHUNKS], rh[CHUNKS], wx[CHUNKS], rx[CHUNKS],
			lat[CHUNKS], rate[CHUNKS], sep[CHUNKS];
		for (int i = 0; i < CHUNKS; i++) {
			double l0 = c2c();
			sep[i] = rw_chunk(sock, 0, &ws[i], &rs[i]);
			rate[i] = rw_chunk(sock, 1, &wh[i], &rh[i]);
			wx[i] = wh[i] - ws[i];
			rx[i] = rh[i] - rs[i];
			lat[i] = (l0 + c2c()) / 2;
		}
		printf("%s writer+reader, median [quartiles] ns per call:", sock ? "unix" : "pipe");
		q("write separate", ws);
		q("read separate", rs);
		q("write shared", wh);
		q("read shared", rh);
		q("write extra", wx);
		q("read extra", rx);
		q("c2c", lat);
		double rr[CHUNKS];
		memcpy(rr, rate, sizeof rr);
		qsort(rr, CHUNKS, sizeof *rr, cmpd);
		printf(" shared calls/us %.2f [%.2f-%.2f]", rr[CHUNKS / 2], rr[CHUNKS / 4],
		       rr[3 * CHUNKS / 4]);
		memcpy(rr, sep, sizeof rr);
		qsort(rr, CHUNKS, sizeof *rr, cmpd);
		printf(" separate calls/us %.2f\n", rr[CHUNKS / 2]);
		printf("  per chunk (c2c:write extra:read extra:calls/us):");
		for (int i = 0; i < CHUNKS; i++)
			printf(" %.0f:%.0f:%.0f:%.2f", lat[i], wx[i], rx[i], rate[i]);
		printf("\n");
	}
	for (int sock = 0; !rw && sock < 2; sock++) {
		double al[CHUNKS], se[CHUNKS], sh[CHUNKS], ex[CHUNKS], lat[CHUNKS], rate[CHUNKS],
			gp[CHUNKS], r;
		for (int i = 0; i < CHUNKS; i++) {
			double l0 = c2c();
			gp[i] = getppid_ns();
			al[i] = chunk(sock, 0, &r);
			se[i] = chunk(sock, 1, &r);
			sh[i] = chunk(sock, 2, &rate[i]);
			ex[i] = sh[i] - se[i];
			lat[i] = (l0 + c2c()) / 2;
		}
		printf("%s write, median [quartiles] ns per call:", sock ? "unix" : "pipe");
		q("alone", al);
		q("separate", se);
		q("shared", sh);
		q("shared-separate", ex);
		q("c2c", lat);
		q("getppid", gp);
		double rr[CHUNKS];
		memcpy(rr, rate, sizeof rr);
		qsort(rr, CHUNKS, sizeof *rr, cmpd);
		printf(" shared calls/us %.2f [%.2f-%.2f]\n", rr[CHUNKS / 2], rr[CHUNKS / 4],
		       rr[3 * CHUNKS / 4]);
		printf("  per chunk (c2c:shared-separate:calls/us):");
		for (int i = 0; i < CHUNKS; i++)
			printf(" %.0f:%.0f:%.2f", lat[i], ex[i], rate[i]);
		printf("\n");
	}
	getloadavg(la, 3);
	printf("# load at the end %.2f %.2f %.2f\n", la[0], la[1], la[2]);
	return 0;
}
