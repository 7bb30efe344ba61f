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
 * Every message carries its round number, checked on arrival.
 * With an argument, the level requested through MPI_Init_thread and what must come
 * back (MPI_Query_thread and MPI_Is_thread_main agree with it):
 *   single     SINGLE given SINGLE: a ping-pong, one thread;
 *   funneled   FUNNELED given FUNNELED: a ping-pong from the main thread while a
 *              second thread, which makes no MPI call but MPI_Is_thread_main (false
 *              there), checks the received values as they come;
 *   multiple   SERIALIZED given for MULTIPLE, then the three steps above.
 * Prints "threads ok <rank>". */
#include "check.h"
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

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

/* FUNNELED: the main thread's ping-pong publishes each round here; the watcher
 * (no MPI call but MPI_Is_thread_main) checks that the rounds only go up. */
static atomic_int last_round = -1, watched, not_main = -1;

static void *watcher(void *arg) {
    (void)arg;
    int flag = -1;
    MPI_Is_thread_main(&flag);
    atomic_store(&not_main, flag);
    int seen = -1;
    while (seen < ROUNDS - 1) {
        int now = atomic_load(&last_round);
        if (now < seen) atomic_store(&not_main, 2); /* went backwards */
        if (now != seen) atomic_fetch_add(&watched, 1);
        seen = now;
        sched_yield();
    }
    return NULL;
}

static void pingpong_published(void) {
    int peer = 1 - rank;
    for (int i = 0; i < ROUNDS; i++) {
        int got = -1;
        if (rank == 0) {
            OK(MPI_Send(&i, 1, MPI_INT, peer, 6, MPI_COMM_WORLD));
            OK(MPI_Recv(&got, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Recv(&got, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Send(&got, 1, MPI_INT, peer, 6, MPI_COMM_WORLD));
        }
        CHECK(got == i, "round %d: got %d", i, got);
        atomic_store(&last_round, got);
    }
}

/* SINGLE or FUNNELED, requested and given: the level is reported truthfully and the
 * program runs at it. */
static void lower_level(int level) {
    int q = -1, main_flag = -1;
    OK(MPI_Query_thread(&q));
    CHECK(q == level, "MPI_Query_thread gave %d, not %d", q, level);
    OK(MPI_Is_thread_main(&main_flag));
    CHECK(main_flag == 1, "MPI_Is_thread_main is %d in the main thread", main_flag);
    if (size != 2) return;
    if (level == MPI_THREAD_SINGLE) {
        pingpong_published();
        return;
    }
    pthread_t t;
    CHECK(pthread_create(&t, NULL, watcher, NULL) == 0, "pthread_create");
    pingpong_published();
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    CHECK(atomic_load(&not_main) == 0, "watcher: MPI_Is_thread_main %d (2: rounds went back)",
          atomic_load(&not_main));
    CHECK(atomic_load(&watched) > 0, "the watcher saw no round");
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "serialized";
    int required = MPI_THREAD_SERIALIZED, want = MPI_THREAD_SERIALIZED;
    if (strcmp(mode, "single") == 0) {
        required = want = MPI_THREAD_SINGLE;
    } else if (strcmp(mode, "funneled") == 0) {
        required = want = MPI_THREAD_FUNNELED;
    } else if (strcmp(mode, "multiple") == 0) {
        required = MPI_THREAD_MULTIPLE; /* not provided: SERIALIZED is the most */
    } else if (strcmp(mode, "serialized") != 0) {
        fprintf(stderr, "threads: unknown mode %s\n", mode);
        return 2;
    }
    int provided = -1;
    MPI_Init_thread(&argc, &argv, required, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == want, "%s: provided %d, not %d", mode, provided, want);
    if (want != MPI_THREAD_SERIALIZED) {
        lower_level(want);
        printf("threads ok %d\n", rank);
        MPI_Finalize();
        return 0;
    }
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
