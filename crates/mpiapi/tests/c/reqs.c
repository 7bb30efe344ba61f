/* The two kinds of request handle (crates/mpiapi/src/p2p_reqs.rs): MPI_Irecv on
 * MPI_COMM_WORLD with a predefined type names the engine's request, other requests
 * a C table entry. Both kinds mixed in one array through every completion call
 * (Waitall, Wait, Test, Testall, Waitany, Testany, Waitsome, Testsome,
 * Request_get_status), cancelled, freed while active, with statuses in the world's
 * ranks; a completed handle used again is refused (MPI_ERR_REQUEST under
 * MPI_ERRORS_RETURN). Needs 2 or more ranks (alone, it prints its line and stops).
 * Prints "reqs ok <rank>". */
#include "check.h"
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, size;

/* Receives: even slots on the world (engine handles), odd ones on a duplicate
 * (table handles); all from `from` with tag base+i, value base+i. */
static void post(MPI_Comm dup, int from, int base, int *buf, MPI_Request *rq, int n) {
    for (int i = 0; i < n; i++)
        OK(MPI_Irecv(&buf[i], 1, MPI_INT, from, base + i, i % 2 ? dup : MPI_COMM_WORLD, &rq[i]));
}

static void send(MPI_Comm dup, int to, int base, int n) {
    for (int i = n - 1; i >= 0; i--) {
        int v = base + i;
        OK(MPI_Send(&v, 1, MPI_INT, to, base + i, i % 2 ? dup : MPI_COMM_WORLD));
    }
}

static void check_got(const int *buf, int base, int n) {
    for (int i = 0; i < n; i++) CHECK(buf[i] == base + i, "slot %d: %d", i, buf[i]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        printf("reqs ok %d\n", rank);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    /* Rank 1 receives from rank 0; the others only take part in the barriers. */
    int me_recv = rank == 1, me_send = rank == 0;
    enum { N = 8 };
    int buf[N];
    MPI_Request rq[N];
    MPI_Status sts[N];

    /* 1. Waitall over both kinds, statuses in world ranks. */
    if (me_recv) {
        memset(buf, 0, sizeof buf);
        post(dup, 0, 100, buf, rq, N);
        for (int i = 0; i < N; i++) CHECK(rq[i] != MPI_REQUEST_NULL, "handle %d null", i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me_send) send(dup, 1, 100, N);
    if (me_recv) {
        OK(MPI_Waitall(N, rq, sts));
        check_got(buf, 100, N);
        for (int i = 0; i < N; i++) {
            CHECK(rq[i] == MPI_REQUEST_NULL, "handle %d not nulled", i);
            CHECK(sts[i].MPI_SOURCE == 0 && sts[i].MPI_TAG == 100 + i, "status %d: %d %d", i,
                  sts[i].MPI_SOURCE, sts[i].MPI_TAG);
        }
    }

    /* 2. Wait and Test one by one; a handle used after completion is refused. */
    if (me_recv) post(dup, 0, 200, buf, rq, N);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me_send) send(dup, 1, 200, N);
    if (me_recv) {
        MPI_Request kept = rq[0];
        for (int i = 0; i < N; i += 2) OK(MPI_Wait(&rq[i], &sts[i]));
        for (int i = 1; i < N; i += 2) {
            int flag = 0;
            while (!flag) OK(MPI_Test(&rq[i], &flag, &sts[i]));
        }
        check_got(buf, 200, N);
        CHECK(sts[2].MPI_SOURCE == 0 && sts[2].MPI_TAG == 202, "wait status");
        int flag;
        CHECK(MPI_Test(&kept, &flag, MPI_STATUS_IGNORE) == MPI_ERR_REQUEST, "stale engine handle");
        CHECK(MPI_Wait(&kept, MPI_STATUS_IGNORE) == MPI_ERR_REQUEST, "stale engine handle (wait)");
        CHECK(MPI_Waitall(1, &kept, MPI_STATUSES_IGNORE) == MPI_ERR_REQUEST, "stale in waitall");
    }

    /* 3. Request_get_status, Testany, Waitany, Testsome, Waitsome, Testall: the
     * general calls, which give engine handles a table entry on the way. */
    if (me_recv) post(dup, 0, 300, buf, rq, N);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me_send) send(dup, 1, 300, N);
    if (me_recv) {
        int flag = 0;
        while (!flag) OK(MPI_Request_get_status(rq[0], &flag, &sts[0]));
        CHECK(rq[0] != MPI_REQUEST_NULL && sts[0].MPI_TAG == 300, "get_status");
        int idx = -1, done = 0;
        while (done < 2) {
            flag = 0;
            OK(MPI_Testany(N, rq, &idx, &flag, MPI_STATUS_IGNORE));
            if (flag && idx != MPI_UNDEFINED) done++;
        }
        OK(MPI_Waitany(N, rq, &idx, &sts[0]));
        CHECK(idx >= 0 && idx < N && rq[idx] == MPI_REQUEST_NULL, "waitany %d", idx);
        int outc = 0, ids[N];
        OK(MPI_Testsome(N, rq, &outc, ids, MPI_STATUSES_IGNORE));
        CHECK(outc != MPI_UNDEFINED, "testsome: no active request left?");
        OK(MPI_Waitsome(N, rq, &outc, ids, sts));
        for (int k = 0; k < outc; k++)
            CHECK(sts[k].MPI_TAG == 300 + ids[k], "waitsome tag %d", sts[k].MPI_TAG);
        flag = 0;
        while (!flag) OK(MPI_Testall(N, rq, &flag, MPI_STATUSES_IGNORE));
        for (int i = 0; i < N; i++) CHECK(rq[i] == MPI_REQUEST_NULL, "left %d", i);
        check_got(buf, 300, N);
    }

    /* 4. Cancel and free: an engine handle cancelled before any message, one freed
     * while active (its message still lands), and after them the fast path again. */
    if (me_recv) {
        int c = -1;
        MPI_Request q;
        OK(MPI_Irecv(&c, 1, MPI_INT, 0, 999, MPI_COMM_WORLD, &q));
        OK(MPI_Cancel(&q));
        MPI_Status st;
        OK(MPI_Wait(&q, &st));
        int cancelled = 0;
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled && c == -1, "cancel: %d %d", cancelled, c);
        static int freed = -1;
        OK(MPI_Irecv(&freed, 1, MPI_INT, 0, 400, MPI_COMM_WORLD, &q));
        OK(MPI_Request_free(&q));
        CHECK(q == MPI_REQUEST_NULL, "free did not null");
        post(dup, 0, 500, buf, rq, N);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me_send) {
        int v = 400;
        OK(MPI_Send(&v, 1, MPI_INT, 1, 400, MPI_COMM_WORLD));
        send(dup, 1, 500, N);
    }
    if (me_recv) {
        OK(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE));
        check_got(buf, 500, N);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&dup);
    printf("reqs ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
