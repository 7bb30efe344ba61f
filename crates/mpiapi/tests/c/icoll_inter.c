/* Nonblocking (and persistent) collectives on intercommunicators, 2 or more
 * ranks: the world splits into group A (the first `a` ranks, uneven groups at 3, 4
 * and 5 ranks) and group B, joined by MPI_Intercomm_create. Every nonblocking
 * collective's results are checked against a reference computed here from the
 * standard's definitions, in both directions for the rooted ones (MPI_ROOT /
 * MPI_PROC_NULL / the root's remote rank), with a non-commutative user op for the
 * reductions; Ibarrier must not complete before the other group enters; several
 * outstanding at once; persistent forms started twice; an MPI_Comm_idup'ed
 * intercommunicator; Iscan refused with MPI_ERR_COMM.
 * Prints "icoll_inter ok <rank>" at the end. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, n, a, inA, nl, nr, me;
#include "check.h"

/* The world rank of remote rank q / local rank r. */
static int rw(int q) { return inA ? a + q : q; }
static int lw(int r) { return inA ? r : a + r; }
/* Element j of world rank w's contribution. */
static int v(int w, int j) { return w * 1000 + j; }

/* x -> m*x + c, composed left to right: (u op v)(x) = v(u(x)). Associative, not
 * commutative. Elements are pairs of unsigned (wrapping arithmetic). */
static void affine(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    unsigned *u = in, *w = inout;
    for (int i = 0; i < *len; i++) {
        unsigned m = u[2 * i] * w[2 * i], c = u[2 * i + 1] * w[2 * i] + w[2 * i + 1];
        w[2 * i] = m, w[2 * i + 1] = c;
    }
}
static unsigned am(int w, int j) { return (unsigned)(w + j) % 3 + 1; }
static unsigned ac(int w, int j) { return (unsigned)(w * 7 + j); }

static void wait1(MPI_Request *r) { OK(MPI_Wait(r, MPI_STATUS_IGNORE)); }

/* The root argument of a rooted collective whose root is local rank `rl` of group
 * A (rootA) or B. */
static int root_arg(int rootA, int rl) {
    if (inA == rootA)
        return me == rl ? MPI_ROOT : MPI_PROC_NULL;
    return rl;
}

static void barrier(MPI_Comm ic) {
    /* A's ranks enter only after B's rank 0 has found its Ibarrier incomplete. */
    MPI_Request r;
    int flag = 1, go = 0;
    if (inA) {
        OK(MPI_Recv(&go, 1, MPI_INT, a, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Ibarrier(ic, &r));
        wait1(&r);
    } else {
        OK(MPI_Ibarrier(ic, &r));
        if (me == 0) {
            for (int i = 0; i < 20; i++)
                OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "Ibarrier done before the other group entered");
            /* Nothing completed: flag false and the index MPI_UNDEFINED. */
            int idx = 0;
            OK(MPI_Testany(1, &r, &idx, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag && idx == MPI_UNDEFINED, "testany: flag %d index %d", flag, idx);
            idx = 0;
            OK(MPI_Request_get_status_any(1, &r, &idx, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag && idx == MPI_UNDEFINED, "get_status_any: flag %d index %d", flag, idx);
            for (int q = 0; q < a; q++)
                OK(MPI_Send(&go, 1, MPI_INT, q, 1, MPI_COMM_WORLD));
        }
        wait1(&r);
    }
}

static void bcast(MPI_Comm ic) {
    MPI_Datatype vec;
    OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    for (int dir = 0; dir < 4; dir++) {
        int rootA = dir % 2, rl = (rootA ? a : n - a) - 1, strided = dir >= 2;
        int root = root_arg(rootA, rl), rootw = rootA ? rl : a + rl;
        int x[6];
        for (int j = 0; j < 6; j++)
            x[j] = root == MPI_ROOT ? v(rank, j) : -1;
        MPI_Request r;
        if (strided)
            OK(MPI_Ibcast(x, 1, vec, root, ic, &r));
        else
            OK(MPI_Ibcast(x, 6, MPI_INT, root, ic, &r));
        wait1(&r);
        for (int j = 0; j < 6; j++) {
            int want = root == MPI_PROC_NULL ? -1 : v(rootw, j);
            if (strided && j % 2 == 1 && root != MPI_ROOT)
                want = -1;
            CHECK(x[j] == want, "bcast dir %d elem %d: %d, not %d", dir, j, x[j], want);
        }
    }
    OK(MPI_Type_free(&vec));
}

/* The other group's reduction: sums (ints) and the affine composition in rank
 * order (pairs). */
static void reductions(MPI_Comm ic) {
    MPI_Op op;
    MPI_Datatype pair;
    OK(MPI_Op_create(affine, 0, &op));
    OK(MPI_Type_contiguous(2, MPI_UNSIGNED, &pair));
    OK(MPI_Type_commit(&pair));
    int s[4], got[4], want[4];
    unsigned ps[8], pg[8], pw[8];
    for (int j = 0; j < 4; j++) {
        s[j] = v(rank, j);
        want[j] = 0;
        ps[2 * j] = am(rank, j), ps[2 * j + 1] = ac(rank, j);
        pw[2 * j] = 1, pw[2 * j + 1] = 0;
        for (int q = 0; q < nr; q++) {
            int w = rw(q);
            want[j] += v(w, j);
            pw[2 * j + 1] = am(w, j) * pw[2 * j + 1] + ac(w, j);
            pw[2 * j] *= am(w, j);
        }
    }
    MPI_Request r[2];
    /* Iallreduce, both ops at once. */
    memset(got, 0, sizeof got);
    memset(pg, 0, sizeof pg);
    OK(MPI_Iallreduce(s, got, 4, MPI_INT, MPI_SUM, ic, &r[0]));
    OK(MPI_Iallreduce(ps, pg, 4, pair, op, ic, &r[1]));
    OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(!memcmp(got, want, sizeof got), "iallreduce sum: %d, not %d", got[0], want[0]);
    CHECK(!memcmp(pg, pw, sizeof pg), "iallreduce affine: %u %u, not %u %u", pg[0], pg[1],
          pw[0], pw[1]);
    /* Ireduce to each group's last rank. */
    for (int rootA = 0; rootA < 2; rootA++) {
        int rl = (rootA ? a : n - a) - 1, root = root_arg(rootA, rl);
        memset(got, 0, sizeof got);
        memset(pg, 0, sizeof pg);
        OK(MPI_Ireduce(s, got, 4, MPI_INT, MPI_SUM, root, ic, &r[0]));
        OK(MPI_Ireduce(ps, pg, 4, pair, op, root, ic, &r[1]));
        OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        if (root == MPI_ROOT) {
            CHECK(!memcmp(got, want, sizeof got), "ireduce sum");
            CHECK(!memcmp(pg, pw, sizeof pg), "ireduce affine");
        } else {
            CHECK(got[0] == 0 && pg[0] == 0, "ireduce wrote a non-root's buffer");
        }
    }
    /* Ireduce_scatter_block: totals agree (A's count nb, B's na, per rank). */
    {
        int rc = nr, tot = nl * rc;
        int *sb = malloc(sizeof(int) * (size_t)tot), *rb = malloc(sizeof(int) * (size_t)rc);
        for (int j = 0; j < tot; j++)
            sb[j] = v(rank, j);
        OK(MPI_Ireduce_scatter_block(sb, rb, rc, MPI_INT, MPI_SUM, ic, &r[0]));
        wait1(&r[0]);
        for (int e = 0; e < rc; e++) {
            int g = me * rc + e, w = 0;
            for (int q = 0; q < nr; q++)
                w += v(rw(q), g);
            CHECK(rb[e] == w, "ireduce_scatter_block elem %d: %d, not %d", e, rb[e], w);
        }
        /* Ireduce_scatter: uneven counts, the same total, the first rank the most. */
        int *cs = malloc(sizeof(int) * (size_t)nl), off = 0;
        for (int i = 0; i < nl; i++)
            cs[i] = i == 0 ? tot - (nl - 1) * (rc / 2) : rc / 2;
        for (int i = 0; i < me; i++)
            off += cs[i];
        int *rb2 = calloc((size_t)tot + 1, sizeof(int));
        OK(MPI_Ireduce_scatter(sb, rb2, cs, MPI_INT, MPI_SUM, ic, &r[0]));
        wait1(&r[0]);
        for (int e = 0; e < cs[me]; e++) {
            int w = 0;
            for (int q = 0; q < nr; q++)
                w += v(rw(q), off + e);
            CHECK(rb2[e] == w, "ireduce_scatter elem %d: %d, not %d", e, rb2[e], w);
        }
        free(sb), free(rb), free(cs), free(rb2);
    }
    /* Not defined on an intercommunicator. */
    OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    int cls = 0, rcode = MPI_Iscan(s, got, 4, MPI_INT, MPI_SUM, ic, &r[0]);
    OK(MPI_Error_class(rcode, &cls));
    CHECK(cls == MPI_ERR_COMM, "iscan: class %d", cls);
    /* No MPI_IN_PLACE on an intercommunicator; a root beyond the remote group. */
    rcode = MPI_Iallreduce(MPI_IN_PLACE, got, 4, MPI_INT, MPI_SUM, ic, &r[0]);
    OK(MPI_Error_class(rcode, &cls));
    CHECK(cls == MPI_ERR_BUFFER, "in place: class %d", cls);
    rcode = MPI_Ibcast(got, 4, MPI_INT, nr, ic, &r[0]);
    OK(MPI_Error_class(rcode, &cls));
    CHECK(cls == MPI_ERR_ROOT, "root %d of %d: class %d", nr, nr, cls);
    OK(MPI_Op_free(&op));
    OK(MPI_Type_free(&pair));
}

/* Igather(v) and Iscatter(v) with the root each group's last rank. */
static void rooted(MPI_Comm ic) {
    for (int rootA = 0; rootA < 2; rootA++) {
        int rl = (rootA ? a : n - a) - 1, root = root_arg(rootA, rl);
        int rootw = rootA ? rl : a + rl;
        int mine[3] = {v(rank, 0), v(rank, 1), v(rank, 2)};
        int *buf = malloc(sizeof(int) * (size_t)(4 * nr + 1));
        int *cs = malloc(sizeof(int) * (size_t)(nr + 1)), *ds = malloc(sizeof(int) * (size_t)(nr + 1));
        for (int q = 0; q < nr; q++)
            cs[q] = q % 3 + 1, ds[q] = 4 * (nr - 1 - q);
        MPI_Request r;
        /* Igather. */
        for (int i = 0; i < 4 * nr; i++)
            buf[i] = -1;
        OK(MPI_Igather(mine, 3, MPI_INT, buf, 3, MPI_INT, root, ic, &r));
        wait1(&r);
        if (root == MPI_ROOT)
            for (int q = 0; q < nr; q++)
                for (int j = 0; j < 3; j++)
                    CHECK(buf[3 * q + j] == v(rw(q), j), "igather q %d", q);
        /* Igatherv: remote rank q sends q % 3 + 1 elements. */
        for (int i = 0; i < 4 * nr; i++)
            buf[i] = -1;
        int my_cnt = inA == rootA ? 0 : me % 3 + 1;
        OK(MPI_Igatherv(mine, my_cnt, MPI_INT, buf, cs, ds, MPI_INT, root, ic, &r));
        wait1(&r);
        if (root == MPI_ROOT)
            for (int q = 0; q < nr; q++)
                for (int j = 0; j < 4; j++)
                    CHECK(buf[ds[q] + j] == (j < cs[q] ? v(rw(q), j) : -1), "igatherv q %d", q);
        /* Iscatter: the root sends rank q v(root, 10 q + j). */
        for (int q = 0; q < nr; q++)
            for (int j = 0; j < 4; j++)
                buf[4 * q + j] = v(rank, 10 * q + j);
        int got[4] = {-1, -1, -1, -1};
        OK(MPI_Iscatter(buf, 4, MPI_INT, got, 4, MPI_INT, root, ic, &r));
        wait1(&r);
        if (root >= 0)
            for (int j = 0; j < 4; j++)
                CHECK(got[j] == v(rootw, 10 * me + j), "iscatter elem %d", j);
        /* Iscatterv: q gets cs[q] elements from ds[q]. */
        for (int j = 0; j < 4; j++)
            got[j] = -1;
        OK(MPI_Iscatterv(buf, cs, ds, MPI_INT, got, my_cnt, MPI_INT, root, ic, &r));
        wait1(&r);
        if (root >= 0) {
            /* The root's ds[me] is 4 (nl - 1 - me): that block's numbers. */
            int from_q = nl - 1 - me;
            for (int j = 0; j < 4; j++)
                CHECK(got[j] == (j < my_cnt ? v(rootw, 10 * from_q + j) : -1), "iscatterv elem %d", j);
        }
        free(buf), free(cs), free(ds);
    }
}

/* Iallgather(v), Ialltoall(v, w): each block from every remote rank. */
static void exchanges(MPI_Comm ic) {
    int *rb = malloc(sizeof(int) * (size_t)(4 * nr + 4)), sb[64];
    int *cs = malloc(sizeof(int) * (size_t)nr), *ds = malloc(sizeof(int) * (size_t)nr);
    int *ws = malloc(sizeof(int) * (size_t)nr), *wd = malloc(sizeof(int) * (size_t)nr);
    int scs[64], sds[64], wsd[64];
    MPI_Datatype *ts = malloc(sizeof(MPI_Datatype) * (size_t)nr), sts[64];
    MPI_Request r;
    for (int q = 0; q < nr; q++)
        cs[q] = (rw(q) + rank) % 3 + 1, ds[q] = 4 * (nr - 1 - q);
    for (int j = 0; j < 64; j++)
        sb[j] = v(rank, j);
    /* Iallgather. */
    for (int i = 0; i < 4 * nr; i++)
        rb[i] = -1;
    OK(MPI_Iallgather(sb, 2, MPI_INT, rb, 2, MPI_INT, ic, &r));
    wait1(&r);
    for (int q = 0; q < nr; q++)
        for (int j = 0; j < 2; j++)
            CHECK(rb[2 * q + j] == v(rw(q), j), "iallgather q %d", q);
    /* Iallgatherv: remote q sends (w_q % 3) + 1 elements. */
    for (int q = 0; q < nr; q++)
        ws[q] = rw(q) % 3 + 1;
    for (int i = 0; i < 4 * nr; i++)
        rb[i] = -1;
    OK(MPI_Iallgatherv(sb, rank % 3 + 1, MPI_INT, rb, ws, ds, MPI_INT, ic, &r));
    wait1(&r);
    for (int q = 0; q < nr; q++)
        for (int j = 0; j < 4; j++)
            CHECK(rb[ds[q] + j] == (j < ws[q] ? v(rw(q), j) : -1), "iallgatherv q %d", q);
    /* Ialltoall: block q of my send buffer to remote q. */
    for (int i = 0; i < 4 * nr; i++)
        rb[i] = -1;
    OK(MPI_Ialltoall(sb, 2, MPI_INT, rb, 2, MPI_INT, ic, &r));
    wait1(&r);
    for (int q = 0; q < nr; q++)
        for (int j = 0; j < 2; j++)
            CHECK(rb[2 * q + j] == v(rw(q), 2 * me + j), "ialltoall q %d", q);
    /* Ialltoallv: (w_me + w_q) % 3 + 1 elements each way, sent from 5 q. */
    for (int q = 0; q < nr; q++)
        scs[q] = cs[q], sds[q] = 5 * q;
    for (int i = 0; i < 4 * nr; i++)
        rb[i] = -1;
    OK(MPI_Ialltoallv(sb, scs, sds, MPI_INT, rb, cs, ds, MPI_INT, ic, &r));
    wait1(&r);
    for (int q = 0; q < nr; q++)
        for (int j = 0; j < 4; j++)
            CHECK(rb[ds[q] + j] == (j < cs[q] ? v(rw(q), 5 * me + j) : -1), "ialltoallv q %d", q);
    /* Ialltoallw: as Ialltoallv with byte displacements. */
    for (int q = 0; q < nr; q++) {
        wsd[q] = sds[q] * (int)sizeof(int), sts[q] = MPI_INT;
        wd[q] = ds[q] * (int)sizeof(int), ts[q] = MPI_INT;
    }
    for (int i = 0; i < 4 * nr; i++)
        rb[i] = -1;
    OK(MPI_Ialltoallw(sb, scs, wsd, sts, rb, cs, wd, ts, ic, &r));
    wait1(&r);
    for (int q = 0; q < nr; q++)
        for (int j = 0; j < 4; j++)
            CHECK(rb[ds[q] + j] == (j < cs[q] ? v(rw(q), 5 * me + j) : -1), "ialltoallw q %d", q);
    /* The blocking MPI_Alltoallw goes the same way. */
    for (int i = 0; i < 4 * nr; i++)
        rb[i] = -1;
    OK(MPI_Alltoallw(sb, scs, wsd, sts, rb, cs, wd, ts, ic));
    for (int q = 0; q < nr; q++)
        CHECK(rb[ds[q]] == v(rw(q), 5 * me), "alltoallw q %d", q);
    free(rb), free(cs), free(ds), free(ws), free(wd), free(ts);
}

/* Several at once, completed out of order; persistent forms started twice; an
 * idup'ed intercommunicator. */
static void together(MPI_Comm ic) {
    int x[2] = {0, 0}, s = rank, sum = 0, want = 0, ag[64];
    for (int q = 0; q < nr; q++)
        want += rw(q);
    MPI_Request r[3];
    int rootA = 1, root = root_arg(rootA, 0);
    if (root == MPI_ROOT)
        x[0] = 42, x[1] = 43;
    OK(MPI_Ibcast(x, 2, MPI_INT, root, ic, &r[0]));
    OK(MPI_Iallreduce(&s, &sum, 1, MPI_INT, MPI_SUM, ic, &r[1]));
    OK(MPI_Iallgather(&s, 1, MPI_INT, ag, 1, MPI_INT, ic, &r[2]));
    OK(MPI_Wait(&r[2], MPI_STATUS_IGNORE));
    OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    CHECK(sum == want, "together: sum %d, not %d", sum, want);
    if (!inA)
        CHECK(x[0] == 42 && x[1] == 43, "together: bcast");
    for (int q = 0; q < nr; q++)
        CHECK(ag[q] == rw(q), "together: allgather");

    MPI_Request p[2];
    OK(MPI_Allreduce_init(&s, &sum, 1, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &p[0]));
    OK(MPI_Bcast_init(x, 2, MPI_INT, root, ic, MPI_INFO_NULL, &p[1]));
    for (int it = 0; it < 2; it++) {
        s = rank + it;
        sum = -1;
        if (root == MPI_ROOT)
            x[0] = 100 + it;
        OK(MPI_Startall(2, p));
        OK(MPI_Waitall(2, p, MPI_STATUSES_IGNORE));
        CHECK(sum == want + it * nr, "persistent allreduce it %d: %d", it, sum);
        if (!inA)
            CHECK(x[0] == 100 + it, "persistent bcast it %d", it);
    }
    OK(MPI_Request_free(&p[0]));
    OK(MPI_Request_free(&p[1]));

    MPI_Comm dup;
    MPI_Request dr;
    OK(MPI_Comm_idup(ic, &dup, &dr));
    wait1(&dr);
    sum = -1, s = rank;
    OK(MPI_Iallreduce(&s, &sum, 1, MPI_INT, MPI_SUM, dup, &r[0]));
    wait1(&r[0]);
    CHECK(sum == want, "idup'ed: sum %d, not %d", sum, want);
    OK(MPI_Comm_free(&dup));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &n));
    if (n < 2) {
        printf("icoll_inter ok %d\n", rank);
        OK(MPI_Finalize());
        return 0;
    }
    a = n == 4 ? 1 : (n + 1) / 2;
    inA = rank < a;
    MPI_Comm local, ic;
    OK(MPI_Comm_split(MPI_COMM_WORLD, inA, rank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, inA ? a : 0, 99, &ic));
    OK(MPI_Comm_rank(ic, &me));
    OK(MPI_Comm_size(ic, &nl));
    OK(MPI_Comm_remote_size(ic, &nr));
    CHECK(lw(me) == rank, "local rank %d", me);
    barrier(ic);
    bcast(ic);
    reductions(ic);
    rooted(ic);
    exchanges(ic);
    together(ic);
    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&local));
    OK(MPI_Finalize());
    printf("icoll_inter ok %d\n", rank);
    return 0;
}
