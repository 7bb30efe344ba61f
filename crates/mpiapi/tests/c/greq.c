/* Generalized requests: MPI_Grequest_start / MPI_Grequest_complete with their
 * query, free and cancel callbacks, completed through MPI_Wait, MPI_Test,
 * MPI_Waitall (mixed with point-to-point requests), MPI_Testall, MPI_Waitany,
 * freed with MPI_Request_free before and after completion, cancelled (the
 * cancel callback completing its own request), and a query error returned by
 * MPI_Wait. Each callback's calls are counted and checked.
 * Prints "greq ok <rank>" at the end; any failure aborts with a message. */
#include "check.h"
#include <string.h>

static int rank, size;

struct state {
    MPI_Request req;
    int queries, frees, cancels, last_complete;
    int tag, elements, query_rc;
};

static int query_fn(void *extra, MPI_Status *st) {
    struct state *s = extra;
    s->queries++;
    st->MPI_SOURCE = rank;
    st->MPI_TAG = s->tag;
    MPI_Status_set_elements(st, MPI_INT, s->elements);
    MPI_Status_set_cancelled(st, s->cancels > 0 && !s->last_complete);
    return s->query_rc;
}

static int free_fn(void *extra) {
    ((struct state *)extra)->frees++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete) {
    struct state *s = extra;
    s->cancels++;
    s->last_complete = complete;
    /* An operation that can stop at once completes its request here. */
    if (!complete) MPI_Grequest_complete(s->req);
    return MPI_SUCCESS;
}

static void start(struct state *s, int tag) {
    memset(s, 0, sizeof *s);
    s->tag = tag;
    s->elements = tag + 1;
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, s, &s->req));
    CHECK(s->req != MPI_REQUEST_NULL, "no request");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Test before and after completion, then the status from query_fn. */
    struct state a;
    start(&a, 5);
    int flag = 1, count;
    MPI_Status st;
    MPI_Request r = a.req;
    OK(MPI_Test(&r, &flag, &st));
    CHECK(!flag && r == a.req && a.queries == 0, "incomplete test");
    OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(!flag, "get_status before completion");
    OK(MPI_Grequest_complete(a.req));
    OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag && a.queries == 1 && a.frees == 0, "get_status after completion");
    OK(MPI_Test(&r, &flag, &st));
    CHECK(flag && r == MPI_REQUEST_NULL, "test after completion");
    CHECK(a.queries == 2 && a.frees == 1, "queries %d frees %d", a.queries, a.frees);
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(st.MPI_SOURCE == rank && st.MPI_TAG == 5 && count == 6,
          "status %d %d %d", st.MPI_SOURCE, st.MPI_TAG, count);

    /* Waitall over generalized and point-to-point requests: completed before. */
    struct state g[3];
    MPI_Request reqs[5];
    int out = rank, in = -1;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int k = 0; k < 3; k++) {
        start(&g[k], 10 + k);
        reqs[k] = g[k].req;
    }
    OK(MPI_Irecv(&in, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &reqs[3]));
    OK(MPI_Isend(&out, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &reqs[4]));
    OK(MPI_Testall(5, reqs, &flag, MPI_STATUSES_IGNORE));
    CHECK(!flag, "testall with incomplete generalized requests");
    for (int k = 2; k >= 0; k--) OK(MPI_Grequest_complete(g[k].req));
    MPI_Status sts[5];
    OK(MPI_Waitall(5, reqs, sts));
    CHECK(in == left, "ring value %d", in);
    for (int k = 0; k < 3; k++) {
        CHECK(reqs[k] == MPI_REQUEST_NULL && g[k].queries == 1 && g[k].frees == 1,
              "waitall %d", k);
        CHECK(sts[k].MPI_TAG == 10 + k, "waitall tag %d", sts[k].MPI_TAG);
    }

    /* Waitany picks the one completed. */
    start(&g[0], 20);
    start(&g[1], 21);
    reqs[0] = g[0].req;
    reqs[1] = g[1].req;
    OK(MPI_Grequest_complete(g[1].req));
    int idx = -1;
    OK(MPI_Waitany(2, reqs, &idx, &st));
    CHECK(idx == 1 && st.MPI_TAG == 21 && g[0].queries == 0, "waitany %d", idx);
    OK(MPI_Grequest_complete(g[0].req));
    OK(MPI_Wait(&reqs[0], &st));
    CHECK(st.MPI_TAG == 20 && g[0].frees == 1, "wait after waitany");

    /* Request_free before completion: free_fn runs in Grequest_complete, and
     * query_fn never. After completion: free_fn runs in Request_free. */
    struct state f;
    start(&f, 30);
    r = f.req;
    OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL && f.frees == 0, "freed early");
    OK(MPI_Grequest_complete(f.req));
    CHECK(f.frees == 1 && f.queries == 0, "free_fn at completion");
    start(&f, 31);
    r = f.req;
    OK(MPI_Grequest_complete(f.req));
    OK(MPI_Request_free(&r));
    CHECK(f.frees == 1 && f.queries == 0, "free_fn at free");

    /* Cancel: the callback is told the request is not complete, completes it;
     * a second cancel is told it is. */
    struct state c;
    start(&c, 40);
    r = c.req;
    OK(MPI_Cancel(&r));
    CHECK(c.cancels == 1 && c.last_complete == 0, "cancel callback");
    OK(MPI_Cancel(&r));
    CHECK(c.cancels == 2 && c.last_complete == 1, "second cancel");
    c.last_complete = 0;
    OK(MPI_Wait(&r, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag && c.frees == 1, "cancelled status");

    /* A query error is what MPI_Wait returns. */
    struct state e;
    start(&e, 50);
    e.query_rc = MPI_ERR_OTHER;
    r = e.req;
    OK(MPI_Grequest_complete(e.req));
    CHECK(MPI_Wait(&r, &st) == MPI_ERR_OTHER, "query error");
    CHECK(e.frees == 1 && r == MPI_REQUEST_NULL, "freed after the error");

    /* Completing an unknown request is an error. */
    CHECK(MPI_Grequest_complete(MPI_REQUEST_NULL) != MPI_SUCCESS, "null complete");

    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("greq ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
