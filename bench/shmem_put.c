/* OpenSHMEM beside myrix's RSM (bench/rsm_compare.sh): PE 0 measures shmem_putmem +
 * shmem_quiet to PE 1, then a put-based ping-pong (each PE puts the data and then a
 * sequence number into the other's symmetric buffer, quiet, and waits on its own).
 * Prints "put_us pingpong_us" for LEN bytes.  Usage: oshrun -np 2 shmem_put LEN [ITERS] */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static double now_us(void) {
    struct timeval t;
    gettimeofday(&t, NULL);
    return t.tv_sec * 1e6 + t.tv_usec;
}

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe();
    long len = argc > 1 ? atol(argv[1]) : 8;
    long iters = argc > 2 ? atol(argv[2]) : 10000;
    long warm = iters / 10;
    int peer = 1 - me;
    char *data = shmem_malloc(len > 0 ? len : 1);
    long *flag = shmem_malloc(sizeof(long));
    char *src = calloc(len > 0 ? len : 1, 1);
    *flag = 0;
    shmem_barrier_all();
    double put_us = 0, t0 = 0;
    if (me == 0) {
        for (long i = 0; i < warm + iters; i++) {
            if (i == warm) t0 = now_us();
            shmem_putmem(data, src, len, peer);
            shmem_quiet();
        }
        put_us = (now_us() - t0) / iters;
    }
    shmem_barrier_all();
    for (long i = 1; i <= warm + iters; i++) {
        if (i == warm + 1) t0 = now_us();
        if (me == 0) {
            shmem_putmem(data, src, len, peer);
            shmem_fence();
            shmem_long_p(flag, i, peer);
            shmem_quiet();
            shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
        } else {
            shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
            shmem_putmem(data, src, len, peer);
            shmem_fence();
            shmem_long_p(flag, i, peer);
            shmem_quiet();
        }
    }
    double pp_us = (now_us() - t0) / iters / 2;
    if (me == 0) printf("%.3f %.3f\n", put_us, pp_us);
    shmem_barrier_all();
    shmem_free(data);
    shmem_free((void *)flag);
    free(src);
    shmem_finalize();
    return 0;
}
