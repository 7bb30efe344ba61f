/* How fast a single-copy transfer by cross-memory attach (process_vm_readv) is on this
 * machine: a reader process pulls LEN bytes out of a second, pinned process's buffer,
 * ITERS times, and prints the median microseconds of one pull, as
 * "cma LEN US". The buffers sit at different page offsets (no 4 KiB aliasing). This is
 * the copy alone: an MX large message over CMA would also pay its rendezvous. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  sched_setaffinity(0, sizeof s, &s);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: cma_copy LEN ITERS\n");
    return 2;
  }
  size_t len = strtoul(argv[1], 0, 10);
  int iters = atoi(argv[2]);
  if (len == 0 || iters <= 0) {
    fprintf(stderr, "cma_copy: LEN and ITERS must be positive\n");
    return 2;
  }
  char *src = malloc(len);
  char *dst = (char *)malloc(len + 8192) + 2112;
  if (!src || !dst) return 1;
  memset(src, 7, len);
  pid_t child = fork();
  if (child == 0) {
    pin(1);
    for (;;) pause();
  }
  pin(0);
  memset(dst, 0, len);
  usleep(100000);
  struct iovec l = {dst, len}, r = {src, len};
  double *t = malloc(sizeof(double) * iters);
  for (int k = 0; k < iters / 10 + 1; k++) process_vm_readv(child, &l, 1, &r, 1, 0);
  for (int k = 0; k < iters; k++) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    ssize_t got = process_vm_readv(child, &l, 1, &r, 1, 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (got != (ssize_t)len) {
      perror("process_vm_readv");
      kill(child, SIGKILL);
      return 1;
    }
    t[k] = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) * 1e-3;
  }
  kill(child, SIGKILL);
  qsort(t, iters, sizeof(double), cmp);
  printf("cma %zu %.3f\n", len, t[iters / 2]);
  return 0;
}
