/* MPI one-sided latency, passive target: rank 0 measures, to rank 1, inside
 * MPI_Win_lock_all on a window from MPI_Win_allocate:
 *   put   8 B MPI_Put + MPI_Win_flush
 *   get   8 B MPI_Get + MPI_Win_flush
 *   acc   8 B MPI_Accumulate(MPI_SUM, MPI_LONG_LONG) + MPI_Win_flush
 *   fop   MPI_Fetch_and_op(MPI_SUM, MPI_LONG_LONG) + MPI_Win_flush
 * and prints "put_us get_us acc_us fop_us" (mean per operation over ITERS after
 * ITERS/10 warm-up). Rank 1 waits in MPI_Barrier (which progresses libraries
 * whose passive target needs it). The same source builds with myrix mpicc,
 * mpicc.mpich and mpicc.openmpi.  Usage: rma [ITERS] */
#define BENCH_NAME "rma"
#include "args.h"

static double timed(int op, MPI_Win win, int iters) {
    long long v = 1, out = 0;
    double t0 = 0;
    int warm = iters / 10;
    for (int i = 0; i < warm + iters; i++) {
        if (i == warm) t0 = MPI_Wtime();
        switch (op) {
        case 0: MPI_Put(&v, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, win); break;
        case 1: MPI_Get(&out, 1, MPI_LONG_LONG, 1, 1, 1, MPI_LONG_LONG, win); break;
        case 2:
            MPI_Accumulate(&v, 1, MPI_LONG_LONG, 1, 2, 1, MPI_LONG_LONG, MPI_SUM, win);
            break;
        default:
            MPI_Fetch_and_op(&v, &out, MPI_LONG_LONG, 1, 3, MPI_SUM, win);
            break;
        }
        MPI_Win_flush(1, win);
    }
    return (MPI_Wtime() - t0) / iters * 1e6;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "rma: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = 100000;
    if (argc > 2 || (argc == 2 && !parse_long(argv[1], 1, 100000000L, 'n', rank, &n))) {
        if (argc > 2 && rank == 0) fprintf(stderr, "usage: rma [ITERS]\n");
        MPI_Finalize();
        return 2;
    }
    int iters = (int)n;
    long long *base;
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < 4; i++) base[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    double t[4] = {0, 0, 0, 0};
    if (rank == 0)
        for (int op = 0; op < 4; op++) t[op] = timed(op, win, iters);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 && base[2] != (long long)(iters + iters / 10)) {
        fprintf(stderr, "rma: accumulate counter %lld, expected %d\n", base[2],
                iters + iters / 10);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (rank == 0) printf("%.4f %.4f %.4f %.4f\n", t[0], t[1], t[2], t[3]);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
