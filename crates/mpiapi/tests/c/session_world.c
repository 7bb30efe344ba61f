/* The World model and a session in one process: a session before MPI_Init, both
 * in use, MPI_Finalize while the session is open (MPI_Finalized 1, the session's
 * communicator still working), and the session's end last. */
#include "check.h"

static int rank = -1;

int main(int argc, char **argv) {
    MPI_Session s;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    int provided = -1, flag = -1;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided));
    CHECK(provided == MPI_THREAD_SERIALIZED, "provided %d", provided);
    OK(MPI_Initialized(&flag));
    CHECK(flag == 1, "initialized %d", flag);
    int size = 0;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    MPI_Group g;
    MPI_Comm c;
    OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    OK(MPI_Comm_create_from_group(g, "org.myrix.test.mixed", MPI_INFO_NULL,
                                  MPI_ERRORS_RETURN, &c));
    OK(MPI_Group_free(&g));
    int result = -1;
    OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_CONGRUENT, "compare %d", result);

    int x = rank + 1, sum = 0;
    OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size + 1) / 2, "world sum %d", sum);
    OK(MPI_Finalize());
    OK(MPI_Finalized(&flag));
    CHECK(flag == 1, "finalized %d", flag);

    sum = 0;
    int rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(rc == MPI_SUCCESS && sum == size * (size + 1) / 2, "session sum %d rc %d", sum, rc);
    OK(MPI_Comm_free(&c));
    OK(MPI_Session_finalize(&s));
    printf("session_world ok %d\n", rank);
    return 0;
}
