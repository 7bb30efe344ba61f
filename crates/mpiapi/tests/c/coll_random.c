/* Randomized collectives against a serial reference. Usage: coll_random SEED ITERS.
 *
 * Every rank draws the same choices from one generator seeded by SEED: for each
 * iteration a communicator (MPI_COMM_WORLD, or a split of it into two colours with
 * ranks reordered by random keys), a predefined type, an operation the standard
 * allows on it, a count (now and then a large one, across the shared-memory slots),
 * a root, whether to use MPI_IN_PLACE, and one of Reduce, Allreduce, Scan, Exscan,
 * Reduce_scatter_block, Reduce_scatter, Bcast, Allgatherv, Alltoallv, Gather,
 * Scatter, Allgather, Alltoall (their receive side now and then one element of a
 * contiguous type of the whole block) or a MAXLOC/MINLOC Allreduce on pair types.
 * Run with MYRIX_MPI_COLL_HIER_NODES=k (or across namespaces), communicators
 * spanning nodes take the collectives by levels. Every element of every rank's input is a
 * function of (seed, iteration, world rank, index), so each rank computes the
 * whole expected result itself, in rank order. The values are small integers, so
 * floating-point results are exact in any order of evaluation: the check is
 * bitwise for every type (a tolerance of zero). Prints "coll_random ok RANK CHECKS". */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank, wsize, failures;
static unsigned long long seed;

#define FAIL(...)                                                                       \
    do {                                                                                \
        if (failures++ < 10) {                                                          \
            fprintf(stderr, "coll_random: rank %d iter %d: ", wrank, iter);             \
            fprintf(stderr, __VA_ARGS__);                                               \
            fprintf(stderr, "\n");                                                      \
        }                                                                               \
    } while (0)

static uint64_t mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The choices every rank draws alike. */
static uint64_t stream;
static int pick(int n) { return (int)((stream = mix(stream)) % (uint64_t)n); }

enum { K_S, K_U, K_F };
typedef struct {
    MPI_Datatype dt;
    int size, kind;
    const char *name;
} Type;
static Type types[10];
static int ntypes;

enum { O_SUM, O_PROD, O_MAX, O_MIN, O_BAND, O_BOR, O_BXOR, O_LAND, O_LOR, O_LXOR, NOPS };
static MPI_Op ops[NOPS];
static const char *opname[NOPS] = {"SUM", "PROD", "MAX",  "MIN", "BAND",
                                   "BOR", "BXOR", "LAND", "LOR", "LXOR"};

/* Element i of world rank w's input in iteration `iter` (small, in the type's range). */
static long long value(int iter, int w, long i, const Type *t, int op) {
    uint64_t h = mix(seed ^ mix((uint64_t)iter * 1000003 + (uint64_t)w * 7919 + (uint64_t)i));
    /* No zero in products: -1 * 0 is -0.0 in floating point, +0 in the reference. */
    if (op == O_PROD)
        return t->kind == K_U ? 1 + (long long)(h % 3) : (h % 3 == 0 ? -1 : (long long)(h % 3));
    if (op == O_LAND || op == O_LOR || op == O_LXOR)
        return (long long)(h % 3 == 0 ? 0 : h % 5);
    return t->kind == K_U ? (long long)(h % 101) : (long long)(h % 101) - 50;
}

static void put(const Type *t, void *buf, long i, long long v) {
    char *p = (char *)buf + i * t->size;
    if (t->dt == MPI_INT) *(int *)p = (int)v;
    else if (t->dt == MPI_LONG) *(long *)p = (long)v;
    else if (t->dt == MPI_SHORT) *(short *)p = (short)v;
    else if (t->dt == MPI_LONG_LONG) *(long long *)p = v;
    else if (t->dt == MPI_UNSIGNED) *(unsigned *)p = (unsigned)v;
    else if (t->dt == MPI_UNSIGNED_CHAR) *(unsigned char *)p = (unsigned char)v;
    else if (t->dt == MPI_UINT64_T) *(uint64_t *)p = (uint64_t)v;
    else if (t->dt == MPI_INT32_T) *(int32_t *)p = (int32_t)v;
    else if (t->dt == MPI_FLOAT) *(float *)p = (float)v;
    else *(double *)p = (double)v;
}

static long long combine(int op, long long a, long long b) {
    switch (op) {
    case O_SUM: return a + b;
    case O_PROD: return a * b;
    case O_MAX: return a > b ? a : b;
    case O_MIN: return a < b ? a : b;
    case O_BAND: return a & b;
    case O_BOR: return a | b;
    case O_BXOR: return a ^ b;
    case O_LAND: return (a != 0) && (b != 0);
    case O_LOR: return (a != 0) || (b != 0);
    default: return (a != 0) != (b != 0);
    }
}

/* The reduction of element i over comm ranks lo..hi-1 (their world ranks in w[]). */
static long long reduce_ref(int iter, const int *w, int lo, int hi, long i, const Type *t,
                            int op) {
    long long acc = value(iter, w[lo], i, t, op);
    for (int r = lo + 1; r < hi; r++)
        acc = combine(op, acc, value(iter, w[r], i, t, op));
    return acc;
}

/* Compares n elements of `got` with the reference values stored in `want`. */
static int same(const Type *t, const void *got, const void *want, long n) {
    return memcmp(got, want, (size_t)n * t->size) == 0;
}

/* A nonblocking call's code, or its wait's. */
static int waited(int rc, MPI_Request *req) {
    return rc != MPI_SUCCESS ? rc : MPI_Wait(req, MPI_STATUS_IGNORE);
}

static void one(int iter, long *checks) {
    stream = mix(seed * 31 + (uint64_t)iter);
    /* The communicator. */
    MPI_Comm comm = MPI_COMM_WORLD;
    int split = pick(3) == 0;
    if (split) {
        int color = (int)(mix(seed + (uint64_t)iter * 17 + (uint64_t)wrank) % 2);
        int key = (int)(mix(seed + (uint64_t)iter * 29 + (uint64_t)wrank) % 1000);
        MPI_Comm_split(MPI_COMM_WORLD, color, key, &comm);
    }
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *w = malloc(size * sizeof(int)), *all = malloc(size * sizeof(int));
    MPI_Group g, wg;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int r = 0; r < size; r++)
        all[r] = r;
    MPI_Group_translate_ranks(g, size, all, wg, w);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    /* Type, operation, count, root, collective: the same on every rank. */
    const Type *t = &types[pick(ntypes)];
    int op;
    do
        op = pick(NOPS);
    while (t->kind == K_F && op >= O_BAND);
    long count = pick(8) == 0 ? 1 + pick(40000) : pick(300);
    int root = pick(size), inplace = pick(3) == 0, coll = pick(16);
    /* The receive side of Gather, Scatter, Allgather and Alltoall as one element of
     * a contiguous type of `count` elements now and then (type signatures match). */
    int whole = pick(3) == 0;
    /* Reduce, Allreduce, Bcast, Allgather(v), Alltoall: now and then the
     * nonblocking form and a wait (by levels too on communicators spanning nodes). */
    int nb = pick(2) == 0;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = nb ? waited(MPI_Ibarrier(comm, &req), &req) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        FAIL("Ibarrier returned %d", rc);
    MPI_Datatype rt = t->dt;
    int rcount = (int)count;
    if (whole) {
        MPI_Type_contiguous((int)count, t->dt, &rt);
        MPI_Type_commit(&rt);
        rcount = 1;
    }
    long total = count * size;
    char *in = malloc((total + 1) * 8), *out = malloc((total + 1) * 8),
         *ref = malloc((total + 1) * 8);
    for (long i = 0; i < total; i++)
        put(t, in, i, value(iter, w[rank], i, t, op));
    const char *what = "";
    switch (coll) {
    case 0: /* Reduce */
        what = "Reduce";
        if (inplace && rank == root) {
            memcpy(out, in, count * t->size);
            rc = nb ? waited(MPI_Ireduce(MPI_IN_PLACE, out, (int)count, t->dt, ops[op], root,
                                         comm, &req),
                             &req)
                    : MPI_Reduce(MPI_IN_PLACE, out, (int)count, t->dt, ops[op], root, comm);
        } else
            rc = nb ? waited(MPI_Ireduce(in, out, (int)count, t->dt, ops[op], root, comm, &req),
                             &req)
                    : MPI_Reduce(in, out, (int)count, t->dt, ops[op], root, comm);
        if (rank == root) {
            for (long i = 0; i < count; i++)
                put(t, ref, i, reduce_ref(iter, w, 0, size, i, t, op));
            if (!same(t, out, ref, count))
                FAIL("Reduce %s %s count %ld root %d nb %d", t->name, opname[op], count, root, nb);
        }
        break;
    case 1: /* Allreduce */
        what = "Allreduce";
        if (inplace) {
            memcpy(out, in, count * t->size);
            rc = nb ? waited(MPI_Iallreduce(MPI_IN_PLACE, out, (int)count, t->dt, ops[op], comm,
                                            &req),
                             &req)
                    : MPI_Allreduce(MPI_IN_PLACE, out, (int)count, t->dt, ops[op], comm);
        } else
            rc = nb ? waited(MPI_Iallreduce(in, out, (int)count, t->dt, ops[op], comm, &req), &req)
                    : MPI_Allreduce(in, out, (int)count, t->dt, ops[op], comm);
        for (long i = 0; i < count; i++)
            put(t, ref, i, reduce_ref(iter, w, 0, size, i, t, op));
        if (!same(t, out, ref, count))
            FAIL("Allreduce %s %s count %ld in_place %d nb %d", t->name, opname[op], count, inplace, nb);
        break;
    case 2: /* Scan */
    case 3: /* Exscan */
        what = coll == 2 ? "Scan" : "Exscan";
        rc = coll == 2 ? MPI_Scan(in, out, (int)count, t->dt, ops[op], comm)
                       : MPI_Exscan(in, out, (int)count, t->dt, ops[op], comm);
        if (coll == 2 || rank > 0) {
            for (long i = 0; i < count; i++)
                put(t, ref, i, reduce_ref(iter, w, 0, coll == 2 ? rank + 1 : rank, i, t, op));
            if (!same(t, out, ref, count))
                FAIL("%s %s %s count %ld", what, t->name, opname[op], count);
        }
        break;
    case 4: /* Reduce_scatter_block */
    case 5: { /* Reduce_scatter, random counts */
        what = coll == 4 ? "Reduce_scatter_block" : "Reduce_scatter";
        int *rc_ = malloc(size * sizeof(int));
        long at = 0, mine = 0;
        for (int r = 0; r < size; r++) {
            rc_[r] = coll == 4 ? (int)count : pick((int)count + 1);
            if (r < rank)
                at += rc_[r];
        }
        mine = rc_[rank];
        rc = coll == 4 ? MPI_Reduce_scatter_block(in, out, (int)count, t->dt, ops[op], comm)
                       : MPI_Reduce_scatter(in, out, rc_, t->dt, ops[op], comm);
        for (long i = 0; i < mine; i++)
            put(t, ref, i, reduce_ref(iter, w, 0, size, at + i, t, op));
        if (!same(t, out, ref, mine))
            FAIL("%s %s %s count %ld", what, t->name, opname[op], mine);
        free(rc_);
        break;
    }
    case 6: /* Bcast */
        what = "Bcast";
        memcpy(out, in, count * t->size);
        rc = nb ? waited(MPI_Ibcast(out, (int)count, t->dt, root, comm, &req), &req)
                : MPI_Bcast(out, (int)count, t->dt, root, comm);
        for (long i = 0; i < count; i++)
            put(t, ref, i, value(iter, w[root], i, t, op));
        if (!same(t, out, ref, count))
            FAIL("Bcast %s count %ld root %d nb %d", t->name, count, root, nb);
        break;
    case 7: { /* Allgatherv with gaps */
        what = "Allgatherv";
        int *cnt = malloc(size * sizeof(int)), *dis = malloc(size * sizeof(int));
        long at = 0;
        for (int r = 0; r < size; r++) {
            cnt[r] = pick((int)count + 1) / size;
            dis[r] = (int)at + 1;
            at += cnt[r] + 1;
        }
        free(out);
        free(ref);
        out = calloc(at + 1, 8);
        ref = calloc(at + 1, 8);
        rc = nb ? waited(MPI_Iallgatherv(in, cnt[rank], t->dt, out, cnt, dis, t->dt, comm, &req),
                         &req)
                : MPI_Allgatherv(in, cnt[rank], t->dt, out, cnt, dis, t->dt, comm);
        for (int r = 0; r < size; r++)
            for (long i = 0; i < cnt[r]; i++)
                put(t, ref, dis[r] + i, value(iter, w[r], i, t, op));
        if (!same(t, out, ref, at))
            FAIL("Allgatherv %s", t->name);
        free(cnt);
        free(dis);
        break;
    }
    case 8: { /* Alltoallv: rank a sends cnt(a, b) elements to b */
        what = "Alltoallv";
        int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int)),
            *rcn = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
        int m = (int)(count / size) + 1;
        long sat = 0, rat = 0;
        for (int r = 0; r < size; r++) {
            sc[r] = (int)(mix(seed ^ ((uint64_t)iter << 20) ^ (uint64_t)(w[rank] * 64 + w[r])) % m);
            rcn[r] = (int)(mix(seed ^ ((uint64_t)iter << 20) ^ (uint64_t)(w[r] * 64 + w[rank])) % m);
            sd[r] = (int)sat;
            rd[r] = (int)rat;
            sat += sc[r];
            rat += rcn[r];
        }
        free(out);
        free(ref);
        out = calloc(rat + 1, 8);
        ref = calloc(rat + 1, 8);
        /* Element e for rank b: the sender's value at index b * 100000 + e. */
        char *snd = malloc((sat + 1) * 8);
        for (int r = 0; r < size; r++)
            for (long e = 0; e < sc[r]; e++)
                put(t, snd, sd[r] + e, value(iter, w[rank], (long)w[r] * 100000 + e, t, op));
        rc = MPI_Alltoallv(snd, sc, sd, t->dt, out, rcn, rd, t->dt, comm);
        for (int r = 0; r < size; r++)
            for (long e = 0; e < rcn[r]; e++)
                put(t, ref, rd[r] + e, value(iter, w[r], (long)w[rank] * 100000 + e, t, op));
        if (!same(t, out, ref, rat))
            FAIL("Alltoallv %s", t->name);
        free(snd);
        free(sc);
        free(sd);
        free(rcn);
        free(rd);
        break;
    }
    case 10: /* Gather */
        what = "Gather";
        if (inplace && rank == root) {
            memcpy(out + (long)rank * count * t->size, in, count * t->size);
            rc = MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, rcount, rt, root, comm);
        } else
            rc = MPI_Gather(in, (int)count, t->dt, out, rcount, rt, root, comm);
        if (rank == root) {
            for (int r = 0; r < size; r++)
                for (long i = 0; i < count; i++)
                    put(t, ref, r * count + i, value(iter, w[r], i, t, op));
            if (!same(t, out, ref, total))
                FAIL("Gather %s count %ld root %d in_place %d whole %d", t->name, count, root,
                     inplace, whole);
        }
        break;
    case 11: /* Scatter: block r of the root's input to rank r */
        what = "Scatter";
        if (inplace && rank == root)
            rc = MPI_Scatter(in, (int)count, t->dt, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root,
                             comm);
        else
            rc = MPI_Scatter(in, rcount, rt, out, (int)count, t->dt, root, comm);
        if (!(inplace && rank == root)) {
            for (long i = 0; i < count; i++)
                put(t, ref, i, value(iter, w[root], rank * count + i, t, op));
            if (!same(t, out, ref, count))
                FAIL("Scatter %s count %ld root %d whole %d", t->name, count, root, whole);
        }
        break;
    case 12: /* Allgather */
        what = "Allgather";
        if (inplace) {
            memcpy(out + (long)rank * count * t->size, in, count * t->size);
            rc = nb ? waited(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, rcount, rt,
                                            comm, &req),
                             &req)
                    : MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, rcount, rt, comm);
        } else
            rc = nb ? waited(MPI_Iallgather(in, (int)count, t->dt, out, rcount, rt, comm, &req),
                             &req)
                    : MPI_Allgather(in, (int)count, t->dt, out, rcount, rt, comm);
        for (int r = 0; r < size; r++)
            for (long i = 0; i < count; i++)
                put(t, ref, r * count + i, value(iter, w[r], i, t, op));
        if (!same(t, out, ref, total))
            FAIL("Allgather %s count %ld in_place %d whole %d", t->name, count, inplace, whole);
        break;
    case 13: /* Alltoall: block b of rank a's input to rank b */
        what = "Alltoall";
        rc = nb ? waited(MPI_Ialltoall(in, (int)count, t->dt, out, rcount, rt, comm, &req), &req)
                : MPI_Alltoall(in, (int)count, t->dt, out, rcount, rt, comm);
        for (int r = 0; r < size; r++)
            for (long i = 0; i < count; i++)
                put(t, ref, r * count + i, value(iter, w[r], rank * count + i, t, op));
        if (!same(t, out, ref, total))
            FAIL("Alltoall %s count %ld whole %d", t->name, count, whole);
        break;
    case 14: /* Gatherv: random counts (zeros too), blocks in reverse order with gaps */
    case 15: { /* Scatterv: the same layout at the root */
        what = coll == 14 ? "Gatherv" : "Scatterv";
        int *cnt = malloc(size * sizeof(int)), *dis = malloc(size * sizeof(int));
        long at = 0;
        for (int r = size - 1; r >= 0; r--) {
            cnt[r] = pick(4) == 0 ? 0 : pick((int)count + 1);
            dis[r] = (int)at + pick(3);
            at = dis[r] + cnt[r];
        }
        free(out);
        free(ref);
        out = calloc(at + count + 1, 8);
        ref = calloc(at + count + 1, 8);
        int ip = inplace && rank == root;
        if (coll == 14) {
            if (ip) {
                for (long i = 0; i < cnt[rank]; i++)
                    put(t, out, dis[rank] + i, value(iter, w[rank], i, t, op));
                rc = MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, cnt, dis, t->dt, root,
                                 comm);
            } else
                rc = MPI_Gatherv(in, cnt[rank], t->dt, out, cnt, dis, t->dt, root, comm);
            if (rank == root) {
                for (int r = 0; r < size; r++)
                    for (long i = 0; i < cnt[r]; i++)
                        put(t, ref, dis[r] + i, value(iter, w[r], i, t, op));
                if (!same(t, out, ref, at))
                    FAIL("Gatherv %s count %ld root %d in_place %d", t->name, count, root, ip);
            }
        } else {
            /* The root's input: element e of the buffer is value(root, e). */
            char *snd = malloc((at + 1) * 8);
            for (long e = 0; e < at; e++)
                put(t, snd, e, value(iter, w[root], e, t, op));
            if (ip)
                rc = MPI_Scatterv(snd, cnt, dis, t->dt, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root,
                                  comm);
            else
                rc = MPI_Scatterv(snd, cnt, dis, t->dt, out, cnt[rank], t->dt, root, comm);
            if (!ip) {
                for (long i = 0; i < cnt[rank]; i++)
                    put(t, ref, i, value(iter, w[root], dis[rank] + i, t, op));
                if (!same(t, out, ref, cnt[rank]))
                    FAIL("Scatterv %s count %d root %d", t->name, cnt[rank], root);
            }
            free(snd);
        }
        free(cnt);
        free(dis);
        break;
    }
    default: { /* MAXLOC / MINLOC on MPI_2INT and MPI_DOUBLE_INT */
        int maxloc = pick(2), dbl = pick(2);
        what = maxloc ? "Allreduce MAXLOC" : "Allreduce MINLOC";
        struct di {
            double v;
            int i;
        };
        long n = count % 1000;
        int *a = malloc((2 * n + 1) * sizeof(int)), *b = malloc((2 * n + 1) * sizeof(int));
        struct di *c = malloc((n + 1) * sizeof *c), *d = malloc((n + 1) * sizeof *d);
        Type it = {MPI_INT, sizeof(int), K_S, "int"};
        for (long e = 0; e < n; e++) {
            a[2 * e] = (int)(value(iter, w[rank], e, &it, O_SUM) % 7);
            a[2 * e + 1] = rank;
            c[e].v = a[2 * e];
            c[e].i = rank;
        }
        MPI_Op o = maxloc ? MPI_MAXLOC : MPI_MINLOC;
        rc = dbl ? MPI_Allreduce(c, d, (int)n, MPI_DOUBLE_INT, o, comm)
                 : MPI_Allreduce(a, b, (int)n, MPI_2INT, o, comm);
        for (long e = 0; e < n; e++) {
            int bv = 0, bi = -1;
            for (int r = 0; r < size; r++) {
                int v = (int)(value(iter, w[r], e, &it, O_SUM) % 7);
                if (bi < 0 || (maxloc ? v > bv : v < bv)) {
                    bv = v;
                    bi = r;
                }
            }
            int gv = dbl ? (int)d[e].v : b[2 * e], gi = dbl ? d[e].i : b[2 * e + 1];
            if (gv != bv || gi != bi) {
                FAIL("%s %s element %ld: (%d, %d), want (%d, %d)", what,
                     dbl ? "DOUBLE_INT" : "2INT", e, gv, gi, bv, bi);
                break;
            }
        }
        free(a);
        free(b);
        free(c);
        free(d);
        break;
    }
    }
    if (rc != MPI_SUCCESS)
        FAIL("%s returned %d", what, rc);
    (*checks)++;
    if (whole)
        MPI_Type_free(&rt);
    free(in);
    free(out);
    free(ref);
    free(w);
    free(all);
    if (split)
        MPI_Comm_free(&comm);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    Type ts[] = {{MPI_INT, sizeof(int), K_S, "INT"},
                 {MPI_LONG, sizeof(long), K_S, "LONG"},
                 {MPI_SHORT, sizeof(short), K_S, "SHORT"},
                 {MPI_LONG_LONG, sizeof(long long), K_S, "LONG_LONG"},
                 {MPI_UNSIGNED, sizeof(unsigned), K_U, "UNSIGNED"},
                 {MPI_UNSIGNED_CHAR, 1, K_U, "UNSIGNED_CHAR"},
                 {MPI_UINT64_T, 8, K_U, "UINT64_T"},
                 {MPI_INT32_T, 4, K_S, "INT32_T"},
                 {MPI_FLOAT, sizeof(float), K_F, "FLOAT"},
                 {MPI_DOUBLE, sizeof(double), K_F, "DOUBLE"}};
    ntypes = (int)(sizeof ts / sizeof ts[0]);
    memcpy(types, ts, sizeof ts);
    MPI_Op os[NOPS] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN,  MPI_BAND,
                       MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR};
    memcpy(ops, os, sizeof os);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    long checks = 0;
    for (int iter = 0; iter < iters; iter++)
        one(iter, &checks);
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (bad == 0)
        printf("coll_random ok %d %ld\n", wrank, checks);
    MPI_Finalize();
    return bad != 0;
}
