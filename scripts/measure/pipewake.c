/* pipewake: does a read that leaves a pipe full wake the writer blocked on it?
 *
 * A writer thread fills a pipe with 100-byte writes and blocks. The main
 * thread then reads one message at a time and, after each read, counts
 * the writer's voluntary context switches (/proc/self/task/TID/status): a
 * writer woken for nothing runs, finds the pipe still full and sleeps
 * again (+1). Up to Linux 6.13 every read of a full pipe wakes it; from
 * 6.14 (aaec5a95d596 "pipe_read: don't wake up the writer if the pipe is
 * still full") only the read that frees a page (the 40th) does.
 * Build and run:  cc -O2 -pthread -o /tmp/pipewake scripts/measure/pipewake.c && /tmp/pipewake
 * Output: one "read N woke M unread B" line per read, then a summary line.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MSG 100
#define READS 45

static int fds[2];
static volatile pid_t writer_tid;

static void *writer(void *arg) {
    char buf[MSG] = {0};
    (void)arg;
    writer_tid = (pid_t)syscall(SYS_gettid);
    while (write(fds[1], buf, MSG) == MSG)
        ;
    return NULL;
}

static long voluntary_switches(pid_t tid) {
    char path[96], line[256];
    long v = -1;
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "voluntary_ctxt_switches:", 24))
            v = atol(line + 24);
    fclose(f);
    return v;
}

int main(void) {
    char buf[MSG];
    pthread_t th;
    int woken_full = 0, woken_freed = 0;
    if (pipe(fds) || pthread_create(&th, NULL, writer, NULL)) {
        perror("pipe/pthread_create");
        return 1;
    }
    usleep(200000); /* the writer fills the pipe and blocks */
    for (int i = 1; i <= READS; i++) {
        int unread;
        long before = voluntary_switches(writer_tid);
        if (read(fds[0], buf, MSG) != MSG) {
            perror("read");
            return 1;
        }
        usleep(20000);
        long woke = voluntary_switches(writer_tid) - before;
        ioctl(fds[0], FIONREAD, &unread);
        printf("read %d woke %ld unread %d\n", i, woke, unread);
        if (woke && i % 40)
            woken_full++;
        else if (woke)
            woken_freed++;
    }
    printf("summary: wakeups on reads that freed no page %d, on reads that freed one %d\n",
           woken_full, woken_freed);
    return 0;
}
