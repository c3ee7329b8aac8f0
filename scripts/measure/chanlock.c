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
 * scripts/host/c2c.c) before and after every chunk: the host moves the two
 * vCPUs between one core's two threads (~27 ns) and two cores (~122 ns).
 *
 *   cc -O2 -pthread -o /tmp/chanlock scripts/measure/chanlock.c
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
 * --phase: the pipe mutex's section timed (see phase_main below).
 *
 *   nice -n -20 /tmp/chanlock --phase [--threads] [CHUNKS] [CPU_A CPU_B]
 *
 * Output per channel kind: median [quartiles] over CHUNKS chunks of each
 * case's median ns per call (the two writers' calls pooled), of
 * shared - separate, of the c2c latency; and the shared case's calls per
 * microsecond of both writers together (the lock's throughput).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

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

/* ---- --phase: the pipe mutex's section, timed ----
 *
 * Two writers on CPUs A and B, one pipe (1 MiB, so nobody blocks; drained
 * between calls, outside the timing, by A). For each repetition A publishes
 * a start time T on the TSC, ~2 us ahead; A calls write() at T, B calls its
 * write() at T + d, both spinning on the TSC (constant and nonstop on this
 * host: one clock for both vCPUs, the offset between them measured each
 * chunk by a ping-pong and subtracted). Each call is timed on the TSC (the
 * start is the spin's last read, the end an rdtscp); the delay actually
 * achieved, B's start - A's start, is recorded per repetition and a
 * repetition whose delay missed d by more than PH_TOL ns is counted and
 * left out of the medians (not binned at the wrong d).
 *
 * If B reaches pipe->mutex while A holds it, B spins (the owner runs) until
 * A releases it: B's call is longer by (A's release - B's arrival) plus the
 * handoff, which falls with slope -1 in d, until d is late enough that B
 * arrives after the release and its call is the uncontended one (with the
 * pipe's lines coming from A). A hinge B(d) = max(U, K - d) fitted to the
 * medians gives the knee d* = K - U: the delay past which B no longer
 * waits. With A's and B's calls the same path (two writers), the knee is
 * the hold plus the handoff a queued second writer sees, i.e. the lock's
 * time per call when two writers are lock-bound (docs/syscall-costs.md).
 *
 * Five cases, run in blocks, the d values in a new random order every
 * round (fixed seed):
 *   ww-sep:    A writes pipe 0, B writes pipe 1 (no lock shared: the
 *              control for what the two CPUs' activity costs each other);
 *   ww-shared: A and B write the same pipe;
 *   wr-sep:    A writes pipe 3, B reads pipe 4 (pre-filled);
 *   wr-shared: A writes pipe 5, B reads it (pre-filled, >= 1000 messages);
 *   ww-warmA:  as ww-shared (pipe 6), but A writes once more, untimed,
 *              just before the repetition, so that A's timed call finds
 *              the pipe's lines in its own cache: its section without the
 *              lines, where ww-shared's takes them from B's CPU.
 * B is a forked process by default (each side has its own fd table, so
 * fdget does not take a reference on the shared struct file, as in
 * hackbench's process mode); --threads makes B a thread of A (the shared
 * fd table: fdget refcounts the file, another line the two CPUs share, as
 * in the other chanlock modes).
 *
 * Every chunk: the c2c latency before and after (the host moves the two
 * vCPUs between one core's two threads and two cores); a chunk whose
 * before and after placements differ is reported but left out of the
 * placement tables.
 */
#define PH_NMODE 5
#define PH_REPS 40 /* repetitions per d per case per chunk */
#define PH_TOL 20.0 /* ns: largest |achieved - intended delay| kept */
#define PH_MAXD 64
enum { PH_WRITE = 0, PH_READ = 1, PH_PING = 2, PH_EXIT = 3 };
static const char *ph_name[PH_NMODE] = { "ww-sep", "ww-shared", "wr-sep", "wr-shared",
					 "ww-warmA" };
#define PH_READS(m) ((m) == 2 || (m) == 3) /* B reads */
static int ph_nd;
static double ph_dns[PH_MAXD];

struct ph_ctl {
	_Alignas(64) _Atomic long go; /* repetition number published by A */
	long target, dcyc;
	int fd, op, pings;
	_Alignas(64) _Atomic long done; /* last repetition B finished */
	long b0, b1, bsw; /* B's call: start, end; B's context switches so far */
	_Alignas(64) _Atomic long ping;
	_Alignas(64) _Atomic long pong;
	long tb;
};

static double ph_ghz; /* TSC cycles per ns */

static inline long ph_tscp(void)
{
	unsigned aux;
	return (long)__rdtscp(&aux);
}

static void ph_b(struct ph_ctl *c)
{
	char buf[MSG];
	memset(buf, 'b', sizeof buf);
	for (long seq = 1;; seq++) {
		while (atomic_load_explicit(&c->go, memory_order_acquire) < seq)
			_mm_pause();
		int op = c->op;
		if (op == PH_EXIT)
			return;
		if (op == PH_PING) {
			for (long k = 1; k <= c->pings; k++) {
				while (atomic_load_explicit(&c->ping, memory_order_acquire) < k)
					;
				c->tb = ph_tscp();
				atomic_store_explicit(&c->pong, k, memory_order_release);
			}
			atomic_store_explicit(&c->done, seq, memory_order_release);
			continue;
		}
		long until = c->target + c->dcyc, t;
		int fd = c->fd;
		while ((t = (long)__rdtsc()) < until)
			;
		ssize_t r = op == PH_READ ? read(fd, buf, MSG) : write(fd, buf, MSG);
		long e = ph_tscp();
		if (r != MSG) {
			perror(op == PH_READ ? "phase: B read" : "phase: B write");
			exit(1);
		}
		struct rusage ru;
		getrusage(RUSAGE_THREAD, &ru); /* after the timing */
		c->b0 = t;
		c->b1 = e;
		c->bsw = ru.ru_nvcsw + ru.ru_nivcsw;
		atomic_store_explicit(&c->done, seq, memory_order_release);
	}
}

static void *ph_b_thread(void *arg)
{
	pin(cpu_b);
	ph_b(arg);
	return NULL;
}

static struct ph_ctl *ph_c;
static long ph_seq;

/* TSC offset of B's CPU relative to A's (cycles), from the round trip
 * with the smallest duration; *rtt its round trip in ns. */
static double ph_offset(double *rtt)
{
	struct ph_ctl *c = ph_c;
	int k_n = 2000;
	atomic_store(&c->ping, 0);
	atomic_store(&c->pong, 0);
	c->op = PH_PING;
	c->pings = k_n;
	atomic_store_explicit(&c->go, ++ph_seq, memory_order_release);
	long best = -1;
	double off = 0;
	for (long k = 1; k <= k_n; k++) {
		long t1 = ph_tscp();
		atomic_store_explicit(&c->ping, k, memory_order_release);
		while (atomic_load_explicit(&c->pong, memory_order_acquire) < k)
			;
		long t3 = ph_tscp();
		long tb = c->tb;
		if (best < 0 || t3 - t1 < best) {
			best = t3 - t1;
			off = tb - (t1 + t3) / 2.0;
		}
	}
	while (atomic_load_explicit(&c->done, memory_order_acquire) < ph_seq)
		_mm_pause();
	*rtt = best / ph_ghz;
	return off;
}

/* The seven pipes and how many messages each holds. */
static int ph_p[7][2], ph_cnt[7];
static const int ph_fa[PH_NMODE] = { 0, 2, 3, 5, 6 }; /* A writes */
static const int ph_fb[PH_NMODE] = { 1, 2, 4, 5, 6 }; /* B writes (ww) or reads (wr) */

static void ph_fill(int p, int n)
{
	char buf[MSG];
	memset(buf, 'f', sizeof buf);
	while (ph_cnt[p] < n) {
		if (write(ph_p[p][1], buf, MSG) != MSG) {
			perror("phase: pre-fill");
			exit(1);
		}
		ph_cnt[p]++;
	}
}

/* Keeps the case's pipes where no call blocks or runs dry; returns 1 if
 * it touched one (the next repetition is then a warm-up, not recorded). */
static int ph_maint(int m, int force)
{
	int touched = 0;
	int ps[2] = { ph_fa[m], ph_fb[m] };
	for (int i = 0; i < 2; i++) {
		int p = ps[i];
		int reader = p == 4 || p == 5;
		if (ph_cnt[p] > 5000 || (force && !reader)) {
			drain(ph_p[p][0]);
			ph_cnt[p] = 0;
			touched = 1;
		}
		if (reader && ph_cnt[p] < 1000) {
			ph_fill(p, 4000);
			touched = 1;
		}
	}
	return touched;
}

/* One repetition of case m at delay index di: durations and delay, ns. */
static long ph_bsw; /* B's context switches at the last repetition */
static void ph_rep(int m, int di, double *a, double *b, double *dd, double off, int *sw)
{
	static char buf[MSG] = { 'a' };
	struct ph_ctl *c = ph_c;
	int fd = ph_p[ph_fa[m]][1];
	if (m == 4) { /* ww-warmA: A writes first, untimed, taking the lines back from B */
		if (write(fd, buf, MSG) != MSG) {
			perror("phase: A's untimed write");
			exit(1);
		}
		ph_cnt[ph_fa[m]]++;
	}
	long lead = (long)(2000 * ph_ghz);
	long target = (long)__rdtsc() + lead;
	c->target = target;
	c->dcyc = (long)(ph_dns[di] * ph_ghz + off); /* B's clock runs off ahead */
	c->fd = PH_READS(m) ? ph_p[ph_fb[m]][0] : ph_p[ph_fb[m]][1];
	c->op = PH_READS(m) ? PH_READ : PH_WRITE;
	atomic_store_explicit(&c->go, ++ph_seq, memory_order_release);
	long t;
	while ((t = (long)__rdtsc()) < target)
		;
	ssize_t r = write(fd, buf, MSG);
	long e = ph_tscp();
	if (r != MSG) {
		perror("phase: A write");
		exit(1);
	}
	while (atomic_load_explicit(&c->done, memory_order_acquire) < ph_seq)
		_mm_pause();
	ph_cnt[ph_fa[m]]++;
	ph_cnt[ph_fb[m]] += PH_READS(m) ? -1 : 1;
	*a = (e - t) / ph_ghz;
	*b = (c->b1 - c->b0) / ph_ghz;
	*dd = (c->b0 - off - t) / ph_ghz;
	*sw = c->bsw != ph_bsw; /* B slept (or was preempted) in this repetition */
	ph_bsw = c->bsw;
}

/* The wait B's call shows, from the curve of B's ns per call b[] (and A's,
 * a[]) over the delays d[] (the last ones, >= 600 ns, where B starts after
 * A has returned, give the uncontended U and UA):
 *   B(d) = U + S + k (H - d)  for lo <= d < H,   U  for d >= H,
 * least squares over H (1 ns steps) and, for each H, S and k by linear
 * regression. H is where B's wait ends (the drop), S the wait left just
 * before it (the step: the handoff in the model's terms, chan_lock.rs),
 * k the slope (the model's 1). lo is the first delay at which B is no
 * faster than A: below it B, whose CPU holds the pipe's lines from the
 * last repetition, takes the mutex first and A waits. If no wait fits
 * better than none, H = lo and S = k = 0. *ax = A's mean extra over UA
 * at lo <= d < H (what B's wait costs the holder). A fit whose largest
 * wait, S + k (H - lo), is below 15 ns is reported as no wait (H = lo). */
struct ph_fitr {
	double u, ua, lo, h, s, k, ax;
};

static struct ph_fitr ph_fit(const double *d, const double *b, const double *a, int n)
{
	struct ph_fitr f = { 0 };
	int nu = 0, lo = -1, top = 0;
	for (int i = 0; i < n; i++)
		if (d[i] >= 600) {
			f.u += b[i];
			f.ua += a[i];
			nu++;
		} else {
			top = i + 1;
			if (lo < 0 && b[i] >= a[i] - 5)
				lo = i;
		}
	f.u /= nu;
	f.ua /= nu;
	if (lo < 0)
		lo = 0;
	f.lo = d[lo];
	double best = 0;
	for (int i = lo; i < n; i++)
		best += (b[i] - f.u) * (b[i] - f.u);
	f.h = d[lo];
	for (double h = d[lo] + 1; h <= d[top - 1] + 10; h += 1) {
		double sx = 0, sy = 0, sxx = 0, sxy = 0, e = 0;
		int m = 0;
		for (int i = lo; i < n; i++)
			if (d[i] < h) {
				double x = h - d[i], y = b[i] - f.u;
				sx += x;
				sy += y;
				sxx += x * x;
				sxy += x * y;
				m++;
			} else
				e += (b[i] - f.u) * (b[i] - f.u);
		double k = m >= 2 ? (m * sxy - sx * sy) / (m * sxx - sx * sx) : 0;
		double s = (sy - k * sx) / m;
		for (int i = lo; i < n; i++)
			if (d[i] < h) {
				double r = b[i] - f.u - s - k * (h - d[i]);
				e += r * r;
			}
		if (e < best) {
			best = e;
			f.h = h;
			f.s = s;
			f.k = k;
		}
	}
	if (f.s + f.k * (f.h - f.lo) < 15) { /* no wait worth the name */
		f.h = f.lo;
		f.s = f.k = 0;
	}
	int m = 0;
	for (int i = lo; i < n; i++)
		if (d[i] < f.h) {
			f.ax += a[i] - f.ua;
			m++;
		}
	f.ax = m ? f.ax / m : 0;
	return f;
}

/* q-quantile of v[0..n) (sorts v). */
static double ph_q(double *v, int n, double q)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof *v, cmpd);
	int i = (int)(q * (n - 1) + 0.5);
	return v[i];
}

/* Mean of the middle half of v[0..n) (sorts v): the TSC moves in steps of
 * 26 cycles (10 ns) here, so a median sits on a step; the middle half's
 * mean resolves below one while ignoring the preempted tail. */
static double ph_iqm(double *v, int n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof *v, cmpd);
	int lo = n / 4, hi = n - n / 4;
	double s = 0;
	for (int i = lo; i < hi; i++)
		s += v[i];
	return s / (hi - lo);
}

static void ph_costs(void)
{
	/* TSC rate against CLOCK_MONOTONIC over 100 ms */
	double n0 = now_ns();
	long c0 = ph_tscp();
	while (now_ns() - n0 < 1e8)
		;
	double n1 = now_ns();
	long c1 = ph_tscp();
	ph_ghz = (c1 - c0) / (n1 - n0);
	double s[3][101];
	for (int k = 0; k < 101; k++) {
		long a = ph_tscp();
		for (int i = 0; i < 1000; i++)
			(void)__rdtsc();
		long b = ph_tscp();
		for (int i = 0; i < 1000; i++)
			(void)ph_tscp();
		long c = ph_tscp();
		volatile double sink = 0;
		for (int i = 0; i < 1000; i++)
			sink += now_ns();
		long d = ph_tscp();
		s[0][k] = (b - a) / ph_ghz / 1000;
		s[1][k] = (c - b) / ph_ghz / 1000;
		s[2][k] = (d - c) / ph_ghz / 1000;
	}
	printf("# TSC %.4f GHz (against CLOCK_MONOTONIC, 100 ms); read cost rdtsc %.1f ns, rdtscp %.1f "
	       "ns, clock_gettime %.1f ns (medians of 101 x 1000)\n",
	       ph_ghz, ph_q(s[0], 101, 0.5), ph_q(s[1], 101, 0.5), ph_q(s[2], 101, 0.5));
}

static int ph_class(double c2c_ns)
{
	return c2c_ns < 60 ? 0 : c2c_ns > 90 ? 1 : 2;
}

static int phase_main(int argc, char **argv)
{
	int threads = 0, chunks = 24;
	argc--;
	argv++;
	if (argc >= 1 && !strcmp(argv[0], "--threads")) {
		threads = 1;
		argc--;
		argv++;
	}
	for (int i = 0; i < argc; i++) {
		char *end;
		long v = strtol(argv[i], &end, 10);
		if (!*argv[i] || *end || v < 0 || v > 1000000) {
			fprintf(stderr, "chanlock --phase: argument %d, '%s': not a number\n", i + 1,
				argv[i]);
			return 2;
		}
	}
	if (argc == 1 || argc == 3) {
		chunks = atoi(argv[0]);
		argc--;
		argv++;
	}
	if (argc == 2) {
		cpu_a = atoi(argv[0]);
		cpu_b = atoi(argv[1]);
	} else if (argc) {
		fprintf(stderr, "usage: chanlock --phase [--threads] [CHUNKS] [CPU_A CPU_B]\n");
		return 2;
	}
	if (chunks < 1 || chunks > 1000) {
		fprintf(stderr, "chanlock --phase: CHUNKS must be 1..1000\n");
		return 2;
	}
	for (int d = 0; d <= 400; d += 10)
		ph_dns[ph_nd++] = d;
	ph_dns[ph_nd++] = 600;
	ph_dns[ph_nd++] = 1000;
	ph_dns[ph_nd++] = 2000;
	setvbuf(stdout, NULL, _IONBF, 0);
	pin(cpu_a);
	double la[3];
	getloadavg(la, 3);
	printf("# chanlock --phase: B a %s; CPUs %d,%d; %d chunks x %d cases x %d delays x %d "
	       "repetitions; load %.2f %.2f %.2f\n",
	       threads ? "thread" : "process", cpu_a, cpu_b, chunks, PH_NMODE, ph_nd, PH_REPS, la[0],
	       la[1], la[2]);
	ph_costs();
	ph_c = mmap(NULL, sizeof *ph_c, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ph_c == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (int p = 0; p < 7; p++)
		chan_open(0, ph_p[p]);
	size_t per = (size_t)PH_NMODE * ph_nd * PH_REPS;
	float *sa_ = calloc(per * chunks, sizeof(float)), *sb_ = calloc(per * chunks, sizeof(float)),
	      *sd_ = calloc(per * chunks, sizeof(float));
	unsigned char *ok = calloc(per * chunks, 1), *swf = calloc(per * chunks, 1);
	double *lat0 = calloc(chunks, sizeof(double)), *lat1 = calloc(chunks, sizeof(double)),
	       *offs = calloc(chunks, sizeof(double)), *rtts = calloc(chunks, sizeof(double));
	if (!sa_ || !sb_ || !sd_ || !ok || !swf || !lat0 || !lat1 || !offs || !rtts) {
		perror("calloc");
		return 1;
	}
	unsigned seed = 14;
	int miss[PH_NMODE] = { 0 }, kept[PH_NMODE] = { 0 };
	int order[PH_MAXD];
	static double v[1000 * PH_REPS], w[1000 * PH_REPS], x[1000 * PH_REPS];
	printf("# per chunk: c2c before/after (ns), the ping-pong's TSC offset B-A (ns, not applied: "
	       "the kernel runs on the TSC clocksource, which it checked synchronised) and that round "
	       "trip, then per case B's ns per call (mean of the middle half) at each delay %g..%g\n",
	       ph_dns[0], ph_dns[ph_nd - 1]);
	for (int ch = 0; ch < chunks; ch++) {
		lat0[ch] = c2c();
		memset(ph_c, 0, sizeof *ph_c);
		ph_seq = 0;
		ph_bsw = 0;
		pid_t pid = 0;
		pthread_t tb;
		if (threads) {
			pthread_create(&tb, NULL, ph_b_thread, ph_c);
		} else {
			pid = fork();
			if (pid < 0) {
				perror("fork");
				return 1;
			}
			if (pid == 0) {
				/* dies with A, not left spinning if A is killed */
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				if (getppid() == 1)
					_exit(1);
				pin(cpu_b);
				ph_b(ph_c);
				_exit(0);
			}
		}
		double rtt, off = ph_offset(&rtt);
		offs[ch] = off / ph_ghz;
		rtts[ch] = rtt;
		for (int m = 0; m < PH_NMODE; m++) {
			double a, b, dd;
			int sw;
			ph_maint(m, 1);
			for (int i = 0; i < 3; i++)
				ph_rep(m, 0, &a, &b, &dd, 0, &sw);
			for (int r = 0; r < PH_REPS; r++) {
				for (int i = 0; i < ph_nd; i++)
					order[i] = i;
				for (int i = ph_nd - 1; i > 0; i--) {
					int j = rand_r(&seed) % (i + 1), t = order[i];
					order[i] = order[j];
					order[j] = t;
				}
				for (int i = 0; i < ph_nd; i++) {
					int di = order[i];
					if (ph_maint(m, 0))
						ph_rep(m, di, &a, &b, &dd, 0, &sw);
					ph_rep(m, di, &a, &b, &dd, 0, &sw);
					size_t at = (size_t)ch * per + ((size_t)m * ph_nd + di) * PH_REPS + r;
					sa_[at] = a;
					sb_[at] = b;
					sd_[at] = dd;
					swf[at] = sw;
					ok[at] = fabs(dd - ph_dns[di]) <= PH_TOL;
				}
			}
		}
		ph_c->op = PH_EXIT;
		atomic_store_explicit(&ph_c->go, ++ph_seq, memory_order_release);
		if (threads)
			pthread_join(tb, NULL);
		else
			waitpid(pid, NULL, 0);
		lat1[ch] = c2c();
		printf("chunk %d c2c %.0f/%.0f offset %.1f rtt %.0f", ch, lat0[ch], lat1[ch], offs[ch],
		       rtts[ch]);
		for (int m = 0; m < PH_NMODE; m++) {
			printf(" | %s", ph_name[m]);
			for (int di = 0; di < ph_nd; di++) {
				int n = 0;
				for (int r = 0; r < PH_REPS; r++) {
					size_t at = (size_t)ch * per + ((size_t)m * ph_nd + di) * PH_REPS + r;
					if (ok[at])
						v[n++] = sb_[at];
				}
				printf(" %.0f", ph_iqm(v, n));
			}
		}
		printf("\n");
	}
	/* Placement tables: chunks whose c2c before and after fall in one class. */
	static const char *pname[2] = { "one core's two threads (c2c < 60 ns)",
					"two cores (c2c > 90 ns)" };
	int moved = 0;
	for (int ch = 0; ch < chunks; ch++)
		if (ph_class(lat0[ch]) != ph_class(lat1[ch]) || ph_class(lat0[ch]) == 2)
			moved++;
	printf("# chunks whose placement changed or was between classes (left out below): %d of %d\n",
	       moved, chunks);
	for (int pl = 0; pl < 2; pl++) {
		int nch = 0;
		double cl[1000], of[1000];
		for (int ch = 0; ch < chunks; ch++)
			if (ph_class(lat0[ch]) == pl && ph_class(lat1[ch]) == pl) {
				cl[nch] = (lat0[ch] + lat1[ch]) / 2;
				of[nch++] = offs[ch];
			}
		if (!nch)
			continue;
		double c2cm = ph_q(cl, nch, 0.5);
		printf("\n## %s: %d chunks, c2c %.0f [%.0f-%.0f] ns, TSC offset estimate B-A %.1f ns\n",
		       pname[pl], nch, c2cm, ph_q(cl, nch, 0.25), ph_q(cl, nch, 0.75),
		       ph_q(of, nch, 0.5));
		printf("d(ns) | per case: achieved d (median), A ns, B ns (means of the middle half) "
		       "[B's quartiles], %% of repetitions in which B switched out\n");
		double bm[PH_NMODE][PH_MAXD], am[PH_NMODE][PH_MAXD], dm[PH_NMODE][PH_MAXD];
		for (int di = 0; di < ph_nd; di++) {
			printf("%4.0f", ph_dns[di]);
			for (int m = 0; m < PH_NMODE; m++) {
				int n = 0, all = 0, nsw = 0;
				for (int ch = 0; ch < chunks; ch++) {
					if (ph_class(lat0[ch]) != pl || ph_class(lat1[ch]) != pl)
						continue;
					for (int r = 0; r < PH_REPS; r++) {
						size_t at = (size_t)ch * per +
							    ((size_t)m * ph_nd + di) * PH_REPS + r;
						all++;
						if (!ok[at])
							continue;
						nsw += swf[at];
						v[n] = sb_[at];
						w[n] = sa_[at];
						x[n++] = sd_[at];
					}
				}
				miss[m] += all - n;
				kept[m] += n;
				dm[m][di] = ph_q(x, n, 0.5);
				am[m][di] = ph_iqm(w, n);
				double b1 = ph_q(v, n, 0.25), b3 = ph_q(v, n, 0.75);
				bm[m][di] = ph_iqm(v, n);
				printf(" | %s %.0f %.0f %.0f [%.0f-%.0f] %.0f%%", ph_name[m], dm[m][di],
				       am[m][di], bm[m][di], b1, b3, n ? 100.0 * nsw / n : 0.0);
			}
			printf("\n");
		}
		for (int m = 0; m < PH_NMODE; m++) {
			struct ph_fitr f = ph_fit(dm[m], bm[m], am[m], ph_nd);
			/* the same per chunk, for the spread */
			double hc[1000], scs[1000], kc[1000];
			int nk = 0;
			for (int ch = 0; ch < chunks; ch++) {
				if (ph_class(lat0[ch]) != pl || ph_class(lat1[ch]) != pl)
					continue;
				double cb[PH_MAXD], ca[PH_MAXD], cd[PH_MAXD];
				for (int di = 0; di < ph_nd; di++) {
					int n = 0;
					for (int r = 0; r < PH_REPS; r++) {
						size_t at = (size_t)ch * per +
							    ((size_t)m * ph_nd + di) * PH_REPS + r;
						if (ok[at]) {
							v[n] = sb_[at];
							w[n] = sa_[at];
							x[n++] = sd_[at];
						}
					}
					cb[di] = ph_iqm(v, n);
					ca[di] = ph_iqm(w, n);
					cd[di] = ph_q(x, n, 0.5);
				}
				struct ph_fitr g = ph_fit(cd, cb, ca, ph_nd);
				hc[nk] = g.h;
				scs[nk] = g.s;
				kc[nk++] = g.k;
			}
			printf("%s: U %.0f (A %.0f) ns; B waits for lo %.0f <= d < H %.0f ns (per chunk "
			       "%.0f [%.0f-%.0f]); wait at the drop S %.0f ns (%.0f [%.0f-%.0f]); B's time "
			       "falls %.2f ns per ns of d before it (%.2f [%.2f-%.2f]); A's extra meanwhile %.0f ns; B at d=0 - U %.0f ns\n",
			       ph_name[m], f.u, f.ua, f.lo, f.h, ph_q(hc, nk, 0.5), ph_q(hc, nk, 0.25),
			       ph_q(hc, nk, 0.75), f.s, ph_q(scs, nk, 0.5), ph_q(scs, nk, 0.25),
			       ph_q(scs, nk, 0.75), f.k, ph_q(kc, nk, 0.5), ph_q(kc, nk, 0.25),
			       ph_q(kc, nk, 0.75), f.ax, bm[m][0] - f.u);
		}
	}
	printf("\n# repetitions kept / left out (achieved delay off by > %.0f ns), placement tables:",
	       PH_TOL);
	for (int m = 0; m < PH_NMODE; m++)
		printf(" %s %d/%d", ph_name[m], kept[m], miss[m]);
	getloadavg(la, 3);
	printf("\n# load at the end %.2f %.2f %.2f\n", la[0], la[1], la[2]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--phase"))
		return phase_main(argc - 1, argv + 1);
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
