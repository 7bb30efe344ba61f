/* A rank waits for a nonblocking collective before it enters a blocking one, while
 * the other ranks enter the blocking one first and wait afterwards (issue 24,
 * docs/mpi-coll.md). The standard allows this program: the blocking collective of
 * the other ranks must keep the nonblocking one moving, or the waiting rank never
 * reaches the blocking call and the job hangs. Every kind (Ibarrier, Ibcast, Ireduce,
 * Iallreduce, and an Ibcast followed by an Iallreduce in flight together), sizes on
 * both sides of a segment slot (32 KiB, 256 KiB oversubscribed: through the segment
 * below, point-to-point schedules above), the nonblocking call on the world or on a
 * duplicate (another segment), the blocking one a Barrier, an 8-byte Allreduce or a
 * 100 KB Bcast, the waiting rank and the root each first and last. Every result is
 * checked. Prints "icoll_order ok <rank>". */
#include "check.h"
#include <stdlib.h>
#include <string.h>

static int rank;

enum kind { IBARRIER, IBCAST, IREDUCE, IALLREDUCE, TWO, KINDS };
static const char *kind_name[] = {"ibarrier", "ibcast", "ireduce", "iallreduce", "two"};
enum blocking { BARRIER, ALLREDUCE, BCAST, BLOCKINGS };

static int val(int r, int i) { return r * 1000 + i % 997; }

/* The blocking collective; its result checked. */
static void blocking(enum blocking b, MPI_Comm comm, int size, char *big, int bigbytes)
{
    if (b == BARRIER) {
        OK(MPI_Barrier(comm));
    } else if (b == ALLREDUCE) {
        long x = rank + 1, y = 0;
        OK(MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, comm));
        CHECK(y == (long)size * (size + 1) / 2, "allreduce %ld", y);
    } else {
        int root = size - 1;
        for (int i = 0; i < bigbytes; i++) big[i] = rank == root ? (char)(i * 7) : 0;
        OK(MPI_Bcast(big, bigbytes, MPI_CHAR, root, comm));
        for (int i = 0; i < bigbytes; i++) CHECK(big[i] == (char)(i * 7), "bcast byte %d", i);
    }
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int size;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    /* Both communicators' segments exist before the first nonblocking call (a
     * nonblocking call uses only a segment a blocking one set up). */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Barrier(dup));

    int sizes[] = {8, 1024, 32768, 40000, 300000};
    int nsizes = sizeof sizes / sizeof sizes[0];
    int maxint = 300000 / 4;
    int *a = malloc(maxint * sizeof(int)), *b = malloc(maxint * sizeof(int));
    int *c = malloc(maxint * sizeof(int));
    int bigbytes = 100000;
    char *big = malloc(bigbytes);
    CHECK(a && b && c && big, "malloc");

    int round = 0;
    for (int k = 0; k < KINDS; k++)
        for (int z = 0; z < nsizes; z++)
            for (int bl = 0; bl < BLOCKINGS; bl++)
                for (int on_dup = 0; on_dup < 2; on_dup++, round++) {
                    if (k == IBARRIER && z > 0) continue;
                    MPI_Comm nbc = on_dup ? dup : MPI_COMM_WORLD;
                    int waiter = round % 2 ? size - 1 : 0;
                    int root = (round / 2) % 2 ? size - 1 : 0;
                    int n = sizes[z] / 4;
                    for (int i = 0; i < n; i++) {
                        a[i] = val(rank, i + round);
                        b[i] = -1;
                        c[i] = -1;
                    }
                    if (k == IBCAST || k == TWO)
                        for (int i = 0; i < n; i++) b[i] = rank == root ? a[i] : -1;
                    MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
                    switch (k) {
                    case IBARRIER: OK(MPI_Ibarrier(nbc, &rq[0])); break;
                    case IBCAST: OK(MPI_Ibcast(b, n, MPI_INT, root, nbc, &rq[0])); break;
                    case IREDUCE:
                        OK(MPI_Ireduce(a, b, n, MPI_INT, MPI_SUM, root, nbc, &rq[0]));
                        break;
                    case IALLREDUCE:
                        OK(MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, nbc, &rq[0]));
                        break;
                    case TWO:
                        OK(MPI_Ibcast(b, n, MPI_INT, root, nbc, &rq[0]));
                        OK(MPI_Iallreduce(a, c, n, MPI_INT, MPI_SUM, nbc, &rq[1]));
                        break;
                    }
                    if (rank == waiter) {
                        OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
                        blocking(bl, MPI_COMM_WORLD, size, big, bigbytes);
                    } else {
                        blocking(bl, MPI_COMM_WORLD, size, big, bigbytes);
                        OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
                    }
                    for (int i = 0; i < n; i++) {
                        long sum = 0;
                        for (int r = 0; r < size; r++) sum += val(r, i + round);
                        if (k == IBCAST || k == TWO)
                            CHECK(b[i] == val(root, i + round), "%s %d B round %d: b[%d] %d",
                                  kind_name[k], sizes[z], round, i, b[i]);
                        if (k == IALLREDUCE || (k == IREDUCE && rank == root))
                            CHECK(b[i] == (int)sum, "%s %d B round %d: b[%d] %d", kind_name[k],
                                  sizes[z], round, i, b[i]);
                        if (k == TWO)
                            CHECK(c[i] == (int)sum, "two %d B round %d: c[%d] %d", sizes[z],
                                  round, i, c[i]);
                    }
                }
    OK(MPI_Comm_free(&dup));
    free(a), free(b), free(c), free(big);
    printf("icoll_order ok %d\n", rank);
    OK(MPI_Finalize());
    return 0;
}
