/* Cancelling sends, empty messages of MPI_DATATYPE_NULL, and the MPI-4.1 buffers,
 * on N ranks in a ring (one rank sends to itself).
 *  - A send no receive has matched is cancelled (MPI_Test_cancelled says so) and is
 *    never received: the next message with the same envelope is the one that
 *    arrives. Sizes from 0 to 1 MiB (eager and rendezvous), MPI_Isend / Issend /
 *    Ibsend, on MPI_COMM_WORLD (the fast path) and on a duplicate.
 *  - A send already received is not cancelled.
 *  - MPI_Send/MPI_Recv of count 0 with MPI_DATATYPE_NULL.
 *  - A communicator's buffer, MPI_BUFFER_AUTOMATIC with MPI_Buffer_iflush, a
 *    session's buffer used by a communicator of that session, MPI_ERR_BUFFER with
 *    no buffer attached.
 * Prints "cancel ok <rank>". */
#include "check.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, right, left;

static void fill(unsigned char *b, int n, int id) {
    for (int i = 0; i < n; i++) b[i] = (unsigned char)(id * 31 + i * 7 + (i >> 9));
}

static int same(const unsigned char *b, int n, int id) {
    for (int i = 0; i < n; i++)
        if (b[i] != (unsigned char)(id * 31 + i * 7 + (i >> 9))) return 0;
    return 1;
}

/* Mode 0: Isend, 1: Issend, 2: Ibsend (a buffer must be attached). */
static void isend(int mode, void *b, int n, int tag, MPI_Comm c, MPI_Request *q) {
    if (mode == 0) OK(MPI_Isend(b, n, MPI_BYTE, right, tag, c, q));
    if (mode == 1) OK(MPI_Issend(b, n, MPI_BYTE, right, tag, c, q));
    if (mode == 2) OK(MPI_Ibsend(b, n, MPI_BYTE, right, tag, c, q));
}

/* An unmatched send is retracted: cancelled, and the next one is received. */
static void unmatched(MPI_Comm c, int mode, int n, unsigned char *s, unsigned char *r) {
    int tag = 100 + mode;
    MPI_Request q;
    MPI_Status st;
    int flag;
    fill(s, n, 1);
    isend(mode, s, n, tag, c, &q);
    OK(MPI_Cancel(&q));
    OK(MPI_Wait(&q, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "mode %d, %d bytes: the unmatched send was not cancelled", mode, n);
    /* No receive may be posted before every rank's cancel is settled. */
    OK(MPI_Barrier(c));
    fill(s, n, 2);
    isend(mode, s, n, tag, c, &q);
    OK(MPI_Recv(r, n, MPI_BYTE, left, tag, c, &st));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    int got;
    OK(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECK(got == n && same(r, n, 2), "mode %d: %d bytes received of %d, or not the second message", mode, got, n);
    OK(MPI_Barrier(c));
    OK(MPI_Iprobe(left, tag, c, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "mode %d, %d bytes: a cancelled message arrived", mode, n);
}

/* A send whose message was received completes normally. */
static void matched(MPI_Comm c, int mode, int n, unsigned char *s, unsigned char *r) {
    int tag = 200 + mode, flag;
    MPI_Request qs, qr;
    MPI_Status st;
    OK(MPI_Irecv(r, n, MPI_BYTE, left, tag, c, &qr));
    fill(s, n, 3);
    isend(mode, s, n, tag, c, &qs);
    OK(MPI_Wait(&qr, MPI_STATUS_IGNORE));
    CHECK(same(r, n, 3), "mode %d: bad bytes", mode);
    OK(MPI_Barrier(c));
    OK(MPI_Cancel(&qs));
    OK(MPI_Wait(&qs, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag, "mode %d, %d bytes: a received send said cancelled", mode, n);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    const int big = 1 << 20;
    unsigned char *s = malloc(big), *r = malloc(big);
    /* Room for two: a cancelled send's copy may still be leaving when the next
     * one is made. */
    int bsize = 2 * (big + MPI_BSEND_OVERHEAD);
    char *battach = malloc(bsize);
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));

    static const int lens[] = {0, 8, 1000, 70000, 1 << 20};
    MPI_Comm comms[2] = {MPI_COMM_WORLD, dup};
    OK(MPI_Buffer_attach(battach, bsize));
    for (int ci = 0; ci < 2; ci++)
        for (int mode = 0; mode < 3; mode++)
            for (int k = 0; k < 5; k++) {
                unmatched(comms[ci], mode, lens[k], s, r);
                matched(comms[ci], mode, lens[k], s, r);
            }
    void *b;
    int bs;
    OK(MPI_Buffer_detach(&b, &bs));
    CHECK(b == battach && bs == bsize, "Buffer_detach gave %p %d", b, bs);

    /* Empty messages of MPI_DATATYPE_NULL. */
    MPI_Status st;
    int cnt = -1;
    OK(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, right, 7, NULL, 0, MPI_DATATYPE_NULL, left, 7, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
    CHECK(cnt == 0 && st.MPI_SOURCE == left, "count %d source %d", cnt, st.MPI_SOURCE);
    MPI_Request q;
    OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, left, 8, dup, &q));
    OK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, right, 8, dup));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));

    /* No buffer attached: MPI_ERR_BUFFER. */
    OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    int rc = MPI_Bsend(s, 10, MPI_BYTE, right, 9, dup), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "Bsend without a buffer gave %d", rc);

    /* A communicator's buffer: too small for two sends until flushed. */
    int csize = 1000 + MPI_BSEND_OVERHEAD;
    char *cbuf = malloc(csize);
    OK(MPI_Comm_attach_buffer(dup, cbuf, csize));
    fill(s, 1000, 4);
    OK(MPI_Bsend(s, 1000, MPI_BYTE, right, 10, dup));
    OK(MPI_Recv(r, 1000, MPI_BYTE, left, 10, dup, MPI_STATUS_IGNORE));
    OK(MPI_Comm_flush_buffer(dup));
    OK(MPI_Bsend(s, 1000, MPI_BYTE, right, 11, dup));
    CHECK(same(r, 1000, 4), "bad bytes through the communicator's buffer");
    OK(MPI_Recv(r, 1000, MPI_BYTE, left, 11, dup, MPI_STATUS_IGNORE));
    MPI_Count bsc;
    OK(MPI_Comm_detach_buffer_c(dup, &b, &bsc));
    CHECK(b == cbuf && bsc == csize, "Comm_detach_buffer_c gave %p %lld", b, (long long)bsc);

    /* The automatic buffer, with a nonblocking flush waiting for a rendezvous. */
    OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    fill(s, big, 5);
    OK(MPI_Bsend(s, big, MPI_BYTE, right, 12, MPI_COMM_WORLD));
    OK(MPI_Bsend(s, big, MPI_BYTE, right, 13, MPI_COMM_WORLD));
    memset(s, 0, big);
    OK(MPI_Buffer_iflush(&q));
    OK(MPI_Recv(r, big, MPI_BYTE, left, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(same(r, big, 5), "bad bytes through the automatic buffer");
    OK(MPI_Recv(r, big, MPI_BYTE, left, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    OK(MPI_Buffer_detach(&b, &bs));
    CHECK(b == MPI_BUFFER_AUTOMATIC && bs == 0, "Buffer_detach gave %p %d", b, bs);

    /* A session's buffer, used by a communicator made from its group. */
    MPI_Session ses;
    MPI_Group g;
    MPI_Comm sc;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &ses));
    OK(MPI_Group_from_session_pset(ses, "mpi://WORLD", &g));
    OK(MPI_Comm_create_from_group(g, "cancel.c", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc));
    OK(MPI_Session_attach_buffer(ses, cbuf, csize));
    fill(s, 1000, 6);
    OK(MPI_Bsend(s, 1000, MPI_BYTE, right, 14, sc));
    OK(MPI_Recv(r, 1000, MPI_BYTE, left, 14, sc, MPI_STATUS_IGNORE));
    CHECK(same(r, 1000, 6), "bad bytes through the session's buffer");
    /* Communicators derived from it belong to the session too. */
    MPI_Comm sdup, ssplit, sidup;
    MPI_Request dq;
    OK(MPI_Comm_dup(sc, &sdup));
    OK(MPI_Comm_split(sc, 0, rank, &ssplit));
    OK(MPI_Comm_idup(sc, &sidup, &dq));
    OK(MPI_Wait(&dq, MPI_STATUS_IGNORE));
    MPI_Comm derived[3] = {sdup, ssplit, sidup};
    for (int k = 0; k < 3; k++) {
        OK(MPI_Session_flush_buffer(ses));
        fill(s, 500, 20 + k);
        OK(MPI_Bsend(s, 500, MPI_BYTE, right, 16, derived[k]));
        OK(MPI_Recv(r, 500, MPI_BYTE, left, 16, derived[k], MPI_STATUS_IGNORE));
        CHECK(same(r, 500, 20 + k), "bad bytes through the session's buffer (derived %d)", k);
        OK(MPI_Comm_free(&derived[k]));
    }
    OK(MPI_Session_flush_buffer(ses));
    OK(MPI_Session_detach_buffer(ses, &b, &bs));
    CHECK(b == cbuf && bs == csize, "Session_detach_buffer gave %p %d", b, bs);
    OK(MPI_Comm_free(&sc));
    OK(MPI_Group_free(&g));
    OK(MPI_Session_finalize(&ses));

    /* A buffer attached to a communicator goes with it: communicators made later,
     * which may get its context id back, start without one. */
    for (int k = 0; k < 20; k++) {
        MPI_Comm a, fresh;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
        OK(MPI_Comm_attach_buffer(a, cbuf, csize));
        OK(MPI_Comm_free(&a));
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &fresh));
        OK(MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN));
        rc = MPI_Bsend(s, 10, MPI_BYTE, right, 15, fresh);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_BUFFER, "a freed communicator's buffer reused (%d)", rc);
        OK(MPI_Comm_free(&fresh));
    }

    OK(MPI_Comm_free(&dup));
    free(cbuf);
    free(battach);
    free(s);
    free(r);
    printf("cancel ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
