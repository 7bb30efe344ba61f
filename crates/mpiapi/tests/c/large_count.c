/* The MPI-4 large-count (_c) forms: point-to-point, blocking, nonblocking and
 * persistent, the v-collectives with MPI_Count / MPI_Aint arrays (rooted ones read
 * at the root only), an intercommunicator's Allgatherv_c, the counts of a status,
 * point-to-point counts above INT_MAX accepted and bad ones refused, and a
 * collective's count above INT_MAX refused with MPI_ERR_COUNT (never truncated). Prints
 * "large_count ok <rank>". */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int rank;
#include "check.h"

int main(int argc, char **argv) {
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* Point-to-point around a ring. */
    int out[64], in[64];
    for (int i = 0; i < 64; i++) out[i] = rank * 1000 + i;
    MPI_Status st;
    OK(MPI_Sendrecv_c(out, 64, MPI_INT, right, 1, in, 64, MPI_INT, left, 1, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 64; i++) CHECK(in[i] == left * 1000 + i, "sendrecv_c [%d] = %d", i, in[i]);
    MPI_Count n = -1;
    OK(MPI_Get_count_c(&st, MPI_INT, &n));
    CHECK(n == 64, "Get_count_c %lld", (long long)n);
    OK(MPI_Get_elements_c(&st, MPI_INT, &n));
    CHECK(n == 64, "Get_elements_c %lld", (long long)n);
    MPI_Request rq[2];
    memset(in, 0, sizeof in);
    OK(MPI_Irecv_c(in, 64, MPI_INT, left, 2, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Isend_c(out, 64, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(in[63] == left * 1000 + 63, "isend_c/irecv_c %d", in[63]);
    /* Persistent, started twice. */
    OK(MPI_Recv_init_c(in, 8, MPI_INT, left, 3, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Send_init_c(out, 8, MPI_INT, right, 3, MPI_COMM_WORLD, &rq[1]));
    for (int k = 0; k < 2; k++) {
        memset(in, 0, sizeof in);
        OK(MPI_Startall(2, rq));
        OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        CHECK(in[7] == left * 1000 + 7, "persistent start %d: %d", k, in[7]);
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    if (rank == 0) {
        OK(MPI_Send_c(out, 3, MPI_INT, size - 1, 4, MPI_COMM_WORLD));
    }
    if (rank == size - 1) {
        OK(MPI_Recv_c(in, 3, MPI_INT, 0, 4, MPI_COMM_WORLD, &st));
        OK(MPI_Get_count_c(&st, MPI_INT, &n));
        CHECK(n == 3 && in[2] == 2, "send_c/recv_c %lld %d", (long long)n, in[2]);
    }

    /* Collectives with scalar counts. */
    long long v = rank + 1, sum = 0;
    OK(MPI_Allreduce_c(&v, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == (long long)size * (size + 1) / 2, "allreduce_c %lld", sum);
    int b = rank == 0 ? 77 : 0;
    OK(MPI_Bcast_c(&b, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(b == 77, "bcast_c %d", b);
    MPI_Request r1;
    sum = 0;
    OK(MPI_Iallreduce_c(&v, &sum, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, &r1));
    OK(MPI_Wait(&r1, MPI_STATUS_IGNORE));
    CHECK(sum == size, "iallreduce_c %lld", sum);

    /* v-forms: rank r contributes r + 1 ints. */
    MPI_Count *counts = malloc(sizeof(MPI_Count) * size);
    MPI_Aint *displs = malloc(sizeof(MPI_Aint) * size);
    MPI_Count total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r + 1;
        displs[r] = (MPI_Aint)total;
        total += r + 1;
    }
    int *mine = malloc(sizeof(int) * (rank + 1));
    for (int i = 0; i <= rank; i++) mine[i] = rank * 100 + i;
    int *all = calloc((size_t)total, sizeof(int));
    OK(MPI_Allgatherv_c(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int i = 0; i <= r; i++)
            CHECK(all[displs[r] + i] == r * 100 + i, "allgatherv_c [%d][%d] = %d", r, i,
                  all[displs[r] + i]);
    /* Gatherv_c at a root in the middle; other ranks pass NULL arrays. */
    int root = size / 2;
    memset(all, 0, sizeof(int) * (size_t)total);
    OK(MPI_Gatherv_c(mine, rank + 1, MPI_INT, all, rank == root ? counts : NULL,
                     rank == root ? displs : NULL, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int r = 0; r < size; r++)
            CHECK(all[displs[r] + r] == r * 100 + r, "gatherv_c [%d]", r);
    /* Scatterv_c back. */
    memset(mine, 0, sizeof(int) * (rank + 1));
    OK(MPI_Scatterv_c(all, rank == root ? counts : NULL, rank == root ? displs : NULL, MPI_INT,
                      mine, rank + 1, MPI_INT, root, MPI_COMM_WORLD));
    for (int i = 0; i <= rank; i++) CHECK(mine[i] == rank * 100 + i, "scatterv_c [%d]", i);
    /* Alltoallv_c: one int to each rank, value from * 10 + to. */
    int *s1 = malloc(sizeof(int) * size), *r1b = malloc(sizeof(int) * size);
    MPI_Count *ones = malloc(sizeof(MPI_Count) * size);
    MPI_Aint *seq = malloc(sizeof(MPI_Aint) * size);
    for (int r = 0; r < size; r++) {
        s1[r] = rank * 10 + r;
        ones[r] = 1;
        seq[r] = r;
    }
    OK(MPI_Alltoallv_c(s1, ones, seq, MPI_INT, r1b, ones, seq, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++) CHECK(r1b[r] == r * 10 + rank, "alltoallv_c [%d] = %d", r, r1b[r]);
    memset(r1b, 0, sizeof(int) * size);
    OK(MPI_Ialltoallv_c(s1, ones, seq, MPI_INT, r1b, ones, seq, MPI_INT, MPI_COMM_WORLD, &r1));
    OK(MPI_Wait(&r1, MPI_STATUS_IGNORE));
    for (int r = 0; r < size; r++) CHECK(r1b[r] == r * 10 + rank, "ialltoallv_c [%d]", r);
    /* Persistent v-forms: the arrays are the request's own once init returns. */
    MPI_Count *cc = malloc(sizeof(MPI_Count) * size);
    MPI_Aint *dd = malloc(sizeof(MPI_Aint) * size);
    for (int r = 0; r < size; r++) {
        cc[r] = 1;
        dd[r] = r;
    }
    MPI_Request pr[2];
    OK(MPI_Allgatherv_init_c(&rank, 1, MPI_INT, r1b, cc, dd, MPI_INT, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &pr[0]));
    OK(MPI_Alltoallv_init_c(s1, cc, dd, MPI_INT, r1b, cc, dd, MPI_INT, MPI_COMM_SELF,
                            MPI_INFO_NULL, &pr[1]));
    MPI_Request_free(&pr[1]);
    for (int r = 0; r < size; r++) cc[r] = -7; /* overwritten: must not matter */
    for (int k = 0; k < 2; k++) {
        memset(r1b, 0, sizeof(int) * size);
        OK(MPI_Start(&pr[0]));
        OK(MPI_Wait(&pr[0], MPI_STATUS_IGNORE));
        for (int r = 0; r < size; r++) CHECK(r1b[r] == r, "allgatherv_init_c start %d [%d]", k, r1b[r]);
    }
    MPI_Request_free(&pr[0]);
    free(cc);
    free(dd);
    /* Reduce_scatter_c: element r of the sum goes to rank r. */
    for (int r = 0; r < size; r++) s1[r] = r + rank;
    int got = -1;
    OK(MPI_Reduce_scatter_c(s1, &got, ones, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(got == size * rank + size * (size - 1) / 2, "reduce_scatter_c %d", got);
    /* Reduce_local_c. */
    int a2[2] = {1, 2}, b2[2] = {10, 20};
    OK(MPI_Reduce_local_c(a2, b2, 2, MPI_INT, MPI_SUM));
    CHECK(b2[0] == 11 && b2[1] == 22, "reduce_local_c %d %d", b2[0], b2[1]);

    /* An intercommunicator (two halves), Allgatherv_c across it: the arrays have the
     * remote group's size. */
    if (size >= 2) {
        int low = rank < size / 2;
        MPI_Comm half, inter;
        OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
        OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 9, &inter));
        int rsize;
        OK(MPI_Comm_remote_size(inter, &rsize));
        MPI_Count *rc = malloc(sizeof(MPI_Count) * rsize);
        MPI_Aint *rd = malloc(sizeof(MPI_Aint) * rsize);
        for (int i = 0; i < rsize; i++) {
            rc[i] = 1;
            rd[i] = i;
        }
        int *from = calloc((size_t)rsize, sizeof(int));
        OK(MPI_Allgatherv_c(&rank, 1, MPI_INT, from, rc, rd, MPI_INT, inter));
        for (int i = 0; i < rsize; i++)
            CHECK(from[i] == (low ? size / 2 + i : i), "inter allgatherv_c [%d] = %d", i, from[i]);
        free(from);
        free(rc);
        free(rd);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    /* Point-to-point counts above INT_MAX go through (large_msg.c moves such a
     * message); bad ones are refused before anything is sent or allocated. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    OK(MPI_Send_c(NULL, (MPI_Count)INT_MAX + 1, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    int cls = -1;
    int rc = MPI_Send_c(out, (MPI_Count)INT_MAX + 1, MPI_DATATYPE_NULL, right, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "null type, count above INT_MAX: class %d", cls);
    rc = MPI_Send_c(out, -(MPI_Count)INT_MAX - 2, MPI_INT, right, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "count below INT_MIN: class %d", cls);
    rc = MPI_Send_c(out, LLONG_MAX, MPI_INT, right, 0, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS, "a count whose bytes overflow was accepted");
    /* Collective counts that do not fit an int: refused. */
    counts[0] = (MPI_Count)1 << 40;
    rc = MPI_Allgatherv_c(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "array count above INT_MAX: class %d", cls);
    /* The int form's own errors come through unchanged. */
    rc = MPI_Send_c(out, -1, MPI_INT, right, 0, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS, "negative count accepted");

    /* Neighbourhood v-forms on a periodic ring: arrays of one entry per neighbour. */
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int nb[2] = {-1, -1};
    MPI_Count nc[2] = {1, 1};
    MPI_Aint nd[2] = {0, 1}, nwd[2] = {0, sizeof(int)};
    MPI_Datatype nt[2] = {MPI_INT, MPI_INT};
    OK(MPI_Neighbor_allgatherv_c(&rank, 1, MPI_INT, nb, nc, nd, MPI_INT, ring));
    CHECK(nb[0] == left && nb[1] == right, "neighbor_allgatherv_c %d %d", nb[0], nb[1]);
    int two[2] = {rank * 10, rank * 10 + 1};
    nb[0] = nb[1] = -1;
    OK(MPI_Neighbor_alltoallv_c(two, nc, nd, MPI_INT, nb, nc, nd, MPI_INT, ring));
    CHECK(nb[0] == left * 10 + 1 && nb[1] == right * 10, "neighbor_alltoallv_c %d %d", nb[0], nb[1]);
    nb[0] = nb[1] = -1;
    OK(MPI_Neighbor_alltoallw_c(two, nc, nwd, nt, nb, nc, nwd, nt, ring));
    CHECK(nb[0] == left * 10 + 1 && nb[1] == right * 10, "neighbor_alltoallw_c %d %d", nb[0], nb[1]);
    nc[1] = (MPI_Count)1 << 40;
    rc = MPI_Neighbor_alltoallv_c(two, nc, nd, MPI_INT, nb, nc, nd, MPI_INT, ring);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "neighbour count above INT_MAX: class %d", cls);
    OK(MPI_Comm_free(&ring));

    free(counts);
    free(displs);
    free(mine);
    free(all);
    free(s1);
    free(r1b);
    free(ones);
    free(seq);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("large_count ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
