/* Process topologies and neighbourhood collectives checked against the
 * standard's definitions: MPI_Dims_create's examples and errors, Cartesian
 * coordinates, shifts (MPI_PROC_NULL at open edges), sub-grids, a halo exchange,
 * graphs and distributed graphs, and the neighbour collectives on each.
 * Prints "topo ok <rank>" at the end; any failure aborts with a message. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPI_UNWEIGHTED is a sentinel pointer passed for an array parameter. */
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wunknown-warning-option"
#pragma GCC diagnostic ignored "-Wstringop-overread"

static int me, np;

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", me, __FILE__, \
                    __LINE__, #c);                                             \
            MPI_Abort(MPI_COMM_WORLD, 1);                                      \
        }                                                                      \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS)

static void dims(void) {
    int d[3];
    d[0] = d[1] = 0;
    OK(MPI_Dims_create(6, 2, d));
    CHECK(d[0] == 3 && d[1] == 2);
    d[0] = d[1] = 0;
    OK(MPI_Dims_create(7, 2, d));
    CHECK(d[0] == 7 && d[1] == 1);
    d[0] = 0, d[1] = 3, d[2] = 0;
    OK(MPI_Dims_create(6, 3, d));
    CHECK(d[0] == 2 && d[1] == 3 && d[2] == 1);
    d[0] = 0, d[1] = 3, d[2] = 0;
    CHECK(MPI_Dims_create(7, 3, d) == MPI_ERR_DIMS);
    d[0] = -1, d[1] = 0;
    CHECK(MPI_Dims_create(4, 2, d) == MPI_ERR_DIMS);
    d[0] = d[1] = d[2] = 0;
    OK(MPI_Dims_create(16, 3, d));
    CHECK(d[0] == 4 && d[1] == 2 && d[2] == 2);
}

/* Coordinates of rank r in a row-major grid. */
static void coords_of(int r, const int *d, int n, int *c) {
    for (int i = n - 1; i >= 0; i--) {
        c[i] = r % d[i];
        r /= d[i];
    }
}

static void cart2d(void) {
    int d[2] = {0, 0}, per[2] = {1, 0}, c[2], cc[2], dd[2], pp[2];
    MPI_Comm cart, dup;
    OK(MPI_Dims_create(np, 2, d));
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, d, per, 1, &cart));
    int st, nd, r;
    OK(MPI_Topo_test(cart, &st));
    CHECK(st == MPI_CART);
    OK(MPI_Cartdim_get(cart, &nd));
    CHECK(nd == 2);
    OK(MPI_Cart_get(cart, 2, dd, pp, cc));
    coords_of(me, d, 2, c);
    CHECK(dd[0] == d[0] && dd[1] == d[1] && pp[0] == 1 && pp[1] == 0);
    CHECK(cc[0] == c[0] && cc[1] == c[1]);
    for (int q = 0; q < np; q++) {
        OK(MPI_Cart_coords(cart, q, 2, cc));
        coords_of(q, d, 2, c);
        CHECK(cc[0] == c[0] && cc[1] == c[1]);
        OK(MPI_Cart_rank(cart, cc, &r));
        CHECK(r == q);
    }
    /* Periodic dimension 0 wraps; dimension 1 is open. */
    coords_of(me, d, 2, c);
    cc[0] = c[0] - d[0], cc[1] = c[1];
    OK(MPI_Cart_rank(cart, cc, &r));
    CHECK(r == me);
    int src, dst;
    OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    CHECK(src == ((c[0] + d[0] - 1) % d[0]) * d[1] + c[1]);
    CHECK(dst == ((c[0] + 1) % d[0]) * d[1] + c[1]);
    OK(MPI_Cart_shift(cart, 1, 1, &src, &dst));
    CHECK(src == (c[1] == 0 ? MPI_PROC_NULL : me - 1));
    CHECK(dst == (c[1] == d[1] - 1 ? MPI_PROC_NULL : me + 1));
    /* A halo exchange along the open dimension: Sendrecv with MPI_PROC_NULL. */
    int halo[2] = {-1, -1};
    OK(MPI_Sendrecv(&me, 1, MPI_INT, dst, 7, &halo[0], 1, MPI_INT, src, 7, cart,
                    MPI_STATUS_IGNORE));
    OK(MPI_Sendrecv(&me, 1, MPI_INT, src, 8, &halo[1], 1, MPI_INT, dst, 8, cart,
                    MPI_STATUS_IGNORE));
    CHECK(halo[0] == (src == MPI_PROC_NULL ? -1 : src));
    CHECK(halo[1] == (dst == MPI_PROC_NULL ? -1 : dst));
    CHECK(MPI_Cart_shift(cart, 2, 1, &src, &dst) == MPI_ERR_ARG);

    /* Neighbour collectives: slots are (dim0 -1, dim0 +1, dim1 -1, dim1 +1). */
    int nb[4];
    OK(MPI_Cart_shift(cart, 0, 1, &nb[0], &nb[1]));
    OK(MPI_Cart_shift(cart, 1, 1, &nb[2], &nb[3]));
    int got[4] = {-1, -1, -1, -1};
    OK(MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, cart));
    for (int j = 0; j < 4; j++)
        CHECK(got[j] == (nb[j] == MPI_PROC_NULL ? -1 : nb[j]));
    int out[4];
    for (int j = 0; j < 4; j++) out[j] = me * 100 + j, got[j] = -1;
    OK(MPI_Neighbor_alltoall(out, 1, MPI_INT, got, 1, MPI_INT, cart));
    for (int j = 0; j < 4; j++)
        CHECK(got[j] == (nb[j] == MPI_PROC_NULL ? -1 : nb[j] * 100 + (j ^ 1)));
    /* alltoallv with 2 ints to each neighbour, received at displacement 2*j. */
    int o2[8], g2[8], sc[4] = {2, 2, 2, 2}, sd[4] = {0, 2, 4, 6};
    for (int j = 0; j < 8; j++) o2[j] = me * 1000 + j, g2[j] = -1;
    OK(MPI_Neighbor_alltoallv(o2, sc, sd, MPI_INT, g2, sc, sd, MPI_INT, cart));
    for (int j = 0; j < 4; j++) {
        int k = j ^ 1;
        CHECK(g2[2 * j] == (nb[j] == MPI_PROC_NULL ? -1 : nb[j] * 1000 + 2 * k));
        CHECK(g2[2 * j + 1] ==
              (nb[j] == MPI_PROC_NULL ? -1 : nb[j] * 1000 + 2 * k + 1));
    }

    /* A duplicate keeps the topology; a sub-grid of dimension 1. */
    OK(MPI_Comm_dup(cart, &dup));
    OK(MPI_Topo_test(dup, &st));
    CHECK(st == MPI_CART);
    MPI_Comm row;
    int keep[2] = {0, 1}, rs, rr;
    OK(MPI_Cart_sub(cart, keep, &row));
    OK(MPI_Comm_size(row, &rs));
    OK(MPI_Comm_rank(row, &rr));
    CHECK(rs == d[1] && rr == c[1]);
    OK(MPI_Cartdim_get(row, &nd));
    CHECK(nd == 1);
    int sum = 0;
    OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, row));
    CHECK(sum == c[0] * d[1] * d[1] + d[1] * (d[1] - 1) / 2);
    OK(MPI_Comm_free(&row));
    OK(MPI_Comm_free(&dup));
    OK(MPI_Comm_free(&cart));
}

/* A periodic ring: with 1 or 2 ranks both neighbours are the same process, so
 * the neighbour slots must not mix up. */
static void ring(void) {
    int d = np, per = 1, nb[2], out[2] = {me * 10, me * 10 + 1}, got[2];
    MPI_Comm c;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &d, &per, 0, &c));
    OK(MPI_Cart_shift(c, 0, 1, &nb[0], &nb[1]));
    CHECK(nb[0] == (me + np - 1) % np && nb[1] == (me + 1) % np);
    OK(MPI_Neighbor_alltoall(out, 1, MPI_INT, got, 1, MPI_INT, c));
    CHECK(got[0] == nb[0] * 10 + 1 && got[1] == nb[1] * 10);
    OK(MPI_Comm_free(&c));
    /* A grid smaller than the communicator: the rest get MPI_COMM_NULL. */
    d = 1;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &d, &per, 0, &c));
    CHECK((me == 0) == (c != MPI_COMM_NULL));
    if (c != MPI_COMM_NULL) OK(MPI_Comm_free(&c));
    /* A grid larger than the communicator is refused, and the handle is null. */
    int big[2] = {np + 1, np + 1}, per2[2] = {0, 0};
    c = MPI_COMM_WORLD;
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, big, per2, 0, &c) != MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL);
    int nr;
    OK(MPI_Cart_map(MPI_COMM_WORLD, 1, &d, &per, &nr));
    CHECK(nr == (me == 0 ? 0 : MPI_UNDEFINED));
    d = np + 1;
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, &d, &per, 0, &c) == MPI_ERR_ARG);
    d = 0;
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, &d, &per, 0, &c) == MPI_ERR_DIMS);
}

static void graph(void) {
    /* A ring as a graph: node i's neighbours are i-1 and i+1. */
    int *index = malloc(sizeof(int) * np), *edges = malloc(sizeof(int) * 2 * np);
    for (int i = 0; i < np; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + np - 1) % np;
        edges[2 * i + 1] = (i + 1) % np;
    }
    MPI_Comm g;
    OK(MPI_Graph_create(MPI_COMM_WORLD, np, index, edges, 0, &g));
    int st, nn, ne, cnt, nb[2];
    OK(MPI_Topo_test(g, &st));
    CHECK(st == MPI_GRAPH);
    OK(MPI_Graphdims_get(g, &nn, &ne));
    CHECK(nn == np && ne == 2 * np);
    OK(MPI_Graph_neighbors_count(g, me, &cnt));
    CHECK(cnt == 2);
    OK(MPI_Graph_neighbors(g, me, 2, nb));
    CHECK(nb[0] == (me + np - 1) % np && nb[1] == (me + 1) % np);
    int *i2 = malloc(sizeof(int) * np), *e2 = malloc(sizeof(int) * 2 * np);
    OK(MPI_Graph_get(g, np, 2 * np, i2, e2));
    CHECK(memcmp(i2, index, sizeof(int) * np) == 0);
    CHECK(memcmp(e2, edges, sizeof(int) * 2 * np) == 0);
    int got[2] = {-1, -1};
    OK(MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, g));
    CHECK(got[0] == nb[0] && got[1] == nb[1]);
    CHECK(MPI_Graph_neighbors_count(g, np, &cnt) == MPI_ERR_RANK);
    CHECK(MPI_Cart_shift(g, 0, 1, &st, &st) == MPI_ERR_TOPOLOGY);
    OK(MPI_Comm_free(&g));
    edges[0] = np;
    CHECK(MPI_Graph_create(MPI_COMM_WORLD, np, index, edges, 0, &g) == MPI_ERR_RANK);
    free(index), free(edges), free(i2), free(e2);
}

static void dist(void) {
    int left = (me + np - 1) % np, right = (me + 1) % np;
    int w_in = left + 1, w_out = me + 1;
    MPI_Comm g;
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, &w_in, 1, &right,
                                      &w_out, MPI_INFO_NULL, 0, &g));
    int st, in, out, wt, s, sw, d, dw;
    OK(MPI_Topo_test(g, &st));
    CHECK(st == MPI_DIST_GRAPH);
    OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &wt));
    CHECK(in == 1 && out == 1 && wt);
    OK(MPI_Dist_graph_neighbors(g, 1, &s, &sw, 1, &d, &dw));
    CHECK(s == left && sw == left + 1 && d == right && dw == me + 1);
    int got = -1;
    OK(MPI_Neighbor_allgather(&me, 1, MPI_INT, &got, 1, MPI_INT, g));
    CHECK(got == left);
    /* alltoallw: send an int, receive it as a double's worth of ints. */
    int two[2] = {me, -me}, r2[2] = {0, 0}, c2 = 2;
    MPI_Aint z = 0;
    MPI_Datatype ti = MPI_INT;
    OK(MPI_Neighbor_alltoallw(two, &c2, &z, &ti, r2, &c2, &z, &ti, g));
    CHECK(r2[0] == left && r2[1] == -left);
    OK(MPI_Comm_free(&g));

    /* Rank 0 names every edge i -> i+1 with weight i; the others none. */
    int n = me == 0 ? np : 0;
    int *srcs = malloc(sizeof(int) * np), *deg = malloc(sizeof(int) * np);
    int *dsts = malloc(sizeof(int) * np), *ws = malloc(sizeof(int) * np);
    for (int i = 0; i < np; i++)
        srcs[i] = i, deg[i] = 1, dsts[i] = (i + 1) % np, ws[i] = i;
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, deg, dsts, ws, MPI_INFO_NULL,
                             0, &g));
    OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &wt));
    CHECK(in == 1 && out == 1);
    OK(MPI_Dist_graph_neighbors(g, 1, &s, &sw, 1, &d, &dw));
    CHECK(s == left && sw == left && d == right && dw == me);
    got = -1;
    OK(MPI_Neighbor_alltoall(&me, 1, MPI_INT, &got, 1, MPI_INT, g));
    CHECK(got == left);
    OK(MPI_Comm_free(&g));
    /* Unweighted, and an empty neighbourhood. */
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0,
                                      NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &wt));
    CHECK(in == 0 && out == 0 && !wt);
    OK(MPI_Neighbor_allgather(&me, 1, MPI_INT, &got, 1, MPI_INT, g));
    OK(MPI_Comm_free(&g));
    s = np;
    CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &s, MPI_UNWEIGHTED, 0,
                                         NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                         &g) == MPI_ERR_RANK);
    free(srcs), free(deg), free(dsts), free(ws);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int st, a, b;
    OK(MPI_Topo_test(MPI_COMM_WORLD, &st));
    CHECK(st == MPI_UNDEFINED);
    CHECK(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &a, &b) == MPI_ERR_TOPOLOGY);
    dims();
    cart2d();
    ring();
    graph();
    dist();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("topo ok %d\n", me);
    MPI_Finalize();
    return 0;
}
