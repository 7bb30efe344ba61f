/* One-element accumulates on N ranks (the library's one-element fast path and the
 * general path it must agree with), every result checked:
 *   pairs     every pair type (MPI_FLOAT_INT, DOUBLE_INT, LONG_INT, 2INT,
 *             SHORT_INT, LONG_DOUBLE_INT): concurrent MAXLOC and MINLOC by
 *             Accumulate, Fetch_and_op and Get_accumulate from every rank to one
 *             location; then concurrent MPI_REPLACE by Fetch_and_op with
 *             MPI_NO_OP reads, where every value seen must be one a rank wrote
 *             whole (value and index of the same write: never torn).
 *   basics    MPI_REPLACE then MPI_NO_OP by Fetch_and_op and Get_accumulate, and
 *             an Accumulate REPLACE read back by MPI_Get, on integer, floating,
 *             long double and complex types.
 *   concurrent every rank adds to the same locations of rank 0 at once:
 *             Accumulate SUM on a long long, Fetch_and_op SUM on a double,
 *             Get_accumulate SUM on an int at a misaligned address (the
 *             accumulate lock's path), a Compare_and_swap increment loop; the
 *             totals are exact and every fetched ticket is distinct.
 *   errors    under MPI_ERRORS_RETURN: an op not defined on the type
 *             (MPI_ERR_OP), Compare_and_swap on a double (MPI_ERR_TYPE), a
 *             displacement past the end (MPI_ERR_RMA_RANGE), no epoch
 *             (MPI_ERR_RMA_SYNC), a rank out of range (MPI_ERR_RANK),
 *             MPI_PROC_NULL (nothing done, MPI_SUCCESS).
 * Prints "rma_one ok <rank>" when everything passed. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITER 300

static int rank, size;

#include "check.h"

/* A pair type's element as the C struct the standard gives it, read and written
 * through its value as a double (every value used is exact in each type). */
typedef struct {
    MPI_Datatype dt;
    const char *name;
    size_t extent;
    void (*set)(void *, double, int);
    void (*get)(const void *, double *, int *);
} pair_t;

#define PAIR(T, NAME)                                                          \
    typedef struct { T v; int i; } NAME##_t;                                   \
    static void NAME##_set(void *p, double v, int i) {                         \
        NAME##_t e;                                                            \
        memset(&e, 0, sizeof e);                                               \
        e.v = (T)v;                                                            \
        e.i = i;                                                               \
        memcpy(p, &e, sizeof e);                                               \
    }                                                                          \
    static void NAME##_get(const void *p, double *v, int *i) {                 \
        NAME##_t e;                                                            \
        memcpy(&e, p, sizeof e);                                               \
        *v = (double)e.v;                                                      \
        *i = e.i;                                                              \
    }
PAIR(float, fi)
PAIR(double, di)
PAIR(long, li)
PAIR(int, ii)
PAIR(short, si)
PAIR(long double, ldi)

static const pair_t pairs[] = {
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", sizeof(fi_t), fi_set, fi_get},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", sizeof(di_t), di_set, di_get},
    {MPI_LONG_INT, "MPI_LONG_INT", sizeof(li_t), li_set, li_get},
    {MPI_2INT, "MPI_2INT", sizeof(ii_t), ii_set, ii_get},
    {MPI_SHORT_INT, "MPI_SHORT_INT", sizeof(si_t), si_set, si_get},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(ldi_t), ldi_set, ldi_get},
};

static void pair_ops(const pair_t *p) {
    unsigned char *mem;
    MPI_Win win;
    /* Slots: 0 MAXLOC, 1 MINLOC, 2 REPLACE. */
    OK(MPI_Win_allocate(3 * p->extent, (int)p->extent, MPI_INFO_NULL,
                        MPI_COMM_WORLD, &mem, &win));
    p->set(mem, 0, -1);
    p->set(mem + p->extent, 1000, -1);
    p->set(mem + 2 * p->extent, -1, -1);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char mine[64], old[64];
    double v;
    int i;
    OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < ITER; k++) {
        /* Values rank + k*size: the largest is the last iteration of the last
         * rank, the smallest (negated in MINLOC's slot) rank 0's first. */
        int val = rank + k * size;
        p->set(mine, val % 100, val);
        switch (k % 3) {
        case 0:
            OK(MPI_Accumulate(mine, 1, p->dt, 0, 0, 1, p->dt, MPI_MAXLOC, win));
            break;
        case 1:
            OK(MPI_Fetch_and_op(mine, old, p->dt, 0, 0, MPI_MAXLOC, win));
            p->get(old, &v, &i);
            CHECK(i == -1 || (int)v == i % 100, "%s MAXLOC old (%g, %d)", p->name,
                  v, i);
            break;
        default:
            OK(MPI_Get_accumulate(mine, 1, p->dt, old, 1, p->dt, 0, 0, 1, p->dt,
                                  MPI_MAXLOC, win));
            p->get(old, &v, &i);
            CHECK(i == -1 || (int)v == i % 100, "%s MAXLOC old (%g, %d)", p->name,
                  v, i);
        }
        p->set(mine, 100 + val % 50, val);
        OK(MPI_Fetch_and_op(mine, old, p->dt, 0, 1, MPI_MINLOC, win));
        /* REPLACE whole elements, read back whole by NO_OP: value and index always
         * of one write. */
        p->set(mine, val % 1000, val);
        OK(MPI_Fetch_and_op(mine, old, p->dt, 0, 2, MPI_REPLACE, win));
        p->get(old, &v, &i);
        CHECK((i == -1 && v == -1) || (i >= 0 && (int)v == i % 1000),
              "%s REPLACE old (%g, %d): torn", p->name, v, i);
        OK(MPI_Fetch_and_op(NULL, old, p->dt, 0, 2, MPI_NO_OP, win));
        p->get(old, &v, &i);
        CHECK((i == -1 && v == -1) || (i >= 0 && (int)v == i % 1000),
              "%s NO_OP read (%g, %d): torn", p->name, v, i);
        OK(MPI_Win_flush(0, win));
    }
    OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        /* MAXLOC: the largest value is 99; ties go to the smallest index. */
        int best = -1;
        for (int k = 0; k < ITER && best < 0; k++)
            for (int r = 0; r < size; r++)
                if ((r + k * size) % 100 == 99) {
                    best = r + k * size;
                    break;
                }
        p->get(mem, &v, &i);
        CHECK(v == 99 && i == best, "%s MAXLOC (%g, %d), want (99, %d)", p->name, v,
              i, best);
        /* MINLOC: 100 + val % 50 is smallest (100) first at val 0. */
        p->get(mem + p->extent, &v, &i);
        CHECK(v == 100 && i == 0, "%s MINLOC (%g, %d), want (100, 0)", p->name, v,
              i);
        p->get(mem + 2 * p->extent, &v, &i);
        CHECK(i >= 0 && (int)v == i % 1000,
              "%s REPLACE left (%g, %d)", p->name, v, i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_free(&win));
}

/* REPLACE then NO_OP on one element of basic types, to the next rank. */
static void basics(void) {
    static const MPI_Datatype types[] = {
        MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG_LONG, MPI_UNSIGNED_LONG,
        MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_C_DOUBLE_COMPLEX, MPI_INT64_T,
    };
    unsigned char *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(4 * 32, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, 4 * 32);
    MPI_Barrier(MPI_COMM_WORLD);
    int t = (rank + 1) % size;
    OK(MPI_Win_lock_all(0, win));
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        int sz;
        MPI_Type_size(types[k], &sz);
        CHECK(sz <= 32, "type %zu size %d", k, sz);
        unsigned char a[32], b[32], old[32], got[32];
        for (int j = 0; j < sz; j++) {
            a[j] = (unsigned char)(rank * 7 + j + 1 + k);
            b[j] = (unsigned char)(rank * 11 + 3 * j + 2 + k);
        }
        /* long double has padding bytes the library need not keep: compare the
         * value bytes only (10 on x86-64). */
        int cmp = types[k] == MPI_LONG_DOUBLE ? 10 : sz;
        if (types[k] == MPI_LONG_DOUBLE || types[k] == MPI_C_DOUBLE_COMPLEX ||
            types[k] == MPI_FLOAT || types[k] == MPI_DOUBLE) {
            /* Valid numbers (REPLACE moves bytes, but keep them meaningful). */
            if (types[k] == MPI_FLOAT) { float f = 1.5f + rank; memcpy(a, &f, 4); f = -2.25f; memcpy(b, &f, 4); }
            if (types[k] == MPI_DOUBLE) { double d = 3.5 + rank; memcpy(a, &d, 8); d = -4.75; memcpy(b, &d, 8); }
            if (types[k] == MPI_LONG_DOUBLE) { long double l = 5.5L + rank; memset(a, 0, 32); memcpy(a, &l, sizeof l); l = -6.25L; memset(b, 0, 32); memcpy(b, &l, sizeof l); }
            if (types[k] == MPI_C_DOUBLE_COMPLEX) { double d[2] = {1 + rank, -2}; memcpy(a, d, 16); d[0] = 7; d[1] = 8.5; memcpy(b, d, 16); }
        }
        MPI_Aint at = 32 * (MPI_Aint)(k % 4);
        /* Fetch_and_op REPLACE: the old value is what the previous round left. */
        OK(MPI_Fetch_and_op(a, old, types[k], t, at, MPI_REPLACE, win));
        OK(MPI_Fetch_and_op(NULL, got, types[k], t, at, MPI_NO_OP, win));
        CHECK(memcmp(got, a, cmp) == 0, "type %zu: NO_OP read after REPLACE", k);
        /* Get_accumulate REPLACE returns a. */
        OK(MPI_Get_accumulate(b, 1, types[k], old, 1, types[k], t, at, 1, types[k],
                              MPI_REPLACE, win));
        CHECK(memcmp(old, a, cmp) == 0, "type %zu: Get_accumulate REPLACE old", k);
        OK(MPI_Get_accumulate(NULL, 0, types[k], got, 1, types[k], t, at, 1,
                              types[k], MPI_NO_OP, win));
        CHECK(memcmp(got, b, cmp) == 0, "type %zu: Get_accumulate NO_OP", k);
        /* Accumulate REPLACE, read back by MPI_Get. */
        OK(MPI_Accumulate(a, 1, types[k], t, at, 1, types[k], MPI_REPLACE, win));
        OK(MPI_Win_flush(t, win));
        OK(MPI_Get(got, 1, types[k], t, at, 1, types[k], win));
        OK(MPI_Win_flush(t, win));
        CHECK(memcmp(got, a, cmp) == 0, "type %zu: Get after Accumulate REPLACE", k);
    }
    OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_free(&win));
}

/* Every rank adds to the same locations of rank 0 at once. */
static void concurrent(void) {
    unsigned char *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, 64);
    MPI_Barrier(MPI_COMM_WORLD);
    long long one = 1, prev = -1, ticket, cas_old;
    double half = 0.5, dold;
    int two = 2, iold;
    OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < ITER; k++) {
        OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM,
                          win));
        OK(MPI_Fetch_and_op(&half, &dold, MPI_DOUBLE, 0, 8, MPI_SUM, win));
        /* An int at byte 17: misaligned, the accumulate lock's path. */
        OK(MPI_Get_accumulate(&two, 1, MPI_INT, &iold, 1, MPI_INT, 0, 17, 1, MPI_INT,
                              MPI_SUM, win));
        CHECK(iold % 2 == 0 && iold >= 0 && iold < 2 * size * ITER,
              "misaligned int old %d", iold);
        /* Tickets: strictly increasing for one origin, distinct across all. */
        OK(MPI_Fetch_and_op(&one, &ticket, MPI_LONG_LONG, 0, 24, MPI_SUM, win));
        CHECK(ticket > prev && ticket < (long long)size * ITER, "ticket %lld after %lld",
              ticket, prev);
        prev = ticket;
        /* A Compare_and_swap increment loop. */
        long long seen = 0;
        OK(MPI_Fetch_and_op(NULL, &seen, MPI_LONG_LONG, 0, 32, MPI_NO_OP, win));
        for (;;) {
            long long next = seen + 1;
            OK(MPI_Compare_and_swap(&next, &seen, &cas_old, MPI_LONG_LONG, 0, 32,
                                    win));
            if (cas_old == seen) break;
            seen = cas_old;
        }
    }
    OK(MPI_Win_flush_all(win));
    OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long long n = (long long)size * ITER, a, t, c;
        double d;
        int i;
        memcpy(&a, mem, 8);
        memcpy(&d, mem + 8, 8);
        memcpy(&i, mem + 17, 4);
        memcpy(&t, mem + 24, 8);
        memcpy(&c, mem + 32, 8);
        CHECK(a == n && d == 0.5 * (double)n && i == 2 * n && t == n && c == n,
              "totals %lld %g %d %lld %lld, want %lld", a, d, i, t, c, n);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_free(&win));
}

static void errors(void) {
    long long *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(2 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                        MPI_COMM_WORLD, &mem, &win));
    mem[0] = mem[1] = 0;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    long long one = 1, old = 0;
    double d = 1.0, dold;
    unsigned char byte = 1, bold;
    /* No epoch yet. */
    CHECK(class_of(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 0, MPI_SUM,
                                     win)) == MPI_ERR_RMA_SYNC,
          "fetch_and_op outside an epoch");
    CHECK(class_of(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG,
                                   MPI_SUM, win)) == MPI_ERR_RMA_SYNC,
          "accumulate outside an epoch");
    OK(MPI_Win_lock_all(0, win));
    CHECK(class_of(MPI_Fetch_and_op(&byte, &bold, MPI_BYTE, 0, 0, MPI_SUM, win)) ==
              MPI_ERR_OP,
          "MPI_SUM on MPI_BYTE");
    CHECK(class_of(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_BAND,
                                   win)) == MPI_ERR_OP,
          "MPI_BAND on MPI_DOUBLE");
    CHECK(class_of(MPI_Compare_and_swap(&d, &d, &dold, MPI_DOUBLE, 0, 0, win)) ==
              MPI_ERR_TYPE,
          "compare_and_swap on MPI_DOUBLE");
    CHECK(class_of(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 2, MPI_SUM,
                                     win)) == MPI_ERR_RMA_RANGE,
          "fetch_and_op past the end");
    CHECK(class_of(MPI_Compare_and_swap(&one, &one, &old, MPI_LONG_LONG, 0, -1,
                                         win)) == MPI_ERR_RMA_RANGE,
          "compare_and_swap before the start");
    CHECK(class_of(MPI_Accumulate(&one, 1, MPI_LONG_LONG, size, 0, 1,
                                   MPI_LONG_LONG, MPI_SUM, win)) == MPI_ERR_RANK,
          "accumulate to rank %d", size);
    old = 42;
    OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, MPI_PROC_NULL, 0, MPI_SUM, win));
    OK(MPI_Compare_and_swap(&one, &one, &old, MPI_LONG_LONG, MPI_PROC_NULL, 0,
                            win));
    CHECK(old == 42, "MPI_PROC_NULL wrote the result: %lld", old);
    OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[0] == 0 && mem[1] == 0, "a refused call changed the window: %lld %lld",
          mem[0], mem[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_free(&win));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) pair_ops(&pairs[k]);
    basics();
    concurrent();
    errors();
    printf("rma_one ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
