/* An erroneous program: the root of a rooted collective gives a datatype the other
 * ranks do not (MPI_DATATYPE_NULL, or one of twice the size, so that its buffer
 * passes a switch point theirs does not). With the default error handler the job
 * must end with an error, never hang with the root in one algorithm and the others
 * in another. argv[1]: gather, scatter, gatherv, scatterv; argv[2]: null or wide;
 * argv[3]: the root. Prints "coll_badroot: no error" if the call returned. */
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
    else if (strcmp(coll, "gatherv") == 0)
        rc = MPI_Gatherv(mine, n, MPI_INT, all, cnt, dis, t, root, MPI_COMM_WORLD);
    else
        rc = MPI_Scatterv(all, cnt, dis, t, mine, n, MPI_INT, root, MPI_COMM_WORLD);
    printf("coll_badroot: no error (rank %d, %d)\n", rank, rc);
    free(mine);
    free(all);
    free(cnt);
    free(dis);
    MPI_Finalize();
    return 0;
}
