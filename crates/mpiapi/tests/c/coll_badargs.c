/* An erroneous program under MPI_ERRORS_RETURN: collectives called with an
 * argument the standard forbids, to check that no rank hangs.
 *
 * Each argument names a case "COLL:KIND:WHO":
 *   COLL  bcast reduce allreduce gather gatherv scatter scatterv allgather
 *         allgatherv alltoall alltoallv alltoallw reduce_scatter reduce_scatter_block
 *         scan exscan ibcast ireduce iallreduce
 *   KIND  root (root = size), count (-1, or every count of a v-form -1), type
 *         (MPI_DATATYPE_NULL), op (MPI_OP_NULL), inplace (MPI_IN_PLACE where the
 *         standard forbids it: Bcast's buffer, a rooted collective's root-only
 *         buffer, every other collective's receive buffer), null (a NULL buffer of
 *         a nonzero count: Bcast's, the root's receive buffer of Reduce and Gather,
 *         its send buffer of Scatter)
 *   WHO   all (every rank passes the bad value) or root (only the root does; for
 *         collectives without a root, rank size-1)
 * or "all" or "root": every case of the tables below for that WHO.
 *
 * Per case every rank prints "coll_badargs: COLL KIND WHO rank R returned CLASS"
 * (the error class's name), then takes a barrier and an allreduce and prints
 * "coll_badargs: COLL KIND WHO rank R in step" when both succeed and agree; at the
 * end "coll_badargs ok R". The program itself never checks what it is told: the
 * test reading its output decides what each rank must return. It also builds with
 * MPICH's mpicc, to compare. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4

static const char *class_name(int rc) {
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    static const struct { int c; const char *n; } names[] = {
        {MPI_SUCCESS, "MPI_SUCCESS"},   {MPI_ERR_BUFFER, "MPI_ERR_BUFFER"},
        {MPI_ERR_COUNT, "MPI_ERR_COUNT"}, {MPI_ERR_TYPE, "MPI_ERR_TYPE"},
        {MPI_ERR_COMM, "MPI_ERR_COMM"}, {MPI_ERR_RANK, "MPI_ERR_RANK"},
        {MPI_ERR_ROOT, "MPI_ERR_ROOT"}, {MPI_ERR_OP, "MPI_ERR_OP"},
        {MPI_ERR_ARG, "MPI_ERR_ARG"},   {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE"},
        {MPI_ERR_OTHER, "MPI_ERR_OTHER"}, {MPI_ERR_INTERN, "MPI_ERR_INTERN"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].c == c)
            return names[i].n;
    return "another class";
}

static int rank, size;

/* One call of `coll`; `bad`: this rank passes the bad value of `kind`. */
static int call(const char *coll, const char *kind, int bad, int root, int *sbuf, int *rbuf) {
    int cnt = N, rt = root;
    MPI_Datatype t = MPI_INT;
    MPI_Op op = MPI_SUM;
    void *sb = sbuf, *rb = rbuf;
    int cs[64], ds[64], ncs[64];
    MPI_Datatype ts[64];
    for (int i = 0; i < size; i++) {
        cs[i] = N;
        ds[i] = i * N;
        ncs[i] = -1;
        ts[i] = MPI_INT;
    }
    int *counts = cs;
    int v_bytes[64], v_displs[64];
    for (int i = 0; i < size; i++) {
        v_bytes[i] = N;
        v_displs[i] = i * N * (int)sizeof(int);
    }
    /* Which buffer a forbidden MPI_IN_PLACE or NULL goes in: Bcast's only buffer,
     * Scatter's send buffer, every other collective's receive buffer. */
    int send_side = !strcmp(coll, "bcast") || !strcmp(coll, "ibcast") || !strncmp(coll, "scatter", 7);
    if (bad) {
        if (!strcmp(kind, "root"))
            rt = size;
        else if (!strcmp(kind, "count")) {
            cnt = -1;
            counts = ncs;
        } else if (!strcmp(kind, "type")) {
            t = MPI_DATATYPE_NULL;
            for (int i = 0; i < size; i++)
                ts[i] = MPI_DATATYPE_NULL;
        } else if (!strcmp(kind, "op"))
            op = MPI_OP_NULL;
        else if (!strcmp(kind, "alias"))
            rb = sb; /* the same memory as both buffers: erroneous */
        else if (!strcmp(kind, "overlap"))
            sb = rbuf + rank * N; /* this rank's receive block, not MPI_IN_PLACE */
        else if (!strcmp(kind, "inplace") || !strcmp(kind, "null")) {
            void *p = !strcmp(kind, "inplace") ? MPI_IN_PLACE : NULL;
            if (send_side)
                sb = p;
            else
                rb = p;
        }
    }
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request req;
    int rc;
    if (!strcmp(coll, "bcast"))
        return MPI_Bcast(sb, cnt, t, rt, w);
    if (!strcmp(coll, "reduce"))
        return MPI_Reduce(sb, rb, cnt, t, op, rt, w);
    if (!strcmp(coll, "allreduce"))
        return MPI_Allreduce(sb, rb, cnt, t, op, w);
    if (!strcmp(coll, "gather"))
        return MPI_Gather(sb, cnt, t, rb, cnt, t, rt, w);
    if (!strcmp(coll, "gatherv"))
        return MPI_Gatherv(sb, cnt, t, rb, counts, ds, t, rt, w);
    if (!strcmp(coll, "scatter"))
        return MPI_Scatter(sb, cnt, t, rb, cnt, t, rt, w);
    if (!strcmp(coll, "scatterv"))
        return MPI_Scatterv(sb, counts, ds, t, rb, cnt, t, rt, w);
    if (!strcmp(coll, "allgather"))
        return MPI_Allgather(sb, cnt, t, rb, cnt, t, w);
    if (!strcmp(coll, "allgatherv"))
        return MPI_Allgatherv(sb, cnt, t, rb, counts, ds, t, w);
    if (!strcmp(coll, "alltoall"))
        return MPI_Alltoall(sb, cnt, t, rb, cnt, t, w);
    if (!strcmp(coll, "alltoallv"))
        return MPI_Alltoallv(sb, counts, ds, t, rb, counts, ds, t, w);
    if (!strcmp(coll, "alltoallw"))
        return MPI_Alltoallw(sb, counts == ncs ? ncs : v_bytes, v_displs, ts, rb,
                             counts == ncs ? ncs : v_bytes, v_displs, ts, w);
    if (!strcmp(coll, "reduce_scatter"))
        return MPI_Reduce_scatter(sb, rb, counts, t, op, w);
    if (!strcmp(coll, "reduce_scatter_block"))
        return MPI_Reduce_scatter_block(sb, rb, cnt, t, op, w);
    if (!strcmp(coll, "scan"))
        return MPI_Scan(sb, rb, cnt, t, op, w);
    if (!strcmp(coll, "exscan"))
        return MPI_Exscan(sb, rb, cnt, t, op, w);
    if (!strcmp(coll, "ibcast"))
        rc = MPI_Ibcast(sb, cnt, t, rt, w, &req);
    else if (!strcmp(coll, "ireduce"))
        rc = MPI_Ireduce(sb, rb, cnt, t, op, rt, w, &req);
    else if (!strcmp(coll, "iallreduce"))
        rc = MPI_Iallreduce(sb, rb, cnt, t, op, w, &req);
    else if (!strcmp(coll, "iallgather"))
        rc = MPI_Iallgather(sb, cnt, t, rb, cnt, t, w, &req);
    else if (!strcmp(coll, "iallgatherv"))
        rc = MPI_Iallgatherv(sb, cnt, t, rb, counts, ds, t, w, &req);
    else {
        fprintf(stderr, "coll_badargs: unknown collective %s\n", coll);
        MPI_Abort(w, 2);
        return MPI_ERR_ARG;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* The cases "all" and "root" run: a bad value every rank passes alike, and one
 * only the root passes. */
static const char *all_cases[] = {
    "bcast:root", "bcast:count", "bcast:type", "bcast:inplace", "bcast:null",
    "reduce:root", "reduce:count", "reduce:type", "reduce:op",
    "allreduce:count", "allreduce:type", "allreduce:op", "allreduce:inplace",
    "gather:root", "gather:count", "gather:type",
    "gatherv:root", "gatherv:count", "gatherv:type",
    "scatter:root", "scatter:count", "scatter:type",
    "scatterv:root", "scatterv:count", "scatterv:type",
    "allgather:count", "allgather:type", "allgather:inplace",
    "allgatherv:count", "allgatherv:type", "allgatherv:inplace",
    "alltoall:count", "alltoall:type", "alltoall:inplace",
    "alltoallv:count", "alltoallv:type", "alltoallv:inplace",
    "alltoallw:count", "alltoallw:type", "alltoallw:inplace",
    "reduce_scatter:count", "reduce_scatter:type", "reduce_scatter:op", "reduce_scatter:inplace",
    "reduce_scatter_block:count", "reduce_scatter_block:type", "reduce_scatter_block:op",
    "reduce_scatter_block:inplace",
    "scan:count", "scan:type", "scan:op", "scan:inplace",
    "exscan:count", "exscan:type", "exscan:op", "exscan:inplace",
    "ibcast:root", "ibcast:count", "ibcast:type", "ibcast:inplace",
    "ireduce:root", "ireduce:count", "ireduce:type", "ireduce:op",
    "iallreduce:count", "iallreduce:type", "iallreduce:op", "iallreduce:inplace",
    /* Aliased buffers, where every rank's are significant (MPICH's noalias tests). */
    "allreduce:alias", "scan:alias", "exscan:alias", "reduce_scatter_block:alias",
    "allgather:alias", "alltoall:alias", "iallreduce:alias", "reduce_scatter:alias",
    "alltoallv:alias", "alltoallw:alias",
    /* A send buffer inside the receive blocks (MPICH's noalias2 and noalias3). */
    "allgather:overlap", "allgatherv:overlap", "iallgather:overlap", "iallgatherv:overlap",
    NULL,
};
static const char *root_cases[] = {
    "bcast:inplace", "bcast:null", "reduce:inplace", "reduce:null", "gather:inplace",
    "gather:null", "gatherv:inplace", "gatherv:null", "scatter:inplace", "scatter:null",
    "scatterv:inplace", "scatterv:null", NULL,
};

static void one(const char *c, const char *who_default) {
    char coll[64], kind[32], who[16];
    strncpy(who, who_default, sizeof who - 1);
    who[sizeof who - 1] = 0;
    if (sscanf(c, "%63[^:]:%31[^:]:%15s", coll, kind, who) < 2) {
        fprintf(stderr, "coll_badargs: bad case %s\n", c);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int root = size - 1;
    int bad = !strcmp(who, "all") || rank == root;
    int *sbuf = calloc((size_t)N * (size_t)size, sizeof(int));
    int *rbuf = calloc((size_t)N * (size_t)size, sizeof(int));
    int rc = call(coll, kind, bad, root, sbuf, rbuf);
    printf("coll_badargs: %s %s %s rank %d returned %s\n", coll, kind, who, rank, class_name(rc));
    fflush(stdout);
    int one_ = 1, sum = 0;
    if (MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS &&
        MPI_Allreduce(&one_, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS && sum == size)
        printf("coll_badargs: %s %s %s rank %d in step\n", coll, kind, who, rank);
    fflush(stdout);
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size > 64)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "all") || !strcmp(argv[a], "root")) {
            const char **t = !strcmp(argv[a], "all") ? all_cases : root_cases;
            for (int i = 0; t[i]; i++)
                one(t[i], argv[a]);
        } else
            one(argv[a], "all");
    }
    printf("coll_badargs ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
