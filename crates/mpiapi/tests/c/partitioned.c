/* MPI-4 partitioned communication between rank pairs (0->1, 2->3, ...; an odd last
 * rank talks to itself): equal and different partition counts on the two sides,
 * partitions marked ready out of order, with Pready, Pready_range and Pready_list,
 * MPI_Parrived polled until every partition is in, a strided datatype, three
 * requests with one tag matched in init order although started in reverse, several
 * rounds of each request, MPI_PROC_NULL, and the errors the calls must return.
 * Every element is checked. Prints "partitioned ok <rank>". */
#include "check.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

static int val(int round, int i) { return round * 100003 + i * 7 + 1; }

/* One partitioned transfer of `total` ints, split in `sp` partitions on the sender
 * and `rp` on the receiver, for `rounds` rounds. */
static void transfer(int peer, int sender, int sp, int rp, int total, int rounds) {
    int *buf = malloc(sizeof(int) * (size_t)total);
    MPI_Request q;
    if (sender)
        OK(MPI_Psend_init(buf, sp, total / sp, MPI_INT, peer, 5, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &q));
    else
        OK(MPI_Precv_init(buf, rp, total / rp, MPI_INT, peer, 5, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &q));
    for (int round = 0; round < rounds; round++) {
        if (!sender)
            for (int i = 0; i < total; i++) buf[i] = -1;
        OK(MPI_Start(&q));
        if (sender) {
            int per = total / sp;
            /* Fill and mark in reverse order, with the three marking calls. */
            for (int p = sp - 1; p >= 0; p--) {
                for (int i = 0; i < per; i++) buf[p * per + i] = val(round, p * per + i);
                if (p % 3 == 0) {
                    OK(MPI_Pready(p, q));
                } else if (p % 3 == 1) {
                    OK(MPI_Pready_range(p, p, q));
                } else {
                    int one[1] = {p};
                    OK(MPI_Pready_list(1, one, q));
                }
            }
            OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            for (int p = 0; p < rp; p++) {
                int flag = 0;
                while (!flag) OK(MPI_Parrived(q, p, &flag));
            }
            MPI_Status st;
            OK(MPI_Wait(&q, &st));
            int n;
            MPI_Get_count(&st, MPI_INT, &n);
            CHECK(n == total && st.MPI_SOURCE == peer && st.MPI_TAG == 5,
                  "status count %d source %d tag %d", n, st.MPI_SOURCE, st.MPI_TAG);
            for (int i = 0; i < total; i++)
                CHECK(buf[i] == val(round, i), "round %d element %d: %d", round, i, buf[i]);
        }
    }
    OK(MPI_Request_free(&q));
    free(buf);
}

/* Three requests with one tag: matched in init order, whatever order they run. */
static void in_init_order(int peer, int sender) {
    enum { N = 64 };
    int bufs[3][N];
    MPI_Request q[3];
    for (int k = 0; k < 3; k++) {
        if (sender) {
            for (int i = 0; i < N; i++) bufs[k][i] = k * 1000 + i;
            OK(MPI_Psend_init(bufs[k], 4, N / 4, MPI_INT, peer, 0, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &q[k]));
        } else {
            OK(MPI_Precv_init(bufs[k], 2, N / 2, MPI_INT, peer, 0, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &q[k]));
        }
    }
    if (sender) {
        for (int k = 2; k >= 0; k--) {
            OK(MPI_Start(&q[k]));
            OK(MPI_Pready_range(0, 3, q[k]));
        }
    } else {
        OK(MPI_Startall(3, q));
    }
    OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
    if (!sender)
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < N; i++)
                CHECK(bufs[k][i] == k * 1000 + i, "request %d element %d: %d", k, i, bufs[k][i]);
    for (int k = 0; k < 3; k++) OK(MPI_Request_free(&q[k]));
}

/* A strided send (every other int) in 8 partitions into a strided receive in 4. */
static void strided(int peer, int sender) {
    enum { N = 48 };
    int wide[2 * N];
    MPI_Datatype vec, every_other;
    OK(MPI_Type_vector(N / 8, 1, 2, MPI_INT, &vec));
    /* Extent 2 * N / 8 ints, so consecutive elements continue the stride. */
    OK(MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * (N / 8) * sizeof(int)), &every_other));
    OK(MPI_Type_commit(&every_other));
    OK(MPI_Type_free(&vec));
    MPI_Request q;
    if (sender) {
        for (int i = 0; i < 2 * N; i++) wide[i] = (i % 2) ? -7 : i / 2 + 50;
        OK(MPI_Psend_init(wide, 8, 1, every_other, peer, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        OK(MPI_Start(&q));
        int list[8] = {7, 0, 6, 1, 5, 2, 4, 3};
        OK(MPI_Pready_list(8, list, q));
    } else {
        /* Strided on both sides: the partitions are readable once MPI_Parrived
         * says so, before the request completes. */
        for (int i = 0; i < 2 * N; i++) wide[i] = -1;
        OK(MPI_Precv_init(wide, 4, 2, every_other, peer, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        OK(MPI_Start(&q));
        for (int p = 3; p >= 0; p--) {
            int flag = 0;
            while (!flag) OK(MPI_Parrived(q, p, &flag));
        }
        for (int i = 0; i < 2 * N; i++)
            CHECK(wide[i] == ((i % 2) ? -1 : i / 2 + 50), "strided %d: %d", i, wide[i]);
    }
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    OK(MPI_Request_free(&q));
    OK(MPI_Type_free(&every_other));
}

static void errors(void) {
    int a[4];
    MPI_Request s, r;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(MPI_Psend_init(a, 0, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s) != MPI_SUCCESS,
          "0 partitions accepted");
    CHECK(MPI_Precv_init(a, 1, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r) != MPI_SUCCESS,
          "MPI_ANY_SOURCE accepted");
    CHECK(MPI_Precv_init(a, 1, 1, MPI_INT, rank, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r) != MPI_SUCCESS,
          "MPI_ANY_TAG accepted");
    OK(MPI_Psend_init(a, 4, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    OK(MPI_Precv_init(a, 2, 2, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    CHECK(MPI_Pready(0, s) != MPI_SUCCESS, "Pready before MPI_Start accepted");
    OK(MPI_Start(&s));
    OK(MPI_Start(&r));
    OK(MPI_Pready(1, s));
    CHECK(MPI_Pready(1, s) != MPI_SUCCESS, "a partition marked ready twice");
    CHECK(MPI_Pready(4, s) != MPI_SUCCESS, "partition 4 of 4 accepted");
    CHECK(MPI_Pready_range(3, 2, s) != MPI_SUCCESS, "an empty range accepted");
    CHECK(MPI_Pready(0, r) != MPI_SUCCESS, "Pready on a receive accepted");
    int flag = 0;
    CHECK(MPI_Parrived(s, 0, &flag) != MPI_SUCCESS, "Parrived on a send accepted");
    CHECK(MPI_Parrived(r, 2, &flag) != MPI_SUCCESS, "partition 2 of 2 accepted");
    OK(MPI_Pready_range(2, 3, s));
    OK(MPI_Pready(0, s));
    MPI_Status st;
    OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL receive from %d", st.MPI_SOURCE);
    OK(MPI_Parrived(r, 1, &flag));
    CHECK(flag, "an inactive request's partition not arrived");
    OK(MPI_Request_free(&s));
    OK(MPI_Request_free(&r));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int alone = (size % 2 == 1 && rank == size - 1);
    int peer = alone ? rank : (rank ^ 1);
    static const int shapes[][3] = {{1, 1, 64}, {8, 8, 64}, {16, 32, 512},
                                    {32, 16, 512}, {4, 1, 1 << 18}};
    for (int k = 0; k < 5; k++) {
        const int *sh = shapes[k];
        if (alone) {
            /* Both halves in one process: the receive first, so it can complete. */
            int total = sh[2];
            int *in = malloc(sizeof(int) * (size_t)total), *out = malloc(sizeof(int) * (size_t)total);
            MPI_Request r, s;
            OK(MPI_Precv_init(in, sh[1], total / sh[1], MPI_INT, rank, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
            OK(MPI_Psend_init(out, sh[0], total / sh[0], MPI_INT, rank, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
            for (int round = 0; round < 2; round++) {
                OK(MPI_Start(&r));
                OK(MPI_Start(&s));
                for (int i = 0; i < total; i++) out[i] = val(round, i);
                OK(MPI_Pready_range(0, sh[0] - 1, s));
                OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
                OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                for (int i = 0; i < total; i++) CHECK(in[i] == val(round, i), "self %d", i);
            }
            OK(MPI_Request_free(&r));
            OK(MPI_Request_free(&s));
            free(in);
            free(out);
        } else {
            transfer(peer, rank % 2 == 0, sh[0], sh[1], sh[2], 3);
        }
    }
    if (!alone) {
        in_init_order(peer, rank % 2 == 0);
        strided(peer, rank % 2 == 0);
    }
    errors();
    MPI_Barrier(MPI_COMM_WORLD);
    printf("partitioned ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
