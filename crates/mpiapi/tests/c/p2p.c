/* myrix MPI test: point-to-point between every pair of ranks, checked byte by
 * byte. Any number of ranks (1 runs the self-send parts). Prints "p2p ok <rank>"
 * per rank; on a failure prints what and exits with the check's number.
 *
 * Covers: Send/Recv at sizes across the short, eager and rendezvous protocols,
 * self-sends, ANY_SOURCE/ANY_TAG with the non-overtaking rule, Ssend, Rsend, Bsend
 * with Buffer_attach/detach, Isend/Irecv with Waitall/Waitany/Waitsome/Testall/
 * Testany/Testsome, Probe/Iprobe, Mprobe/Mrecv/Improbe/Imrecv, Sendrecv(_replace),
 * Cancel of a receive, Request_free, persistent requests, MPI_PROC_NULL, truncation
 * (MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN), Get_count/Get_elements, a vector
 * datatype, and refusals of bad arguments. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(n, cond)                                                        \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "rank %d: check %d failed: %s (line %d)\n", rank, \
                    n, #cond, __LINE__);                                      \
            exit(n);                                                          \
        }                                                                     \
    } while (0)

static unsigned char pattern(int src, int dst, size_t i, int salt)
{
    return (unsigned char)(src * 31 + dst * 17 + (int)(i * 7) + salt * 13 + (int)(i >> 8));
}

static void fill(unsigned char *b, size_t n, int src, int dst, int salt)
{
    for (size_t i = 0; i < n; i++) b[i] = pattern(src, dst, i, salt);
}

static int same(const unsigned char *b, size_t n, int src, int dst, int salt)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pattern(src, dst, i, salt)) return 0;
    return 1;
}

/* Every rank sends to every rank (itself included) at `n` bytes, all at once. */
static void all_pairs(size_t n, int salt)
{
    unsigned char *out = malloc(n * (size_t)size + 1), *in = malloc(n * (size_t)size + 1);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
    MPI_Status *st = malloc(sizeof(MPI_Status) * 2 * (size_t)size);
    for (int p = 0; p < size; p++) {
        fill(out + n * (size_t)p, n, rank, p, salt);
        MPI_Irecv(in + n * (size_t)p, (int)n, MPI_BYTE, p, salt, MPI_COMM_WORLD, &rq[p]);
    }
    for (int p = 0; p < size; p++)
        MPI_Isend(out + n * (size_t)p, (int)n, MPI_BYTE, p, salt, MPI_COMM_WORLD, &rq[size + p]);
    CHECK(2, MPI_Waitall(2 * size, rq, st) == MPI_SUCCESS);
    for (int p = 0; p < size; p++) {
        int c = -1;
        CHECK(3, st[p].MPI_SOURCE == p && st[p].MPI_TAG == salt);
        MPI_Get_count(&st[p], MPI_BYTE, &c);
        CHECK(4, c == (int)n);
        CHECK(5, same(in + n * (size_t)p, n, p, rank, salt));
        CHECK(6, rq[p] == MPI_REQUEST_NULL);
    }
    free(out);
    free(in);
    free(rq);
    free(st);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Status st;
    int c = -1, flag = -1;

    /* 1. Sizes across every protocol, all pairs at once. */
    size_t sizes[] = {0, 1, 8, 63, 64, 200, 1000, 4096, 5000, 65536, 300000, 1 << 21};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) all_pairs(sizes[i], (int)i);

    /* 2. A ring of blocking sends and receives (even ranks send first). */
    {
        int v = rank * 1000, got = -1;
        if (rank % 2 == 0) {
            MPI_Send(&v, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
            MPI_Recv(&got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &st);
        } else {
            MPI_Recv(&got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &st);
            MPI_Send(&v, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
        }
        CHECK(10, got == prev * 1000 && st.MPI_SOURCE == prev && st.MPI_TAG == 7);
    }

    /* 3. Non-overtaking with ANY_TAG: messages from one source in send order. */
    if (size > 1) {
        if (rank == 1) {
            for (int i = 0; i < 50; i++) {
                int v = i;
                MPI_Send(&v, 1, MPI_INT, 0, i % 3, MPI_COMM_WORLD);
            }
        } else if (rank == 0) {
            for (int i = 0; i < 50; i++) {
                int v = -1;
                MPI_Recv(&v, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                CHECK(11, v == i && st.MPI_TAG == i % 3);
            }
        }
        /* Tag selection: the later tag first. */
        if (rank == 1) {
            int a = 1, b = 2;
            MPI_Send(&a, 1, MPI_INT, 0, 100, MPI_COMM_WORLD);
            MPI_Send(&b, 1, MPI_INT, 0, 200, MPI_COMM_WORLD);
        } else if (rank == 0) {
            int a = 0, b = 0;
            MPI_Recv(&b, 1, MPI_INT, 1, 200, MPI_COMM_WORLD, &st);
            MPI_Recv(&a, 1, MPI_INT, 1, 100, MPI_COMM_WORLD, &st);
            CHECK(12, a == 1 && b == 2);
        }
    }

    /* 4. ANY_SOURCE: rank 0 gathers one message from each other rank. */
    if (rank == 0) {
        int seen = 0;
        for (int i = 1; i < size; i++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
            CHECK(13, v == st.MPI_SOURCE * 3 && !(seen & (1 << st.MPI_SOURCE)));
            seen |= 1 << st.MPI_SOURCE;
        }
    } else {
        int v = rank * 3;
        MPI_Send(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
    }

    /* 5. Ssend, Rsend (receive posted before, announced by a message), Bsend. */
    {
        int v = rank, got = -1, go = 0;
        MPI_Request r;
        MPI_Irecv(&got, 1, MPI_INT, prev, 20, MPI_COMM_WORLD, &r);
        MPI_Ssend(&v, 1, MPI_INT, next, 20, MPI_COMM_WORLD);
        MPI_Wait(&r, &st);
        CHECK(14, got == prev);
        MPI_Irecv(&got, 1, MPI_INT, prev, 21, MPI_COMM_WORLD, &r);
        MPI_Sendrecv(&v, 1, MPI_INT, prev, 22, &go, 1, MPI_INT, next, 22, MPI_COMM_WORLD, &st);
        MPI_Rsend(&v, 1, MPI_INT, next, 21, MPI_COMM_WORLD);
        MPI_Wait(&r, &st);
        CHECK(15, got == prev && go == next);
        int bsize = 4 * (int)(sizeof(int) * 100 + MPI_BSEND_OVERHEAD);
        char *bbuf = malloc((size_t)bsize);
        MPI_Buffer_attach(bbuf, bsize);
        int arr[100];
        for (int i = 0; i < 100; i++) arr[i] = rank + i;
        MPI_Bsend(arr, 100, MPI_INT, next, 23, MPI_COMM_WORLD);
        memset(arr, 0, sizeof arr); /* the buffered copy is already taken */
        int in[100];
        MPI_Recv(in, 100, MPI_INT, prev, 23, MPI_COMM_WORLD, &st);
        for (int i = 0; i < 100; i++) CHECK(16, in[i] == prev + i);
        void *back = NULL;
        int bs = 0;
        MPI_Buffer_detach(&back, &bs);
        CHECK(17, back == bbuf && bs == bsize);
        free(bbuf);
    }

    /* 6. Probe, Iprobe, Mprobe/Mrecv, Improbe/Imrecv. */
    {
        int n = 37 + rank;
        char *m = malloc(100);
        memset(m, 'a' + rank, 100);
        MPI_Send(m, n, MPI_CHAR, next, 30, MPI_COMM_WORLD);
        MPI_Probe(prev, 30, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_CHAR, &c);
        CHECK(20, c == 37 + prev && st.MPI_SOURCE == prev);
        MPI_Iprobe(MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &flag, &st);
        CHECK(21, flag == 1);
        MPI_Message msg;
        MPI_Mprobe(prev, 30, MPI_COMM_WORLD, &msg, &st);
        char in[100];
        MPI_Mrecv(in, 100, MPI_CHAR, &msg, &st);
        CHECK(22, msg == MPI_MESSAGE_NULL && in[0] == 'a' + prev && in[c - 1] == 'a' + prev);
        MPI_Send(m, n, MPI_CHAR, next, 31, MPI_COMM_WORLD);
        flag = 0;
        while (!flag) MPI_Improbe(prev, 31, MPI_COMM_WORLD, &flag, &msg, &st);
        MPI_Request r;
        MPI_Imrecv(in, 100, MPI_CHAR, &msg, &r);
        MPI_Wait(&r, &st);
        MPI_Get_count(&st, MPI_CHAR, &c);
        CHECK(23, c == 37 + prev);
        free(m);
    }

    /* 7. Truncation: reported, what fits delivered. */
    {
        int big[10], small[4] = {0, 0, 0, 0};
        for (int i = 0; i < 10; i++) big[i] = i + 1;
        MPI_Request r;
        MPI_Isend(big, 10, MPI_INT, next, 40, MPI_COMM_WORLD, &r);
        int e = MPI_Recv(small, 4, MPI_INT, prev, 40, MPI_COMM_WORLD, &st);
        int cls = -1;
        MPI_Error_class(e, &cls);
        CHECK(24, cls == MPI_ERR_TRUNCATE && small[0] == 1 && small[3] == 4);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }

    /* 8. Cancel an unmatched receive; free a request; PROC_NULL. */
    {
        int x = 0;
        MPI_Request r;
        MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &r);
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK(25, flag == 1);
        int v = 5;
        MPI_Isend(&v, 1, MPI_INT, next, 41, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        CHECK(26, r == MPI_REQUEST_NULL);
        MPI_Recv(&x, 1, MPI_INT, prev, 41, MPI_COMM_WORLD, &st);
        CHECK(27, x == 5);
        MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &c);
        CHECK(28, st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && c == 0);
    }

    /* 9. Waitany / Waitsome / Testall / Testany over a ring exchange. */
    {
        int vals[4], ins[4];
        MPI_Request rq[8];
        for (int i = 0; i < 4; i++) {
            vals[i] = rank * 10 + i;
            MPI_Irecv(&ins[i], 1, MPI_INT, prev, 50 + i, MPI_COMM_WORLD, &rq[i]);
        }
        for (int i = 0; i < 4; i++) MPI_Isend(&vals[i], 1, MPI_INT, next, 50 + i, MPI_COMM_WORLD, &rq[4 + i]);
        int done = 0, idx = -1, outc = 0, ids[8];
        MPI_Waitany(8, rq, &idx, &st);
        CHECK(30, idx >= 0 && idx < 8 && rq[idx] == MPI_REQUEST_NULL);
        done++;
        while (done < 8) {
            MPI_Waitsome(8, rq, &outc, ids, MPI_STATUSES_IGNORE);
            CHECK(31, outc != MPI_UNDEFINED);
            done += outc;
        }
        MPI_Waitsome(8, rq, &outc, ids, MPI_STATUSES_IGNORE);
        CHECK(32, outc == MPI_UNDEFINED);
        for (int i = 0; i < 4; i++) CHECK(33, ins[i] == prev * 10 + i);
        MPI_Testany(8, rq, &idx, &flag, &st);
        CHECK(34, flag == 1 && idx == MPI_UNDEFINED);
        MPI_Testall(8, rq, &flag, MPI_STATUSES_IGNORE);
        CHECK(35, flag == 1);
    }

    /* 10. Persistent requests, started three times. */
    {
        int v = 0, got = -1;
        MPI_Request rq[2];
        MPI_Recv_init(&got, 1, MPI_INT, prev, 60, MPI_COMM_WORLD, &rq[0]);
        MPI_Send_init(&v, 1, MPI_INT, next, 60, MPI_COMM_WORLD, &rq[1]);
        for (int i = 0; i < 3; i++) {
            v = rank * 100 + i;
            MPI_Startall(2, rq);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            CHECK(36, got == prev * 100 + i && rq[0] != MPI_REQUEST_NULL);
        }
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
    }

    /* 11. Sendrecv_replace and a strided vector datatype. */
    {
        int buf[3] = {rank, rank, rank};
        MPI_Sendrecv_replace(buf, 3, MPI_INT, next, 70, prev, 70, MPI_COMM_WORLD, &st);
        CHECK(37, buf[0] == prev && buf[2] == prev);
        MPI_Datatype col;
        MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &col);
        MPI_Type_commit(&col);
        double m[12], r[12];
        for (int i = 0; i < 12; i++) { m[i] = rank * 100 + i; r[i] = -1; }
        MPI_Sendrecv(m, 1, col, next, 71, r, 1, col, prev, 71, MPI_COMM_WORLD, &st);
        for (int i = 0; i < 12; i++) CHECK(38, r[i] == (i % 3 == 0 ? prev * 100 + i : -1));
        MPI_Get_count(&st, col, &c);
        int el = -1;
        MPI_Get_elements(&st, col, &el);
        CHECK(39, c == 1 && el == 4);
        MPI_Type_free(&col);
    }

    /* 12. Refusals: every one an error code, nothing sent. */
    {
        int v = 0;
        CHECK(40, MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD) != MPI_SUCCESS);
        CHECK(41, MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD) != MPI_SUCCESS);
        CHECK(42, MPI_Send(&v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD) != MPI_SUCCESS);
        CHECK(43, MPI_Send(&v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD) != MPI_SUCCESS);
        CHECK(44, MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st) != MPI_SUCCESS);
        MPI_Request bogus = (MPI_Request)(long)0x5123456;
        CHECK(45, MPI_Wait(&bogus, &st) != MPI_SUCCESS);
        CHECK(46, MPI_Isend(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL) != MPI_SUCCESS);
    }

    /* 13. More synchronous (rendezvous) sends in flight to one peer than the
     * receiver's match ring holds, with a derived type: they queue, none is lost. */
    if (size > 1) {
        enum { NSYNC = 200 };
        MPI_Datatype ib;
        int displs[2] = {0, 2}, snd[3] = {rank, -1, rank + 7}, rcv[3];
        MPI_Request rq[NSYNC];
        MPI_Type_create_indexed_block(2, 1, displs, MPI_INT, &ib);
        MPI_Type_commit(&ib);
        if (rank == 0) {
            for (int i = 0; i < NSYNC; i++)
                MPI_Issend(snd, 1, ib, 1, 80, MPI_COMM_WORLD, &rq[i]);
            CHECK(47, MPI_Waitall(NSYNC, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        } else if (rank == 1) {
            for (int i = 0; i < NSYNC; i++) {
                rcv[0] = rcv[2] = -5;
                CHECK(48, MPI_Recv(rcv, 1, ib, 0, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
                CHECK(49, rcv[0] == 0 && rcv[2] == 7);
            }
        }
        MPI_Type_free(&ib);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    printf("p2p ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
