/* Two ranks stream messages of mixed sizes both ways (MPI_Sendrecv), every byte
 * checked, for argv[1] seconds (default 10): inline, pool and striped sizes. Run across
 * two network namespaces joined by two links (rails) by crates/cli/tests/netns.rs,
 * which takes one link down in the middle and brings it back: the program must see no
 * error and no wrong byte. Errors are returned (MPI_ERRORS_RETURN) and reported.
 * Prints "failover ok <rank> <messages>" per rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN (1 << 20)

static unsigned char pat(long it, long i, int from)
{
    return (unsigned char)(it * 31 + i * 7 + from * 101 + (i >> 9));
}

int main(int argc, char **argv)
{
    static const int sizes[] = {1, 8, 100, 880, 881, 4096, 65536, 65544, 200000, MAXN};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int rank, size, rc;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "failover: needs 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    double secs = argc > 1 ? atof(argv[1]) : 10.0;
    unsigned char *sbuf = malloc(MAXN + 4), *rbuf = malloc(MAXN + 4);
    if (!sbuf || !rbuf)
        return 2;
    int peer = rank ^ 1, stop = 0;
    long it = 0;
    double t0 = MPI_Wtime(), last = t0;
    while (!stop) {
        int n = sizes[it % nsizes];
        int mine = rank == 0 && MPI_Wtime() - t0 > secs;
        memcpy(sbuf, &mine, 4);
        for (long i = 0; i < n; i++)
            sbuf[4 + i] = pat(it, i, rank);
        MPI_Status st;
        rc = MPI_Sendrecv(sbuf, n + 4, MPI_BYTE, peer, (int)(it % 1000), rbuf, n + 4, MPI_BYTE,
                          peer, (int)(it % 1000), MPI_COMM_WORLD, &st);
        if (rc != MPI_SUCCESS) {
            char s[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, s, &len);
            fprintf(stderr, "failover: rank %d, message %ld (%d B): %s\n", rank, it, n, s);
            return 1;
        }
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (count != n + 4) {
            fprintf(stderr, "failover: rank %d, message %ld: %d bytes, not %d\n", rank, it,
                    count, n + 4);
            return 1;
        }
        for (long i = 0; i < n; i++) {
            if (rbuf[4 + i] != pat(it, i, peer)) {
                fprintf(stderr, "failover: rank %d, message %ld (%d B): byte %ld differs\n",
                        rank, it, n, i);
                return 1;
            }
        }
        int theirs;
        memcpy(&theirs, rbuf, 4);
        stop = rank == 0 ? mine : theirs;
        it++;
        double now = MPI_Wtime();
        if (rank == 0 && now - last >= 1.0) {
            fprintf(stderr, "failover: %.0f s, %ld messages\n", now - t0, it);
            last = now;
        }
    }
    printf("failover ok %d %ld\n", rank, it);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
