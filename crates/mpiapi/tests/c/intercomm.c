/* myrix MPI test, 2 or more ranks: intercommunicators. The world splits into group
 * A (the first a ranks; uneven at 3, 4 and 5 ranks) and group B; MPI_Intercomm_create
 * joins them. Checked: test_inter, local and remote sizes, ranks and groups;
 * point-to-point across the groups (specific and MPI_ANY_SOURCE receives, the
 * status's source a remote rank, probe); MPI_Intercomm_merge ordering both ways;
 * every blocking collective's results in both directions (MPI_ROOT /
 * MPI_PROC_NULL roots); Comm_dup, Comm_compare, Comm_split, Comm_create and
 * Comm_free of an intercommunicator. Prints "intercomm ok <rank>" at the end. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                        \
    do {                                                                                \
        if (!(c)) {                                                                     \
            fprintf(stderr, "intercomm.c:%d: rank %d: check failed: %s (n=%d)\n",       \
                    __LINE__, wrank, #c, n);                                            \
            MPI_Abort(MPI_COMM_WORLD, 9);                                               \
        }                                                                               \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS)

static int wrank, n, a, inA, nl, nr, me;

static int *ints(int k) { return calloc(k > 0 ? (size_t)k : 1, sizeof(int)); }

/* The world rank of remote rank q. */
static int rw(int q) { return inA ? a + q : q; }
/* The world rank of local rank r. */
static int lw(int r) { return inA ? r : a + r; }

static void p2p(MPI_Comm ic)
{
    int *got = ints(nr);
    MPI_Request *rq = calloc(2 * (size_t)(nr > 0 ? nr : 1), sizeof(MPI_Request));
    int *out = ints(nr);
    MPI_Status st[64];
    for (int q = 0; q < nr; q++)
        OK(MPI_Irecv(&got[q], 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &rq[q]));
    for (int q = 0; q < nr; q++) {
        out[q] = wrank * 1000 + rw(q);
        OK(MPI_Isend(&out[q], 1, MPI_INT, q, 5, ic, &rq[nr + q]));
    }
    OK(MPI_Waitall(2 * nr, rq, st));
    for (int q = 0; q < nr; q++) {
        int src = st[q].MPI_SOURCE;
        CHECK(src >= 0 && src < nr);
        CHECK(got[q] == rw(src) * 1000 + wrank);
    }
    /* Specific source, with a probe first: local rank me and remote rank me swap
     * (when both exist). */
    if (me < nr) {
        MPI_Status s;
        int c = 0, v = -1;
        OK(MPI_Send(&wrank, 1, MPI_INT, me, 7, ic));
        OK(MPI_Probe(me, 7, ic, &s));
        CHECK(s.MPI_SOURCE == me && s.MPI_TAG == 7);
        OK(MPI_Get_count(&s, MPI_INT, &c));
        CHECK(c == 1);
        OK(MPI_Recv(&v, 1, MPI_INT, me, 7, ic, &s));
        CHECK(v == rw(me) && s.MPI_SOURCE == me);
    }
    free(got);
    free(rq);
    free(out);
}

static void colls(MPI_Comm ic)
{
    int na = a, nb = n - a;
    OK(MPI_Barrier(ic));
    /* Bcast from A's local 0, then from B's last rank. */
    for (int dir = 0; dir < 2; dir++) {
        int rootA = dir == 0, rootlocal = dir == 0 ? 0 : nb - 1;
        int mine_is_root_group = (inA == rootA);
        int x[3] = {-1, -1, -1};
        int root;
        if (mine_is_root_group) {
            root = me == rootlocal ? MPI_ROOT : MPI_PROC_NULL;
            if (me == rootlocal)
                x[0] = 7, x[1] = 8 + dir, x[2] = n;
        } else
            root = rootlocal;
        OK(MPI_Bcast(x, 3, MPI_INT, root, ic));
        if (!mine_is_root_group)
            CHECK(x[0] == 7 && x[1] == 8 + dir && x[2] == n);
        else if (me != rootlocal)
            CHECK(x[0] == -1);
    }
    /* Reduce to A's local 0: the sum of B's world ranks (and of their squares). */
    {
        int s[2] = {wrank, wrank * wrank}, r[2] = {-1, -1};
        int root = inA ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        OK(MPI_Reduce(s, r, 2, MPI_INT, MPI_SUM, root, ic));
        if (inA && me == 0) {
            int e0 = 0, e1 = 0;
            for (int w = a; w < n; w++)
                e0 += w, e1 += w * w;
            CHECK(r[0] == e0 && r[1] == e1);
        }
    }
    /* Allreduce: each group gets the other's sum and max. */
    {
        int s = wrank + 1, r = -1, m = -1;
        OK(MPI_Allreduce(&s, &r, 1, MPI_INT, MPI_SUM, ic));
        OK(MPI_Allreduce(&s, &m, 1, MPI_INT, MPI_MAX, ic));
        int e = 0, emax = 0;
        for (int q = 0; q < nr; q++)
            e += rw(q) + 1, emax = rw(q) + 1 > emax ? rw(q) + 1 : emax;
        CHECK(r == e && m == emax);
    }
    /* Gather to B's local 0 of A's world ranks (two ints each); gatherv reversed. */
    {
        int s[2] = {wrank, -wrank}, *r = ints(2 * na + 2);
        int root = inA ? 0 : (me == 0 ? MPI_ROOT : MPI_PROC_NULL);
        OK(MPI_Gather(s, 2, MPI_INT, r, 2, MPI_INT, root, ic));
        if (!inA && me == 0)
            for (int q = 0; q < na; q++)
                CHECK(r[2 * q] == q && r[2 * q + 1] == -q);
        int *cs = ints(na), *ds = ints(na);
        for (int q = 0; q < na; q++)
            cs[q] = 1, ds[q] = na - 1 - q;
        OK(MPI_Gatherv(s, 1, MPI_INT, r, cs, ds, MPI_INT, root, ic));
        if (!inA && me == 0)
            for (int q = 0; q < na; q++)
                CHECK(r[na - 1 - q] == q);
        free(r), free(cs), free(ds);
    }
    /* Scatter from A's local 0 to B; scatterv with 2 each. */
    {
        int *s = ints(2 * nb + 2), r[2] = {-1, -1};
        for (int q = 0; q < 2 * nb; q++)
            s[q] = 100 + q;
        int root = inA ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        OK(MPI_Scatter(s, 1, MPI_INT, r, 1, MPI_INT, root, ic));
        if (!inA)
            CHECK(r[0] == 100 + me);
        int *cs = ints(nb), *ds = ints(nb);
        for (int q = 0; q < nb; q++)
            cs[q] = 2, ds[q] = 2 * (nb - 1 - q);
        OK(MPI_Scatterv(s, cs, ds, MPI_INT, r, 2, MPI_INT, root, ic));
        if (!inA)
            CHECK(r[0] == 100 + 2 * (nb - 1 - me) && r[1] == 101 + 2 * (nb - 1 - me));
        free(s), free(cs), free(ds);
    }
    /* Allgather(v): the remote group's world ranks. */
    {
        int *r = ints(nr + 1), *cs = ints(nr),
            *ds = ints(nr);
        OK(MPI_Allgather(&wrank, 1, MPI_INT, r, 1, MPI_INT, ic));
        for (int q = 0; q < nr; q++)
            CHECK(r[q] == rw(q));
        for (int q = 0; q < nr; q++)
            cs[q] = 1, ds[q] = nr - 1 - q;
        OK(MPI_Allgatherv(&wrank, 1, MPI_INT, r, cs, ds, MPI_INT, ic));
        for (int q = 0; q < nr; q++)
            CHECK(r[nr - 1 - q] == rw(q));
        free(r), free(cs), free(ds);
    }
    /* Alltoall(v). */
    {
        int *s = ints(nr), *r = ints(nr);
        int *c1 = ints(nr), *d1 = ints(nr);
        for (int q = 0; q < nr; q++)
            s[q] = wrank * 100 + q, c1[q] = 1, d1[q] = nr - 1 - q;
        OK(MPI_Alltoall(s, 1, MPI_INT, r, 1, MPI_INT, ic));
        for (int q = 0; q < nr; q++)
            CHECK(r[q] == rw(q) * 100 + me);
        OK(MPI_Alltoallv(s, c1, d1, MPI_INT, r, c1, d1, MPI_INT, ic));
        /* We sent s[nr-1-q] to q; q sent us its s[nr_q - 1 - me] (nr_q = nl). */
        for (int q = 0; q < nr; q++)
            CHECK(r[nr - 1 - q] == rw(q) * 100 + (nl - 1 - me));
        free(s), free(r), free(c1), free(d1);
    }
    /* Reduce_scatter_block: A gets nb each, B na each (na*nb elements in all); the
     * other group's sum of (world + j). Reduce_scatter: the same, one count each. */
    {
        int per = inA ? nb : na, total = na * nb;
        int *s = ints(total), *r = ints(per);
        for (int j = 0; j < total; j++)
            s[j] = wrank + j;
        OK(MPI_Reduce_scatter_block(s, r, per, MPI_INT, MPI_SUM, ic));
        for (int k = 0; k < per; k++) {
            int j = me * per + k, e = 0;
            for (int q = 0; q < nr; q++)
                e += rw(q) + j;
            CHECK(r[k] == e);
        }
        int *cs = ints(nl);
        for (int q = 0; q < nl; q++)
            cs[q] = per;
        memset(r, 0, per * sizeof(int));
        OK(MPI_Reduce_scatter(s, r, cs, MPI_INT, MPI_SUM, ic));
        for (int k = 0; k < per; k++) {
            int j = me * per + k, e = 0;
            for (int q = 0; q < nr; q++)
                e += rw(q) + j;
            CHECK(r[k] == e);
        }
        free(s), free(r), free(cs);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    CHECK(n >= 2);
    MPI_Comm parent = MPI_COMM_WORLD;
    CHECK(MPI_Comm_get_parent(&parent) == MPI_SUCCESS && parent == MPI_COMM_NULL);
    a = n == 4 ? 1 : (n + 1) / 2;
    inA = wrank < a;
    nl = inA ? a : n - a;
    nr = n - nl;
    MPI_Comm local, ic;
    OK(MPI_Comm_split(MPI_COMM_WORLD, inA, wrank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, inA ? a : 0, 99, &ic));
    int flag = 0, s = 0, rs = 0;
    OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag == 1);
    OK(MPI_Comm_test_inter(local, &flag));
    CHECK(flag == 0);
    OK(MPI_Comm_size(ic, &s));
    OK(MPI_Comm_remote_size(ic, &rs));
    OK(MPI_Comm_rank(ic, &me));
    CHECK(s == nl && rs == nr && lw(me) == wrank);
    MPI_Group g, wg;
    int t = -1, zero = 0;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    OK(MPI_Comm_remote_group(ic, &g));
    OK(MPI_Group_size(g, &s));
    CHECK(s == nr);
    OK(MPI_Group_translate_ranks(g, 1, &zero, wg, &t));
    CHECK(t == rw(0));
    OK(MPI_Group_free(&g));
    OK(MPI_Comm_group(ic, &g));
    OK(MPI_Group_translate_ranks(g, 1, &zero, wg, &t));
    CHECK(t == lw(0));

    p2p(ic);

    /* Merge: A low gives world order; A high puts B first. */
    for (int high = 0; high < 2; high++) {
        MPI_Comm m;
        int mr = -1, ms = 0;
        OK(MPI_Intercomm_merge(ic, inA ? high : !high, &m));
        OK(MPI_Comm_rank(m, &mr));
        OK(MPI_Comm_size(m, &ms));
        CHECK(ms == n);
        CHECK(mr == (high ? (inA ? (n - a) + wrank : wrank - a) : wrank));
        int x = wrank, sum = 0;
        OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, m));
        CHECK(sum == n * (n - 1) / 2);
        OK(MPI_Comm_free(&m));
    }

    colls(ic);

    /* Dup: congruent, works on its own context. */
    MPI_Comm d;
    int res = -1;
    OK(MPI_Comm_dup(ic, &d));
    OK(MPI_Comm_compare(ic, d, &res));
    CHECK(res == MPI_CONGRUENT);
    OK(MPI_Comm_compare(ic, local, &res));
    CHECK(res == MPI_UNEQUAL);
    OK(MPI_Comm_test_inter(d, &flag));
    CHECK(flag == 1);
    p2p(d);
    colls(d);
    OK(MPI_Comm_free(&d));
    CHECK(d == MPI_COMM_NULL);

    /* Split by local rank parity: even ranks face even ranks. */
    MPI_Comm sp;
    OK(MPI_Comm_split(ic, me % 2, -me, &sp));
    int lo = (nl + 1) / 2, ro = (nr + 1) / 2; /* even counts */
    int le = me % 2 == 0 ? lo : nl - lo, re = me % 2 == 0 ? ro : nr - ro;
    if (le == 0 || re == 0)
        CHECK(sp == MPI_COMM_NULL);
    else {
        OK(MPI_Comm_size(sp, &s));
        OK(MPI_Comm_remote_size(sp, &rs));
        CHECK(s == le && rs == re);
        int sr = -1;
        OK(MPI_Comm_rank(sp, &sr));
        CHECK(sr == le - 1 - me / 2); /* key -me: reversed */
        int x = wrank, sum = -1;
        OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_MAX, sp));
        int e = -1;
        for (int q = 0; q < nr; q++)
            if (q % 2 == me % 2 && rw(q) > e)
                e = rw(q);
        CHECK(sum == e);
        OK(MPI_Comm_free(&sp));
    }

    /* Create from the local group's first rank only. */
    MPI_Group first;
    OK(MPI_Group_incl(g, 1, &zero, &first));
    MPI_Comm cr;
    OK(MPI_Comm_create(ic, first, &cr));
    if (me == 0) {
        OK(MPI_Comm_remote_size(cr, &rs));
        CHECK(rs == 1);
        int x = wrank, y = -1;
        OK(MPI_Sendrecv(&x, 1, MPI_INT, 0, 3, &y, 1, MPI_INT, 0, 3, cr, MPI_STATUS_IGNORE));
        CHECK(y == rw(0));
        OK(MPI_Comm_free(&cr));
    } else
        CHECK(cr == MPI_COMM_NULL);
    OK(MPI_Group_free(&first));
    OK(MPI_Group_free(&g));
    OK(MPI_Group_free(&wg));

    /* MPI_Comm_disconnect: collective free, after a message still in flight. */
    int token = wrank, got = -1, lr = -1;
    OK(MPI_Comm_rank(ic, &lr));
    if (lr == 0) { /* the two leaders swap a message */
        MPI_Request dr;
        OK(MPI_Irecv(&got, 1, MPI_INT, 0, 9, ic, &dr));
        OK(MPI_Send(&token, 1, MPI_INT, 0, 9, ic));
        OK(MPI_Wait(&dr, MPI_STATUS_IGNORE));
        CHECK(got >= 0);
    }
    OK(MPI_Comm_disconnect(&ic));
    CHECK(ic == MPI_COMM_NULL);
    MPI_Comm world = MPI_COMM_WORLD;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(MPI_Comm_disconnect(&world) == MPI_ERR_COMM);
    OK(MPI_Comm_free(&local));
    printf("intercomm ok %d\n", wrank);
    MPI_Finalize();
    return 0;
}
