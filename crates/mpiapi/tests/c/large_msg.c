/* A message of more than INT_MAX bytes on 2 ranks, through the large-count forms:
 * MPI_Isend_c / MPI_Irecv_c of INT_MAX + 100 MPI_BYTEs (the library carries the count
 * as one element of a type made for the call, freed before the wait), every byte
 * checked, and the status's count read back in 64 bits. 2 GiB per rank. Prints
 * "large_msg ok <rank>". */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

static int rank;
#include "check.h"

static unsigned char at(MPI_Count i) { return (unsigned char)(i * 131 + (i >> 20)); }

int main(int argc, char **argv) {
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run on 2 ranks, not %d", size);
    const MPI_Count n = (MPI_Count)INT_MAX + 100;
    unsigned char *b = malloc((size_t)n);
    CHECK(b != NULL, "no memory for %lld bytes", (long long)n);
    MPI_Request rq;
    if (rank == 0) {
        for (MPI_Count i = 0; i < n; i++) b[i] = at(i);
        OK(MPI_Isend_c(b, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        for (MPI_Count i = 0; i < n; i++) b[i] = (unsigned char)~at(i);
        OK(MPI_Irecv_c(b, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &rq));
        MPI_Status st;
        OK(MPI_Wait(&rq, &st));
        MPI_Count got = -1;
        OK(MPI_Get_count_c(&st, MPI_BYTE, &got));
        CHECK(got == n, "Get_count_c %lld, not %lld", (long long)got, (long long)n);
        int small = 0;
        OK(MPI_Get_count(&st, MPI_BYTE, &small));
        CHECK(small == MPI_UNDEFINED, "Get_count of %lld bytes gave %d", (long long)n, small);
        MPI_Count bad = 0;
        for (MPI_Count i = 0; i < n; i++) bad += b[i] != at(i);
        CHECK(bad == 0, "%lld bytes differ", (long long)bad);
    }
    free(b);
    MPI_Finalize();
    printf("large_msg ok %d\n", rank);
    return 0;
}
