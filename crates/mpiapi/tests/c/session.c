/* MPI-4 sessions without MPI_Init: process sets, groups from them, communicators
 * made from groups (whole world, a half, SELF), traffic on them, two sessions open
 * at once, session error handlers, the error codes of bad arguments, and a session
 * after the last one ended. MPI_Init is never called: MPI_Initialized stays 0. */
#include "check.h"
#include <stdlib.h>
#include <string.h>

static int rank = -1;
static int handler_calls = 0;
static int handler_code = 0;

static void on_error(MPI_Session *s, int *code, ...) {
    (void)s;
    handler_calls++;
    handler_code = *code;
}

static MPI_Comm comm_of(MPI_Session s, const char *pset, const char *tag) {
    MPI_Group g;
    MPI_Comm c;
    OK(MPI_Group_from_session_pset(s, pset, &g));
    OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    OK(MPI_Group_free(&g));
    return c;
}

int main(void) {
    int flag = -1;
    OK(MPI_Initialized(&flag));
    CHECK(flag == 0, "initialized before anything: %d", flag);

    MPI_Info info;
    MPI_Session s;
    OK(MPI_Info_create(&info));
    /* A thread level the standard does not name is refused. */
    OK(MPI_Info_set(info, "thread_level", "THIS_IS_NOT_VALID"));
    CHECK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s) != MPI_SUCCESS, "a bad thread_level accepted");
    OK(MPI_Info_set(info, "thread_level", "MPI_THREAD_FUNNELED"));
    OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    OK(MPI_Info_free(&info));
    OK(MPI_Initialized(&flag));
    CHECK(flag == 0, "a session is not MPI_Init: %d", flag);

    MPI_Info used;
    char value[64];
    OK(MPI_Session_get_info(s, &used));
    OK(MPI_Info_get_string(used, "thread_level", &(int){sizeof value}, value, &flag));
    CHECK(flag && strcmp(value, "MPI_THREAD_FUNNELED") == 0, "thread_level %s", value);
    OK(MPI_Info_free(&used));

    /* The process sets, by number and by name. */
    int n = 0;
    OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n == 2, "%d process sets", n);
    int have_world = 0, have_self = 0;
    for (int i = 0; i < n; i++) {
        int len = 0;
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len < 64, "length %d", len);
        char name[64];
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK((int)strlen(name) == len - 1, "%s has length %d", name, len);
        have_world |= strcmp(name, "mpi://WORLD") == 0;
        have_self |= strcmp(name, "mpi://SELF") == 0;
    }
    CHECK(have_world && have_self, "world %d self %d", have_world, have_self);
    char cut[5];
    int cutlen = sizeof cut;
    OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &cutlen, cut));
    CHECK(strlen(cut) == 4, "truncated name %s", cut);

    MPI_Info pinfo;
    OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &pinfo));
    OK(MPI_Info_get_string(pinfo, "mpi_size", &(int){sizeof value}, value, &flag));
    CHECK(flag, "no mpi_size");
    int size = atoi(value);
    CHECK(size >= 1, "mpi_size %s", value);
    OK(MPI_Info_free(&pinfo));

    /* The whole world: ranks, a sum, a ring. */
    MPI_Comm world = comm_of(s, "mpi://WORLD", "org.myrix.test.world");
    int csize = 0;
    OK(MPI_Comm_size(world, &csize));
    OK(MPI_Comm_rank(world, &rank));
    CHECK(csize == size, "size %d, mpi_size %d", csize, size);
    int sum = 0;
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, world));
    CHECK(sum == size * (size - 1) / 2, "sum %d", sum);
    int got = -1;
    OK(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT,
                    (rank + size - 1) % size, 7, world, MPI_STATUS_IGNORE));
    CHECK(got == (rank + size - 1) % size, "ring got %d", got);

    /* SELF. */
    MPI_Comm self = comm_of(s, "mpi://SELF", "org.myrix.test.self");
    OK(MPI_Comm_size(self, &csize));
    CHECK(csize == 1, "SELF has %d", csize);
    OK(MPI_Comm_free(&self));

    /* A second session, open at once; the even ranks make a communicator of their
     * own from a group of it. */
    MPI_Session s2;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    CHECK(s2 != s, "two sessions, one handle");
    MPI_Group wg, evens;
    OK(MPI_Group_from_session_pset(s2, "mpi://WORLD", &wg));
    int ne = (size + 1) / 2;
    int *er = malloc(sizeof(int) * ne);
    for (int i = 0; i < ne; i++) er[i] = 2 * i;
    OK(MPI_Group_incl(wg, ne, er, &evens));
    free(er);
    if (rank % 2 == 0) {
        MPI_Comm ec;
        OK(MPI_Comm_create_from_group(evens, "org.myrix.test.evens", MPI_INFO_NULL,
                                      MPI_ERRORS_RETURN, &ec));
        int er_rank = -1, esize = 0;
        OK(MPI_Comm_rank(ec, &er_rank));
        OK(MPI_Comm_size(ec, &esize));
        CHECK(esize == ne && er_rank == rank / 2, "evens %d of %d", er_rank, esize);
        OK(MPI_Barrier(ec));
        OK(MPI_Comm_free(&ec));
    }
    OK(MPI_Group_free(&evens));
    OK(MPI_Group_free(&wg));

    /* Errors: returned under MPI_ERRORS_RETURN, then through a handler. */
    MPI_Group bad;
    int rc = MPI_Group_from_session_pset(s, "mpi://NOWHERE", &bad);
    int cls = -1;
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ARG, "unknown pset: class %d", cls);
    rc = MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n);
    CHECK(rc == MPI_ERR_SESSION, "null session: %d", rc);
    MPI_Errhandler eh;
    OK(MPI_Session_create_errhandler(on_error, &eh));
    OK(MPI_Session_set_errhandler(s2, eh));
    MPI_Errhandler back;
    OK(MPI_Session_get_errhandler(s2, &back));
    CHECK(back == eh, "handler not kept");
    int len = 0;
    rc = MPI_Session_get_nth_pset(s2, MPI_INFO_NULL, 9, &len, NULL);
    CHECK(rc == MPI_ERR_ARG && handler_calls == 1 && handler_code == MPI_ERR_ARG,
          "rc %d, %d calls, code %d", rc, handler_calls, handler_code);
    OK(MPI_Session_call_errhandler(s2, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "call_errhandler");
    OK(MPI_Errhandler_free(&eh));
    OK(MPI_Session_finalize(&s2));
    CHECK(s2 == MPI_SESSION_NULL, "finalize leaves the handle");

    /* The first session still works after the second ended. */
    OK(MPI_Barrier(world));
    OK(MPI_Comm_free(&world));
    OK(MPI_Session_finalize(&s));
    OK(MPI_Initialized(&flag));
    CHECK(flag == 0, "initialized after sessions: %d", flag);

    /* A session again after the last one ended: the runtime is still up, torn
     * down at exit. */
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    world = comm_of(s, "mpi://WORLD", "org.myrix.test.again");
    sum = 0;
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, world));
    CHECK(sum == size * (size - 1) / 2, "sum again %d", sum);
    OK(MPI_Comm_free(&world));
    OK(MPI_Session_finalize(&s));
    printf("session ok %d\n", rank);
    return 0;
}
