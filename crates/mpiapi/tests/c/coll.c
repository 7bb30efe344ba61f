/* myrix MPI test, one rank: every blocking collective on MPI_COMM_SELF, on
 * MPI_COMM_WORLD as a singleton and on communicators made by dup/split/create,
 * with MPI_IN_PLACE; communicator and group calls; refusals of bad arguments under
 * MPI_ERRORS_RETURN. Prints "coll ok" at the end. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define CHECK(c)                                                           \
    do {                                                                   \
        if (!(c)) {                                                        \
            fprintf(stderr, "coll.c:%d: check failed: %s\n", __LINE__, #c); \
            return 1;                                                      \
        }                                                                  \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS)

static int collectives(MPI_Comm comm)
{
    int in[4] = {1, 2, 3, 4}, out[4] = {0, 0, 0, 0}, buf[4] = {5, 6, 7, 8};
    int counts[1] = {4}, displs[1] = {0};
    double d[3] = {1.5, 2.5, 3.5}, dout[3] = {0, 0, 0};
    int i;

    OK(MPI_Barrier(comm));
    OK(MPI_Bcast(buf, 4, MPI_INT, 0, comm));
    CHECK(buf[0] == 5 && buf[3] == 8);

    OK(MPI_Reduce(in, out, 4, MPI_INT, MPI_SUM, 0, comm));
    CHECK(memcmp(in, out, sizeof in) == 0);
    OK(MPI_Reduce(MPI_IN_PLACE, buf, 4, MPI_INT, MPI_MAX, 0, comm));
    CHECK(buf[0] == 5 && buf[3] == 8);
    OK(MPI_Allreduce(d, dout, 3, MPI_DOUBLE, MPI_SUM, comm));
    CHECK(dout[0] == 1.5 && dout[2] == 3.5);
    OK(MPI_Allreduce(MPI_IN_PLACE, d, 3, MPI_DOUBLE, MPI_PROD, comm));
    CHECK(d[1] == 2.5);
    memset(out, 0, sizeof out);
    OK(MPI_Scan(in, out, 4, MPI_INT, MPI_SUM, comm));
    CHECK(out[1] == 2);
    out[0] = -9;
    OK(MPI_Exscan(in, out, 4, MPI_INT, MPI_SUM, comm));
    CHECK(out[0] == -9); /* rank 0's result is left alone */

    memset(out, 0, sizeof out);
    OK(MPI_Gather(in, 4, MPI_INT, out, 4, MPI_INT, 0, comm));
    CHECK(memcmp(in, out, sizeof in) == 0);
    OK(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, 4, MPI_INT, 0, comm));
    CHECK(out[3] == 4);
    memset(out, 0, sizeof out);
    OK(MPI_Gatherv(in, 4, MPI_INT, out, counts, displs, MPI_INT, 0, comm));
    CHECK(out[2] == 3);
    memset(out, 0, sizeof out);
    OK(MPI_Scatter(in, 4, MPI_INT, out, 4, MPI_INT, 0, comm));
    CHECK(memcmp(in, out, sizeof in) == 0);
    OK(MPI_Scatter(in, 4, MPI_INT, MPI_IN_PLACE, 4, MPI_INT, 0, comm));
    memset(out, 0, sizeof out);
    OK(MPI_Scatterv(in, counts, displs, MPI_INT, out, 4, MPI_INT, 0, comm));
    CHECK(out[1] == 2);
    memset(out, 0, sizeof out);
    OK(MPI_Allgather(in, 4, MPI_INT, out, 4, MPI_INT, comm));
    CHECK(memcmp(in, out, sizeof in) == 0);
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, 4, MPI_INT, comm));
    CHECK(out[0] == 1);
    memset(out, 0, sizeof out);
    OK(MPI_Allgatherv(in, 4, MPI_INT, out, counts, displs, MPI_INT, comm));
    CHECK(out[3] == 4);
    memset(out, 0, sizeof out);
    OK(MPI_Alltoall(in, 4, MPI_INT, out, 4, MPI_INT, comm));
    CHECK(memcmp(in, out, sizeof in) == 0);
    OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, 4, MPI_INT, comm));
    CHECK(out[2] == 3);
    memset(out, 0, sizeof out);
    OK(MPI_Alltoallv(in, counts, displs, MPI_INT, out, counts, displs, MPI_INT, comm));
    CHECK(memcmp(in, out, sizeof in) == 0);
    memset(out, 0, sizeof out);
    OK(MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_BOR, comm));
    CHECK(memcmp(in, out, sizeof in) == 0);
    memset(out, 0, sizeof out);
    OK(MPI_Reduce_scatter_block(in, out, 4, MPI_INT, MPI_SUM, comm));
    CHECK(memcmp(in, out, sizeof in) == 0);
    for (i = 0; i < 4; i++) out[i] = i;
    OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, out, 4, MPI_INT, MPI_SUM, comm));
    CHECK(out[3] == 3);

    /* Refusals: the communicator returns errors. */
    CHECK(MPI_Bcast(buf, 4, MPI_INT, 1, comm) == MPI_ERR_ROOT);
    CHECK(MPI_Bcast(buf, -1, MPI_INT, 0, comm) == MPI_ERR_COUNT);
    CHECK(MPI_Bcast(buf, 4, MPI_DATATYPE_NULL, 0, comm) == MPI_ERR_TYPE);
    CHECK(MPI_Allreduce(in, out, 4, MPI_INT, MPI_OP_NULL, comm) == MPI_ERR_OP);
    CHECK(MPI_Allreduce(d, dout, 3, MPI_DOUBLE, MPI_BAND, comm) == MPI_ERR_OP);
    CHECK(MPI_Reduce(in, NULL, 4, MPI_INT, MPI_SUM, 0, comm) == MPI_ERR_BUFFER);
    CHECK(MPI_Gatherv(in, 4, MPI_INT, out, NULL, displs, MPI_INT, 0, comm) == MPI_ERR_ARG);
    CHECK(MPI_Gather(in, 3, MPI_INT, out, 4, MPI_INT, 0, comm) == MPI_ERR_TRUNCATE);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Comm dup = MPI_COMM_NULL, split = MPI_COMM_NULL, none = MPI_COMM_NULL, shared = MPI_COMM_NULL;
    MPI_Comm made = MPI_COMM_NULL;
    MPI_Group world, g2, g3, empty;
    int rank = -1, size = -1, r, n, cmp, len;
    char name[MPI_MAX_OBJECT_NAME];

    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 1);

    if (collectives(MPI_COMM_SELF)) return 2;
    if (collectives(MPI_COMM_WORLD)) return 3;

    /* dup: same ranks, new context, name, errhandler inherited. */
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(dup != MPI_COMM_NULL && dup != MPI_COMM_WORLD);
    OK(MPI_Comm_compare(dup, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT);
    OK(MPI_Comm_compare(dup, dup, &cmp));
    CHECK(cmp == MPI_IDENT);
    OK(MPI_Comm_set_name(dup, "my dup"));
    OK(MPI_Comm_get_name(dup, name, &len));
    CHECK(strcmp(name, "my dup") == 0 && len == 6);
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0);
    MPI_Errhandler eh;
    OK(MPI_Comm_get_errhandler(dup, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);
    if (collectives(dup)) return 4;

    OK(MPI_Comm_split(dup, 3, 0, &split));
    CHECK(split != MPI_COMM_NULL);
    MPI_Comm_rank(split, &rank);
    MPI_Comm_size(split, &n);
    CHECK(rank == 0 && n == 1);
    if (collectives(split)) return 5;
    OK(MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &none));
    CHECK(none == MPI_COMM_NULL);
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &none) == MPI_ERR_ARG);
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    MPI_Comm_size(shared, &n);
    CHECK(n == 1);
    /* MPI-4's guided splits: the node is the one level known. */
    MPI_Info hw;
    MPI_Comm guided;
    OK(MPI_Info_create(&hw));
    OK(MPI_Info_set(hw, "mpi_hw_resource_type", "mpi_shared_memory"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, hw, &guided));
    CHECK(guided != MPI_COMM_NULL);
    OK(MPI_Comm_free(&guided));
    OK(MPI_Info_set(hw, "mpi_hw_resource_type", "hwloc://L3Cache"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, hw, &guided));
    CHECK(guided == MPI_COMM_NULL);
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &guided));
    CHECK(guided == MPI_COMM_NULL);
    OK(MPI_Info_delete(hw, "mpi_hw_resource_type"));
    /* One process: its node is no smaller than the world. */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, hw, &guided));
    CHECK(guided == MPI_COMM_NULL);
    OK(MPI_Comm_split_type(dup, MPI_COMM_TYPE_HW_UNGUIDED, 0, hw, &guided));
    CHECK(guided == MPI_COMM_NULL);
    OK(MPI_Info_free(&hw));

    /* Groups. */
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    OK(MPI_Group_size(world, &n));
    OK(MPI_Group_rank(world, &r));
    CHECK(n == 1 && r == 0);
    int zero = 0, one = 1, tr = -7;
    OK(MPI_Group_incl(world, 1, &zero, &g2));
    OK(MPI_Group_compare(world, g2, &cmp));
    CHECK(cmp == MPI_IDENT);
    OK(MPI_Group_excl(world, 1, &zero, &empty));
    CHECK(empty == MPI_GROUP_EMPTY);
    OK(MPI_Group_rank(empty, &r));
    CHECK(r == MPI_UNDEFINED);
    int range[1][3] = {{0, 0, 1}};
    OK(MPI_Group_range_incl(world, 1, range, &g3));
    OK(MPI_Group_translate_ranks(g3, 1, &zero, world, &tr));
    CHECK(tr == 0);
    OK(MPI_Group_free(&g3));
    CHECK(g3 == MPI_GROUP_NULL);
    OK(MPI_Group_range_excl(world, 1, range, &g3));
    CHECK(g3 == MPI_GROUP_EMPTY);
    OK(MPI_Group_union(world, empty, &g3));
    OK(MPI_Group_size(g3, &n));
    CHECK(n == 1);
    OK(MPI_Group_free(&g3));
    OK(MPI_Group_intersection(world, empty, &g3));
    CHECK(g3 == MPI_GROUP_EMPTY);
    OK(MPI_Group_difference(world, g2, &g3));
    CHECK(g3 == MPI_GROUP_EMPTY);
    CHECK(MPI_Group_incl(world, 1, &one, &g3) == MPI_ERR_RANK);
    int twice[2] = {0, 0};
    CHECK(MPI_Group_incl(world, 2, twice, &g3) == MPI_ERR_RANK);
    int bad[1][3] = {{0, 0, 0}};
    CHECK(MPI_Group_range_incl(world, 1, bad, &g3) == MPI_ERR_ARG);
    CHECK(MPI_Group_translate_ranks(g2, 1, &one, world, &tr) == MPI_ERR_RANK);
    CHECK(MPI_Group_size(MPI_GROUP_NULL, &n) == MPI_ERR_GROUP);

    /* Comm_create from a group; non-members would get MPI_COMM_NULL. */
    OK(MPI_Comm_create(MPI_COMM_WORLD, g2, &made));
    CHECK(made != MPI_COMM_NULL);
    if (collectives(made)) return 6;
    OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &none));
    CHECK(none == MPI_COMM_NULL);

    OK(MPI_Group_free(&g2));
    CHECK(MPI_Group_free(&g2) == MPI_ERR_GROUP);
    OK(MPI_Group_free(&world));
    OK(MPI_Group_free(&empty));

    /* Free: handles become NULL, stale ones are refused, predefined ones stay. */
    MPI_Comm stale = dup;
    OK(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL);
    CHECK(MPI_Comm_size(stale, &n) == MPI_ERR_COMM);
    OK(MPI_Comm_free(&split));
    OK(MPI_Comm_free(&shared));
    OK(MPI_Comm_free(&made));
    MPI_Comm w = MPI_COMM_WORLD;
    CHECK(MPI_Comm_free(&w) == MPI_ERR_COMM);
    CHECK(MPI_Barrier(stale) == MPI_ERR_COMM);

    /* Many dups and frees: context ids are reused. */
    for (int i = 0; i < 10000; i++) {
        OK(MPI_Comm_dup(MPI_COMM_SELF, &dup));
        OK(MPI_Comm_free(&dup));
    }

    OK(MPI_Finalize());
    printf("coll ok\n");
    return 0;
}
