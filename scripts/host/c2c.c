/* c2c: core-to-core cache-line latency of this host (docs/syscall-costs.md,
 * "Cross-CPU channel cost").
 *
 * Two threads pinned to two CPUs bounce one 64-byte-aligned cache line:
 * the "ping" thread compare-and-swaps it from PONG to PING, the "pong"
 * thread from PING to PONG, each spinning until its swap succeeds. One
 * round trip moves the line twice, so the figure is round-trip time / 2,
 * the same quantity the public core-to-core charts report (nviennot's
 * core-to-core-latency "CAS latency", github.com/nviennot/core-to-core-latency,
 * and its forks: round trips timed in batches, latency = round trip / 2).
 *
 * Each sample is the mean over a batch of round trips; the report gives
 * the median, minimum and maximum over the samples of each repetition,
 * and the median and range of the repetitions' medians. Also the same-CPU
 * figure (both threads on one CPU would only measure the scheduler, so it
 * times one thread's uncontended CAS on a line it owns).
 *
 *   cc -O2 -pthread -o /tmp/c2c scripts/host/c2c.c
 *   nice -n -20 /tmp/c2c [CPU_A CPU_B]     (default 0 1)
 *
 * On a shared VM host a vCPU can be descheduled mid-batch; the median over
 * samples discards those batches.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUND_TRIPS 2000 /* per sample */
#define SAMPLES 301
#define REPS 7

enum { PING = 0, PONG = 1 };

static _Alignas(64) _Atomic int line;
static _Atomic int go;
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

static void *pong(void *arg)
{
	(void)arg;
	pin(cpu_b);
	atomic_store(&go, 1);
	for (long i = 0; i < (long)ROUND_TRIPS * SAMPLES; i++) {
		int want = PING;
		while (!atomic_compare_exchange_weak_explicit(&line, &want, PONG,
							      memory_order_relaxed,
							      memory_order_relaxed))
			want = PING;
	}
	return NULL;
}

/* One repetition: fills s[SAMPLES] with ns per one-way transfer. */
static void once(double *s)
{
	pthread_t t;
	atomic_store(&line, PING);
	atomic_store(&go, 0);
	pin(cpu_a);
	pthread_create(&t, NULL, pong, NULL);
	while (!atomic_load(&go))
		;
	for (int k = 0; k < SAMPLES; k++) {
		double t0 = now_ns();
		for (int i = 0; i < ROUND_TRIPS; i++) {
			int want = PONG;
			while (!atomic_compare_exchange_weak_explicit(&line, &want, PING,
								      memory_order_relaxed,
								      memory_order_relaxed))
				want = PONG;
		}
		s[k] = (now_ns() - t0) / ROUND_TRIPS / 2.0;
	}
	pthread_join(t, NULL);
	qsort(s, SAMPLES, sizeof(double), cmpd);
}

int main(int argc, char **argv)
{
	if (argc == 3) {
		cpu_a = atoi(argv[1]);
		cpu_b = atoi(argv[2]);
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	static double s[SAMPLES];
	double med[REPS];
	printf("# core-to-core CAS latency, CPU %d <-> CPU %d, %d samples x %d round trips\n",
	       cpu_a, cpu_b, SAMPLES, ROUND_TRIPS);
	for (int r = 0; r < REPS; r++) {
		once(s);
		med[r] = s[SAMPLES / 2];
		printf("rep %d: median %.1f ns, min %.1f, p10 %.1f, p90 %.1f, max %.1f\n", r,
		       med[r], s[0], s[SAMPLES / 10], s[SAMPLES * 9 / 10], s[SAMPLES - 1]);
	}
	qsort(med, REPS, sizeof(double), cmpd);
	printf("c2c %d-%d: median %.1f ns (range of repetition medians %.1f-%.1f)\n", cpu_a,
	       cpu_b, med[REPS / 2], med[0], med[REPS - 1]);
	/* Same CPU: one thread's uncontended CAS on a line it holds. */
	pin(cpu_a);
	double best = 1e18;
	for (int r = 0; r < 40; r++) {
		double t0 = now_ns();
		for (int i = 0; i < 100000; i++) {
			int want = i & 1;
			atomic_compare_exchange_strong(&line, &want, !(i & 1));
		}
		double d = (now_ns() - t0) / 100000;
		if (d < best)
			best = d;
	}
	printf("same-cpu CAS: %.1f ns (minimum over 40 batches)\n", best);
	return 0;
}
