/* wakecost.c: what one hackbench message costs on this host, wakeups and
 * context switches included (docs/syscall-costs.md, "Wakeups, switches and
 * messages under load").
 *
 * scripts/measure/syscost.c times each call alone (a pipe with room, nobody
 * asleep). hackbench's calls are not alone: a write into an empty channel
 * wakes the reader, on this CPU or on the other one, and the two sides of
 * a channel run on different CPUs, so the channel's cache lines move. This
 * program times those cases:
 *
 *   yield       two SCHED_FIFO threads on one CPU taking turns with
 *               sched_yield(): one yield = a syscall + one context switch.
 *   pp-local    ping-pong of 1-byte messages over two channels, both
 *               threads on one CPU (lmbench lat_ctx style): per hop, and
 *               the CPU time of the write() that wakes the sleeping peer.
 *   pp-remote   the same with the threads on two CPUs: per hop (wakeup
 *               latency across vCPUs, IPI included) and the waker's write().
 *   stream-1cpu a writer and a reader of 100-byte messages on one CPU:
 *               wall time per message and switches per message.
 *   stream-2cpu the same on two CPUs: each side's CPU time per message
 *               (thread CPU clock) and how often each side slept.
 *   fifo-waker  a SCHED_FIFO waker on CPU 0 writes one byte that wakes a
 *               fair reader on CPU 0 (local) or CPU 1 (remote, its CPU
 *               idle): the waker's CPU time of that write(), the wakee's
 *               latency. These give the machine figures of --json.
 *   busy-target a wake-up onto a busy CPU (an RT task running there: no
 *               idle exit, no wakelist, no preemption, no IPI), remote
 *               against local: the waker's extra and the wakee's extra at
 *               its switch in, also in line transfers at the core-to-core
 *               latency measured around each repetition (--json:
 *               wakeup_xcpu_ns, switch_xcpu_ns, futex channel).
 *   block cycle the one-CPU ping-pong hop of a pipe and a unix socket
 *               less what the model charges for it (two calls, the
 *               wakeup, the switch), every figure measured back to back
 *               per repetition: the sleep path of a blocking call
 *               (--json: pipe_sleep_ns, unix_sleep_ns). --hop-only adds
 *               the same hops under SCHED_FIFO and over a futex word.
 *
 * Each case runs REPS times; the report gives the median and the range.
 * Channels: pipe(2) and socketpair(AF_UNIX, SOCK_STREAM).
 *
 *   cc -O2 -pthread -o /tmp/wakecost scripts/host/wakecost.c
 *   nice -n -20 /tmp/wakecost [--wake-only] [--json costs.json]
 *       (as root: the yield and fifo-waker cases use SCHED_FIFO)
 *
 * --wake-only stops after the switch and wakeup cases and the stream
 * figures; --json writes the machine figures schedlab validate reads from
 * a recording's costs.json. --stream-only times only the syscall, the
 * yield and the 100k stream cases, and writes no --json. --busy-only
 * times only the busy-target cases (WAKECOST_TRACE=NAME: marks in the
 * tracefs instance NAME's trace, to count IPIs per case). --hop-only
 * times only the block cycle, fair against FIFO, pipe, unix and futex.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REPS 7

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
	if (pthread_setaffinity_np(pthread_self(), sizeof s, &s)) {
		perror("pin");
		exit(1);
	}
}

static void chan(int sock, int fd[2])
{
	if (sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, fd) : pipe(fd)) {
		perror("channel");
		exit(1);
	}
}

static void xwrite(int fd, const void *b, size_t n)
{
	if (write(fd, b, n) != (ssize_t)n) {
		perror("write");
		exit(1);
	}
}

static void xread(int fd, void *b, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)b + got, n - got);
		if (r <= 0) {
			perror("read");
			exit(1);
		}
		got += r;
	}
}

static double median_of_last; /* set by report() */
static int stream_msgs = 400000;

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *what, double *v)
{
	qsort(v, REPS, sizeof *v, cmpd);
	median_of_last = v[REPS / 2];
	printf("%-44s median %9.0f  min %9.0f  max %9.0f\n", what, v[REPS / 2], v[0],
	       v[REPS - 1]);
	fflush(stdout);
}

/* ---- yield: context switch ---- */
static volatile int stop_yield;
static void *yielder(void *arg)
{
	pin(*(int *)arg);
	while (!stop_yield)
		sched_yield();
	return NULL;
}

static double yield_once(void)
{
	int cpu = 0, n = 200000;
	pthread_attr_t at;
	struct sched_param sp = { .sched_priority = 10 };
	pthread_attr_init(&at);
	pthread_attr_setinheritsched(&at, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&at, SCHED_FIFO);
	pthread_attr_setschedparam(&at, &sp);
	pthread_t t;
	stop_yield = 0;
	if (pthread_create(&t, &at, yielder, &cpu)) {
		perror("FIFO thread (run as root)");
		exit(1);
	}
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
		perror("FIFO");
		exit(1);
	}
	pin(cpu);
	double t0 = now_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < n; i++)
		sched_yield();
	double t1 = now_ns(CLOCK_MONOTONIC);
	stop_yield = 1;
	sched_yield();
	struct sched_param z = { 0 };
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &z);
	pthread_join(t, NULL);
	/* Each of our yields hands the CPU to the peer, whose yield hands it
	 * back: 2n yields (2n switches) in the time. */
	return (t1 - t0) / (2.0 * n);
}

static double bare_syscall(void)
{
	int n = 200000;
	double t0 = now_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < n; i++)
		getppid();
	return (now_ns(CLOCK_MONOTONIC) - t0) / n;
}

/* ---- ping-pong ---- */
struct pp {
	int cpu, rd, wr, n;
	double wake_write_ns; /* CPU time of the writes that woke the peer */
};

static void *pp_peer(void *arg)
{
	struct pp *p = arg;
	char c = 0;
	double w = 0;
	pin(p->cpu);
	for (int i = 0; i < p->n; i++) {
		xread(p->rd, &c, 1);
		double t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		xwrite(p->wr, &c, 1);
		w += now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	}
	p->wake_write_ns = w / p->n;
	return NULL;
}

/* Returns the one-way hop; *wake = mean CPU time of a write that wakes
 * the sleeping peer (measured by the peer thread). */
static double pp_once(int sock, int cpu_a, int cpu_b, double *wake)
{
	int a[2], b[2], n = 50000;
	chan(sock, a);
	chan(sock, b);
	struct pp peer = { .cpu = cpu_b, .rd = a[0], .wr = b[1], .n = n };
	pthread_t t;
	pthread_create(&t, NULL, pp_peer, &peer);
	pin(cpu_a);
	char c = 0;
	usleep(10000);
	double t0 = now_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < n; i++) {
		xwrite(a[1], &c, 1);
		xread(b[0], &c, 1);
	}
	double t1 = now_ns(CLOCK_MONOTONIC);
	pthread_join(t, NULL);
	close(a[0]); close(a[1]); close(b[0]); close(b[1]);
	*wake = peer.wake_write_ns;
	return (t1 - t0) / (2.0 * n);
}

/* ---- streaming 100-byte messages ---- */
struct st {
	int cpu, fd, n;
	double cpu_ns;
	long nvcsw, nivcsw;
};

static void *st_reader(void *arg)
{
	struct st *s = arg;
	char buf[100];
	struct rusage r0, r1;
	pin(s->cpu);
	getrusage(RUSAGE_THREAD, &r0);
	double t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (int i = 0; i < s->n; i++)
		xread(s->fd, buf, sizeof buf);
	s->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	getrusage(RUSAGE_THREAD, &r1);
	s->nvcsw = r1.ru_nvcsw - r0.ru_nvcsw;
	s->nivcsw = r1.ru_nivcsw - r0.ru_nivcsw;
	return NULL;
}

/* Returns wall ns per message; fills per-side CPU ns per message and
 * sleeps (voluntary switches) / preemptions per 1000 messages. */
static double st_once(int sock, int cpu_w, int cpu_r, double out[6])
{
	int fd[2], n = stream_msgs;
	char buf[100];
	memset(buf, 'x', sizeof buf);
	chan(sock, fd);
	struct st rd = { .cpu = cpu_r, .fd = fd[0], .n = n };
	pthread_t t;
	pin(cpu_w);
	pthread_create(&t, NULL, st_reader, &rd);
	usleep(10000);
	struct rusage r0, r1;
	getrusage(RUSAGE_THREAD, &r0);
	double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), t0 = now_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < n; i++)
		xwrite(fd[1], buf, sizeof buf);
	double c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	getrusage(RUSAGE_THREAD, &r1);
	pthread_join(t, NULL);
	double t1 = now_ns(CLOCK_MONOTONIC);
	close(fd[0]); close(fd[1]);
	out[0] = (c1 - c0) / n;
	out[1] = rd.cpu_ns / n;
	out[2] = 1000.0 * (r1.ru_nvcsw - r0.ru_nvcsw) / n;
	out[3] = 1000.0 * rd.nvcsw / n;
	out[4] = 1000.0 * (r1.ru_nivcsw - r0.ru_nivcsw) / n;
	out[5] = 1000.0 * rd.nivcsw / n;
	return (t1 - t0) / n;
}

/* ---- a FIFO waker and a fair wakee: the wakeup alone ----
 * A (SCHED_FIFO 10, CPU 0) writes one byte that wakes B (SCHED_OTHER,
 * asleep in read(), on CPU 0 or CPU 1), then sleeps in read() of the other
 * channel. B reads, notes the time, and writes back (waking A). A fair wakee
 * never preempts a FIFO waker, so A's write() runs to its end: its CPU time
 * is the write plus try_to_wake_up (plus, for a wakee on the other CPU, the
 * IPI that wakes that CPU). B's return from read() minus A's clock before
 * the write is the wakeup latency. */
struct fw {
	int cpu, rd, wr, n;
	volatile double *t_send;
	double lat_ns;
};

static void *fw_peer(void *arg)
{
	struct fw *p = arg;
	char c = 0;
	double *lat = malloc(sizeof(double) * p->n);
	pin(p->cpu);
	for (int i = 0; i < p->n; i++) {
		xread(p->rd, &c, 1);
		lat[i] = now_ns(CLOCK_MONOTONIC) - *p->t_send;
		xwrite(p->wr, &c, 1);
	}
	qsort(lat, p->n, sizeof(double), cmpd);
	p->lat_ns = lat[p->n / 2];
	free(lat);
	return NULL;
}

static double fw_once(int sock, int cpu_b, double *lat)
{
	int a[2], b[2], n = 20000;
	static volatile double t_send;
	chan(sock, a);
	chan(sock, b);
	struct fw peer = { .cpu = cpu_b, .rd = a[0], .wr = b[1], .n = n, .t_send = &t_send };
	pthread_t t;
	pin(0);
	pthread_create(&t, NULL, fw_peer, &peer);
	struct sched_param sp = { .sched_priority = 10 }, z = { 0 };
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
		perror("FIFO (run as root)");
		exit(1);
	}
	usleep(10000);
	char c = 0;
	double w = 0;
	for (int i = 0; i < n; i++) {
		/* Let B reach its read() (and, for CPU 1, its CPU go idle). */
		if (cpu_b)
			usleep(50);
		t_send = now_ns(CLOCK_MONOTONIC);
		double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		xwrite(a[1], &c, 1);
		w += now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		xread(b[0], &c, 1);
	}
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &z);
	pthread_join(t, NULL);
	close(a[0]); close(a[1]); close(b[0]); close(b[1]);
	*lat = peer.lat_ns;
	return w / n;
}

/* ---- busy-target: a wake-up onto a busy CPU, remote against local ----
 * What a remote wake-up costs beyond a local one when the target CPU is
 * busy (no idle exit, no polling, no wakelist: ttwu_queue_cond refuses a
 * CPU with tasks queued, so the waker enqueues under the target's rq lock),
 * and what the target's next schedule costs beyond one after a local
 * enqueue. Threads:
 *   A  SCHED_FIFO 10 on CPU 0, the waker: wakes B, the timed call.
 *   B  SCHED_BATCH on CPU 1 (remote) or CPU 0 (local), the wakee: blocked
 *      in the channel until A's wake, then blocks again at once.
 *   S  (remote) SCHED_FIFO 5 on CPU 1: runs (spins) while A wakes B, so
 *      CPU 1 is busy with an RT task: B's enqueue finds curr RT, so no
 *      wake-up preemption, no update_curr reschedule, no IPI. Then S blocks
 *      in its channel, and CPU 1's schedule switches from S to B.
 *   (local) A itself is the busy CPU's current task: after the wake it
 *      blocks in its channel, and CPU 0 switches from A to B. H (FIFO 5,
 *      CPU 1) wakes A again once B is asleep.
 * Timed per iteration, by each thread's CPU clock: A's waking call; the
 * blocking call of the prev that switches to B (S's in remote, A's in
 * local; each includes its own switch back in after a remote wake-up from
 * the other CPU onto an idle CPU, the same in both); B's whole cycle (its
 * switch in, the return from its wait, the next wait and its switch out).
 * remote - local of each is the cross-CPU extra of the waker, of the
 * target's prev and of the wakee. Channels: a pipe (its lines move too:
 * the extra includes the pipe's cross-CPU cost that the model already
 * charges) and a futex word (one line moves). A waits (outside the timed
 * call) until B's /proc state is 'S', so every timed call wakes a sleeper.
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <fcntl.h>

struct wch {
	int futex; /* 1: futex word, 0: pipe or unix socket (fd) */
	int fd[2];
	volatile int word;
};

/* kind 0: a pipe, 1: a unix stream socket, 2: a futex word. */
static void wch_init(struct wch *c, int kind)
{
	c->futex = kind == 2;
	c->word = 0;
	if (kind < 2)
		chan(kind, c->fd);
}

static void wch_close(struct wch *c)
{
	if (!c->futex) {
		close(c->fd[0]);
		close(c->fd[1]);
	}
}

static void wch_wake(struct wch *c)
{
	if (!c->futex) {
		char b = 0;
		xwrite(c->fd[1], &b, 1);
		return;
	}
	__atomic_store_n(&c->word, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &c->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void wch_wait(struct wch *c)
{
	if (!c->futex) {
		char b;
		xread(c->fd[0], &b, 1);
		return;
	}
	while (!__atomic_load_n(&c->word, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &c->word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	__atomic_store_n(&c->word, 0, __ATOMIC_SEQ_CST);
}

/* ---- hop: the one-CPU ping-pong under the fair class and under FIFO ----
 * The same ping-pong as pp-local over a pipe, a unix stream socket or a
 * futex word, with both threads fair (SCHED_OTHER, nice 0) or both
 * SCHED_FIFO 10, run alternately. A hop is one waking call, the waker's
 * block, the switch and the woken call's return. The model charges a hop
 * as the two calls + wakeup_ns + context_switch_ns; what a fair hop costs
 * beyond that is the fair block and wake cycle (docs/syscall-costs.md).
 * The FIFO hop has the same calls and sleep path, but an RT dequeue and
 * pick instead of the fair ones: fair - FIFO is the fair class's own part. */
static void set_policy(int pol, int prio);

struct hop {
	int fifo, n;
	struct wch w[2];
};

static void *hop_peer(void *arg)
{
	struct hop *h = arg;
	pin(0);
	if (h->fifo)
		set_policy(SCHED_FIFO, 10);
	for (int i = 0; i < h->n; i++) {
		wch_wait(&h->w[0]);
		wch_wake(&h->w[1]);
	}
	return NULL;
}

static double hop_once(int kind, int fifo)
{
	struct hop h = { .fifo = fifo, .n = 50000 };
	wch_init(&h.w[0], kind);
	wch_init(&h.w[1], kind);
	pin(0);
	if (fifo)
		set_policy(SCHED_FIFO, 10);
	pthread_t t;
	pthread_create(&t, NULL, hop_peer, &h);
	usleep(10000);
	double t0 = now_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < h.n; i++) {
		wch_wake(&h.w[0]);
		wch_wait(&h.w[1]);
	}
	double t1 = now_ns(CLOCK_MONOTONIC);
	pthread_join(t, NULL);
	if (fifo)
		set_policy(SCHED_OTHER, 0);
	wch_close(&h.w[0]);
	wch_close(&h.w[1]);
	return (t1 - t0) / (2.0 * h.n);
}

static char task_state(int tid)
{
	char p[64], buf[512];
	snprintf(p, sizeof p, "/proc/self/task/%d/stat", tid);
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		return '?';
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	char *q = strrchr(buf, ')');
	return q && q[1] == ' ' ? q[2] : '?';
}

static int trace_fd = -1; /* WAKECOST_TRACE=instance: marks in its trace */
static void trace_mark(const char *m)
{
	if (trace_fd >= 0 && write(trace_fd, m, strlen(m)) < 0)
		perror("trace_marker");
}

struct bt {
	struct wch a, c, d;       /* a: A->B; c: A->S (remote); d: H->A (local) */
	int remote, n;
	volatile int b_tid, b_count, s_spinning, s_go, stop;
	double b_cpu, s_cpu;      /* sums over counted cycles */
	volatile int counting;
};

static void set_policy(int pol, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	if (pthread_setschedparam(pthread_self(), pol, &sp)) {
		perror("sched policy (run as root)");
		exit(1);
	}
}

static void *bt_b(void *arg)
{
	struct bt *t = arg;
	pin(t->remote ? 1 : 0);
	set_policy(SCHED_BATCH, 0);
	t->b_tid = gettid();
	double last = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (;;) {
		wch_wait(&t->a);
		double c = now_ns(CLOCK_THREAD_CPUTIME_ID);
		if (t->stop)
			return NULL;
		if (t->counting)
			t->b_cpu += c - last;
		last = c;
		__atomic_add_fetch(&t->b_count, 1, __ATOMIC_SEQ_CST);
	}
}

static void *bt_s(void *arg) /* remote: the busy prev on CPU 1 */
{
	struct bt *t = arg;
	pin(1);
	set_policy(SCHED_FIFO, 5);
	for (;;) {
		double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		wch_wait(&t->c);
		if (t->counting)
			t->s_cpu += now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (t->stop)
			return NULL;
		t->s_spinning = 1;
		while (!t->s_go)
			;
		t->s_go = 0;
		t->s_spinning = 0;
	}
}

static void *bt_h(void *arg) /* local: wakes A on CPU 0 once B sleeps */
{
	struct bt *t = arg;
	pin(1);
	set_policy(SCHED_FIFO, 5);
	for (int i = 1;; i++) {
		while (t->b_count < i && !t->stop)
			;
		if (t->stop)
			return NULL;
		while (task_state(t->b_tid) != 'S')
			;
		wch_wake(&t->d);
	}
}

/* Returns A's waking-call CPU ns; out[0] = B's cycle, out[1] = the prev's
 * blocking call, out[2] = fraction of iterations retried. */
static double bt_once(int futex, int remote, double out[3])
{
	static struct bt t;
	memset((void *)&t, 0, sizeof t);
	int n = 5000, warm = 500, retries = 0;
	t.remote = remote;
	wch_init(&t.a, futex ? 2 : 0);
	wch_init(&t.c, futex ? 2 : 0);
	wch_init(&t.d, futex ? 2 : 0);
	pin(0);
	pthread_t tb, th;
	pthread_create(&tb, NULL, bt_b, &t);
	while (!t.b_tid || task_state(t.b_tid) != 'S')
		usleep(100);
	pthread_create(&th, NULL, remote ? bt_s : bt_h, &t);
	set_policy(SCHED_FIFO, 10);
	if (remote)
		wch_wake(&t.c);
	double w = 0, a_cpu = 0;
	int counted = 0;
	trace_mark(remote ? (futex ? "busy-target futex remote start\n" : "busy-target pipe remote start\n")
			  : (futex ? "busy-target futex local start\n" : "busy-target pipe local start\n"));
	for (int i = 0; i < n + warm;) {
		t.counting = i >= warm;
		if (remote) {
			while (!t.s_spinning)
				;
			if (task_state(t.b_tid) != 'S') {
				/* B runnable behind S: let it run and sleep. */
				retries++;
				t.s_go = 1;
				while (t.s_spinning)
					;
				while (task_state(t.b_tid) != 'S')
					;
				wch_wake(&t.c);
				continue;
			}
			int bc = t.b_count;
			double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			wch_wake(&t.a);
			double dt = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
			t.s_go = 1;
			while (t.b_count == bc)
				;
			while (task_state(t.b_tid) != 'S')
				;
			if (t.counting) {
				w += dt;
				counted++;
			}
			wch_wake(&t.c);
		} else {
			if (task_state(t.b_tid) != 'S') {
				retries++;
				usleep(100);
				continue;
			}
			double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			wch_wake(&t.a);
			double c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			wch_wait(&t.d);
			double c2 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			if (t.counting) {
				w += c1 - c0;
				a_cpu += c2 - c1;
				counted++;
			}
		}
		i++;
	}
	trace_mark("busy-target end\n");
	struct sched_param z = { 0 };
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &z);
	t.counting = 0;
	t.stop = 1;
	wch_wake(&t.a);
	if (remote) {
		t.s_go = 1;
		wch_wake(&t.c);
	}
	pthread_join(tb, NULL);
	pthread_join(th, NULL);
	wch_close(&t.a);
	wch_close(&t.c);
	wch_close(&t.d);
	/* B's counted cycles: the first counted one began before counting. */
	out[0] = t.b_cpu / counted;
	out[1] = (remote ? t.s_cpu : a_cpu) / counted;
	out[2] = (double)retries / (n + warm);
	return w / counted;
}

/* Core-to-core latency of CPUs 0 and 1 now (scripts/host/c2c.c's method, CAS
 * ping-pong, round trip / 2; median of 31 batches of 2000 round trips):
 * this guest's two vCPUs sit on two cores or on one core's two threads as
 * the host places them, and the cross-CPU extras follow that latency, so
 * each repetition gives its extra in line transfers at the latency
 * measured around it. */
static _Alignas(64) volatile int c2c_line;
static volatile int c2c_go;
static void *c2c_pong(void *arg)
{
	(void)arg;
	pin(1);
	c2c_go = 1;
	for (long i = 0; i < 2000L * 31; i++)
		while (!__sync_bool_compare_and_swap(&c2c_line, 0, 1))
			;
	return NULL;
}

static double c2c_now(void)
{
	double s[31];
	pthread_t t;
	c2c_line = 0;
	c2c_go = 0;
	pin(0);
	pthread_create(&t, NULL, c2c_pong, NULL);
	while (!c2c_go)
		;
	for (int k = 0; k < 31; k++) {
		double t0 = now_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < 2000; i++)
			while (!__sync_bool_compare_and_swap(&c2c_line, 1, 0))
				;
		s[k] = (now_ns(CLOCK_MONOTONIC) - t0) / 2000 / 2.0;
	}
	pthread_join(t, NULL);
	qsort(s, 31, sizeof(double), cmpd);
	return s[15];
}

/* The busy-target cases, remote and local run alternately; prints each
 * side's medians and the per-repetition differences; m[futex][0..2] =
 * median remote - local of the waker, the prev, the wakee. */
static void busy_target(double m[2][3])
{
	for (int futex = 0; futex < 2; futex++) {
		double v[2][4][REPS], d[3][REPS], lat[REPS], lines[3][REPS];
		for (int i = 0; i < REPS; i++) {
			double c0 = c2c_now();
			for (int remote = 0; remote < 2; remote++) {
				double o[3];
				v[remote][0][i] = bt_once(futex, remote, o);
				v[remote][1][i] = o[1];
				v[remote][2][i] = o[0];
				v[remote][3][i] = 1000 * o[2];
			}
			double c1 = c2c_now();
			lat[i] = (c0 + c1) / 2;
			for (int k = 0; k < 3; k++) {
				d[k][i] = v[1][k][i] - v[0][k][i];
				lines[k][i] = d[k][i] / lat[i];
			}
			printf("# rep %d: c2c %.1f / %.1f ns; remote-local waker %.0f prev %.0f wakee %.0f ns\n",
			       i, c0, c1, d[0][i], d[1][i], d[2][i]);
		}
		const char *ch = futex ? "futex" : "pipe";
		const char *what[4] = { "waker's waking call CPU (ns)", "prev's blocking call CPU (ns)",
					"wakee's cycle CPU (ns)", "retries /1000" };
		for (int remote = 0; remote < 2; remote++)
			for (int k = 0; k < 4; k++) {
				char name[96];
				snprintf(name, sizeof name, "%s busy-%s %s", ch, remote ? "remote" : "local",
					 what[k]);
				report(name, v[remote][k]);
			}
		for (int k = 0; k < 3; k++) {
			char name[96];
			snprintf(name, sizeof name, "%s busy remote-local %s", ch, what[k]);
			report(name, d[k]);
			m[futex][k] = median_of_last;
			snprintf(name, sizeof name, "%s busy remote-local %s (lines x1000)", ch, what[k]);
			for (int i = 0; i < REPS; i++)
				lines[k][i] *= 1000;
			report(name, lines[k]);
		}
		report("c2c around the repetitions (ns)", lat);
	}
}

/* write + read of one byte with room and nobody asleep, per call. */
static double wr_once(int sock)
{
	int fd[2], n = 200000;
	char c = 0;
	chan(sock, fd);
	double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (int i = 0; i < n; i++) {
		xwrite(fd[1], &c, 1);
		xread(fd[0], &c, 1);
	}
	double r = (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / (2.0 * n);
	close(fd[0]); close(fd[1]);
	return r;
}

/* A futex wake with no waiter (one syscall) and a wait that finds the
 * word set (no syscall), per pair: the model prices a waking wake and a
 * sleeping wait as one futex syscall each (sched/syscall_cost.rs). */
static double fx_once(void)
{
	struct wch c;
	int n = 200000;
	wch_init(&c, 2);
	double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (int i = 0; i < n; i++) {
		wch_wake(&c);
		wch_wait(&c);
	}
	return (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / n;
}

/* The fair block and wake cycle: per repetition, the model's figures
 * (switch = FIFO yield - getppid, wakeup = a local waking pipe write - a
 * plain one, which the model takes for both channels) and the one-CPU
 * hops measured back to back, so that the host's drift between cases
 * cancels; the residual of a repetition is its fair hop - (2 calls +
 * wakeup + switch): the channel's sleep path. Fills res[0..1] with the
 * median residuals of pipe and unix, share[0..1] with the medians of
 * residual / switch (in thousandths). With all != 0 also the FIFO hops
 * and the futex word. */
static void block_cycle(int all, double res_out[2], double share[2])
{
	const char *k[3] = { "pipe", "unix", "futex" };
	double sw[REPS], wk[REPS], op[3][REPS], hf[3][REPS], hr[3][REPS], res[3][REPS],
		sh[2][REPS], d[3][REPS], w;
	int kinds = all ? 3 : 2;
	for (int i = 0; i < REPS; i++) {
		sw[i] = yield_once() - bare_syscall();
		for (int kind = 0; kind < kinds; kind++) {
			op[kind][i] = kind < 2 ? wr_once(kind) : fx_once();
			hf[kind][i] = hop_once(kind, 0);
			if (all) {
				hr[kind][i] = hop_once(kind, 1);
				d[kind][i] = hf[kind][i] - hr[kind][i];
			}
		}
		wk[i] = fw_once(0, 0, &w) - op[0][i];
		for (int kind = 0; kind < kinds; kind++)
			res[kind][i] = hf[kind][i] - 2 * op[kind][i] - wk[i] - sw[i];
		for (int kind = 0; kind < 2; kind++)
			sh[kind][i] = 1000 * res[kind][i] / sw[i];
	}
	report("block cycle: switch (FIFO yield - getppid) (ns)", sw);
	report("block cycle: wakeup (local waking pipe write - plain) (ns)", wk);
	for (int kind = 0; kind < kinds; kind++) {
		char name[96];
		snprintf(name, sizeof name, "block cycle: %s call, no wakeup (ns)", k[kind]);
		report(name, op[kind]);
		snprintf(name, sizeof name, "block cycle: %s hop 1 CPU fair (ns)", k[kind]);
		report(name, hf[kind]);
		if (all) {
			snprintf(name, sizeof name, "block cycle: %s hop 1 CPU FIFO (ns)", k[kind]);
			report(name, hr[kind]);
			snprintf(name, sizeof name, "block cycle: %s hop fair - FIFO (ns)", k[kind]);
			report(name, d[kind]);
		}
		snprintf(name, sizeof name, "block cycle: %s hop - (2 calls + wakeup + switch) (ns)",
			 k[kind]);
		report(name, res[kind]);
		if (kind < 2) {
			res_out[kind] = median_of_last;
			snprintf(name, sizeof name, "block cycle: %s residual / switch (x1000)",
				 k[kind]);
			report(name, sh[kind]);
			share[kind] = median_of_last;
		}
	}
}

/* --hop-only: the block cycle of every channel, fair against FIFO. */
static void hop_only(void)
{
	double res[2], share[2];
	block_cycle(1, res, share);
}

int main(int argc, char **argv)
{
	double v[REPS], w[REPS], x[6][REPS];
	double la[3];
	getloadavg(la, 3);
	printf("# wakecost: %d repetitions per case; load average %.2f %.2f %.2f\n", REPS,
	       la[0], la[1], la[2]);
	for (int i = 0; i < REPS; i++)
		v[i] = bare_syscall();
	report("syscall getppid (ns)", v);
	const char *ti = getenv("WAKECOST_TRACE");
	if (ti) {
		char tp[256];
		snprintf(tp, sizeof tp, "/sys/kernel/tracing/instances/%s/trace_marker", ti);
		trace_fd = open(tp, O_WRONLY);
		if (trace_fd < 0)
			perror(tp);
	}
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--hop-only")) {
			hop_only();
			getloadavg(la, 3);
			printf("# load average at the end %.2f %.2f %.2f\n", la[0], la[1], la[2]);
			return 0;
		} else if (!strcmp(argv[i], "--busy-only")) {
			double m[2][3];
			busy_target(m);
			getloadavg(la, 3);
			printf("# load average at the end %.2f %.2f %.2f\n", la[0], la[1], la[2]);
			return 0;
		}
	double m_sys = median_of_last;
	for (int i = 0; i < REPS; i++)
		v[i] = yield_once();
	report("yield FIFO 1 CPU: syscall + switch (ns)", v);
	double m_yield = median_of_last, m_op = 0, m_wl = 0, m_wr = 0, m_lat = 0;
	int stream_only = 0;
	for (int i = 1; i < argc; i++)
		stream_only |= !strcmp(argv[i], "--stream-only");
	for (int sock = 0; sock < 2 && !stream_only; sock++) {
		const char *k = sock ? "unix" : "pipe";
		char name[80];
		for (int i = 0; i < REPS; i++)
			v[i] = wr_once(sock);
		snprintf(name, sizeof name, "%s 1-byte write|read, no wakeup (ns)", k);
		report(name, v);
		if (!sock)
			m_op = median_of_last;
		for (int remote = 0; remote < 2; remote++) {
			for (int i = 0; i < REPS; i++)
				v[i] = fw_once(sock, remote, &w[i]);
			snprintf(name, sizeof name, "%s fifo-waker %s: waking write CPU (ns)", k,
				 remote ? "remote" : "local");
			report(name, v);
			if (!sock)
				*(remote ? &m_wr : &m_wl) = median_of_last;
			snprintf(name, sizeof name, "%s fifo-waker %s: wakee latency p50 (ns)", k,
				 remote ? "remote" : "local");
			report(name, w);
			if (!sock && remote)
				m_lat = median_of_last;
		}
	}
	/* hackbench's own calls on one CPU: 100-byte writes and reads of a
	 * writer and a reader taking turns (each side's thread CPU time per
	 * message; it includes the few switches between them). Then the same
	 * with the sides on CPUs 0 and 1, run alternately with the one-CPU
	 * case (so both see the same load): the per-repetition difference is
	 * the cross-CPU extra of each call, the channel's cache lines moving
	 * (docs/syscall-costs.md, "Cross-CPU channel cost"). */
	double m_ch[4], m_x[4];
	stream_msgs = 100000;
	for (int sock = 0; sock < 2; sock++) {
		double o[6], o2[6], one[2][REPS], two[2][REPS], d[2][REPS];
		for (int i = 0; i < REPS; i++) {
			st_once(sock, 0, 0, o);
			st_once(sock, 0, 1, o2);
			for (int side = 0; side < 2; side++) {
				one[side][i] = o[side];
				two[side][i] = o2[side];
				d[side][i] = o2[side] - o[side];
			}
		}
		for (int side = 0; side < 2; side++) {
			char name[80];
			const char *k = sock ? "unix" : "pipe", *sd = side ? "reader" : "writer";
			snprintf(name, sizeof name, "%s stream-1cpu (100k) %s CPU per msg (ns)", k, sd);
			report(name, one[side]);
			m_ch[2 * sock + side] = median_of_last;
			snprintf(name, sizeof name, "%s stream-2cpu (100k) %s CPU per msg (ns)", k, sd);
			report(name, two[side]);
			snprintf(name, sizeof name, "%s stream 2cpu-1cpu (100k) %s extra (ns)", k, sd);
			report(name, d[side]);
			m_x[2 * sock + side] = median_of_last;
		}
	}
	stream_msgs = 400000;
	/* A remote wake-up onto a busy CPU against a local one (futex: the
	 * fewest channel lines): the waker's extra and the wakee's. */
	double m_bt[2][3] = { { 0 } };
	if (!stream_only)
		busy_target(m_bt);
	/* The sleep path of a blocking pipe and unix call (block_cycle). */
	double m_sl[2] = { 0, 0 }, m_sh[2];
	if (!stream_only)
		block_cycle(0, m_sl, m_sh);
	/* The machine figures of the model (schedlab-host costs.rs), from the
	 * pipe cases: switch = yield - syscall; wakeup = local waking write -
	 * a plain write; IPI send = remote waking write - local waking write;
	 * IPI latency = remote wakee latency - local waking write - switch. */
	double sw = m_yield - m_sys, wk = m_wl - m_op, is = m_wr - m_wl;
	double il = m_lat - m_wl - sw;
#define NN(x) ((x) > 0 ? (long)((x) + 0.5) : 0L)
	printf("figures: context_switch_ns %ld wakeup_ns %ld ipi_send_ns %ld ipi_latency_ns %ld"
	       " pipe_write_ns %ld pipe_read_ns %ld unix_write_ns %ld unix_read_ns %ld"
	       " pipe_write_xcpu_ns %ld pipe_read_xcpu_ns %ld unix_write_xcpu_ns %ld"
	       " unix_read_xcpu_ns %ld wakeup_xcpu_ns %ld switch_xcpu_ns %ld"
	       " pipe_sleep_ns %ld unix_sleep_ns %ld\n",
	       NN(sw), NN(wk), NN(is), NN(il), NN(m_ch[0]), NN(m_ch[1]), NN(m_ch[2]), NN(m_ch[3]),
	       NN(m_x[0]), NN(m_x[1]), NN(m_x[2]), NN(m_x[3]), NN(m_bt[1][0]), NN(m_bt[1][2]),
	       NN(m_sl[0]), NN(m_sl[1]));
	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--json") || stream_only)
			continue;
		FILE *f = fopen(argv[i + 1], "w");
		if (!f) {
			perror(argv[i + 1]);
			return 2;
		}
		getloadavg(la, 3);
		fprintf(f, "{\n  \"version\": 1,\n  \"context_switch_ns\": %ld,\n  \"wakeup_ns\": %ld,\n"
			   "  \"ipi_send_ns\": %ld,\n  \"ipi_latency_ns\": %ld,\n"
			   "  \"pipe_write_ns\": %ld,\n  \"pipe_read_ns\": %ld,\n"
			   "  \"unix_write_ns\": %ld,\n  \"unix_read_ns\": %ld,\n"
			   "  \"pipe_write_xcpu_ns\": %ld,\n  \"pipe_read_xcpu_ns\": %ld,\n"
			   "  \"unix_write_xcpu_ns\": %ld,\n  \"unix_read_xcpu_ns\": %ld,\n"
			   "  \"wakeup_xcpu_ns\": %ld,\n  \"switch_xcpu_ns\": %ld,\n"
			   "  \"pipe_sleep_ns\": %ld,\n  \"unix_sleep_ns\": %ld,\n"
			   "  \"source\": \"scripts/host/wakecost.c, medians of %d repetitions, load average %.2f at the end\"\n}\n",
			NN(sw), NN(wk), NN(is), NN(il), NN(m_ch[0]), NN(m_ch[1]), NN(m_ch[2]),
			NN(m_ch[3]), NN(m_x[0]), NN(m_x[1]), NN(m_x[2]), NN(m_x[3]), NN(m_bt[1][0]),
			NN(m_bt[1][2]), NN(m_sl[0]), NN(m_sl[1]), REPS, la[0]);
		fclose(f);
	}
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--wake-only") || !strcmp(argv[i], "--stream-only"))
			return 0;
	for (int sock = 0; sock < 2; sock++) {
		const char *k = sock ? "unix" : "pipe";
		char name[80];
		for (int remote = 0; remote < 2; remote++) {
			for (int i = 0; i < REPS; i++)
				v[i] = pp_once(sock, 0, remote, &w[i]);
			snprintf(name, sizeof name, "%s pp-%s hop (ns)", k, remote ? "remote" : "local");
			report(name, v);
			snprintf(name, sizeof name, "%s pp-%s waking write CPU (ns)", k,
				 remote ? "remote" : "local");
			report(name, w);
		}
		for (int remote = 0; remote < 2; remote++) {
			for (int i = 0; i < REPS; i++) {
				double o[6];
				v[i] = st_once(sock, 0, remote, o);
				for (int j = 0; j < 6; j++)
					x[j][i] = o[j];
			}
			const char *c = remote ? "2cpu" : "1cpu";
			snprintf(name, sizeof name, "%s stream-%s wall per msg (ns)", k, c);
			report(name, v);
			snprintf(name, sizeof name, "%s stream-%s writer CPU per msg (ns)", k, c);
			report(name, x[0]);
			snprintf(name, sizeof name, "%s stream-%s reader CPU per msg (ns)", k, c);
			report(name, x[1]);
			snprintf(name, sizeof name, "%s stream-%s writer sleeps /1000 msg", k, c);
			report(name, x[2]);
			snprintf(name, sizeof name, "%s stream-%s reader sleeps /1000 msg", k, c);
			report(name, x[3]);
			snprintf(name, sizeof name, "%s stream-%s writer preempted /1000", k, c);
			report(name, x[4]);
			snprintf(name, sizeof name, "%s stream-%s reader preempted /1000", k, c);
			report(name, x[5]);
		}
	}
	getloadavg(la, 3);
	printf("# load average at the end %.2f %.2f %.2f\n", la[0], la[1], la[2]);
	return 0;
}
