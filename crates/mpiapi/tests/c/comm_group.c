/* MPI_Comm_create_group on N ranks: collective over the group only.
 *  - the even and the odd ranks each make a communicator at the same time, with
 *    different tags, while the other half is busy elsewhere;
 *  - every rank but the last makes one while the last never calls;
 *  - a rank alone makes one of itself, with nobody else involved;
 *  - MPI_GROUP_EMPTY gives MPI_COMM_NULL at once;
 *  - a bad tag, a group not within the parent, an intercommunicator-free check of
 *    arguments: error codes under MPI_ERRORS_RETURN.
 * Each new communicator is checked with its size, rank order and an allreduce.
 * Prints "comm_group ok <rank>". */
#include "check.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

static int err_class(int rc) {
    int c = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
    return c;
}

/* The group of world ranks `first`, `first + step`, ... below `end`. */
static MPI_Group strided(int first, int step, int end) {
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int n = 0, *r = malloc(sizeof(int) * (size_t)(size + 1));
    for (int i = first; i < end; i += step) r[n++] = i;
    OK(MPI_Group_incl(world, n, r, &g));
    free(r);
    MPI_Group_free(&world);
    return g;
}

/* Checks `c` is the communicator of world ranks first, first+step, ... < end. */
static void check_comm(MPI_Comm c, int first, int step, int end, const char *what) {
    int n = 0;
    for (int i = first; i < end; i += step) n++;
    int csize, crank;
    OK(MPI_Comm_size(c, &csize));
    OK(MPI_Comm_rank(c, &crank));
    CHECK(csize == n, "%s: size %d, expected %d", what, csize, n);
    CHECK(first + crank * step == rank, "%s: rank %d", what, crank);
    int sum = 0, mine = rank;
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
    int want = 0;
    for (int i = first; i < end; i += step) want += i;
    CHECK(sum == want, "%s: allreduce %d, expected %d", what, sum, want);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm c;

    /* Evens (tag 7) and odds (tag 8) at once. */
    int parity = rank % 2;
    MPI_Group half = strided(parity, 2, size);
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, half, 7 + parity, &c));
    CHECK(c != MPI_COMM_NULL, "half");
    check_comm(c, parity, 2, size, "half");
    OK(MPI_Comm_free(&c));
    MPI_Group_free(&half);

    /* Everybody but the last rank, which does not call at all. */
    if (size > 1) {
        if (rank < size - 1) {
            MPI_Group most = strided(0, 1, size - 1);
            OK(MPI_Comm_create_group(MPI_COMM_WORLD, most, 0, &c));
            check_comm(c, 0, 1, size - 1, "all but the last");
            OK(MPI_Comm_free(&c));
            MPI_Group_free(&most);
        }
    }

    /* Alone. */
    MPI_Group self = strided(rank, size, size);
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, self, 3, &c));
    check_comm(c, rank, size, size, "alone");
    OK(MPI_Comm_free(&c));

    /* Not a member: MPI_COMM_NULL, no communication. */
    c = MPI_COMM_WORLD;
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 5, &c));
    CHECK(c == MPI_COMM_NULL, "empty group");

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK(err_class(MPI_Comm_create_group(MPI_COMM_WORLD, self, -1, &c)) == MPI_ERR_TAG,
          "negative tag");
    CHECK(err_class(MPI_Comm_create_group(MPI_COMM_WORLD, self, 1, NULL)) == MPI_ERR_ARG,
          "NULL newcomm");
    CHECK(err_class(MPI_Comm_create_group(MPI_COMM_NULL, self, 1, &c)) == MPI_ERR_COMM,
          "MPI_COMM_NULL");
    if (size > 1) {
        /* A group naming a rank outside the parent (MPI_COMM_SELF). */
        MPI_Group other = strided((rank + 1) % size, size, size);
        CHECK(err_class(MPI_Comm_create_group(MPI_COMM_SELF, other, 1, &c)) ==
                  MPI_ERR_GROUP,
              "group outside the parent");
        MPI_Group_free(&other);
    }
    MPI_Group_free(&self);

    MPI_Barrier(MPI_COMM_WORLD);
    printf("comm_group ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
