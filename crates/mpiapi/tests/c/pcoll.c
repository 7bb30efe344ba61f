/* Persistent collectives (MPI-4) on N ranks: each request made once with its _init
 * call and started several times (MPI_Start, MPI_Startall), the buffers' contents
 * changed between starts, every result checked; an inactive request completes at
 * once; MPI_Request_free of an inactive one; three started in a different order
 * on each rank. Prints "pcoll ok <rank>". */
#include "check.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { N = 5 };
    int bc[N], in[N], sum[N], red[N], scan[N];
    int *gath = malloc(sizeof(int) * (size_t)size * N);
    int *a2a_s = malloc(sizeof(int) * (size_t)size), *a2a_r = malloc(sizeof(int) * (size_t)size);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    int *gv = malloc(sizeof(int) * (size_t)size * size);
    for (int r = 0; r < size; r++) {
        counts[r] = r + 1;
        displs[r] = r * size;
    }
    int gsend[64];
    MPI_Request req[8];
    OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]));
    OK(MPI_Bcast_init(bc, N, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
    OK(MPI_Allreduce_init(in, sum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[2]));
    OK(MPI_Reduce_init(in, red, N, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req[3]));
    OK(MPI_Allgather_init(in, N, MPI_INT, gath, N, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req[4]));
    OK(MPI_Alltoall_init(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req[5]));
    OK(MPI_Gatherv_init(gsend, rank + 1, MPI_INT, gv, counts, displs, MPI_INT, 0, MPI_COMM_WORLD,
                        MPI_INFO_NULL, &req[6]));
    OK(MPI_Scan_init(in, scan, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[7]));

    /* Inactive: completes at once. */
    MPI_Status st;
    OK(MPI_Wait(&req[2], &st));
    CHECK(req[2] != MPI_REQUEST_NULL, "a persistent request stays");

    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < N; i++) {
            in[i] = rank * 10 + i + round;
            bc[i] = rank == size - 1 ? 100 * round + i : -1;
        }
        for (int r = 0; r < size; r++) a2a_s[r] = rank * 1000 + r + round;
        for (int i = 0; i <= rank; i++) gsend[i] = rank * 100 + i + round;
        if (round % 2 == 0) {
            for (int k = 0; k < 8; k++) OK(MPI_Start(&req[k]));
        } else {
            OK(MPI_Startall(8, req));
        }
        OK(MPI_Waitall(8, req, MPI_STATUSES_IGNORE));
        for (int k = 0; k < 8; k++) CHECK(req[k] != MPI_REQUEST_NULL, "request %d kept", k);
        for (int i = 0; i < N; i++) {
            CHECK(bc[i] == 100 * round + i, "bcast %d: %d", i, bc[i]);
            int s = 0, sc = 0;
            for (int r = 0; r < size; r++) s += r * 10 + i + round;
            for (int r = 0; r <= rank; r++) sc += r * 10 + i + round;
            CHECK(sum[i] == s, "allreduce %d: %d, expected %d", i, sum[i], s);
            CHECK(scan[i] == sc, "scan %d: %d, expected %d", i, scan[i], sc);
            if (rank == 0)
                CHECK(red[i] == (size - 1) * 10 + i + round, "reduce %d: %d", i, red[i]);
            for (int r = 0; r < size; r++)
                CHECK(gath[r * N + i] == r * 10 + i + round, "allgather %d %d", r, i);
        }
        for (int r = 0; r < size; r++)
            CHECK(a2a_r[r] == r * 1000 + rank + round, "alltoall from %d: %d", r, a2a_r[r]);
        if (rank == 0)
            for (int r = 0; r < size; r++)
                for (int i = 0; i <= r; i++)
                    CHECK(gv[r * size + i] == r * 100 + i + round, "gatherv %d %d", r, i);
    }
    /* Restarting an active request is an error; here they are all inactive again. */
    for (int k = 0; k < 8; k++) OK(MPI_Request_free(&req[k]));
    for (int k = 0; k < 8; k++) CHECK(req[k] == MPI_REQUEST_NULL, "freed %d", k);
    free(gath);
    free(a2a_s);
    free(a2a_r);
    free(counts);
    free(displs);
    free(gv);

    /* Started in a different order on each rank (MPI-4.0 §6.13 allows it): the
     * starts match by their _init calls, which every rank makes in one order. */
    int a = -1, total = 0, one = 1;
    MPI_Request q[3];
    OK(MPI_Bcast_init(&a, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]));
    OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]));
    OK(MPI_Allreduce_init(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                          &q[2]));
    for (int round = 0; round < 3; round++) {
        if (rank == 0) a = 42 + round;
        for (int k = 0; k < 3; k++) OK(MPI_Start(&q[(rank + round + k) % 3]));
        OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
        CHECK(a == 42 + round, "bcast started out of order: %d", a);
        CHECK(total == size, "allreduce started out of order: %d", total);
    }
    for (int k = 0; k < 3; k++) OK(MPI_Request_free(&q[k]));
    printf("pcoll ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
