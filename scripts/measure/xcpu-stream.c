/* xcpu-stream: the cross-CPU extra of hackbench's channel calls on this
 * host, counted only while both sides really run at once
 * (docs/syscall-costs.md, "Cross-CPU channel cost").
 *
 * wakecost.c's stream cases time a writer and a reader of 100-byte
 * messages on one CPU and on two, over the whole run. In a VM the two
 * vCPUs are not always running at the same time on the host: then the two
 * sides take turns as on one CPU, the channel's cache lines do not move on
 * every call, and the difference shrinks towards nothing. Here each side
 * times batches of BATCH calls in thread CPU time and in wall time; a
 * batch of the two-CPU case counts only when its wall time is within 10%
 * of its CPU time (its vCPU was not descheduled and it never slept, so the
 * other side kept up with it: both ran concurrently). The one-CPU case
 * counts every batch (the sides take turns by construction).
 *
 *   cc -O2 -pthread -o /tmp/xcpu-stream scripts/measure/xcpu-stream.c
 *   nice -n -20 /tmp/xcpu-stream [--lockstep] [CPU_A CPU_B]  (default 0 1)
 *   (--lockstep: only the lockstep cases below)
 *   nice -n -20 /tmp/xcpu-stream --backlog   (the backlog cases below only)
 *
 * Output per channel kind and side: median CPU ns per call over the
 * counted batches on one CPU and on two, their difference (the extra),
 * and how many batches of the two-CPU case counted. REPS runs each.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MSG 100
#define BATCH 1000
#define BATCHES 300
#define REPS 5

static int cpu_a = 0, cpu_b = 1;

static double now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
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

struct side {
	int cpu, fd, write, concurrent_only;
	double kept[BATCHES];
	int nkept;
};

static void *run_side(void *arg)
{
	struct side *s = arg;
	char buf[MSG];
	memset(buf, 'x', sizeof buf);
	pin(s->cpu);
	s->nkept = 0;
	for (int b = 0; b < BATCHES; b++) {
		double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < BATCH; i++) {
			ssize_t r = s->write ? write(s->fd, buf, MSG) : read(s->fd, buf, MSG);
			if (r != MSG) {
				perror(s->write ? "write" : "read");
				exit(1);
			}
		}
		double c = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0, w = now_ns(CLOCK_MONOTONIC) - w0;
		if (!s->concurrent_only || w <= 1.1 * c)
			s->kept[s->nkept++] = c / BATCH;
	}
	return NULL;
}

static double median(double *v, int n)
{
	if (n == 0)
		return -1;
	qsort(v, n, sizeof *v, cmpd);
	return v[n / 2];
}

/* One run: medians per call of the writer and reader; kept batch counts. */
static void once(int sock, int two, double med[2], int kept[2])
{
	int fd[2];
	if (sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, fd) : pipe(fd)) {
		perror("channel");
		exit(1);
	}
	/* pipe: fd[0] read end; socketpair: either end */
	static struct side w, r;
	w = (struct side){ .cpu = cpu_a, .fd = fd[1], .write = 1, .concurrent_only = two };
	r = (struct side){ .cpu = two ? cpu_b : cpu_a, .fd = fd[0], .write = 0,
			   .concurrent_only = two };
	pthread_t tw, tr;
	pthread_create(&tr, NULL, run_side, &r);
	pthread_create(&tw, NULL, run_side, &w);
	pthread_join(tw, NULL);
	pthread_join(tr, NULL);
	close(fd[0]);
	close(fd[1]);
	med[0] = median(w.kept, w.nkept);
	med[1] = median(r.kept, r.nkept);
	kept[0] = w.nkept;
	kept[1] = r.nkept;
}

/* ---- lockstep: every call finds the channel last used by the other side ----
 * The writer writes one message, then hands the turn to the reader, which
 * reads it and hands the turn back (a spin on a shared flag, outside the
 * timed calls). Each write() and read() is timed alone (CLOCK_MONOTONIC,
 * vDSO); the median over LS_N calls discards the ones the host or another
 * task interrupted. On two CPUs every call finds the channel's lines on the
 * other CPU; the one-CPU reference is one thread writing and reading in
 * turn (the lines stay). The difference is the model's quantity: the extra
 * of a call whose channel was last used on another CPU. */
#define LS_N 10001 /* calls per chunk */
#define CHUNKS 41
static _Alignas(64) _Atomic int turn;
static double ls_w[LS_N], ls_r[LS_N];

struct ls {
	int cpu, fd, write;
	double *out;
};

static void *ls_side(void *arg)
{
	struct ls *s = arg;
	char buf[MSG];
	memset(buf, 'x', sizeof buf);
	pin(s->cpu);
	for (int i = 0; i < LS_N; i++) {
		while (atomic_load_explicit(&turn, memory_order_acquire) != !s->write)
			;
		double t0 = now_ns(CLOCK_MONOTONIC);
		ssize_t r = s->write ? write(s->fd, buf, MSG) : read(s->fd, buf, MSG);
		s->out[i] = now_ns(CLOCK_MONOTONIC) - t0;
		if (r != MSG) {
			perror("lockstep");
			exit(1);
		}
		atomic_store_explicit(&turn, s->write, memory_order_release);
	}
	return NULL;
}

/* Median ns of a write and of a read: on two CPUs (two) or one thread. */
static void lockstep(int sock, int two, double med[2])
{
	int fd[2];
	if (sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, fd) : pipe(fd)) {
		perror("channel");
		exit(1);
	}
	if (two) {
		struct ls w = { cpu_a, fd[1], 1, ls_w }, r = { cpu_b, fd[0], 0, ls_r };
		pthread_t tw, tr;
		atomic_store(&turn, 0);
		pthread_create(&tr, NULL, ls_side, &r);
		pthread_create(&tw, NULL, ls_side, &w);
		pthread_join(tw, NULL);
		pthread_join(tr, NULL);
	} else {
		char buf[MSG];
		memset(buf, 'x', sizeof buf);
		pin(cpu_a);
		for (int i = 0; i < LS_N; i++) {
			double t0 = now_ns(CLOCK_MONOTONIC);
			ssize_t a = write(fd[1], buf, MSG);
			double t1 = now_ns(CLOCK_MONOTONIC);
			ssize_t b = read(fd[0], buf, MSG);
			double t2 = now_ns(CLOCK_MONOTONIC);
			if (a != MSG || b != MSG) {
				perror("lockstep");
				exit(1);
			}
			ls_w[i] = t1 - t0;
			ls_r[i] = t2 - t1;
		}
	}
	close(fd[0]);
	close(fd[1]);
	med[0] = median(ls_w, LS_N);
	med[1] = median(ls_r, LS_N);
}

/* ---- backlog: the reader drains messages the writer wrote earlier ----
 * The writer writes BL messages, then hands the turn to the reader, which
 * reads all BL, each read timed alone, and hands the turn back; BL_ROUNDS
 * rounds. The first read of a round finds the channel's shared state
 * (queue head, lock, the sender's sk_wmem_alloc; a pipe's head, tail and
 * mutex) on the writer's CPU; the later reads find that state on their own
 * CPU (the previous read took it, and nobody writes meanwhile), and pay
 * only for what each message brought from the writer's CPU: the skb and
 * its data (a socket), the data in the page (a pipe). The one-CPU
 * reference is one thread doing the same. Median of the first reads and of
 * the later reads, per case. */
#define BL 32
#define BL_ROUNDS 300
static double bl_first[BL_ROUNDS], bl_rest[BL_ROUNDS * (BL - 1)];

struct bl {
	int cpu, fd, write;
};

static void bl_reads(int fd, int round)
{
	char buf[MSG];
	for (int j = 0; j < BL; j++) {
		double t0 = now_ns(CLOCK_MONOTONIC);
		ssize_t r = read(fd, buf, MSG);
		double d = now_ns(CLOCK_MONOTONIC) - t0;
		if (r != MSG) {
			perror("backlog read");
			exit(1);
		}
		if (j == 0)
			bl_first[round] = d;
		else
			bl_rest[round * (BL - 1) + j - 1] = d;
	}
}

static void bl_writes(int fd)
{
	char buf[MSG];
	memset(buf, 'x', sizeof buf);
	for (int j = 0; j < BL; j++)
		if (write(fd, buf, MSG) != MSG) {
			perror("backlog write");
			exit(1);
		}
}

static void *bl_side(void *arg)
{
	struct bl *s = arg;
	pin(s->cpu);
	for (int i = 0; i < BL_ROUNDS; i++) {
		while (atomic_load_explicit(&turn, memory_order_acquire) != !s->write)
			;
		if (s->write)
			bl_writes(s->fd);
		else
			bl_reads(s->fd, i);
		atomic_store_explicit(&turn, s->write, memory_order_release);
	}
	return NULL;
}

/* Medians of the first and of the later reads of a round: two CPUs or one. */
static void backlog(int sock, int two, double med[2])
{
	int fd[2];
	if (sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, fd) : pipe(fd)) {
		perror("channel");
		exit(1);
	}
	if (two) {
		struct bl w = { cpu_a, fd[1], 1 }, r = { cpu_b, fd[0], 0 };
		pthread_t tw, tr;
		atomic_store(&turn, 0);
		pthread_create(&tr, NULL, bl_side, &r);
		pthread_create(&tw, NULL, bl_side, &w);
		pthread_join(tw, NULL);
		pthread_join(tr, NULL);
	} else {
		pin(cpu_a);
		for (int i = 0; i < BL_ROUNDS; i++) {
			bl_writes(fd[1]);
			bl_reads(fd[0], i);
		}
	}
	close(fd[0]);
	close(fd[1]);
	med[0] = median(bl_first, BL_ROUNDS);
	med[1] = median(bl_rest, BL_ROUNDS * (BL - 1));
}

/* ---- the core-to-core line latency of the same moment (as scripts/host/c2c.c):
 * CAS ping-pong of one line between cpu_a and cpu_b, median over 51 samples
 * of 2000 round trips, round trip / 2. A VM's two vCPUs can sit on SMT
 * siblings or on two cores of the host, and the host moves them, so the
 * latency is taken next to each lockstep run and the ratio extra / latency
 * (the lines one call moves) is formed per run. */
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
		double t0 = now_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < 2000; i++) {
			int want = 1;
			while (!atomic_compare_exchange_weak_explicit(&cas_line, &want, 0,
								      memory_order_relaxed,
								      memory_order_relaxed))
				want = 1;
		}
		s[k] = (now_ns(CLOCK_MONOTONIC) - t0) / 2000 / 2.0;
	}
	pthread_join(t, NULL);
	return median(s, 51);
}

#define Q(v, name)                                                                         \
	memcpy(q, v, sizeof q);                                                                    \
	qsort(q, CHUNKS, sizeof(double), cmpd);                                                    \
	printf(" %s %.2f [%.2f-%.2f]", name, q[CHUNKS / 2], q[CHUNKS / 4], q[3 * CHUNKS / 4]);

int main(int argc, char **argv)
{
	if (argc >= 3) {
		cpu_a = atoi(argv[argc - 2]);
		cpu_b = atoi(argv[argc - 1]);
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	double la[3];
	getloadavg(la, 3);
	printf("# xcpu-stream: CPUs %d,%d; %d runs of %d batches of %d; load %.2f %.2f %.2f\n",
	       cpu_a, cpu_b, REPS, BATCHES, BATCH, la[0], la[1], la[2]);
	int ls_only = argc == 4 || (argc == 2 && !strcmp(argv[1], "--lockstep"));
	if (argc >= 2 && !strcmp(argv[1], "--backlog")) {
		/* Per chunk: c2c, one CPU, two CPUs, c2c; lines = extra / c2c. */
		for (int sock = 0; sock < 2; sock++) {
			double ex[2][CHUNKS], lines[2][CHUNKS], lat[CHUNKS], one[2][CHUNKS];
			for (int i = 0; i < CHUNKS; i++) {
				double m1[2], m2[2];
				double l0 = c2c();
				backlog(sock, 0, m1);
				backlog(sock, 1, m2);
				lat[i] = (l0 + c2c()) / 2;
				for (int s = 0; s < 2; s++) {
					one[s][i] = m1[s];
					ex[s][i] = m2[s] - m1[s];
					lines[s][i] = ex[s][i] / lat[i];
				}
			}
			for (int s = 0; s < 2; s++) {
				const char *k = sock ? "unix" : "pipe", *sd = s ? "later reads" : "first read";
				double q[CHUNKS];
				printf("backlog %s %s (median [quartiles] of %d chunks):", k, sd, CHUNKS);
				Q(one[s], "1cpu ns");
				Q(ex[s], "extra ns");
				Q(lat, "c2c ns");
				Q(lines[s], "lines");
				printf("\n");
			}
		}
		return 0;
	}
	for (int sock = 0; sock < 2 && !ls_only; sock++) {
		double one[2][REPS], two[2][REPS], d[2][REPS];
		int kept[2][REPS];
		for (int i = 0; i < REPS; i++) {
			double m1[2], m2[2];
			int k1[2];
			once(sock, 0, m1, k1);
			int k2[2];
			once(sock, 1, m2, k2);
			for (int s = 0; s < 2; s++) {
				one[s][i] = m1[s];
				two[s][i] = m2[s];
				d[s][i] = m2[s] < 0 ? 0 : m2[s] - m1[s];
				kept[s][i] = k2[s];
			}
		}
		for (int s = 0; s < 2; s++) {
			const char *k = sock ? "unix" : "pipe", *sd = s ? "reader" : "writer";
			printf("%s %s: 1cpu", k, sd);
			for (int i = 0; i < REPS; i++)
				printf(" %.0f", one[s][i]);
			printf(" | 2cpu concurrent");
			for (int i = 0; i < REPS; i++)
				printf(" %.0f(%d)", two[s][i], kept[s][i]);
			double dd[REPS];
			memcpy(dd, d[s], sizeof dd);
			double m = median(dd, REPS);
			printf(" | extra median %.0f ns (range %.0f-%.0f)\n", m, dd[0], dd[REPS - 1]);
		}
	}
	/* Chunks of LS_N calls each on one CPU and on two, with the line
	 * latency measured just before and after: per chunk, lines = extra /
	 * latency. Medians and quartiles over CHUNKS chunks. */
	for (int sock = 0; sock < 2; sock++) {
		double d[2][CHUNKS], lines[2][CHUNKS], lat[CHUNKS], one[2][CHUNKS];
		for (int i = 0; i < CHUNKS; i++) {
			double m1[2], m2[2];
			double l0 = c2c();
			lockstep(sock, 0, m1);
			lockstep(sock, 1, m2);
			lat[i] = (l0 + c2c()) / 2;
			for (int s = 0; s < 2; s++) {
				one[s][i] = m1[s];
				d[s][i] = m2[s] - m1[s];
				lines[s][i] = d[s][i] / lat[i];
			}
		}
		for (int s = 0; s < 2; s++) {
			const char *k = sock ? "unix" : "pipe", *sd = s ? "read" : "write";
			double q[CHUNKS];
			printf("lockstep %s %s (median [quartiles] of %d chunks):", k, sd, CHUNKS);
			Q(one[s], "1cpu ns");
			Q(d[s], "extra ns");
			Q(lat, "c2c ns");
			Q(lines[s], "lines");
			printf("\n");
		}
	}
	getloadavg(la, 3);
	printf("# load at the end %.2f %.2f %.2f\n", la[0], la[1], la[2]);
	return 0;
}
