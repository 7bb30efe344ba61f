/* MPI_Info objects (keys round-trip, order, lengths, errors, MPI_INFO_ENV,
 * communicator hints) and attribute caching (keyvals, copy callbacks on
 * MPI_Comm_dup, delete callbacks on replace/delete/free, the legacy calls,
 * datatype and window attributes, the predefined MPI_TAG_UB).
 * Prints "attr_info ok <rank>" at the end; any failure aborts with a message. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void info(void) {
    MPI_Info i, d;
    char v[MPI_MAX_INFO_VAL + 1], k[MPI_MAX_INFO_KEY];
    int flag, n, len;
    OK(MPI_Info_create(&i));
    OK(MPI_Info_set(i, "alpha", "1"));
    OK(MPI_Info_set(i, "beta", "two"));
    OK(MPI_Info_set(i, "alpha", "one"));
    OK(MPI_Info_get_nkeys(i, &n));
    CHECK(n == 2);
    OK(MPI_Info_get_nthkey(i, 0, k));
    CHECK(strcmp(k, "alpha") == 0);
    OK(MPI_Info_get_nthkey(i, 1, k));
    CHECK(strcmp(k, "beta") == 0);
    CHECK(MPI_Info_get_nthkey(i, 2, k) == MPI_ERR_ARG);
    OK(MPI_Info_get(i, "alpha", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "one") == 0);
    OK(MPI_Info_get(i, "beta", 1, v, &flag)); /* truncated to 1 char */
    CHECK(flag && strcmp(v, "t") == 0);
    OK(MPI_Info_get(i, "gamma", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(!flag);
    OK(MPI_Info_get_valuelen(i, "beta", &len, &flag));
    CHECK(flag && len == 3);
    len = 0;
    OK(MPI_Info_get_string(i, "beta", &len, v, &flag));
    CHECK(flag && len == 4);
    len = sizeof v;
    OK(MPI_Info_get_string(i, "beta", &len, v, &flag));
    CHECK(flag && len == 4 && strcmp(v, "two") == 0);
    OK(MPI_Info_dup(i, &d));
    OK(MPI_Info_delete(i, "alpha"));
    CHECK(MPI_Info_delete(i, "alpha") == MPI_ERR_INFO_NOKEY);
    OK(MPI_Info_get_nkeys(i, &n));
    CHECK(n == 1);
    OK(MPI_Info_get_nkeys(d, &n));
    CHECK(n == 2);
    char big[MPI_MAX_INFO_KEY + 8];
    memset(big, 'k', sizeof big - 1);
    big[sizeof big - 1] = 0;
    CHECK(MPI_Info_set(i, big, "x") == MPI_ERR_INFO_KEY);
    CHECK(MPI_Info_set(i, "", "x") == MPI_ERR_INFO_KEY);
    /* Hints on a communicator come back. */
    MPI_Comm c;
    MPI_Info used;
    OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, d, &c));
    OK(MPI_Comm_get_info(c, &used));
    OK(MPI_Info_get(used, "beta", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "two") == 0);
    OK(MPI_Info_free(&used));
    OK(MPI_Comm_set_info(c, i));
    OK(MPI_Comm_get_info(c, &used));
    OK(MPI_Info_get_nkeys(used, &n));
    CHECK(n == 1);
    OK(MPI_Info_free(&used));
    OK(MPI_Comm_free(&c));
    /* MPI_Comm_idup_with_info: a usable duplicate once the request completes. */
    MPI_Request rq;
    int sum = 0;
    OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, d, &c, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(rq == MPI_REQUEST_NULL);
    OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == np * (np - 1) / 2);
    OK(MPI_Comm_get_info(c, &used));
    OK(MPI_Info_get_nkeys(used, &n));
    CHECK(n == 2);
    OK(MPI_Info_free(&used));
    OK(MPI_Comm_free(&c));
    OK(MPI_Info_free(&i));
    OK(MPI_Info_free(&d));
    CHECK(i == MPI_INFO_NULL && d == MPI_INFO_NULL);
    CHECK(MPI_Info_free(&i) == MPI_ERR_INFO);
    /* MPI_INFO_ENV: readable, not changeable. */
    OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strstr(v, "attr_info") != NULL);
    CHECK(MPI_Info_set(MPI_INFO_ENV, "a", "b") == MPI_ERR_INFO);
    OK(MPI_Info_create_env(0, NULL, &i));
    OK(MPI_Info_get(i, "maxprocs", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && atoi(v) == np);
    OK(MPI_Info_free(&i));
}

/* Callback log: each callback appends a letter and the value. */
static char log_[256];
static void note(char what, void *val) {
    char s[32];
    snprintf(s, sizeof s, "%c%ld ", what, (long)(size_t)val);
    strcat(log_, s);
}

static int copy_cb(MPI_Comm c, int key, void *extra, void *in, void *out,
                   int *flag) {
    (void)c, (void)key;
    CHECK(*(int *)extra == 42);
    note('c', in);
    *(void **)out = (void *)((size_t)in + 100);
    *flag = 1;
    return MPI_SUCCESS;
}

static int del_cb(MPI_Comm c, int key, void *val, void *extra) {
    (void)c, (void)key;
    CHECK(*(int *)extra == 42);
    note('d', val);
    return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm c, int key, void *extra, void *in, void *out,
                        int *flag) {
    (void)c, (void)key, (void)extra, (void)in, (void)out, (void)flag;
    return MPI_ERR_OTHER;
}

static int failing_type_copy(MPI_Datatype t, int key, void *extra, void *in,
                             void *out, int *flag) {
    (void)t, (void)key, (void)extra, (void)in, (void)out, (void)flag;
    return MPI_ERR_OTHER;
}

static int type_del(MPI_Datatype t, int key, void *val, void *extra) {
    (void)t, (void)key, (void)extra;
    note('t', val);
    return MPI_SUCCESS;
}

static void attrs(void) {
    static int extra = 42;
    int k1, k2, k3, flag;
    void *v;
    /* Predefined attributes stay. */
    int *ub;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && *ub >= 32767);
    OK(MPI_Comm_create_keyval(copy_cb, del_cb, &k1, &extra));
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_cb, &k3, &extra));
    MPI_Comm a, b;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    OK(MPI_Comm_get_attr(a, k1, &v, &flag));
    CHECK(!flag);
    OK(MPI_Comm_set_attr(a, k1, (void *)1));
    OK(MPI_Comm_set_attr(a, k2, (void *)2));
    OK(MPI_Comm_set_attr(a, k3, (void *)3));
    OK(MPI_Comm_set_attr(a, k1, (void *)5)); /* replaces: delete runs on 1 */
    CHECK(strcmp(log_, "d1 ") == 0);
    OK(MPI_Comm_get_attr(a, k1, &v, &flag));
    CHECK(flag && v == (void *)5);
    log_[0] = 0;
    OK(MPI_Comm_dup(a, &b)); /* k1 copied through the callback, k2 as is, k3 not */
    CHECK(strcmp(log_, "c5 ") == 0);
    OK(MPI_Comm_get_attr(b, k1, &v, &flag));
    CHECK(flag && v == (void *)105);
    OK(MPI_Comm_get_attr(b, k2, &v, &flag));
    CHECK(flag && v == (void *)2);
    OK(MPI_Comm_get_attr(b, k3, &v, &flag));
    CHECK(!flag);
    log_[0] = 0;
    OK(MPI_Comm_delete_attr(a, k3));
    CHECK(strcmp(log_, "d3 ") == 0);
    log_[0] = 0;
    OK(MPI_Comm_free(&b));
    CHECK(strcmp(log_, "d105 ") == 0);
    /* A keyval freed while in use keeps working for its attributes. */
    OK(MPI_Comm_free_keyval(&k1));
    CHECK(k1 == MPI_KEYVAL_INVALID);
    log_[0] = 0;
    OK(MPI_Comm_free(&a));
    CHECK(strcmp(log_, "d5 ") == 0);
    CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, k1, NULL) == MPI_ERR_KEYVAL);
    CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL) == MPI_ERR_KEYVAL);
    /* A failing copy callback fails the dup. */
    int kf;
    OK(MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &kf, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kf, (void *)7));
    a = MPI_COMM_WORLD;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &a) != MPI_SUCCESS);
    CHECK(a == MPI_COMM_NULL); /* no communicator, and the handle says so */
    OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kf));
    int kf2 = kf;
    OK(MPI_Comm_free_keyval(&kf));
    /* A second free of one keyval is accepted (MPICH's attr/keyval_double_free). */
    OK(MPI_Comm_free_keyval(&kf2));
    CHECK(kf2 == MPI_KEYVAL_INVALID);
    /* Legacy calls. */
    int lk;
    OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &lk, NULL));
    OK(MPI_Attr_put(MPI_COMM_WORLD, lk, (void *)9));
    OK(MPI_Attr_get(MPI_COMM_WORLD, lk, &v, &flag));
    CHECK(flag && v == (void *)9);
    OK(MPI_Attr_delete(MPI_COMM_WORLD, lk));
    OK(MPI_Attr_get(MPI_COMM_WORLD, lk, &v, &flag));
    CHECK(!flag);
    OK(MPI_Keyval_free(&lk));
    /* Datatype attributes: copied on MPI_Type_dup, deleted on MPI_Type_free. */
    int tk;
    MPI_Datatype t, t2;
    OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_del, &tk, NULL));
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    OK(MPI_Type_set_attr(t, tk, (void *)11));
    OK(MPI_Type_dup(t, &t2));
    OK(MPI_Type_get_attr(t2, tk, &v, &flag));
    CHECK(flag && v == (void *)11);
    log_[0] = 0;
    OK(MPI_Type_free(&t));
    OK(MPI_Type_free(&t2));
    CHECK(strcmp(log_, "t11 t11 ") == 0);
    /* A failing copy callback fails MPI_Type_dup and leaves MPI_DATATYPE_NULL. */
    int tf;
    OK(MPI_Type_create_keyval(failing_type_copy, MPI_TYPE_NULL_DELETE_FN, &tf, NULL));
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    OK(MPI_Type_set_attr(t, tf, (void *)12));
    t2 = MPI_INT;
    CHECK(MPI_Type_dup(t, &t2) != MPI_SUCCESS);
    CHECK(t2 == MPI_DATATYPE_NULL);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_free_keyval(&tf));
    OK(MPI_Type_free_keyval(&tk));
    /* Window attributes next to the predefined ones. */
    int wk;
    static int buf = 0; /* not on the stack: window memory is shared in place */
    MPI_Win w;
    OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &wk, NULL));
    OK(MPI_Win_create(&buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    OK(MPI_Win_set_attr(w, wk, (void *)13));
    OK(MPI_Win_get_attr(w, wk, &v, &flag));
    CHECK(flag && v == (void *)13);
    OK(MPI_Win_get_attr(w, MPI_WIN_BASE, &v, &flag));
    CHECK(flag && v == &buf);
    OK(MPI_Win_delete_attr(w, wk));
    OK(MPI_Win_get_attr(w, wk, &v, &flag));
    CHECK(!flag);
    OK(MPI_Win_free(&w));
    OK(MPI_Win_free_keyval(&wk));
    OK(MPI_Comm_free_keyval(&k2));
    OK(MPI_Comm_free_keyval(&k3));
}

/* Status accessors, MPI_Reduce_local, MPI_Type_match_size,
 * MPI_Request_get_status_all/any/some. */
static void small(void) {
    MPI_Status st;
    int v, flag;
    OK(MPI_Status_set_source(&st, 3));
    OK(MPI_Status_set_tag(&st, 4));
    OK(MPI_Status_set_error(&st, MPI_ERR_OTHER));
    OK(MPI_Status_set_elements(&st, MPI_INT, 5));
    OK(MPI_Status_set_cancelled(&st, 1));
    OK(MPI_Status_get_source(&st, &v));
    CHECK(v == 3);
    OK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 4);
    OK(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_OTHER);
    OK(MPI_Get_count(&st, MPI_INT, &v));
    CHECK(v == 5);
    OK(MPI_Get_count(&st, MPI_BYTE, &v));
    CHECK(v == 5 * (int)sizeof(int));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag);
    MPI_Datatype pair;
    OK(MPI_Type_contiguous(2, MPI_DOUBLE, &pair));
    OK(MPI_Type_commit(&pair));
    OK(MPI_Status_set_elements_x(&st, pair, 3));
    OK(MPI_Get_elements(&st, pair, &v));
    CHECK(v == 3);
    OK(MPI_Get_count(&st, pair, &v));
    CHECK(v == MPI_UNDEFINED);
    OK(MPI_Type_free(&pair));

    int in[3] = {1, 5, 3}, io[3] = {4, 2, 6};
    OK(MPI_Reduce_local(in, io, 3, MPI_INT, MPI_MAX));
    CHECK(io[0] == 4 && io[1] == 5 && io[2] == 6);
    OK(MPI_Reduce_local(in, io, 3, MPI_INT, MPI_SUM));
    CHECK(io[0] == 5 && io[1] == 10 && io[2] == 9);
    /* MPI_IN_PLACE either side and aliased buffers are refused, never touched. */
    CHECK(MPI_Reduce_local(MPI_IN_PLACE, io, 3, MPI_INT, MPI_SUM) == MPI_ERR_BUFFER);
    CHECK(MPI_Reduce_local(in, MPI_IN_PLACE, 3, MPI_INT, MPI_SUM) == MPI_ERR_BUFFER);
    CHECK(MPI_Reduce_local(io, io, 3, MPI_INT, MPI_SUM) == MPI_ERR_BUFFER);
    CHECK(io[0] == 5 && io[1] == 10 && io[2] == 9);

    MPI_Datatype t;
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t));
    CHECK(t == MPI_DOUBLE);
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t));
    CHECK(t == MPI_INT32_T);
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t) == MPI_ERR_ARG);

    /* A receive from self not yet matched, then matched. */
    int x = 0, y = 77, idx, out, ids[2];
    MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[2];
    OK(MPI_Request_get_status_any(2, rq, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED);
    OK(MPI_Irecv(&x, 1, MPI_INT, 0, 99, MPI_COMM_SELF, &rq[0]));
    OK(MPI_Request_get_status_all(2, rq, &flag, sts));
    CHECK(!flag);
    OK(MPI_Request_get_status_some(2, rq, &out, ids, sts));
    CHECK(out == 0);
    OK(MPI_Send(&y, 1, MPI_INT, 0, 99, MPI_COMM_SELF));
    do {
        OK(MPI_Request_get_status_any(2, rq, &idx, &flag, &st));
    } while (!flag);
    CHECK(idx == 0 && st.MPI_TAG == 99 && rq[0] != MPI_REQUEST_NULL);
    OK(MPI_Request_get_status_all(2, rq, &flag, sts));
    CHECK(flag && sts[0].MPI_TAG == 99);
    OK(MPI_Request_get_status_some(2, rq, &out, ids, sts));
    CHECK(out == 1 && ids[0] == 0);
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(x == 77);
}

/* User error handlers and added error classes, codes and strings. */
static int seen_code;
static MPI_Comm seen_comm;
static void comm_handler(MPI_Comm *c, int *code, ...) {
    seen_comm = *c;
    seen_code = *code;
}
static void win_handler(MPI_Win *w, int *code, ...) {
    (void)w;
    seen_code = -*code;
}

static void errors(void) {
    MPI_Errhandler eh, got, weh;
    MPI_Comm c;
    OK(MPI_Comm_create_errhandler(comm_handler, &eh));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    OK(MPI_Comm_set_errhandler(c, eh));
    OK(MPI_Comm_get_errhandler(c, &got));
    CHECK(got == eh);
    OK(MPI_Errhandler_free(&got));
    int r;
    CHECK(MPI_Send(&r, 1, MPI_INT, np + 5, 0, c) == MPI_ERR_RANK);
    CHECK(seen_code == MPI_ERR_RANK && seen_comm == c);
    OK(MPI_Comm_call_errhandler(c, MPI_ERR_OTHER));
    CHECK(seen_code == MPI_ERR_OTHER);
    OK(MPI_Comm_free(&c));
    OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL);

    int cls, code, last, flag, *lastp, len;
    char s[MPI_MAX_ERROR_STRING];
    OK(MPI_Add_error_class(&cls));
    OK(MPI_Add_error_code(cls, &code));
    CHECK(code != cls);
    OK(MPI_Add_error_string(code, "my own error"));
    OK(MPI_Error_class(code, &last));
    CHECK(last == cls);
    OK(MPI_Error_string(code, s, &len));
    CHECK(strcmp(s, "my own error") == 0 && len == 12);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag));
    CHECK(flag && *lastp >= code);
    /* Added codes lie past every predefined one (MPICH's attr/baseattr2). */
    CHECK(cls > MPI_ERR_LASTCODE && *lastp >= MPI_ERR_LASTCODE);
    /* A code in a predefined class (MPICH's errhan test), never in MPI_SUCCESS's. */
    int argcode, argcls;
    OK(MPI_Add_error_code(MPI_ERR_ARG, &argcode));
    OK(MPI_Error_class(argcode, &argcls));
    CHECK(argcode != MPI_ERR_ARG && argcls == MPI_ERR_ARG);
    OK(MPI_Remove_error_code(argcode));
    CHECK(MPI_Add_error_code(MPI_SUCCESS, &argcode) == MPI_ERR_ARG);
    /* MPI-4.1 removal: a class with a code left is refused; predefined ones too. */
    CHECK(MPI_Remove_error_class(cls) == MPI_ERR_ARG);
    CHECK(MPI_Remove_error_class(MPI_ERR_ARG) == MPI_ERR_ARG);
    CHECK(MPI_Remove_error_code(cls) == MPI_ERR_ARG);
    OK(MPI_Remove_error_string(code));
    OK(MPI_Error_string(code, s, &len));
    CHECK(len == 0);
    OK(MPI_Remove_error_code(code));
    CHECK(MPI_Remove_error_code(code) == MPI_ERR_ARG);
    OK(MPI_Remove_error_class(cls));
    CHECK(MPI_Error_class(cls, &last) != MPI_SUCCESS);

    static int buf = 0; /* not on the stack: window memory is shared in place */
    MPI_Win w;
    OK(MPI_Win_create_errhandler(win_handler, &weh));
    OK(MPI_Win_create(&buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    OK(MPI_Win_set_errhandler(w, weh));
    OK(MPI_Win_call_errhandler(w, MPI_ERR_WIN));
    CHECK(seen_code == -MPI_ERR_WIN);
    OK(MPI_Win_free(&w));
    OK(MPI_Errhandler_free(&weh));
}

/* Deleted at MPI_Finalize: prints so the test can see it ran. */
static int self_del(MPI_Comm c, int key, void *val, void *extra) {
    (void)c, (void)key, (void)val, (void)extra;
    printf("attr_info ok %d\n", me);
    fflush(stdout);
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    info();
    attrs();
    small();
    errors();
    int k;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_del, &k, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, k, NULL));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
