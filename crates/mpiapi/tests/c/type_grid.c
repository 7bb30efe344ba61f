/* MPI_Type_create_subarray and MPI_Type_create_darray: a subarray halo face
 * sent with MPI_Sendrecv, and a block-cyclic darray whose pieces, gathered from
 * every rank, cover the global array exactly once.
 * Prints "type_grid ok <rank>" at the end; any failure aborts with a message. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int me, np;

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", me, __FILE__, \
                    __LINE__, #c);                                             \
            MPI_Abort(MPI_COMM_WORLD, 1);                                      \
        }                                                                      \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* A 4x5 C-order array; the 2x3 box at (1,2). */
    int a[20], sizes[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 2}, sz;
    MPI_Aint lb, ext;
    for (int i = 0; i < 20; i++) a[i] = i + 100 * me;
    MPI_Datatype box;
    OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_INT, &box));
    OK(MPI_Type_commit(&box));
    OK(MPI_Type_size(box, &sz));
    OK(MPI_Type_get_extent(box, &lb, &ext));
    CHECK(sz == 6 * (int)sizeof(int) && lb == 0 && ext == 20 * (MPI_Aint)sizeof(int));
    int got[6], want[6] = {7, 8, 9, 12, 13, 14};
    int right = (me + 1) % np, left = (me + np - 1) % np;
    OK(MPI_Sendrecv(a, 1, box, right, 1, got, 6, MPI_INT, left, 1, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    for (int i = 0; i < 6; i++) CHECK(got[i] == want[i] + 100 * left);
    OK(MPI_Type_free(&box));
    st[0] = 3;
    CHECK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_INT, &box) ==
          MPI_ERR_ARG);

    /* A 7x9 Fortran-order array, block x cyclic(2) over a Dims_create grid. */
    int g[2] = {7, 9}, ps[2] = {0, 0};
    int dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2};
    OK(MPI_Dims_create(np, 2, ps));
    MPI_Datatype mine;
    OK(MPI_Type_create_darray(np, me, 2, g, dist, darg, ps, MPI_ORDER_FORTRAN,
                              MPI_INT, &mine));
    OK(MPI_Type_commit(&mine));
    OK(MPI_Type_get_extent(mine, &lb, &ext));
    CHECK(lb == 0 && ext == 63 * (MPI_Aint)sizeof(int));
    int all[63], n;
    for (int i = 0; i < 63; i++) all[i] = i;
    OK(MPI_Type_size(mine, &n));
    n /= (int)sizeof(int);
    int *piece = malloc(sizeof(int) * (n + 1));
    int pos = 0;
    OK(MPI_Pack(all, 1, mine, piece, (int)sizeof(int) * (n + 1), &pos, MPI_COMM_WORLD));
    int *counts = malloc(sizeof(int) * np), *displs = malloc(sizeof(int) * np);
    OK(MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD));
    int total = 0;
    for (int r = 0; r < np; r++) displs[r] = total, total += counts[r];
    CHECK(total == 63);
    int every[63], seen[63] = {0};
    OK(MPI_Allgatherv(piece, n, MPI_INT, every, counts, displs, MPI_INT,
                      MPI_COMM_WORLD));
    for (int i = 0; i < 63; i++) seen[every[i]]++;
    for (int i = 0; i < 63; i++) CHECK(seen[i] == 1);
    OK(MPI_Type_free(&mine));
    free(piece), free(counts), free(displs);
    dist[0] = MPI_DISTRIBUTE_NONE;
    if (ps[0] != 1)
        CHECK(MPI_Type_create_darray(np, me, 2, g, dist, darg, ps, MPI_ORDER_C,
                                     MPI_INT, &mine) == MPI_ERR_ARG);

    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("type_grid ok %d\n", me);
    MPI_Finalize();
    return 0;
}
