/* An erroneous program: the root of a rooted collective gives a datatype the other
 * ranks do not (MPI_DATATYPE_NULL, or one of twice the size, so that its buffer
 * passes a switch point theirs does not). With the default error handler the job
 * must end with an error, never hang with the root in one algorithm and the others
 * in another. argv[1]: gather, scatter, gatherv, scatterv; argv[2]: null or wide;
 * argv[3]: the root. Prints "coll_badroot: no error" if the call returned.
 * argv[4] "return": MPI_ERRORS_RETURN instead; then the root's side alone is bad
 * (also argv[1] reduce: a NULL receive buffer at the root), every rank must return
 * (the root with the error, printed "coll_badroot: rank R returned CODE"), and the
 * communicator must still work: a barrier and an allreduce follow, then
 * "coll_badroot ok R". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *coll = argc > 1 ? argv[1] : "gather";
    int wide = argc > 2 && strcmp(argv[2], "wide") == 0;
    int root = argc > 3 ? atoi(argv[3]) % size : 0;
    int ret = argc > 4 && strcmp(argv[4], "return") == 0;
    if (ret) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* 64 KiB of ints a rank: the root's whole buffer at 4 ranks is 256 KiB, at the
     * by-levels switch point; twice that with a type twice as wide. */
    int n = 16384;
    int *mine = calloc((size_t)n, sizeof(long long));
    long long *all = calloc((size_t)n * (size_t)size, sizeof(long long));
    int *cnt = malloc(size * sizeof(int)), *dis = malloc(size * sizeof(int));
    for (int r = 0; r < size; r++) {
        cnt[r] = n;
        dis[r] = r * n;
    }
    MPI_Datatype t = MPI_INT;
    if (rank == root)
        t = wide ? MPI_LONG_LONG : MPI_DATATYPE_NULL;
    /* Warm up: the levels of MPI_COMM_WORLD are made here, correctly. */
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = MPI_SUCCESS;
    if (strcmp(coll, "gather") == 0)
        rc = MPI_Gather(mine, n, MPI_INT, all, n, t, root, MPI_COMM_WORLD);
    else if (strcmp(coll, "scatter") == 0)
        rc = MPI_Scatter(all, n, t, mine, n, MPI_INT, root, MPI_COMM_WORLD);
    else if (strcmp(coll, "reduce") == 0)
        rc = MPI_Reduce(mine, rank == root ? NULL : all, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    else if (strcmp(coll, "gatherv") == 0)
        rc = MPI_Gatherv(mine, n, MPI_INT, all, cnt, dis, t, root, MPI_COMM_WORLD);
    else
        rc = MPI_Scatterv(all, cnt, dis, t, mine, n, MPI_INT, root, MPI_COMM_WORLD);
    if (ret) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        printf("coll_badroot: rank %d returned %s\n", rank, rc == MPI_SUCCESS ? "MPI_SUCCESS" : msg);
        int one = 1, all_ranks = 0;
        if (MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS &&
            MPI_Allreduce(&one, &all_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS &&
            all_ranks == size)
            printf("coll_badroot ok %d\n", rank);
    } else
        printf("coll_badroot: no error (rank %d, %d)\n", rank, rc);
    free(mine);
    free(all);
    free(cnt);
    free(dis);
    MPI_Finalize();
    return 0;
}
