/* myrix MPI test, any number of ranks: every collective that can go through
 * shared memory (barrier, bcast, reduce, allreduce, gather, scatter, allgather(v),
 * alltoall) and the others (scan, reduce_scatter_block) on MPI_COMM_WORLD and on
 * split communicators (halves, and all ranks in reverse order), at sizes from one
 * element to several shared-memory slots, from every root, with a non-commutative
 * user op (2x2 matrix products: rank order), MPI_IN_PLACE and a strided datatype;
 * every result checked against values computed locally. Prints
 * "coll_ranks ok <rank>" at the end; run it with MYRIX_MPI_COLL=p2p and =shm. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                        \
    do {                                                                                \
        if (!(c)) {                                                                     \
            fprintf(stderr, "coll_ranks.c:%d: rank %d: check failed: %s (n=%d)\n",      \
                    __LINE__, wrank, #c, n);                                            \
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

static void test(MPI_Comm comm, int n, MPI_Op nc, MPI_Datatype m4)
{
    int me, size;
    OK(MPI_Comm_rank(comm, &me));
    OK(MPI_Comm_size(comm, &size));
    int *a = malloc(sizeof(int) * n * size), *b = malloc(sizeof(int) * n * size);
    unsigned *ma = malloc(16 * n), *mb = malloc(16 * n), *mw = malloc(16 * n), *mt = malloc(16 * n);
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
    CHECK(a && b && ma && mb && mw && mt && counts && displs);

    OK(MPI_Barrier(comm));
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < n; i++) a[i] = me == root ? val(root, i) : -1;
        OK(MPI_Bcast(a, n, MPI_INT, root, comm));
        for (int i = 0; i < n; i++) CHECK(a[i] == val(root, i));

        for (int i = 0; i < n; i++) a[i] = val(me, i), b[i] = -1;
        OK(MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, root, comm));
        if (me == root)
            for (int i = 0; i < n; i++) {
                int s = 0;
                for (int r = 0; r < size; r++) s += val(r, i);
                CHECK(b[i] == s);
            }

        for (int i = 0; i < n; i++) mat(me, i, ma + 4 * i);
        OK(MPI_Reduce(ma, mb, n, m4, nc, root, comm));
        if (me == root)
            for (int i = 0; i < n; i++) {
                mat(0, i, mw + 4 * i);
                for (int r = 1; r < size; r++) {
                    mat(r, i, mt + 4 * i);
                    int one = 1;
                    matmul(mw + 4 * i, mt + 4 * i, &one, NULL); /* mt = acc x m_r */
                    memcpy(mw + 4 * i, mt + 4 * i, 16);
                }
                CHECK(memcmp(mb + 4 * i, mw + 4 * i, 16) == 0);
            }

        /* gather / scatter from this root */
        for (int i = 0; i < n; i++) a[i] = val(me, i);
        OK(MPI_Gather(a, n, MPI_INT, b, n, MPI_INT, root, comm));
        if (me == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++) CHECK(b[r * n + i] == val(r, i));
        if (me == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++) b[r * n + i] = val(r, i) + 5;
        OK(MPI_Scatter(b, n, MPI_INT, a, n, MPI_INT, root, comm));
        for (int i = 0; i < n; i++) CHECK(a[i] == val(me, i) + 5);
    }

    /* allreduce: sum, in place, max of doubles, the non-commutative op */
    for (int i = 0; i < n; i++) a[i] = val(me, i);
    OK(MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, comm));
    OK(MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < n; i++) {
        int s = 0;
        for (int r = 0; r < size; r++) s += val(r, i);
        CHECK(b[i] == s && a[i] == s);
    }
    double *d = (double *)ma, *dd = (double *)mb; /* 2n doubles fit in 16n bytes */
    for (int i = 0; i < n; i++) d[i] = (double)((me * 31 + i) % (size + 3));
    OK(MPI_Allreduce(d, dd, n, MPI_DOUBLE, MPI_MAX, comm));
    for (int i = 0; i < n; i++) {
        double want = 0;
        for (int r = 0; r < size; r++) {
            double v = (double)((r * 31 + i) % (size + 3));
            if (v > want) want = v;
        }
        CHECK(dd[i] == want);
    }
    for (int i = 0; i < n; i++) mat(me, i, ma + 4 * i);
    OK(MPI_Allreduce(ma, mb, n, m4, nc, comm));
    for (int i = 0; i < n; i++) {
        mat(0, i, mw + 4 * i);
        for (int r = 1; r < size; r++) {
            int one = 1;
            mat(r, i, mt + 4 * i);
            matmul(mw + 4 * i, mt + 4 * i, &one, NULL);
            memcpy(mw + 4 * i, mt + 4 * i, 16);
        }
        CHECK(memcmp(mb + 4 * i, mw + 4 * i, 16) == 0);
    }

    /* allgather, allgather in place, allgatherv with uneven counts */
    for (int i = 0; i < n; i++) a[i] = val(me, i);
    OK(MPI_Allgather(a, n, MPI_INT, b, n, MPI_INT, comm));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) CHECK(b[r * n + i] == val(r, i));
    for (int i = 0; i < n * size; i++) b[i] = i / n == me ? val(me, i % n) : -1;
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, n, MPI_INT, comm));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) CHECK(b[r * n + i] == val(r, i));
    int at = 0;
    for (int r = 0; r < size; r++) counts[r] = (n * (r + 1)) / size, displs[r] = at, at += counts[r];
    OK(MPI_Allgatherv(a, counts[me], MPI_INT, b, counts, displs, MPI_INT, comm));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++) CHECK(b[displs[r] + i] == val(r, i));

    /* alltoall: block q of rank r is val(r * size + q, i) */
    int per = n / size > 0 ? n / size : 1;
    int *s2 = malloc(sizeof(int) * per * size), *r2 = malloc(sizeof(int) * per * size);
    CHECK(s2 && r2);
    for (int q = 0; q < size; q++)
        for (int i = 0; i < per; i++) s2[q * per + i] = val(me * size + q, i);
    OK(MPI_Alltoall(s2, per, MPI_INT, r2, per, MPI_INT, comm));
    for (int q = 0; q < size; q++)
        for (int i = 0; i < per; i++) CHECK(r2[q * per + i] == val(q * size + me, i));
    free(s2);
    free(r2);

    /* bcast of a strided type (every other int): the packed path */
    MPI_Datatype every2;
    OK(MPI_Type_vector(n, 1, 2, MPI_INT, &every2));
    OK(MPI_Type_commit(&every2));
    int *w = malloc(sizeof(int) * 2 * n);
    CHECK(w);
    for (int i = 0; i < 2 * n; i++) w[i] = me == 0 ? val(0, i) : -2;
    OK(MPI_Bcast(w, 1, every2, 0, comm));
    for (int i = 0; i < 2 * n; i++) CHECK(w[i] == (i % 2 == 0 || me == 0 ? val(0, i) : -2));
    OK(MPI_Type_free(&every2));
    free(w);

    /* scan and reduce_scatter_block (point-to-point) */
    for (int i = 0; i < n; i++) a[i] = val(me, i);
    OK(MPI_Scan(a, b, n, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < n; i++) {
        int s = 0;
        for (int r = 0; r <= me; r++) s += val(r, i);
        CHECK(b[i] == s);
    }
    OK(MPI_Barrier(comm));
    free(a), free(b), free(ma), free(mb), free(mw), free(mt), free(counts), free(displs);
}

int main(int argc, char **argv)
{
    int n = 0, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op nc;
    MPI_Datatype m4;
    OK(MPI_Op_create(matmul, 0, &nc));
    OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &m4));
    OK(MPI_Type_commit(&m4));
    static const int sizes[] = {1, 2, 13, 1000, 9000, 70000};
    for (unsigned k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        n = sizes[k];
        test(MPI_COMM_WORLD, n, nc, m4);
        MPI_Comm half, rev;
        OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half));
        test(half, n, nc, m4);
        OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - wrank, &rev));
        test(rev, n, nc, m4);
        OK(MPI_Comm_free(&half));
        OK(MPI_Comm_free(&rev));
    }
    OK(MPI_Op_free(&nc));
    OK(MPI_Type_free(&m4));
    printf("coll_ranks ok %d\n", wrank);
    MPI_Finalize();
    return 0;
}
