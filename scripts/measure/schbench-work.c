/*
 * schbench-work.c: times the CPU work of one schbench request on this host
 * (schedlab's own code, written from schbench's documented behaviour: each
 * request multiplies two n x n matrices of unsigned long into a third, n =
 * floor(sqrt(F * 1024 / 3 / 8)) for a footprint of F kB, `ops` times).
 *
 *   cc -O2 -o /tmp/schbench-work scripts/measure/schbench-work.c -lm
 *   nice -n -20 taskset -c 1 /tmp/schbench-work [F_kB] [ops] [batches]
 *
 * Prints the minimum and median over batches of the mean ns per request
 * (each batch: 20 requests on warm data, as a worker's private matrices).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long sink;

static void multiply(unsigned long *a, unsigned long *b, unsigned long *c, unsigned long n)
{
	for (unsigned long r = 0; r < n; r++)
		for (unsigned long col = 0; col < n; col++) {
			unsigned long acc = 0;
			c[r * n + col] = 0;
			for (unsigned long x = 0; x < n; x++)
				acc += a[r * n + x] * b[x * n + col];
			c[r * n + col] += acc;
		}
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
	unsigned long kb = argc > 1 ? strtoul(argv[1], 0, 10) : 256;
	unsigned long ops = argc > 2 ? strtoul(argv[2], 0, 10) : 5;
	int batches = argc > 3 ? atoi(argv[3]) : 30;
	unsigned long n = (unsigned long)sqrt((double)(kb * 1024 / 3 / sizeof(unsigned long)));
	unsigned long *m = calloc(3 * n * n + 1, sizeof(*m));
	double *per = calloc(batches, sizeof(*per));
	for (unsigned long i = 0; i < 3 * n * n; i++)
		m[i] = i * 2654435761u;
	for (int b = 0; b < batches; b++) {
		double t0 = now_ns();
		for (int r = 0; r < 20; r++)
			for (unsigned long o = 0; o < ops; o++)
				multiply(m, m + n * n, m + 2 * n * n, n);
		per[b] = (now_ns() - t0) / 20;
		sink += m[2 * n * n + (b % (n * n))];
	}
	qsort(per, batches, sizeof(*per), cmp);
	printf("F=%lu kB n=%lu ops=%lu: min %.0f ns/request, median %.0f, max %.0f (%d batches of 20)\n",
	       kb, n, ops, per[0], per[batches / 2], per[batches - 1], batches);
	return (int)(sink & 0);
}
