/* MPI_Isendrecv and MPI_Isendrecv_replace on N ranks: a ring exchange at sizes from
 * 0 to 1 MiB (past the eager limit), the send buffer overwritten as soon as the
 * request completes, a strided datatype, a rank sending to itself, MPI_PROC_NULL,
 * and the receive's status; every byte checked. Prints "isendrecv ok <rank>". */
#include "check.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static unsigned char pat(int from, int it, long i) {
    return (unsigned char)(from * 37 + it * 11 + i * 7 + (i >> 8));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    static const int lens[] = {0, 1, 8, 1000, 70000, 1 << 20};
    unsigned char *s = malloc(1 << 20), *r = malloc(1 << 20);
    for (int k = 0; k < 6; k++) {
        int n = lens[k];
        for (long i = 0; i < n; i++) s[i] = pat(rank, k, i);
        memset(r, 0, (size_t)n + 1);
        MPI_Request q;
        MPI_Status st;
        OK(MPI_Isendrecv(s, n, MPI_BYTE, right, k, r, n, MPI_BYTE, left, k, MPI_COMM_WORLD, &q));
        /* Overwriting the send buffer may not change what was sent. */
        OK(MPI_Wait(&q, &st));
        memset(s, 0xee, (size_t)n);
        int got;
        MPI_Get_count(&st, MPI_BYTE, &got);
        CHECK(got == n && st.MPI_SOURCE == left && st.MPI_TAG == k, "status %d %d %d",
              got, st.MPI_SOURCE, st.MPI_TAG);
        for (long i = 0; i < n; i++) CHECK(r[i] == pat(left, k, i), "byte %ld of %d", i, n);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* Replace, with a strided type: every other int of 2000. */
    MPI_Datatype every2;
    MPI_Type_vector(1000, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    int *v = malloc(sizeof(int) * 2000);
    for (int i = 0; i < 2000; i++) v[i] = rank * 100000 + i;
    MPI_Request q;
    OK(MPI_Isendrecv_replace(v, 1, every2, right, 9, left, 9, MPI_COMM_WORLD, &q));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2000; i++)
        CHECK(v[i] == (i % 2 ? rank * 100000 + i : left * 100000 + i), "replace %d: %d", i, v[i]);
    /* To ourselves, and MPI_PROC_NULL both ways. */
    int a = 42 + rank, b = -1;
    OK(MPI_Isendrecv(&a, 1, MPI_INT, rank, 5, &b, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &q));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(b == 42 + rank, "self %d", b);
    MPI_Status st;
    OK(MPI_Isendrecv(&a, 1, MPI_INT, MPI_PROC_NULL, 5, &b, 1, MPI_INT, MPI_PROC_NULL, 5,
                     MPI_COMM_WORLD, &q));
    OK(MPI_Wait(&q, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "proc null source %d", st.MPI_SOURCE);
    /* Bad arguments. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Isendrecv(&a, 1, MPI_INT, rank, 5, &b, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, NULL) !=
              MPI_SUCCESS, "NULL request");
    CHECK(MPI_Isendrecv(&a, -1, MPI_INT, rank, 5, &b, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &q) !=
              MPI_SUCCESS, "negative count");
    MPI_Type_free(&every2);
    free(v);
    free(s);
    free(r);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("isendrecv ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
