/* Derived datatypes through the C interface: sizes and extents, MPI_Pack and
 * MPI_Unpack of a vector and a struct type, names, and the refusals. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) { printf("FAILED line %d: %s\n", __LINE__, #c); return 1; } } while (0)

struct item { char c; double d[2]; short s; };

static void maxabs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) {
        int a = ((int *)in)[i], b = ((int *)inout)[i];
        ((int *)inout)[i] = (a < 0 ? -a : a) > (b < 0 ? -b : b) ? a : b;
    }
}

int main(int argc, char **argv)
{
    CHECK(MPI_Init(&argc, &argv) == MPI_SUCCESS);
    CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) == MPI_SUCCESS);

    /* Predefined. */
    int size = -1;
    MPI_Aint lb = -1, extent = -1;
    CHECK(MPI_Type_size(MPI_DOUBLE_INT, &size) == MPI_SUCCESS && size == 12);
    CHECK(MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &extent) == MPI_SUCCESS && lb == 0 && extent == 16);
    CHECK(MPI_Type_size(MPI_SHORT_INT, &size) == MPI_SUCCESS && size == 6);
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    CHECK(MPI_Type_get_name(MPI_INT, name, &len) == MPI_SUCCESS && strcmp(name, "MPI_INT") == 0 && len == 7);

    /* A vector: 3 blocks of 2 ints, stride 4 ints. */
    MPI_Datatype vec;
    CHECK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec) == MPI_SUCCESS);
    CHECK(MPI_Type_size(vec, &size) == MPI_SUCCESS && size == 24);
    CHECK(MPI_Type_get_extent(vec, &lb, &extent) == MPI_SUCCESS && lb == 0 && extent == 40);
    MPI_Count csize = 0, clb = -1, cext = -1;
    CHECK(MPI_Type_size_c(vec, &csize) == MPI_SUCCESS && csize == 24);
    CHECK(MPI_Type_get_true_extent_x(vec, &clb, &cext) == MPI_SUCCESS && clb == 0 && cext == 40);
    int ints[12], back[12];
    for (int i = 0; i < 12; i++) { ints[i] = i; back[i] = -1; }
    char buf[256];
    int pos = 0;
    /* Uncommitted: refused. */
    CHECK(MPI_Pack(ints, 1, vec, buf, sizeof buf, &pos, MPI_COMM_WORLD) == MPI_ERR_TYPE && pos == 0);
    CHECK(MPI_Type_commit(&vec) == MPI_SUCCESS);
    CHECK(MPI_Pack(ints, 1, vec, buf, sizeof buf, &pos, MPI_COMM_WORLD) == MPI_SUCCESS && pos == 24);
    int expect[6] = {0, 1, 4, 5, 8, 9};
    CHECK(memcmp(buf, expect, sizeof expect) == 0);
    int psize = 0;
    CHECK(MPI_Pack_size(2, vec, MPI_COMM_WORLD, &psize) == MPI_SUCCESS && psize == 48);
    pos = 0;
    CHECK(MPI_Unpack(buf, 24, &pos, back, 1, vec, MPI_COMM_WORLD) == MPI_SUCCESS && pos == 24);
    for (int i = 0; i < 12; i++)
        CHECK(back[i] == ((i % 4) < 2 ? i : -1));
    /* Too little room: truncated. */
    pos = 0;
    CHECK(MPI_Pack(ints, 1, vec, buf, 20, &pos, MPI_COMM_WORLD) == MPI_ERR_TRUNCATE);

    /* A struct matching struct item. */
    MPI_Datatype st;
    int bl[3] = {1, 2, 1};
    MPI_Aint disp[3] = {offsetof(struct item, c), offsetof(struct item, d), offsetof(struct item, s)};
    MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT};
    CHECK(MPI_Type_create_struct(3, bl, disp, types, &st) == MPI_SUCCESS);
    CHECK(MPI_Type_size(st, &size) == MPI_SUCCESS && size == 19);
    CHECK(MPI_Type_get_extent(st, &lb, &extent) == MPI_SUCCESS && lb == 0 && extent == (MPI_Aint)sizeof(struct item));
    CHECK(MPI_Type_get_true_extent(st, &lb, &extent) == MPI_SUCCESS && lb == 0 && extent == 26);
    CHECK(MPI_Type_commit(&st) == MPI_SUCCESS);
    struct item in[2] = {{'a', {1.5, 2.5}, 7}, {'b', {-1.0, 4.0}, -3}}, out[2];
    memset(out, 0, sizeof out);
    pos = 0;
    CHECK(MPI_Pack(in, 2, st, buf, sizeof buf, &pos, MPI_COMM_WORLD) == MPI_SUCCESS && pos == 38);
    int upos = 0;
    CHECK(MPI_Unpack(buf, pos, &upos, out, 2, st, MPI_COMM_WORLD) == MPI_SUCCESS && upos == 38);
    for (int i = 0; i < 2; i++)
        CHECK(out[i].c == in[i].c && out[i].d[0] == in[i].d[0] && out[i].d[1] == in[i].d[1] && out[i].s == in[i].s);
    /* Resized to twice the extent; a dup keeps the commit. */
    MPI_Datatype rs, dup;
    CHECK(MPI_Type_create_resized(st, -8, 64, &rs) == MPI_SUCCESS);
    CHECK(MPI_Type_get_extent(rs, &lb, &extent) == MPI_SUCCESS && lb == -8 && extent == 64);
    CHECK(MPI_Type_dup(st, &dup) == MPI_SUCCESS);
    pos = 0;
    CHECK(MPI_Pack(in, 1, dup, buf, sizeof buf, &pos, MPI_COMM_WORLD) == MPI_SUCCESS && pos == 19);
    CHECK(MPI_Type_set_name(dup, "item") == MPI_SUCCESS);
    CHECK(MPI_Type_get_name(dup, name, &len) == MPI_SUCCESS && strcmp(name, "item") == 0);

    /* Addresses. */
    MPI_Aint a0, a1;
    CHECK(MPI_Get_address(&in[0], &a0) == MPI_SUCCESS && MPI_Get_address(&in[1], &a1) == MPI_SUCCESS);
    CHECK(MPI_Aint_diff(a1, a0) == (MPI_Aint)sizeof(struct item));
    /* MPI_BOTTOM with absolute displacements. */
    MPI_Datatype abs;
    int one = 1;
    CHECK(MPI_Type_create_hindexed(1, &one, &a1, st, &abs) == MPI_SUCCESS && MPI_Type_commit(&abs) == MPI_SUCCESS);
    pos = 0;
    CHECK(MPI_Pack(MPI_BOTTOM, 1, abs, buf, sizeof buf, &pos, MPI_COMM_WORLD) == MPI_SUCCESS && pos == 19);
    CHECK(buf[0] == 'b');

    /* Refusals. */
    MPI_Datatype bad = MPI_DATATYPE_NULL;
    CHECK(MPI_Type_contiguous(-1, MPI_INT, &bad) == MPI_ERR_COUNT);
    CHECK(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &bad) == MPI_ERR_TYPE);
    CHECK(MPI_Type_contiguous(2, MPI_INT, NULL) == MPI_ERR_ARG);
    CHECK(MPI_Type_indexed(2, NULL, NULL, MPI_INT, &bad) == MPI_ERR_ARG);
    int negbl[1] = {-2}, d0[1] = {0};
    CHECK(MPI_Type_indexed(1, negbl, d0, MPI_INT, &bad) == MPI_ERR_ARG);
    MPI_Datatype intt = MPI_INT;
    CHECK(MPI_Type_free(&intt) == MPI_ERR_TYPE && intt == MPI_INT);
    CHECK(MPI_Type_size(vec, NULL) == MPI_ERR_ARG);
    CHECK(MPI_Pack(ints, -1, vec, buf, sizeof buf, &pos, MPI_COMM_WORLD) == MPI_ERR_COUNT);
    CHECK(MPI_Type_contiguous(1 << 30, MPI_LONG_DOUBLE_INT, &bad) == MPI_SUCCESS);
    MPI_Datatype huge;
    CHECK(MPI_Type_contiguous(1 << 30, bad, &huge) == MPI_ERR_ARG); /* 2^60 * 32 bytes overflows */
    CHECK(MPI_Type_free(&bad) == MPI_SUCCESS && bad == MPI_DATATYPE_NULL);
    MPI_Datatype freed = vec;
    CHECK(MPI_Type_free(&vec) == MPI_SUCCESS && vec == MPI_DATATYPE_NULL);
    CHECK(MPI_Type_size(freed, &size) == MPI_ERR_TYPE);
    CHECK(MPI_Type_free(&st) == MPI_SUCCESS && MPI_Type_free(&rs) == MPI_SUCCESS);
    CHECK(MPI_Type_free(&dup) == MPI_SUCCESS && MPI_Type_free(&abs) == MPI_SUCCESS);

    /* external32: big-endian, long in 4 bytes, through a struct of mixed types. */
    struct { short s; long l; double d; } ex[2] = {{-2, 70000, 1.5}, {3, -1, -0.25}}, exback[2];
    int exlen[3] = {1, 1, 1};
    MPI_Aint exdisp[3] = {offsetof(__typeof__(ex[0]), s), offsetof(__typeof__(ex[0]), l),
                          offsetof(__typeof__(ex[0]), d)};
    MPI_Datatype extypes[3] = {MPI_SHORT, MPI_LONG, MPI_DOUBLE}, exst;
    CHECK(MPI_Type_create_struct(3, exlen, exdisp, extypes, &exst) == MPI_SUCCESS);
    CHECK(MPI_Type_commit(&exst) == MPI_SUCCESS);
    MPI_Aint exsize = 0, expos = 0, inpos = 0;
    CHECK(MPI_Pack_external_size("external32", 2, exst, &exsize) == MPI_SUCCESS && exsize == 28);
    unsigned char exbuf[28];
    CHECK(MPI_Pack_external("external32", ex, 2, exst, exbuf, sizeof exbuf, &expos) == MPI_SUCCESS &&
          expos == 28);
    CHECK(exbuf[0] == 0xff && exbuf[1] == 0xfe); /* short, big-endian */
    CHECK(exbuf[2] == 0 && exbuf[3] == 1 && exbuf[4] == 0x11 && exbuf[5] == 0x70); /* long: 4 bytes */
    CHECK(exbuf[6] == 0x3f && exbuf[7] == 0xf8); /* double */
    memset(exback, 0, sizeof exback);
    CHECK(MPI_Unpack_external("external32", exbuf, sizeof exbuf, &inpos, exback, 2, exst) ==
              MPI_SUCCESS && inpos == 28);
    CHECK(exback[0].s == -2 && exback[0].l == 70000 && exback[0].d == 1.5 && exback[1].l == -1 &&
          exback[1].d == -0.25);
    long toobig = 1L << 40;
    expos = 0;
    CHECK(MPI_Pack_external("external32", &toobig, 1, MPI_LONG, exbuf, 4, &expos) ==
          MPI_ERR_CONVERSION);
    CHECK(MPI_Pack_external("native", ex, 1, exst, exbuf, sizeof exbuf, &expos) ==
          MPI_ERR_UNSUPPORTED_DATAREP);
    expos = 20;
    CHECK(MPI_Pack_external("external32", ex, 1, exst, exbuf, sizeof exbuf, &expos) ==
          MPI_ERR_TRUNCATE);
    CHECK(MPI_Type_free(&exst) == MPI_SUCCESS);

    /* Ops. */
    int commute = -1;
    CHECK(MPI_Op_commutative(MPI_SUM, &commute) == MPI_SUCCESS && commute == 1);
    MPI_Op sum = MPI_SUM;
    CHECK(MPI_Op_free(&sum) == MPI_ERR_OP);
    CHECK(MPI_Op_commutative(MPI_OP_NULL, &commute) == MPI_ERR_OP);
    MPI_Op user;
    CHECK(MPI_Op_create(maxabs, 0, &user) == MPI_SUCCESS);
    CHECK(MPI_Op_commutative(user, &commute) == MPI_SUCCESS && commute == 0);
    CHECK(MPI_Op_create(NULL, 1, &user) == MPI_ERR_ARG);
    CHECK(MPI_Op_free(&user) == MPI_SUCCESS && user == MPI_OP_NULL);

    printf("datatype ok\n");
    CHECK(MPI_Finalize() == MPI_SUCCESS);
    return 0;
}
