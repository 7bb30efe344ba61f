/* A job killed without warning must leave no shared segment behind, under any
 * launcher (issue 23). Every rank talks to every other (short and long messages, so
 * channel areas and ack segments exist both ways), opens two windows and puts into
 * each peer's, then prints "names PID NAME…": the abstract socket names of the RSM
 * segments it has published (see own_names), so the test knows what must be gone.
 * Then, by the argument:
 *
 *   all   every rank sleeps holding a shared lock on a window; the test kills every
 *         rank at once (SIGKILL) and waits for the launcher;
 *   p2p   the ranks exchange messages round a ring without end, and the last rank
 *         kills itself (SIGKILL) in the middle of that; the others are ended by the
 *         library (a dead peer) or the launcher. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "own_names.h"

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "all";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { LONG = 1 << 16 };
    char *out = calloc(LONG, 1), *in = calloc(LONG, 1);
    for (int k = 1; k < size; k++) {
        int to = (rank + k) % size, from = (rank - k + size) % size;
        MPI_Sendrecv(out, 8, MPI_CHAR, to, 1, in, 8, MPI_CHAR, from, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(out, LONG, MPI_CHAR, to, 2, in, LONG, MPI_CHAR, from, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    }
    int *base;
    MPI_Win w1, w2;
    MPI_Win_allocate(1 << 16, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w1);
    int *heap = calloc(4096, sizeof(int));
    MPI_Win_create(heap, 4096 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w2);
    MPI_Win_fence(0, w1);
    for (int p = 0; p < size; p++)
        MPI_Put(&rank, 1, MPI_INT, p, rank, 1, MPI_INT, w1);
    MPI_Win_fence(0, w1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (own_names() <= 0) {
        printf("rank %d published no segment\n", rank);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(mode, "p2p") == 0) {
        int to = (rank + 1) % size, from = (rank - 1 + size) % size;
        for (long i = 0;; i++) {
            if (rank == size - 1 && i == 200)
                raise(SIGKILL);
            int len = (i % 2) ? LONG : 8;
            MPI_Sendrecv(out, len, MPI_CHAR, to, 3, in, len, MPI_CHAR, from, 3, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        }
    }
    MPI_Win_lock(MPI_LOCK_SHARED, (rank + 1) % size, 0, w2);
    MPI_Put(&rank, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, w2);
    MPI_Win_flush((rank + 1) % size, w2);
    printf("ready %d\n", rank);
    fflush(stdout);
    sleep(60); /* the test kills the job long before */
    MPI_Win_unlock((rank + 1) % size, w2);
    MPI_Finalize();
    return 0;
}
