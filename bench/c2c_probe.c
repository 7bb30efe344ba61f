/* How far apart two CPUs are: the median one-way time of a cache line bounced between
 * a thread on CPU A and one on CPU B (20 000 round trips, median of 200 batches).
 * On a 2-vCPU KVM guest this tells whether the host runs the two vCPUs on cores that
 * share a last-level cache (tens of ns) or not (about 200 ns); a large shared-memory
 * transfer's speed follows it (docs/results-mx.md, "1 MiB over shared memory").
 * Usage: c2c_probe [A B]   (default 0 1); prints "c2c_ns N". */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRIPS 20000
#define BATCH 100

static _Atomic long line __attribute__((aligned(128)));
static int cpu_b;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s) != 0) {
        perror("c2c_probe: sched_setaffinity");
        exit(2);
    }
}

static void *answer(void *unused) {
    (void)unused;
    pin(cpu_b);
    for (long i = 0; i < TRIPS; i++) {
        while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 1) {
        }
        atomic_store_explicit(&line, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int cpu_a = argc > 2 ? atoi(argv[1]) : 0;
    cpu_b = argc > 2 ? atoi(argv[2]) : 1;
    pthread_t t;
    pthread_create(&t, NULL, answer, NULL);
    pin(cpu_a);
    static double batch[TRIPS / BATCH];
    int k = 0;
    double t0 = now();
    for (long i = 0; i < TRIPS; i++) {
        atomic_store_explicit(&line, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 2) {
        }
        if (i % BATCH == BATCH - 1) {
            double t1 = now();
            batch[k++] = (t1 - t0) / BATCH / 2 * 1e9;
            t0 = t1;
        }
    }
    pthread_join(t, NULL);
    qsort(batch, k, sizeof batch[0], by_value);
    printf("c2c_ns %.0f\n", batch[k / 2]);
    return 0;
}
