/* The tool information interface (MPI_T): usable before MPI_Init and after
 * MPI_Finalize, counted initializations, no variables (every get_num is 0, lookups
 * fail with the documented codes and no error handler runs), performance-variable
 * sessions made and freed. Prints "mpit ok <rank>". */
#include <stdlib.h>

static int rank = -1;
#include "check.h"

#define EXPECT(call, code)                                                     \
    do {                                                                       \
        int rc_ = (call);                                                      \
        CHECK(rc_ == (code), "%s returned %d, not %d", #call, rc_, (code));    \
    } while (0)

int main(int argc, char **argv) {
    int provided = -1, n = -1, idx = -1;
    /* Before MPI_Init, and before MPI_T_init_thread. */
    EXPECT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
    OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    OK(MPI_T_cvar_get_num(&n));
    CHECK(n == 0, "cvars %d", n);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int (*nums[])(int *) = {MPI_T_cvar_get_num, MPI_T_pvar_get_num, MPI_T_category_get_num,
                            MPI_T_event_get_num, MPI_T_source_get_num};
    for (unsigned i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        n = -1;
        OK(nums[i](&n));
        CHECK(n == 0, "get_num %u: %d", i, n);
    }
    EXPECT(MPI_T_cvar_get_index("no_such_variable", &idx), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_pvar_get_index("no_such_variable", MPI_T_PVAR_CLASS_COUNTER, &idx),
           MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_category_get_index("none", &idx), MPI_T_ERR_INVALID_NAME);
    char name[64], desc[64];
    int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum et;
    EXPECT(MPI_T_cvar_get_info(0, name, &nl, &verb, &dt, &et, desc, &dl, &bind, &scope),
           MPI_T_ERR_INVALID_INDEX);
    MPI_T_cvar_handle ch;
    EXPECT(MPI_T_cvar_handle_alloc(0, NULL, &ch, &n), MPI_T_ERR_INVALID_INDEX);
    int stamp = -1;
    OK(MPI_T_category_changed(&stamp));
    CHECK(stamp == 0, "stamp %d", stamp);
    MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL;
    OK(MPI_T_pvar_session_create(&s));
    CHECK(s != MPI_T_PVAR_SESSION_NULL, "a session");
    MPI_T_pvar_handle ph;
    EXPECT(MPI_T_pvar_handle_alloc(s, 0, NULL, &ph, &n), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_INVALID_HANDLE);
    OK(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "freed session not NULL");
    EXPECT(MPI_T_pvar_session_free(&s), MPI_T_ERR_INVALID_SESSION);
    OK(MPI_T_finalize());
    OK(MPI_T_finalize());
    EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("mpit ok %d\n", rank);
    MPI_Finalize();
    /* After MPI_Finalize too. */
    OK(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided));
    OK(MPI_T_finalize());
    return 0;
}
