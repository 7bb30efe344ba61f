/* myrix MPI test, any number of ranks: every nonblocking collective (Ibarrier,
 * Ibcast, Ireduce, Iallreduce, Igather(v), Iscatter(v), Iallgather(v),
 * Ialltoall(v/w), Ireduce_scatter(_block), Iscan, Iexscan) and the blocking
 * MPI_Alltoallw, on MPI_COMM_WORLD and on the world reversed by a split, from every
 * root, with MPI_IN_PLACE, a strided datatype and a non-commutative user op (2x2
 * matrix products: rank order); several collectives outstanding at once, completed
 * by Waitall, Waitany, Testall loops and in reverse order, mixed with blocking
 * collectives; and the progress rule: rank 0 blocks in MPI_Recv from rank 1 while
 * rank 1 waits for an Ibarrier/Iallreduce before it sends, which finishes only if
 * rank 0's receive keeps the collectives moving. Every result is checked exactly
 * (integers) against values computed locally. Prints "icoll ok <rank>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                        \
    do {                                                                                \
        if (!(c)) {                                                                     \
            fprintf(stderr, "icoll.c:%d: rank %d: check failed: %s (n=%d)\n", __LINE__, \
                    wrank, #c, n);                                                      \
            MPI_Abort(MPI_COMM_WORLD, 9);                                               \
        }                                                                               \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS)

static int wrank;

static int val(int r, int i) { return r * 1009 + i * 7 + 1; }

/* 2x2 matrices of unsigned: inout = in x inout. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    unsigned *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        unsigned c0 = a[0] * b[0] + a[1] * b[2], c1 = a[0] * b[1] + a[1] * b[3];
        unsigned c2 = a[2] * b[0] + a[3] * b[2], c3 = a[2] * b[1] + a[3] * b[3];
        b[0] = c0, b[1] = c1, b[2] = c2, b[3] = c3;
    }
}

static void mat(int r, int i, unsigned *m)
{
    m[0] = (unsigned)val(r, i), m[1] = (unsigned)(r + 2), m[2] = (unsigned)(i + 3), m[3] = 1u;
}

/* The product of ranks lo..hi-1's matrices for element i. */
static void matprod(int lo, int hi, int i, unsigned *out)
{
    unsigned t[4];
    mat(hi - 1, i, out);
    for (int r = hi - 2; r >= lo; r--) {
        int one = 1;
        mat(r, i, t);
        matmul(t, out, &one, NULL);
    }
}

static long sum_to(int hi, int i)
{
    long s = 0;
    for (int r = 0; r < hi; r++) s += val(r, i);
    return s;
}

static void test(MPI_Comm comm, int n, MPI_Op nc, MPI_Datatype m4, MPI_Datatype every2)
{
    int me, size;
    OK(MPI_Comm_rank(comm, &me));
    OK(MPI_Comm_size(comm, &size));
    size_t words = (size_t)(n + 8) * size * 2 + 64;
    int *a = malloc(sizeof(int) * words), *b = malloc(sizeof(int) * words);
    unsigned *ma = malloc(16 * n + 16), *mb = malloc(16 * n + 16), *mw = malloc(16 * n + 16);
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
    int *rcounts = malloc(sizeof(int) * size), *rdispls = malloc(sizeof(int) * size);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * size), *rtypes = malloc(sizeof(MPI_Datatype) * size);
    CHECK(a && b && ma && mb && mw && counts && displs && rcounts && rdispls && types && rtypes);
    MPI_Request rq[8];

    OK(MPI_Ibarrier(comm, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(rq[0] == MPI_REQUEST_NULL);

    for (int root = 0; root < size; root++) {
        /* Ibcast, contiguous and strided. */
        for (int i = 0; i < n; i++) a[i] = me == root ? val(root, i) : -1;
        OK(MPI_Ibcast(a, n, MPI_INT, root, comm, &rq[0]));
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) CHECK(a[i] == val(root, i));
        for (int i = 0; i < 2 * n; i++) b[i] = me == root ? val(root, i) : -7;
        OK(MPI_Ibcast(b, n, every2, root, comm, &rq[0]));
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        for (int i = 0; i < 2 * n; i++)
            CHECK(b[i] == (me == root || i % 2 == 0 ? val(root, i) : -7));

        /* Ireduce: sum (in place at the root), and the non-commutative op. */
        for (int i = 0; i < n; i++) a[i] = val(me, i), b[i] = -1;
        if (me == root) {
            OK(MPI_Ireduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_SUM, root, comm, &rq[0]));
        } else {
            OK(MPI_Ireduce(a, NULL, n, MPI_INT, MPI_SUM, root, comm, &rq[0]));
        }
        for (int i = 0; i < n; i++) mat(me, i, ma + 4 * i);
        OK(MPI_Ireduce(ma, mb, n, m4, nc, root, comm, &rq[1]));
        OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        if (me == root) {
            for (int i = 0; i < n; i++) CHECK(a[i] == (int)sum_to(size, i));
            for (int i = 0; i < n; i++) {
                matprod(0, size, i, mw);
                CHECK(memcmp(mw, mb + 4 * i, 16) == 0);
            }
        }

        /* Igather, Igatherv (in place at the root), Iscatter(v). */
        for (int i = 0; i < n + 8; i++) a[i] = val(me, i);
        for (int i = 0; i < n * size; i++) b[i] = -1;
        OK(MPI_Igather(a, n, MPI_INT, b, n, MPI_INT, root, comm, &rq[0]));
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        if (me == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++) CHECK(b[r * n + i] == val(r, i));
        int at = 0;
        for (int r = 0; r < size; r++) counts[r] = (n + r) % 5, displs[r] = at + 1, at += counts[r] + 1;
        for (int i = 0; i < at + 1; i++) b[i] = -1;
        if (me == root) {
            for (int i = 0; i < counts[me]; i++) b[displs[me] + i] = val(me, i);
            OK(MPI_Igatherv(MPI_IN_PLACE, 0, MPI_INT, b, counts, displs, MPI_INT, root, comm, &rq[0]));
        } else {
            OK(MPI_Igatherv(a, counts[me], MPI_INT, NULL, NULL, NULL, MPI_INT, root, comm, &rq[0]));
        }
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        if (me == root)
            for (int r = 0; r < size; r++) {
                CHECK(b[displs[r] - 1] == -1);
                for (int i = 0; i < counts[r]; i++) CHECK(b[displs[r] + i] == val(r, i));
            }
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++) b[r * n + i] = me == root ? val(r, i) : -2;
        for (int i = 0; i < n; i++) a[i] = -3;
        OK(MPI_Iscatter(b, n, MPI_INT, a, n, MPI_INT, root, comm, &rq[0]));
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) CHECK(a[i] == val(me, i));
        for (int r = 0; r < size; r++)
            for (int i = 0; i < counts[r]; i++) b[displs[r] + i] = me == root ? val(r, i) : -2;
        for (int i = 0; i < n + 5; i++) a[i] = -3;
        OK(MPI_Iscatterv(b, counts, displs, MPI_INT, a, counts[me], MPI_INT, root, comm, &rq[0]));
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        for (int i = 0; i < counts[me]; i++) CHECK(a[i] == val(me, i));
        CHECK(a[counts[me]] == -3);
    }

    /* Iallreduce: sum in place, strided, and the non-commutative op. */
    for (int i = 0; i < n; i++) a[i] = val(me, i);
    OK(MPI_Iallreduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_SUM, comm, &rq[0]));
    for (int i = 0; i < 2 * n; i++) b[i] = i % 2 ? -5 : val(me, i / 2);
    OK(MPI_Iallreduce(MPI_IN_PLACE, b, n, every2, MPI_SUM, comm, &rq[1]));
    for (int i = 0; i < n; i++) mat(me, i, ma + 4 * i);
    OK(MPI_Iallreduce(ma, mb, n, m4, nc, comm, &rq[2]));
    /* Completed in reverse order of their start. */
    for (int k = 2; k >= 0; k--) OK(MPI_Wait(&rq[k], MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) CHECK(a[i] == (int)sum_to(size, i));
    for (int i = 0; i < 2 * n; i++) CHECK(b[i] == (i % 2 ? -5 : (int)sum_to(size, i / 2)));
    for (int i = 0; i < n; i++) {
        matprod(0, size, i, mw);
        CHECK(memcmp(mw, mb + 4 * i, 16) == 0);
    }

    /* Iscan and Iexscan, with the non-commutative op too. */
    for (int i = 0; i < n; i++) a[i] = val(me, i), b[i] = -9;
    OK(MPI_Iscan(a, b, n, MPI_INT, MPI_SUM, comm, &rq[0]));
    for (int i = 0; i < n; i++) mat(me, i, ma + 4 * i);
    OK(MPI_Iexscan(ma, mb, n, m4, nc, comm, &rq[1]));
    int idx;
    OK(MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE));
    OK(MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) CHECK(b[i] == (int)sum_to(me + 1, i));
    if (me > 0)
        for (int i = 0; i < n; i++) {
            matprod(0, me, i, mw);
            CHECK(memcmp(mw, mb + 4 * i, 16) == 0);
        }

    /* Iallgather (in place), Iallgatherv. */
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) b[r * n + i] = r == me ? val(me, i) : -1;
    OK(MPI_Iallgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, b, n, MPI_INT, comm, &rq[0])); /* send side ignored */
    int flag = 0;
    while (!flag) OK(MPI_Testall(1, rq, &flag, MPI_STATUSES_IGNORE));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) CHECK(b[r * n + i] == val(r, i));
    int at = 0;
    for (int r = 0; r < size; r++) counts[r] = (n + 2 * r) % 7, displs[r] = at, at += counts[r] + 2;
    for (int i = 0; i < at; i++) b[i] = -1;
    for (int i = 0; i < counts[me]; i++) a[i] = val(me, i);
    OK(MPI_Iallgatherv(a, counts[me], MPI_INT, b, counts, displs, MPI_INT, comm, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    for (int r = 0; r < size; r++) {
        for (int i = 0; i < counts[r]; i++) CHECK(b[displs[r] + i] == val(r, i));
        CHECK(b[displs[r] + counts[r]] == -1);
    }

    /* Ialltoall (and in place), Ialltoallv. */
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) a[r * n + i] = val(me, r * n + i), b[r * n + i] = -1;
    OK(MPI_Ialltoall(a, n, MPI_INT, b, n, MPI_INT, comm, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) CHECK(b[r * n + i] == val(r, me * n + i));
    OK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_INT, b, n, MPI_INT, comm, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) CHECK(b[r * n + i] == val(me, r * n + i));
    /* v: rank s sends (s + d) % 3 + (n > 1) ints to rank d. */
    int sat = 0, rat = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = (me + r) % 3 + (n > 1), displs[r] = sat, sat += counts[r] + 1;
        rcounts[r] = (r + me) % 3 + (n > 1), rdispls[r] = rat, rat += rcounts[r];
    }
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++) a[displs[r] + i] = val(me, 100 * r + i);
    for (int i = 0; i < rat; i++) b[i] = -1;
    OK(MPI_Ialltoallv(a, counts, displs, MPI_INT, b, rcounts, rdispls, MPI_INT, comm, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < rcounts[r]; i++) CHECK(b[rdispls[r] + i] == val(r, 100 * me + i));

    /* Alltoallw, blocking and not: to even ranks strided ints, to odd ones ints;
     * byte displacements. */
    for (int r = 0; r < size; r++) {
        int k = 1 + (n % 3);
        counts[r] = k, rcounts[r] = k;
        types[r] = r % 2 ? MPI_INT : every2;
        rtypes[r] = me % 2 ? MPI_INT : every2;
        displs[r] = (int)sizeof(int) * 2 * 3 * r;
        rdispls[r] = (int)sizeof(int) * 2 * 3 * r;
    }
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i < 6 * size; i++) a[i] = val(me, i), b[i] = -1;
        if (w == 0) {
            OK(MPI_Alltoallw(a, counts, displs, types, b, rcounts, rdispls, rtypes, comm));
        } else {
            OK(MPI_Ialltoallw(a, counts, displs, types, b, rcounts, rdispls, rtypes, comm, &rq[0]));
            OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        }
        int k = 1 + (n % 3);
        for (int r = 0; r < size; r++)
            for (int j = 0; j < k; j++) {
                /* Element j of what rank r sent me (strided if I am even). */
                int sent = val(r, 6 * me + (me % 2 ? j : 2 * j));
                int got = b[6 * r + (me % 2 ? j : 2 * j)];
                CHECK(got == sent);
                if (me % 2 == 0) CHECK(b[6 * r + 2 * j + 1] == -1);
            }
    }

    /* Ireduce_scatter(_block). */
    int total = 0;
    for (int r = 0; r < size; r++) counts[r] = (n + r) % 4, total += counts[r];
    for (int i = 0; i < total; i++) a[i] = val(me, i);
    OK(MPI_Ireduce_scatter(a, b, counts, MPI_INT, MPI_SUM, comm, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    int off = 0;
    for (int r = 0; r < me; r++) off += counts[r];
    for (int i = 0; i < counts[me]; i++) CHECK(b[i] == (int)sum_to(size, off + i));
    for (int i = 0; i < n * size; i++) b[i] = val(me, i);
    OK(MPI_Ireduce_scatter_block(MPI_IN_PLACE, b, n, MPI_INT, MPI_SUM, comm, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) CHECK(b[i] == (int)sum_to(size, me * n + i));

    /* Several at once, mixed with blocking collectives in between. */
    for (int i = 0; i < n; i++) a[i] = val(me, i);
    int x = me + 1, y = 0, z = 0;
    OK(MPI_Iallreduce(a, b, n, MPI_INT, MPI_MAX, comm, &rq[0]));
    OK(MPI_Ibarrier(comm, &rq[1]));
    OK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm, &rq[2]));
    OK(MPI_Allreduce(&x, &z, 1, MPI_INT, MPI_PROD, comm));
    OK(MPI_Barrier(comm));
    OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    long prod = 1;
    for (int r = 0; r < size; r++) prod *= r + 1;
    CHECK(z == (int)prod);
    CHECK(y == size * (size + 1) / 2);
    for (int i = 0; i < n; i++) CHECK(b[i] == val(size - 1, i));

    free(a), free(b), free(ma), free(mb), free(mw), free(counts), free(displs);
    free(rcounts), free(rdispls), free(types), free(rtypes);
}

/* Rank 0 blocks in MPI_Recv from rank 1 while rank 1 first waits for the
 * nonblocking collectives: they finish only if rank 0's receive progresses them. */
static void progress_rule(void)
{
    int me, size, n = 0;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size < 2) return;
    for (int round = 0; round < 20; round++) {
        MPI_Request rq[2];
        int x = me + round, y = -1, msg = -1;
        OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]));
        OK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[1]));
        if (me == 0) {
            OK(MPI_Recv(&msg, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(msg == 1000 + round);
            OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        } else {
            OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            if (me == 1) {
                msg = 1000 + round;
                OK(MPI_Send(&msg, 1, MPI_INT, 0, 77, MPI_COMM_WORLD));
            }
        }
        CHECK(y == size * (size - 1) / 2 + size * round);
    }
}

int main(int argc, char **argv)
{
    int n = 0;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    int size;
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Op nc;
    OK(MPI_Op_create(matmul, 0, &nc));
    MPI_Datatype m4, every2;
    OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &m4));
    OK(MPI_Type_commit(&m4));
    OK(MPI_Type_vector(1, 1, 2, MPI_INT, &every2));
    MPI_Datatype every2r;
    OK(MPI_Type_create_resized(every2, 0, 2 * sizeof(int), &every2r));
    OK(MPI_Type_commit(&every2r));

    progress_rule();
    MPI_Comm rev;
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - wrank, &rev));
    int sizes[] = {1, 5, 300, 5000};
    for (int k = 0; k < 4; k++) {
        n = sizes[k];
        test(MPI_COMM_WORLD, n, nc, m4, every2r);
        test(rev, n, nc, m4, every2r);
    }
    OK(MPI_Comm_free(&rev));
    OK(MPI_Type_free(&m4));
    OK(MPI_Type_free(&every2));
    OK(MPI_Type_free(&every2r));
    OK(MPI_Op_free(&nc));
    printf("icoll ok %d\n", wrank);
    OK(MPI_Finalize());
    return 0;
}
