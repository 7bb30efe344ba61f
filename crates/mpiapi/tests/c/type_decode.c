/* MPI_Type_get_envelope / MPI_Type_get_contents (and the _c forms) for every
 * constructor: each type is decoded, its arguments compared with the ones given,
 * and the inner types handed back checked (predefined ones are the same handle;
 * derived ones are new handles, still usable after the original was freed, which
 * the program frees). A type rebuilt from its decoded arguments must carry the
 * same data as the original in a ring exchange.
 * Prints "type_decode ok <rank>" at the end; any failure aborts with a message. */
#include "check.h"
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* Decodes t and checks combiner and counts. */
static void envelope(MPI_Datatype t, int comb, int ni, int na, int nd) {
    int i, a, d, c;
    OK(MPI_Type_get_envelope(t, &i, &a, &d, &c));
    CHECK(c == comb && i == ni && a == na && d == nd,
          "envelope %d %d %d %d, want %d %d %d %d", c, i, a, d, comb, ni, na, nd);
    MPI_Count ic, ac, lc, dc;
    OK(MPI_Type_get_envelope_c(t, &ic, &ac, &lc, &dc, &c));
    CHECK(c == comb && ic == ni && ac == na && lc == 0 && dc == nd, "envelope_c");
}

static int ints[64];
static MPI_Aint addrs[64];
static MPI_Datatype types[8];

static void contents(MPI_Datatype t) {
    for (int k = 0; k < 8; k++) types[k] = MPI_DATATYPE_NULL;
    OK(MPI_Type_get_contents(t, 64, 64, 8, ints, addrs, types));
}

/* Frees a handed-back type if it is derived (predefined ones cannot be). */
static void release(MPI_Datatype *t) {
    int i, a, d, c;
    OK(MPI_Type_get_envelope(*t, &i, &a, &d, &c));
    if (c != MPI_COMBINER_NAMED) OK(MPI_Type_free(t));
}

/* Sends one element of t around the ring from a buffer of ints and checks that
 * the receiver got the bytes the type selects, comparing with `twin`. */
static void same_layout(MPI_Datatype t, MPI_Datatype twin) {
    int sa, sb;
    OK(MPI_Type_size(t, &sa));
    OK(MPI_Type_size(twin, &sb));
    CHECK(sa == sb, "sizes %d %d", sa, sb);
    MPI_Aint la, ea, lb, eb;
    OK(MPI_Type_get_extent(t, &la, &ea));
    OK(MPI_Type_get_extent(twin, &lb, &eb));
    CHECK(la == lb && ea == eb, "extents");
    int src[256], a[256], b[256];
    for (int k = 0; k < 256; k++) src[k] = k + 1000 * rank;
    int pa = 0, pb = 0;
    char packa[1024], packb[1024];
    OK(MPI_Pack(src, 1, t, packa, sizeof packa, &pa, MPI_COMM_WORLD));
    OK(MPI_Pack(src, 1, twin, packb, sizeof packb, &pb, MPI_COMM_WORLD));
    CHECK(pa == pb && memcmp(packa, packb, pa) == 0, "packed bytes differ");
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    OK(MPI_Sendrecv(src, 1, t, right, 7, a, 1, t, left, 7, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    OK(MPI_Sendrecv(src, 1, twin, right, 8, b, 1, twin, left, 8,
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(memcmp(a, b, sizeof a) == 0, "received layouts differ");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* MPI-4.1's pair types by their halves. */
    MPI_Datatype pair;
    OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &pair));
    CHECK(pair == MPI_DOUBLE_INT, "double/int pair");
    OK(MPI_Type_get_value_index(MPI_INT, MPI_INT, &pair));
    CHECK(pair == MPI_2INT, "int/int pair");
    OK(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &pair));
    CHECK(pair == MPI_DATATYPE_NULL, "no char/int pair");
    CHECK(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &pair) == MPI_ERR_TYPE,
          "null value type");

    /* Fortran 90 parameterized types: the smallest kind, one handle per
     * parameters, decoded to the parameters, usable, not freeable. */
    MPI_Datatype f1, f2, fi, fc;
    int fsz = 0, fni, fna, fnd, fcomb, fints[2];
    OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &f1));
    OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &f2));
    CHECK(f1 == f2, "same parameters, two handles");
    OK(MPI_Type_size(f1, &fsz));
    CHECK(fsz == 4, "real(6) has %d bytes", fsz);
    OK(MPI_Type_create_f90_real(12, 100, &f2));
    OK(MPI_Type_size(f2, &fsz));
    CHECK(fsz == 8, "real(12,100) has %d bytes", fsz);
    OK(MPI_Type_create_f90_complex(12, MPI_UNDEFINED, &fc));
    OK(MPI_Type_size(fc, &fsz));
    CHECK(fsz == 16, "complex(12) has %d bytes", fsz);
    OK(MPI_Type_create_f90_integer(9, &fi));
    OK(MPI_Type_size(fi, &fsz));
    CHECK(fsz == 4, "integer(9) has %d bytes", fsz);
    OK(MPI_Type_get_envelope(f2, &fni, &fna, &fnd, &fcomb));
    CHECK(fcomb == MPI_COMBINER_F90_REAL && fni == 2 && fna == 0 && fnd == 0,
          "f90 real envelope %d %d %d %d", fcomb, fni, fna, fnd);
    OK(MPI_Type_get_contents(f2, 2, 0, 0, fints, NULL, NULL));
    CHECK(fints[0] == 12 && fints[1] == 100, "f90 contents %d %d", fints[0], fints[1]);
    int fa[2] = {40, 2}, fb[2] = {0, 0};
    OK(MPI_Reduce_local(fa, fb, 2, fi, MPI_SUM));
    CHECK(fb[0] == 40 && fb[1] == 2, "reduce on integer(9)");
    CHECK(MPI_Type_free(&fi) == MPI_ERR_TYPE, "an f90 type was freed");
    CHECK(MPI_Type_create_f90_real(40, MPI_UNDEFINED, &f2) == MPI_ERR_ARG, "real(40)");
    CHECK(MPI_Type_create_f90_integer(30, &f2) == MPI_ERR_ARG, "integer(30)");

    /* Predefined types are named; decoding them is an error. */
    envelope(MPI_INT, MPI_COMBINER_NAMED, 0, 0, 0);
    envelope(MPI_2INT, MPI_COMBINER_NAMED, 0, 0, 0);
    CHECK(MPI_Type_get_contents(MPI_INT, 8, 8, 8, ints, addrs, types) ==
              MPI_ERR_TYPE, "contents of a named type");
    int i0, a0, d0, c0;
    CHECK(MPI_Type_get_envelope(MPI_DATATYPE_NULL, &i0, &a0, &d0, &c0) ==
              MPI_ERR_TYPE, "envelope of MPI_DATATYPE_NULL");

    /* contiguous */
    MPI_Datatype cont, twin;
    OK(MPI_Type_contiguous(3, MPI_INT, &cont));
    envelope(cont, MPI_COMBINER_CONTIGUOUS, 1, 0, 1);
    contents(cont);
    CHECK(ints[0] == 3 && types[0] == MPI_INT, "contiguous contents");

    /* vector of a derived type: the inner is a new handle that outlives cont */
    MPI_Datatype vec;
    OK(MPI_Type_vector(2, 1, 3, cont, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_Type_free(&cont));
    envelope(vec, MPI_COMBINER_VECTOR, 3, 0, 1);
    contents(vec);
    CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 3, "vector ints");
    MPI_Datatype inner = types[0];
    CHECK(inner != MPI_INT && inner != MPI_DATATYPE_NULL, "vector inner");
    envelope(inner, MPI_COMBINER_CONTIGUOUS, 1, 0, 1);
    contents(inner);
    CHECK(ints[0] == 3 && types[0] == MPI_INT, "inner contiguous contents");
    OK(MPI_Type_vector(2, 1, 3, inner, &twin));
    OK(MPI_Type_commit(&twin));
    same_layout(vec, twin);
    OK(MPI_Type_free(&twin));
    OK(MPI_Type_free(&inner));
    /* too small an array is an error, and creates no handle */
    CHECK(MPI_Type_get_contents(vec, 2, 0, 1, ints, addrs, types) != MPI_SUCCESS,
          "short integer array");

    /* hvector */
    MPI_Datatype hv;
    OK(MPI_Type_create_hvector(3, 2, 5 * sizeof(int), MPI_INT, &hv));
    OK(MPI_Type_commit(&hv));
    envelope(hv, MPI_COMBINER_HVECTOR, 2, 1, 1);
    contents(hv);
    CHECK(ints[0] == 3 && ints[1] == 2 && addrs[0] == (MPI_Aint)(5 * sizeof(int)) &&
              types[0] == MPI_INT, "hvector contents");
    OK(MPI_Type_create_hvector(ints[0], ints[1], addrs[0], types[0], &twin));
    OK(MPI_Type_commit(&twin));
    same_layout(hv, twin);
    OK(MPI_Type_free(&twin));

    /* indexed */
    int bl[3] = {2, 1, 3}, dis[3] = {0, 5, 9};
    MPI_Datatype ix;
    OK(MPI_Type_indexed(3, bl, dis, MPI_INT, &ix));
    OK(MPI_Type_commit(&ix));
    envelope(ix, MPI_COMBINER_INDEXED, 7, 0, 1);
    contents(ix);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 1 && ints[3] == 3 &&
              ints[4] == 0 && ints[5] == 5 && ints[6] == 9 && types[0] == MPI_INT,
          "indexed contents");
    OK(MPI_Type_indexed(ints[0], ints + 1, ints + 4, types[0], &twin));
    OK(MPI_Type_commit(&twin));
    same_layout(ix, twin);
    OK(MPI_Type_free(&twin));

    /* hindexed */
    MPI_Aint hd[3] = {0, 6 * sizeof(int), 12 * sizeof(int)};
    MPI_Datatype hix;
    OK(MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &hix));
    OK(MPI_Type_commit(&hix));
    envelope(hix, MPI_COMBINER_HINDEXED, 4, 3, 1);
    contents(hix);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[3] == 3 && addrs[1] == hd[1] &&
              addrs[2] == hd[2], "hindexed contents");

    /* indexed_block and hindexed_block */
    MPI_Datatype ib, hib;
    OK(MPI_Type_create_indexed_block(3, 2, dis, MPI_INT, &ib));
    envelope(ib, MPI_COMBINER_INDEXED_BLOCK, 5, 0, 1);
    contents(ib);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 0 && ints[3] == 5 &&
              ints[4] == 9, "indexed_block contents");
    OK(MPI_Type_create_hindexed_block(3, 2, hd, MPI_INT, &hib));
    envelope(hib, MPI_COMBINER_HINDEXED_BLOCK, 2, 3, 1);
    contents(hib);
    CHECK(ints[0] == 3 && ints[1] == 2 && addrs[0] == 0 && addrs[2] == hd[2],
          "hindexed_block contents");

    /* struct of a predefined and two derived types */
    int sbl[3] = {1, 1, 2};
    MPI_Aint sd[3] = {0, 16 * sizeof(int), 40 * sizeof(int)};
    MPI_Datatype st[3] = {MPI_INT, ix, hv}, s;
    OK(MPI_Type_create_struct(3, sbl, sd, st, &s));
    OK(MPI_Type_commit(&s));
    envelope(s, MPI_COMBINER_STRUCT, 4, 3, 3);
    contents(s);
    CHECK(ints[0] == 3 && ints[1] == 1 && ints[2] == 1 && ints[3] == 2 &&
              addrs[0] == 0 && addrs[1] == sd[1] && addrs[2] == sd[2] &&
              types[0] == MPI_INT && types[1] != ix && types[2] != hv,
          "struct contents");
    envelope(types[1], MPI_COMBINER_INDEXED, 7, 0, 1);
    envelope(types[2], MPI_COMBINER_HVECTOR, 2, 1, 1);
    MPI_Datatype got[3] = {types[0], types[1], types[2]};
    OK(MPI_Type_create_struct(ints[0], ints + 1, addrs, got, &twin));
    OK(MPI_Type_commit(&twin));
    same_layout(s, twin);
    OK(MPI_Type_free(&twin));
    for (int k = 0; k < 3; k++) release(&got[k]);

    /* resized and dup */
    MPI_Datatype rs, dup;
    OK(MPI_Type_create_resized(MPI_INT, -4, 24, &rs));
    envelope(rs, MPI_COMBINER_RESIZED, 0, 2, 1);
    contents(rs);
    CHECK(addrs[0] == -4 && addrs[1] == 24 && types[0] == MPI_INT, "resized");
    OK(MPI_Type_dup(s, &dup));
    envelope(dup, MPI_COMBINER_DUP, 0, 0, 1);
    contents(dup);
    envelope(types[0], MPI_COMBINER_STRUCT, 4, 3, 3);
    OK(MPI_Type_free(&types[0]));

    /* subarray and darray */
    int sz[2] = {4, 5}, sub[2] = {2, 3}, start[2] = {1, 2};
    MPI_Datatype sa;
    OK(MPI_Type_create_subarray(2, sz, sub, start, MPI_ORDER_C, MPI_INT, &sa));
    OK(MPI_Type_commit(&sa));
    envelope(sa, MPI_COMBINER_SUBARRAY, 8, 0, 1);
    contents(sa);
    int want_sa[8] = {2, 4, 5, 2, 3, 1, 2, MPI_ORDER_C};
    CHECK(memcmp(ints, want_sa, sizeof want_sa) == 0, "subarray contents");
    OK(MPI_Type_create_subarray(ints[0], ints + 1, ints + 3, ints + 5, ints[7],
                                types[0], &twin));
    OK(MPI_Type_commit(&twin));
    same_layout(sa, twin);
    OK(MPI_Type_free(&twin));
    int g[1] = {12}, dist[1] = {MPI_DISTRIBUTE_CYCLIC}, darg[1] = {2},
        ps[1] = {size};
    MPI_Datatype da;
    OK(MPI_Type_create_darray(size, rank, 1, g, dist, darg, ps, MPI_ORDER_C,
                              MPI_INT, &da));
    envelope(da, MPI_COMBINER_DARRAY, 8, 0, 1);
    contents(da);
    int want_da[8] = {size, rank, 1, 12, MPI_DISTRIBUTE_CYCLIC, 2, size,
                      MPI_ORDER_C};
    CHECK(memcmp(ints, want_da, sizeof want_da) == 0, "darray contents");

    /* Large-count constructors: only the _c decoders describe them. */
    MPI_Datatype vc;
    OK(MPI_Type_vector_c(4, 2, 7, MPI_INT, &vc));
    int i, a, d, c;
    CHECK(MPI_Type_get_envelope(vc, &i, &a, &d, &c) == MPI_ERR_TYPE,
          "int envelope of a _c type");
    MPI_Count ic, ac, lc, dc, big[8];
    OK(MPI_Type_get_envelope_c(vc, &ic, &ac, &lc, &dc, &c));
    CHECK(c == MPI_COMBINER_VECTOR && ic == 0 && ac == 0 && lc == 3 && dc == 1,
          "vector_c envelope");
    OK(MPI_Type_get_contents_c(vc, 0, 0, 8, 1, ints, addrs, big, types));
    CHECK(big[0] == 4 && big[1] == 2 && big[2] == 7 && types[0] == MPI_INT,
          "vector_c contents");
    MPI_Count cbl[2] = {1, 2}, cds[2] = {0, 64};
    MPI_Datatype cst[2] = {MPI_INT, MPI_DOUBLE}, sc;
    OK(MPI_Type_create_struct_c(2, cbl, cds, cst, &sc));
    OK(MPI_Type_get_envelope_c(sc, &ic, &ac, &lc, &dc, &c));
    CHECK(c == MPI_COMBINER_STRUCT && ic == 0 && ac == 0 && lc == 5 && dc == 2,
          "struct_c envelope");
    OK(MPI_Type_get_contents_c(sc, 0, 0, 8, 2, ints, addrs, big, types));
    CHECK(big[0] == 2 && big[1] == 1 && big[2] == 2 && big[3] == 0 &&
              big[4] == 64 && types[0] == MPI_INT && types[1] == MPI_DOUBLE,
          "struct_c contents");

    /* subarray_c / darray_c: ndims, order (and darray's ints) stay ints, sizes are
     * counts; the layout is the int form's. */
    MPI_Count csz[2] = {6, 5}, csub[2] = {3, 2}, cst0[2] = {1, 2};
    int isz[2] = {6, 5}, isub[2] = {3, 2}, ist0[2] = {1, 2};
    MPI_Datatype sac, sai;
    OK(MPI_Type_create_subarray_c(2, csz, csub, cst0, MPI_ORDER_C, MPI_INT, &sac));
    OK(MPI_Type_create_subarray(2, isz, isub, ist0, MPI_ORDER_C, MPI_INT, &sai));
    int s1 = 0, s2 = 0;
    MPI_Aint lb1, ex1, lb2, ex2;
    OK(MPI_Type_size(sac, &s1));
    OK(MPI_Type_size(sai, &s2));
    OK(MPI_Type_get_extent(sac, &lb1, &ex1));
    OK(MPI_Type_get_extent(sai, &lb2, &ex2));
    CHECK(s1 == s2 && lb1 == lb2 && ex1 == ex2, "subarray_c layout");
    OK(MPI_Type_get_envelope_c(sac, &ic, &ac, &lc, &dc, &c));
    CHECK(c == MPI_COMBINER_SUBARRAY && ic == 2 && ac == 0 && lc == 6 && dc == 1,
          "subarray_c envelope %lld %lld %lld %lld", (long long)ic, (long long)ac,
          (long long)lc, (long long)dc);
    OK(MPI_Type_get_contents_c(sac, 2, 0, 8, 1, ints, addrs, big, types));
    CHECK(ints[0] == 2 && ints[1] == MPI_ORDER_C && big[0] == 6 && big[1] == 5 &&
              big[2] == 3 && big[5] == 2 && types[0] == MPI_INT,
          "subarray_c contents");
    MPI_Count cg[1] = {10};
    int cd[1] = {MPI_DISTRIBUTE_BLOCK}, ca[1] = {MPI_DISTRIBUTE_DFLT_DARG}, cp[1] = {2};
    MPI_Datatype dac;
    OK(MPI_Type_create_darray_c(2, 1, 1, cg, cd, ca, cp, MPI_ORDER_C, MPI_INT, &dac));
    OK(MPI_Type_size(dac, &s1));
    CHECK(s1 == 5 * (int)sizeof(int), "darray_c size %d", s1);
    OK(MPI_Type_get_envelope_c(dac, &ic, &ac, &lc, &dc, &c));
    CHECK(c == MPI_COMBINER_DARRAY && ic == 7 && lc == 1 && dc == 1, "darray_c envelope");
    OK(MPI_Type_get_contents_c(dac, 7, 0, 8, 1, ints, addrs, big, types));
    CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 1 && ints[3] == MPI_DISTRIBUTE_BLOCK &&
              ints[6] == MPI_ORDER_C && big[0] == 10,
          "darray_c contents");
    OK(MPI_Type_free(&sac));
    OK(MPI_Type_free(&sai));
    OK(MPI_Type_free(&dac));

    MPI_Datatype all[] = {vec, hv, ix, hix, ib, hib, s, rs, dup, sa, da, vc, sc};
    for (unsigned k = 0; k < sizeof all / sizeof all[0]; k++)
        OK(MPI_Type_free(&all[k]));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("type_decode ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
