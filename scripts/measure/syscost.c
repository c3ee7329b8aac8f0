/* syscost: CPU cost of the syscalls schedlab charges, measured on the host.
 *
 * Every figure is the minimum over REPS repetitions of the mean over a
 * batch (the minimum removes preemption by other load on a shared host).
 * Build and run:  cc -O2 -pthread -o /tmp/syscost scripts/measure/syscost.c && taskset -c 0 /tmp/syscost
 * Output: one "name value" line per figure (ns, or a count).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPS 40
#define MSG 100

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static char buf[65536];

/* n writes of MSG bytes then n reads, on fds w/r: mean ns per write, per read. */
static void rw(int w, int r, int n, double *wmin, double *rmin) {
    *wmin = *rmin = 1e18;
    for (int rep = 0; rep < REPS; rep++) {
        double t0 = now_ns();
        for (int i = 0; i < n; i++)
            if (write(w, buf, MSG) != MSG) { perror("write"); exit(1); }
        double t1 = now_ns();
        for (int i = 0; i < n; i++)
            if (read(r, buf, MSG) != MSG) { perror("read"); exit(1); }
        double t2 = now_ns();
        if ((t1 - t0) / n < *wmin) *wmin = (t1 - t0) / n;
        if ((t2 - t1) / n < *rmin) *rmin = (t2 - t1) / n;
    }
}

#define TIMEIT(name, n, body) do { double best = 1e18; \
    for (int rep = 0; rep < REPS; rep++) { double t0 = now_ns(); \
        for (int i = 0; i < (n); i++) { body; } \
        double d = (now_ns() - t0) / (n); if (d < best) best = d; } \
    printf("%s %.0f\n", name, best); } while (0)

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    double w, r;
    int p[2];
    if (pipe(p)) return 1;
    rw(p[1], p[0], 600, &w, &r); /* 600 x 100 B fit in 16 pages */
    printf("pipe_write_ns %.0f\npipe_read_ns %.0f\n", w, r);
    int s[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, s)) return 1;
    rw(s[0], s[1], 200, &w, &r);
    printf("unix_write_ns %.0f\nunix_read_ns %.0f\n", w, r);

    /* Send-buffer accounting: 100-byte writes accepted before EAGAIN. */
    int sndbuf = 0; socklen_t sl = sizeof sndbuf;
    getsockopt(s[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl);
    fcntl(s[0], F_SETFL, O_NONBLOCK);
    int k = 0;
    while (write(s[0], buf, MSG) == MSG) k++;
    printf("unix_sndbuf %d\nunix_msgs_before_eagain %d\n", sndbuf, k);
    /* The same for pipe capacity in 100-byte writes. */
    int q[2]; if (pipe(q)) return 1;
    fcntl(q[1], F_SETFL, O_NONBLOCK);
    k = 0;
    while (write(q[1], buf, MSG) == MSG) k++;
    printf("pipe_msgs_before_eagain %d\n", k);

    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    sem_t sem; sem_init(&sem, 0, 0);
    int fword = 0;
    TIMEIT("mutex_lock_unlock_ns", 100000, pthread_mutex_lock(&m); pthread_mutex_unlock(&m));
    TIMEIT("cond_signal_nowaiter_ns", 100000, pthread_cond_signal(&c));
    TIMEIT("cond_broadcast_nowaiter_ns", 100000, pthread_cond_broadcast(&c));
    TIMEIT("sem_post_wait_ns", 100000, sem_post(&sem); sem_wait(&sem));
    TIMEIT("futex_wake_nowaiter_ns", 100000, syscall(SYS_futex, &fword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
    TIMEIT("sched_yield_ns", 100000, sched_yield());
    TIMEIT("getppid_ns", 100000, syscall(SYS_getppid));

    /* Context switch + wakeup: two processes on this CPU ping-pong one
     * byte through two pipes; per one-way hop, less one write and one read. */
    int a[2], b[2];
    if (pipe(a) || pipe(b)) return 1;
    pid_t pid = fork();
    if (pid == 0) {
        for (;;) { if (read(a[0], buf, 1) != 1) _exit(0); if (write(b[1], buf, 1) != 1) _exit(0); }
    }
    double best = 1e18;
    for (int rep = 0; rep < REPS; rep++) {
        int n = 200;
        double t0 = now_ns();
        for (int i = 0; i < n; i++) { write(a[1], buf, 1); read(b[0], buf, 1); }
        double d = (now_ns() - t0) / (2.0 * n);
        if (d < best) best = d;
    }
    printf("pipe_hop_ns %.0f\n", best);
    close(a[1]);
    waitpid(pid, NULL, 0);
    return 0;
}
