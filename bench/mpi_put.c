/* MPI one-sided, as bench/rsm_compare.sh sets it beside myrix's RSM: rank 0 measures
 * MPI_Put + MPI_Win_flush to rank 1 (the put has reached the target) and a put-based
 * ping-pong (each rank puts a sequence number into the other's window and polls its
 * own, MPI_Win_sync between polls); both ranks sit in MPI_Win_lock_all.
 * Prints "put_us pingpong_us" for LEN bytes (pingpong_us "-" with a third argument
 * "put", which skips the ping-pong).  Usage: mpi_put LEN [ITERS [put]] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One poll of the own window: sync it, and let the library progress (MPICH moves a
 * passive-target put only inside MPI calls that progress). */
static void poll(MPI_Win win) {
    int f;
    MPI_Win_sync(win);
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long len = argc > 1 ? atol(argv[1]) : 8;
    int iters = argc > 2 ? atoi(argv[2]) : 10000;
    int warm = iters / 10;
    int peer = 1 - rank;
    char *base;
    MPI_Win win;
    MPI_Aint size = 64 + len;
    MPI_Win_allocate(size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, size);
    char *src = calloc(len > 0 ? len : 1, 1);
    MPI_Win_lock_all(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    double put_us = 0, pp_us = 0, t0 = 0;
    if (rank == 0) {
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm) t0 = MPI_Wtime();
            MPI_Put(src, len, MPI_BYTE, peer, 64, len, MPI_BYTE, win);
            MPI_Win_flush(peer, win);
        }
        put_us = (MPI_Wtime() - t0) / iters * 1e6;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int ping = !(argc > 3 && strcmp(argv[3], "put") == 0);
    volatile int64_t *flag = (volatile int64_t *)base;
    for (int64_t i = 1; ping && i <= warm + iters; i++) {
        if (i == warm + 1) t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Put(src, len, MPI_BYTE, peer, 64, len, MPI_BYTE, win);
            MPI_Put(&i, 1, MPI_INT64_T, peer, 0, 1, MPI_INT64_T, win);
            MPI_Win_flush(peer, win);
            while (*flag != i) poll(win);
        } else {
            while (*flag != i) poll(win);
            MPI_Put(src, len, MPI_BYTE, peer, 64, len, MPI_BYTE, win);
            MPI_Put(&i, 1, MPI_INT64_T, peer, 0, 1, MPI_INT64_T, win);
            MPI_Win_flush(peer, win);
        }
    }
    pp_us = (MPI_Wtime() - t0) / iters / 2 * 1e6;
    MPI_Win_unlock_all(win);
    if (rank == 0 && ping) printf("%.3f %.3f\n", put_us, pp_us);
    if (rank == 0 && !ping) printf("%.3f -\n", put_us);
    MPI_Win_free(&win);
    free(src);
    MPI_Finalize();
    return 0;
}
