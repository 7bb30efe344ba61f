/* Nonblocking and persistent neighbourhood collectives (MPI_Ineighbor_*,
 * MPI_Neighbor_*_init and their _c forms) checked against a reference each rank
 * computes from the topology alone: a 2-D Cartesian grid periodic in one
 * dimension only (MPI_PROC_NULL neighbours whose receive blocks must stay as they
 * were; at 4 ranks a periodic dimension of size 2, so one neighbour twice), a 1-D
 * periodic ring (at 1 and 2 ranks a rank is its own or its neighbour's neighbour
 * twice), and an asymmetric distributed graph with a repeated edge and a rank
 * without destinations. Every form runs on each, the persistent ones started
 * three times with new data. Prints "nbr_nb ok <rank>" at the end. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPI_UNWEIGHTED is a sentinel pointer passed for an array parameter. */
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wunknown-warning-option"
#pragma GCC diagnostic ignored "-Wstringop-overread"

static int rank, np;
#include "check.h"

#define SENTINEL (-7)
#define MAXDEG 8

/* One topology seen from this rank: its sources (-1: MPI_PROC_NULL) and, for each
 * source slot, the sender's destination slot the message leaves from. */
struct topo {
    MPI_Comm comm;
    const char *what;
    int indeg, outdeg;
    int src[MAXDEG], sslot[MAXDEG];
};

/* The value element j of what rank s sends from destination slot k, start `it`. */
static int val(int s, int k, int j, int it) { return it * 1000000 + s * 10000 + k * 100 + j; }
/* An allgather's element j from rank s. */
static int gval(int s, int j, int it) { return it * 1000000 + s * 100 + j; }
/* Elements on the edge from rank s's destination slot k (v-forms; may be 0). */
static int cnt(int s, int k) { return (s + 2 * k) % 3; }

/* The distributed graph's destinations of rank r (`d` holds MAXDEG). */
static int dests(int r, int *d) {
    int n = 0;
    if (np > 2 && r == np - 1)
        return 0; /* no destinations */
    d[n++] = (r + 1) % np;
    d[n++] = (r + 2) % np;
    if (r % 2 == 0)
        d[n++] = (r + 1) % np; /* the same edge again */
    return n;
}

static void cart(struct topo *t, int ndims, const int *periods, const char *what) {
    int d[2] = {0, 0};
    OK(MPI_Dims_create(np, ndims, d));
    OK(MPI_Cart_create(MPI_COMM_WORLD, ndims, d, periods, 0, &t->comm));
    t->what = what;
    t->indeg = t->outdeg = 2 * ndims;
    for (int i = 0; i < ndims; i++) {
        int lo, hi;
        OK(MPI_Cart_shift(t->comm, i, 1, &lo, &hi));
        t->src[2 * i] = lo == MPI_PROC_NULL ? -1 : lo;
        t->src[2 * i + 1] = hi == MPI_PROC_NULL ? -1 : hi;
        /* What I get from my -1 neighbour it sent to its +1 neighbour. */
        t->sslot[2 * i] = 2 * i + 1;
        t->sslot[2 * i + 1] = 2 * i;
    }
}

static void graph(struct topo *t) {
    int d[MAXDEG], s[MAXDEG], nd = dests(rank, d), ns = 0;
    /* Sources in rank order; the m-th edge from s pairs with the m-th time s names
     * me among its destinations. */
    for (int r = 0; r < np; r++) {
        int rd[MAXDEG], n = dests(r, rd);
        for (int k = 0; k < n; k++)
            if (rd[k] == rank) {
                t->src[ns] = r;
                t->sslot[ns] = k;
                s[ns++] = r;
            }
    }
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ns, s, MPI_UNWEIGHTED, nd, d,
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &t->comm));
    t->what = "dist_graph";
    t->indeg = ns;
    t->outdeg = nd;
    int i, o, w;
    OK(MPI_Dist_graph_neighbors_count(t->comm, &i, &o, &w));
    CHECK(i == ns && o == nd, "degrees %d %d", i, o);
}

static void wait_or_start(MPI_Request *r, int persistent) {
    if (persistent)
        OK(MPI_Start(r));
    OK(MPI_Wait(r, MPI_STATUS_IGNORE));
    if (!persistent)
        CHECK(*r == MPI_REQUEST_NULL, "request not freed");
}

/* Allgather and allgatherv: 3 elements from each source (v: `cnt(s, 0) + 1`,
 * stored from the top slot down with a gap). */
static void allgathers(struct topo *t, int form) {
    int sb[4], rb[MAXDEG * 8], rc[MAXDEG], rd[MAXDEG];
    MPI_Request r = MPI_REQUEST_NULL;
    for (int it = 0; it < 3; it++) {
        int v = form >= 2;
        int mine = v ? cnt(rank, 0) + 1 : 3;
        for (int j = 0; j < 4; j++)
            sb[j] = gval(rank, j, it);
        for (int i = 0; i < MAXDEG * 8; i++)
            rb[i] = SENTINEL;
        int at = 0;
        for (int i = t->indeg - 1; i >= 0; i--) {
            rc[i] = t->src[i] < 0 ? 2 : cnt(t->src[i], 0) + 1;
            rd[i] = at;
            at += rc[i] + 1;
        }
        if (form == 0 && it == 0)
            OK(MPI_Ineighbor_allgather(sb, 3, MPI_INT, rb, 3, MPI_INT, t->comm, &r));
        if (form == 1 && it == 0)
            OK(MPI_Neighbor_allgather_init(sb, 3, MPI_INT, rb, 3, MPI_INT, t->comm,
                                           MPI_INFO_NULL, &r));
        if (form == 2 && it == 0)
            OK(MPI_Ineighbor_allgatherv(sb, mine, MPI_INT, rb, rc, rd, MPI_INT, t->comm, &r));
        if (form == 3 && it == 0)
            OK(MPI_Neighbor_allgatherv_init(sb, mine, MPI_INT, rb, rc, rd, MPI_INT, t->comm,
                                            MPI_INFO_NULL, &r));
        if (form == 4 && it == 0) {
            MPI_Count c8[MAXDEG];
            MPI_Aint d8[MAXDEG];
            for (int i = 0; i < t->indeg; i++)
                c8[i] = rc[i], d8[i] = rd[i];
            OK(MPI_Neighbor_allgatherv_init_c(sb, mine, MPI_INT, rb, c8, d8, MPI_INT, t->comm,
                                              MPI_INFO_NULL, &r));
        }
        if (form == 0 || form == 2) {
            if (it > 0)
                break;
            wait_or_start(&r, 0);
        } else {
            wait_or_start(&r, 1);
        }
        for (int i = 0; i < t->indeg; i++) {
            int n = v ? rc[i] : 3, base = v ? rd[i] : 3 * i;
            for (int j = 0; j < n; j++) {
                int want = t->src[i] < 0 ? SENTINEL : gval(t->src[i], j, it);
                CHECK(rb[base + j] == want, "%s allgather form %d it %d slot %d elem %d: %d, not %d",
                      t->what, form, it, i, j, rb[base + j], want);
            }
            if (v)
                CHECK(rb[base + n] == SENTINEL, "%s: gap written", t->what);
        }
    }
    if (r != MPI_REQUEST_NULL)
        OK(MPI_Request_free(&r));
}

/* Alltoall (2 elements per edge) and alltoallv (`cnt` per edge, blocks reversed). */
static void alltoalls(struct topo *t, int form) {
    int sb[MAXDEG * 4], rb[MAXDEG * 4];
    int sc[MAXDEG], sd[MAXDEG], rc[MAXDEG], rd[MAXDEG];
    MPI_Count sc8[MAXDEG], rc8[MAXDEG];
    MPI_Aint sd8[MAXDEG], rd8[MAXDEG];
    MPI_Request r = MPI_REQUEST_NULL;
    int v = form >= 3, persistent = form == 1 || form == 4 || form == 5;
    for (int it = 0; it < 3; it++) {
        int at = 0;
        for (int k = 0; k < t->outdeg; k++) {
            sc[k] = v ? cnt(rank, k) : 2;
            sd[k] = v ? at : 2 * k;
            for (int j = 0; j < sc[k]; j++)
                sb[sd[k] + j] = val(rank, k, j, it);
            at += sc[k];
        }
        for (int i = 0; i < MAXDEG * 4; i++)
            rb[i] = SENTINEL;
        at = 0;
        for (int i = t->indeg - 1; i >= 0; i--) {
            rc[i] = v ? (t->src[i] < 0 ? 1 : cnt(t->src[i], t->sslot[i])) : 2;
            rd[i] = v ? at : 2 * i;
            at += rc[i] + 1;
        }
        for (int i = 0; i < MAXDEG; i++)
            sc8[i] = sc[i], rc8[i] = rc[i], sd8[i] = sd[i], rd8[i] = rd[i];
        if (it == 0 || !persistent) {
            switch (form) {
            case 0:
                OK(MPI_Ineighbor_alltoall(sb, 2, MPI_INT, rb, 2, MPI_INT, t->comm, &r));
                break;
            case 1:
                OK(MPI_Neighbor_alltoall_init(sb, 2, MPI_INT, rb, 2, MPI_INT, t->comm,
                                              MPI_INFO_NULL, &r));
                break;
            case 2:
                OK(MPI_Ineighbor_alltoall_c(sb, 2, MPI_INT, rb, 2, MPI_INT, t->comm, &r));
                break;
            case 3:
                OK(MPI_Ineighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, t->comm, &r));
                break;
            case 4:
                OK(MPI_Neighbor_alltoallv_init(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, t->comm,
                                               MPI_INFO_NULL, &r));
                break;
            case 5:
                OK(MPI_Neighbor_alltoallv_init_c(sb, sc8, sd8, MPI_INT, rb, rc8, rd8, MPI_INT,
                                                 t->comm, MPI_INFO_NULL, &r));
                break;
            case 6:
                OK(MPI_Ineighbor_alltoallv_c(sb, sc8, sd8, MPI_INT, rb, rc8, rd8, MPI_INT,
                                             t->comm, &r));
                break;
            }
        }
        wait_or_start(&r, persistent);
        for (int i = 0; i < t->indeg; i++) {
            for (int j = 0; j < rc[i]; j++) {
                int want = t->src[i] < 0 ? SENTINEL : val(t->src[i], t->sslot[i], j, it);
                CHECK(rb[rd[i] + j] == want, "%s alltoall form %d it %d slot %d elem %d: %d, not %d",
                      t->what, form, it, i, j, rb[rd[i] + j], want);
            }
        }
    }
    if (r != MPI_REQUEST_NULL)
        OK(MPI_Request_free(&r));
}

/* Alltoallw: 2 ints per edge sent contiguous, received through a strided type
 * (every third int) at byte displacements; the ints between stay untouched. */
static void alltoallw(struct topo *t, int form) {
    int sb[MAXDEG * 2], rb[MAXDEG * 8];
    int sc[MAXDEG], rc[MAXDEG];
    MPI_Count sc8[MAXDEG], rc8[MAXDEG];
    MPI_Aint sd[MAXDEG], rd[MAXDEG];
    MPI_Datatype st[MAXDEG], rt[MAXDEG], strided;
    OK(MPI_Type_vector(2, 1, 3, MPI_INT, &strided));
    OK(MPI_Type_commit(&strided));
    MPI_Request r = MPI_REQUEST_NULL;
    int persistent = form != 0 && form != 2;
    for (int it = 0; it < 3; it++) {
        for (int k = 0; k < t->outdeg; k++) {
            sc[k] = sc8[k] = 2;
            sd[k] = (MPI_Aint)(2 * k * sizeof(int));
            st[k] = MPI_INT;
            sb[2 * k] = val(rank, k, 0, it);
            sb[2 * k + 1] = val(rank, k, 1, it);
        }
        for (int i = 0; i < t->indeg; i++) {
            rc[i] = rc8[i] = 1;
            rd[i] = (MPI_Aint)(8 * i * sizeof(int));
            rt[i] = strided;
        }
        for (int i = 0; i < MAXDEG * 8; i++)
            rb[i] = SENTINEL;
        if (it == 0 || !persistent) {
            if (form == 0)
                OK(MPI_Ineighbor_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, t->comm, &r));
            if (form == 1)
                OK(MPI_Neighbor_alltoallw_init(sb, sc, sd, st, rb, rc, rd, rt, t->comm,
                                               MPI_INFO_NULL, &r));
            if (form == 2)
                OK(MPI_Ineighbor_alltoallw_c(sb, sc8, sd, st, rb, rc8, rd, rt, t->comm, &r));
            if (form == 3)
                OK(MPI_Neighbor_alltoallw_init_c(sb, sc8, sd, st, rb, rc8, rd, rt, t->comm,
                                                 MPI_INFO_NULL, &r));
        }
        wait_or_start(&r, persistent);
        for (int i = 0; i < t->indeg; i++)
            for (int j = 0; j < 8; j++) {
                int want = SENTINEL;
                if (t->src[i] >= 0 && (j == 0 || j == 3))
                    want = val(t->src[i], t->sslot[i], j / 3, it);
                CHECK(rb[8 * i + j] == want, "%s alltoallw form %d it %d slot %d int %d: %d, not %d",
                      t->what, form, it, i, j, rb[8 * i + j], want);
            }
    }
    if (r != MPI_REQUEST_NULL)
        OK(MPI_Request_free(&r));
    OK(MPI_Type_free(&strided));
}

/* Several outstanding at once on one communicator, completed in reverse order. */
static void overlapped(struct topo *t) {
    int sb[3][2 * MAXDEG], rb[3][2 * MAXDEG];
    MPI_Request r[3];
    for (int q = 0; q < 3; q++) {
        for (int k = 0; k < t->outdeg; k++)
            sb[q][2 * k] = sb[q][2 * k + 1] = val(rank, k, q, 7);
        OK(MPI_Ineighbor_alltoall(sb[q], 2, MPI_INT, rb[q], 2, MPI_INT, t->comm, &r[q]));
    }
    for (int q = 2; q >= 0; q--)
        OK(MPI_Wait(&r[q], MPI_STATUS_IGNORE));
    for (int q = 0; q < 3; q++)
        for (int i = 0; i < t->indeg; i++)
            if (t->src[i] >= 0)
                CHECK(rb[q][2 * i] == val(t->src[i], t->sslot[i], q, 7), "%s overlapped", t->what);
}

static void all_forms(struct topo *t) {
    for (int f = 0; f < 5; f++)
        allgathers(t, f);
    for (int f = 0; f < 7; f++)
        alltoalls(t, f);
    for (int f = 0; f < 4; f++)
        alltoallw(t, f);
    overlapped(t);
    OK(MPI_Comm_free(&t->comm));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    struct topo t;
    int p2[2] = {1, 0}, p1[1] = {1};
    cart(&t, 2, p2, "cart 2-D");
    all_forms(&t);
    cart(&t, 1, p1, "ring");
    all_forms(&t);
    graph(&t);
    all_forms(&t);
    /* Bad arguments are refused with their class (the communicator's handler set
     * to return), no request made. */
    {
        struct topo b;
        cart(&b, 1, p1, "ring");
        OK(MPI_Comm_set_errhandler(b.comm, MPI_ERRORS_RETURN));
        int sb[4] = {0}, rb[4] = {0}, c2[2] = {1, 1}, d2[2] = {0, 1}, cls = 0;
        MPI_Request q = MPI_REQUEST_NULL;
        OK(MPI_Error_class(MPI_Ineighbor_alltoall(sb, -1, MPI_INT, rb, 1, MPI_INT, b.comm, &q), &cls));
        CHECK(cls == MPI_ERR_COUNT && q == MPI_REQUEST_NULL, "negative count: class %d", cls);
        OK(MPI_Error_class(MPI_Ineighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, b.comm, NULL), &cls));
        CHECK(cls == MPI_ERR_ARG, "NULL request: class %d", cls);
        OK(MPI_Error_class(MPI_Ineighbor_allgatherv(sb, 1, MPI_INT, rb, NULL, d2, MPI_INT, b.comm, &q), &cls));
        CHECK(cls == MPI_ERR_ARG && q == MPI_REQUEST_NULL, "NULL counts: class %d", cls);
        OK(MPI_Error_class(MPI_Ineighbor_alltoallv(MPI_IN_PLACE, c2, d2, MPI_INT, rb, c2, d2, MPI_INT, b.comm, &q), &cls));
        CHECK(cls == MPI_ERR_ARG && q == MPI_REQUEST_NULL, "in place: class %d", cls);
        OK(MPI_Error_class(MPI_Ineighbor_allgather(sb, 1, MPI_DATATYPE_NULL, rb, 1, MPI_INT, b.comm, &q), &cls));
        CHECK(cls == MPI_ERR_TYPE && q == MPI_REQUEST_NULL, "null type: class %d", cls);
        OK(MPI_Comm_free(&b.comm));
    }
    /* No topology: refused with MPI_ERR_TOPOLOGY, no request made. */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Request r = MPI_REQUEST_NULL;
    int x = 0, y = 0, cls = 0;
    int rc = MPI_Ineighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, MPI_COMM_WORLD, &r);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_TOPOLOGY && r == MPI_REQUEST_NULL, "class %d", cls);
    OK(MPI_Finalize());
    printf("nbr_nb ok %d\n", rank);
    return 0;
}
