/* The runtime's lock is biased toward the thread that called MPI_Init
 * (crates/mpiapi/src/rtlock.rs): that thread takes it without a locked instruction,
 * and the first call from another thread revokes the bias for good. Checked here
 * under MPI_THREAD_SERIALIZED, on 2 ranks (alone: prints its line and stops):
 *   1. the main thread ping-pongs (biased path) while a second thread probes the
 *      world for a tag nobody sends, concurrently (beyond SERIALIZED's promise: the
 *      library must still serialize the calls, and lose or corrupt nothing);
 *   2. after the join, a ping-pong from the main thread again (the bias is gone);
 *   3. a ping-pong from a new thread while the main thread waits for it (a correct
 *      SERIALIZED hand-off).
 * Every message carries its round number, checked on arrival. Prints
 * "threads ok <rank>". */
#include "check.h"
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

static int rank, size;

#define ROUNDS 3000

static void pingpong(int base) {
    int peer = 1 - rank;
    for (int i = 0; i < ROUNDS; i++) {
        int v = base + i, got = -1;
        if (rank == 0) {
            OK(MPI_Send(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
            OK(MPI_Recv(&got, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Recv(&got, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Send(&got, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
        }
        CHECK(got == v, "round %d: got %d", v, got);
    }
}

static atomic_int stop, probes;

static void *prober(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        int flag = 1;
        OK(MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "a probe for tag 77 matched");
        atomic_fetch_add(&probes, 1);
    }
    return NULL;
}

static void *ponger(void *arg) {
    (void)arg;
    pingpong(2 * ROUNDS);
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_SERIALIZED, "provided %d", provided);
    if (size != 2) {
        printf("threads ok %d\n", rank);
        MPI_Finalize();
        return 0;
    }
    pthread_t t;
    CHECK(pthread_create(&t, NULL, prober, NULL) == 0, "pthread_create");
    pingpong(0);
    while (atomic_load(&probes) == 0) sched_yield(); /* it got in at least once */
    atomic_store(&stop, 1);
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    pingpong(ROUNDS);
    CHECK(pthread_create(&t, NULL, ponger, NULL) == 0, "pthread_create");
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("threads ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
