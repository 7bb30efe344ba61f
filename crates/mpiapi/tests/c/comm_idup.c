/* MPI_Comm_idup and MPI_Comm_idup_with_info, nonblocking: several duplicates in
 * flight on one communicator at once; duplicates of three overlapping
 * communicators started in opposite orders on different ranks (which a blocking
 * duplicate deadlocks on); an idup overlapping a nonblocking allreduce and a
 * blocking MPI_Comm_dup; an intercommunicator; attributes copied and info
 * attached. Every new
 * communicator must carry traffic of its own after its request completes:
 * messages sent with one tag on all of them arrive on the right one.
 * Prints "comm_idup ok <rank>" at the end; any failure aborts with a message. */
#include "check.h"
#include <string.h>

static int rank, size;

/* A ring exchange and an allreduce on c, with values naming c (k). */
static void works(MPI_Comm c, int k) {
    int r, n;
    OK(MPI_Comm_rank(c, &r));
    OK(MPI_Comm_size(c, &n));
    int out = 1000 * k + r, in = -1;
    OK(MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, 0, &in, 1, MPI_INT,
                    (r + n - 1) % n, 0, c, MPI_STATUS_IGNORE));
    CHECK(in == 1000 * k + (r + n - 1) % n, "ring on %d got %d", k, in);
    int sum = 0;
    OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "allreduce on %d: %d", k, sum);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* An attribute that must be copied, and a request that completes. */
    int key, val = 42, *got, flag;
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, &val));
    MPI_Comm one;
    MPI_Request r;
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &one, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL, "request not freed");
    int cmp;
    OK(MPI_Comm_compare(one, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare %d", cmp);
    OK(MPI_Comm_get_attr(one, key, &got, &flag));
    CHECK(flag && *got == 42, "attribute not copied");
    works(one, 1);

    /* Eight in flight on one communicator, posted before any is waited for,
     * traffic with one tag on each, in reverse order of creation. */
    enum { N = 8 };
    MPI_Comm cs[N];
    MPI_Request rs[N];
    for (int k = 0; k < N; k++) OK(MPI_Comm_idup(one, &cs[k], &rs[k]));
    OK(MPI_Waitall(N, rs, MPI_STATUSES_IGNORE));
    int ins[N], outs[N];
    MPI_Request xs[2 * N];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int k = N - 1; k >= 0; k--) {
        outs[k] = 100 * k + rank;
        OK(MPI_Irecv(&ins[k], 1, MPI_INT, left, 7, cs[k], &xs[k]));
    }
    for (int k = 0; k < N; k++)
        OK(MPI_Isend(&outs[k], 1, MPI_INT, right, 7, cs[k], &xs[N + k]));
    OK(MPI_Waitall(2 * N, xs, MPI_STATUSES_IGNORE));
    for (int k = 0; k < N; k++) {
        CHECK(ins[k] == 100 * k + left, "comm %d got %d", k, ins[k]);
        works(cs[k], 10 + k);
    }

    /* Three overlapping communicators (two of every rank, and a halves split)
     * duplicated in opposite orders by even and odd ranks, which a blocking
     * duplicate deadlocks on, then waited in yet another order. */
    MPI_Comm other, half, d[3];
    OK(MPI_Comm_dup(one, &other));
    OK(MPI_Comm_split(one, rank % 2, rank, &half));
    MPI_Comm from[3] = {one, other, half};
    MPI_Request three[3];
    for (int k = 0; k < 3; k++) {
        int j = rank % 2 == 0 ? k : 2 - k;
        OK(MPI_Comm_idup(from[j], &d[j], &three[j]));
    }
    for (int k = 0; k < 3; k++)
        OK(MPI_Wait(&three[(k + rank) % 3], MPI_STATUS_IGNORE));
    for (int k = 0; k < 3; k++) works(d[k], 20 + k);

    /* In flight across a nonblocking allreduce and a blocking dup of the parent,
     * with info; the blocking dup and the idup must get different contexts. */
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPI_Comm e, b;
    MPI_Request ra[2];
    int one_v = 1, total = 0;
    OK(MPI_Comm_idup_with_info(one, info, &e, &ra[0]));
    OK(MPI_Iallreduce(&one_v, &total, 1, MPI_INT, MPI_SUM, one, &ra[1]));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    OK(MPI_Waitall(2, ra, MPI_STATUSES_IGNORE));
    CHECK(total == size, "iallreduce %d", total);
    MPI_Info used;
    char v[16];
    OK(MPI_Comm_get_info(e, &used));
    OK(MPI_Info_get_string(used, "mpi_assert_no_any_tag", &(int){16}, v, &flag));
    CHECK(flag && strcmp(v, "true") == 0, "info not attached");
    OK(MPI_Info_free(&used));
    OK(MPI_Info_free(&info));
    int eo = rank, bo = -rank - 1, ei = -7, bi = -7;
    MPI_Request eb[4];
    OK(MPI_Irecv(&ei, 1, MPI_INT, left, 3, e, &eb[0]));
    OK(MPI_Irecv(&bi, 1, MPI_INT, left, 3, b, &eb[1]));
    OK(MPI_Isend(&bo, 1, MPI_INT, right, 3, b, &eb[2]));
    OK(MPI_Isend(&eo, 1, MPI_INT, right, 3, e, &eb[3]));
    OK(MPI_Waitall(4, eb, MPI_STATUSES_IGNORE));
    CHECK(ei == left && bi == -left - 1, "idup/dup crossed: %d %d", ei, bi);

    /* An idup of MPI_COMM_SELF. */
    MPI_Comm s;
    OK(MPI_Comm_idup(MPI_COMM_SELF, &s, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    works(s, 30);

    /* An intercommunicator (even ranks facing odd ones), duplicated while the
     * local leader waits in a receive for every other remote rank, which call
     * MPI_Comm_idup before they send. */
    if (size >= 2) {
        MPI_Comm local, ic, icd;
        OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
        OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 99,
                                &ic));
        int lr, rsz, x = -1;
        OK(MPI_Comm_rank(ic, &lr));
        OK(MPI_Comm_remote_size(ic, &rsz));
        if (lr == 0) {
            for (int k = 1; k < rsz; k++)
                OK(MPI_Recv(&x, 1, MPI_INT, k, 5, ic, MPI_STATUS_IGNORE));
            OK(MPI_Comm_idup(ic, &icd, &r));
        } else {
            OK(MPI_Comm_idup(ic, &icd, &r));
            OK(MPI_Ssend(&lr, 1, MPI_INT, 0, 5, ic));
        }
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        int sum = -1;
        OK(MPI_Allreduce(&lr, &sum, 1, MPI_INT, MPI_SUM, icd));
        CHECK(sum == rsz * (rsz - 1) / 2, "intercommunicator allreduce %d", sum);
        OK(MPI_Comm_test_inter(icd, &flag));
        CHECK(flag, "not an intercommunicator");
        MPI_Comm ics[] = {icd, ic, local};
        for (int k = 0; k < 3; k++) OK(MPI_Comm_free(&ics[k]));
    }

    MPI_Comm all[] = {one, other, half, d[0], d[1], d[2], e, b, s};
    for (unsigned k = 0; k < sizeof all / sizeof all[0]; k++) OK(MPI_Comm_free(&all[k]));
    for (int k = 0; k < N; k++) OK(MPI_Comm_free(&cs[k]));
    CHECK(MPI_Comm_idup(MPI_COMM_WORLD, NULL, &r) == MPI_ERR_ARG, "NULL newcomm");
    OK(MPI_Comm_free_keyval(&key));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("comm_idup ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
