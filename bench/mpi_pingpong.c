/* MPI ping-pong between ranks 0 and 1: one-way latency (half the round trip) and
 * bandwidth per length, printed as "length latency_us bandwidth_mb_s".
 * Usage: mpi_pingpong LEN [ITERATIONS] [WARMUP] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long len = argc > 1 ? atol(argv[1]) : 8;
    int iters = argc > 2 ? atoi(argv[2]) : 10000;
    int warm = argc > 3 ? atoi(argv[3]) : 1000;
    char *buf = calloc(len > 0 ? len : 1, 1);
    double t0 = 0;
    for (int i = 0; i < warm + iters; i++) {
        if (i == warm) t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, len, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(buf, len, MPI_CHAR, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, len, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, len, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
        }
    }
    double one_way = (MPI_Wtime() - t0) / iters / 2;
    if (rank == 0) printf("%ld %.4f %.1f\n", len, one_way * 1e6, len / one_way / 1e6);
    free(buf);
    MPI_Finalize();
    return 0;
}
