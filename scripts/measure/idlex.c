/* idlex: what leaving idle costs a timer wake-up on this host.
 *
 * A thread pinned to CPU 1 sleeps to absolute 10 ms deadlines (timer slack
 * 1 ns) and records how late it wakes: (a) with CPU 1 otherwise idle, (b)
 * with CPU 1 kept busy by a SCHED_IDLE spinner (the CPU never enters idle;
 * the waking thread preempts the spinner at once), (c) idle again. The
 * difference between (a) and (b) is the idle exit a timer wake-up pays.
 *
 *   cc -O2 -pthread -o /tmp/idlex scripts/measure/idlex.c && /tmp/idlex [N]
 *
 * N wake-ups per case (default 500). Prints p10/p50/p90/p99 in us. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
static volatile int stop;
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);sched_setaffinity(0,sizeof s,&s);}
static long ns(struct timespec t){return t.tv_sec*1000000000L+t.tv_nsec;}
static void *spin(void *a){(void)a;pin(1);struct sched_param p={0};sched_setscheduler(0,SCHED_IDLE,&p);while(!stop);return 0;}
static int cmp(const void*a,const void*b){long x=*(long*)a,y=*(long*)b;return x<y?-1:x>y;}
static void run(const char*name,int n){
  long *l=malloc(n*sizeof(long));struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);
  for(int i=0;i<n;i++){t.tv_nsec+=10000000;if(t.tv_nsec>=1000000000){t.tv_nsec-=1000000000;t.tv_sec++;}
    clock_nanosleep(CLOCK_MONOTONIC,TIMER_ABSTIME,&t,0);struct timespec now;clock_gettime(CLOCK_MONOTONIC,&now);l[i]=ns(now)-ns(t);}
  qsort(l,n,sizeof(long),cmp);
  printf("%-28s n %d  p10 %6.1f  p50 %6.1f  p90 %6.1f  p99 %6.1f us\n",name,n,l[n/10]/1e3,l[n/2]/1e3,l[n*9/10]/1e3,l[n*99/100]/1e3);free(l);}
int main(int argc,char**argv){int n=argc>1?atoi(argv[1]):500;pin(1);
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  run("idle CPU 1",n);
  pthread_t t;pthread_create(&t,0,spin,0);usleep(20000);
  run("CPU 1 busy (SCHED_IDLE spin)",n);stop=1;pthread_join(t,0);
  run("idle CPU 1 again",n);return 0;}
