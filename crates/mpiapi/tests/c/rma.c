/* One-sided communication on N ranks, every result checked byte by byte:
 * fence epochs (contiguous and strided puts, gets), exclusive-lock counters
 * incremented N x ITER times with Accumulate and with Fetch_and_op, a lock built
 * on Compare_and_swap, Get_accumulate, a PSCW ring, shared windows with direct
 * stores, Win_create on unaligned caller memory, dynamic windows, attributes,
 * names, request forms, pair types (MPI_SHORT_INT) and refusals under MPI_ERRORS_RETURN. Across nodes
 * (ranks in several network namespaces) the same, but shared windows run on the
 * node's ranks (MPI_Comm_split_type) and their creation over MPI_COMM_WORLD must be
 * refused with MPI_ERR_UNSUPPORTED_OPERATION, while a dynamic window over the whole
 * world works (put, fetch-and-op and get between nodes). Prints
 * "rma ok <rank>" when everything passed. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define ITER 200

static int rank, size;
/* The ranks of this node (shared and dynamic windows run there). */
static MPI_Comm node;
static int nrank, nsize;

static void fence_epochs(void) {
    int *mem;
    MPI_Win win;
    int n = 4 * size;
    OK(MPI_Win_allocate(n * sizeof(int), sizeof(int), MPI_INFO_NULL,
                        MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < n; i++) mem[i] = -1;
    OK(MPI_Win_fence(0, win));
    /* Every rank puts rank+1 at index rank of every window. */
    for (int t = 0; t < size; t++) {
        int v = rank + 1;
        OK(MPI_Put(&v, 1, MPI_INT, t, rank, 1, MPI_INT, win));
    }
    /* And a strided block: 2 ints at index 2*size + 2*rank.. of the right
     * neighbour, through a vector type of stride 1 (contiguous pairs). */
    MPI_Datatype vec;
    OK(MPI_Type_vector(2, 1, 1, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    int pair[2] = {1000 + rank, 2000 + rank};
    OK(MPI_Put(pair, 2, MPI_INT, (rank + 1) % size, 2 * size + 2 * rank, 1, vec,
               win));
    OK(MPI_Win_fence(0, win));
    int left = (rank + size - 1) % size;
    for (int i = 0; i < size; i++)
        CHECK(mem[i] == i + 1, "mem[%d] = %d", i, mem[i]);
    for (int i = size; i < 2 * size; i++)
        CHECK(mem[i] == -1, "mem[%d] = %d untouched", i, mem[i]);
    CHECK(mem[2 * size + 2 * left] == 1000 + left &&
              mem[2 * size + 2 * left + 1] == 2000 + left,
          "strided put from %d: %d %d", left, mem[2 * size + 2 * left],
          mem[2 * size + 2 * left + 1]);
    /* Get every rank's first size ints (strided origin: every other int). */
    int *got = malloc(2 * size * sizeof(int));
    MPI_Datatype strided;
    OK(MPI_Type_vector(size, 1, 2, MPI_INT, &strided));
    OK(MPI_Type_commit(&strided));
    for (int t = 0; t < size; t++) {
        for (int i = 0; i < 2 * size; i++) got[i] = -7;
        OK(MPI_Get(got, 1, strided, t, 0, size, MPI_INT, win));
        OK(MPI_Win_fence(0, win));
        for (int i = 0; i < size; i++) {
            CHECK(got[2 * i] == i + 1, "get from %d: [%d] = %d", t, i, got[2 * i]);
            CHECK(got[2 * i + 1] == -7, "get hole %d overwritten", i);
        }
    }
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    free(got);
    MPI_Type_free(&vec);
    MPI_Type_free(&strided);
    OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "Win_free sets MPI_WIN_NULL");
}

static void counters(void) {
    long long *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                        MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, 4 * sizeof(long long));
    MPI_Barrier(MPI_COMM_WORLD);
    long long one = 1;
    for (int i = 0; i < ITER; i++) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM,
                          win));
        OK(MPI_Win_unlock(0, win));
    }
    /* Fetch_and_op under shared locks: atomic by itself. */
    long long prev_max = -1;
    for (int i = 0; i < ITER; i++) {
        long long old = -5;
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 1, MPI_SUM, win));
        OK(MPI_Win_unlock(0, win));
        CHECK(old > prev_max && old < (long long)size * ITER, "ticket %lld", old);
        prev_max = old;
    }
    /* Get_accumulate of an int at byte 16 (word 2's first int). */
    int two = 2, oldi = -1;
    for (int i = 0; i < ITER; i++) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        OK(MPI_Get_accumulate(&two, 1, MPI_INT, &oldi, 1, MPI_INT, 0, 2, 1,
                              MPI_INT, MPI_SUM, win));
        OK(MPI_Win_unlock(0, win));
        CHECK(oldi % 2 == 0 && oldi >= 0, "get_accumulate old %d", oldi);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(mem[0] == (long long)size * ITER, "accumulate counter %lld", mem[0]);
        CHECK(mem[1] == (long long)size * ITER, "fetch_and_op counter %lld",
              mem[1]);
        int low;
        memcpy(&low, &mem[2], sizeof low);
        CHECK(low == 2 * size * ITER, "get_accumulate counter %d", low);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_free(&win));
}

static void cas_lock(void) {
    long long *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(2 * sizeof(long long), 8, MPI_INFO_NULL, MPI_COMM_WORLD,
                        &mem, &win));
    mem[0] = mem[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock_all(0, win));
    long long me = rank + 1, zero = 0, old;
    for (int i = 0; i < ITER; i++) {
        do {
            OK(MPI_Compare_and_swap(&me, &zero, &old, MPI_LONG_LONG, 0, 0, win));
            OK(MPI_Win_flush(0, win));
        } while (old != 0);
        long long c;
        OK(MPI_Get(&c, 1, MPI_LONG_LONG, 0, 1, 1, MPI_LONG_LONG, win));
        OK(MPI_Win_flush(0, win));
        c += 1;
        OK(MPI_Put(&c, 1, MPI_LONG_LONG, 0, 1, 1, MPI_LONG_LONG, win));
        OK(MPI_Win_flush(0, win));
        OK(MPI_Compare_and_swap(&zero, &me, &old, MPI_LONG_LONG, 0, 0, win));
        OK(MPI_Win_flush(0, win));
        CHECK(old == me, "lock word %lld, mine %lld", old, me);
    }
    OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(mem[1] == (long long)size * ITER && mem[0] == 0,
              "CAS-locked counter %lld lock %lld", mem[1], mem[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_free(&win));
}

static void pscw_ring(void) {
    int *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                        &mem, &win));
    *mem = -1;
    MPI_Group world, left_g, right_g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Group_incl(world, 1, &left, &left_g);
    MPI_Group_incl(world, 1, &right, &right_g);
    for (int round = 0; round < 5; round++) {
        OK(MPI_Win_post(left_g, 0, win));
        OK(MPI_Win_start(right_g, 0, win));
        int v = rank * 10 + round;
        OK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
        OK(MPI_Win_complete(win));
        OK(MPI_Win_wait(win));
        CHECK(*mem == left * 10 + round, "ring round %d got %d", round, *mem);
    }
    /* Win_test form. */
    OK(MPI_Win_post(left_g, 0, win));
    OK(MPI_Win_start(right_g, 0, win));
    OK(MPI_Win_complete(win));
    int flag = 0;
    while (!flag) OK(MPI_Win_test(win, &flag));
    MPI_Group_free(&left_g);
    MPI_Group_free(&right_g);
    MPI_Group_free(&world);
    OK(MPI_Win_free(&win));
}

static void shared(void) {
    int rank = nrank, size = nsize;
    int *mine;
    MPI_Win win;
    MPI_Aint len = (rank + 1) * sizeof(int);
    OK(MPI_Win_allocate_shared(len, sizeof(int), MPI_INFO_NULL, node,
                               &mine, &win));
    for (int i = 0; i <= rank; i++) mine[i] = rank * 100 + i;
    OK(MPI_Win_sync(win));
    MPI_Barrier(node);
    OK(MPI_Win_sync(win));
    char *prev_end = NULL;
    for (int r = 0; r < size; r++) {
        MPI_Aint sz;
        int du;
        int *p;
        OK(MPI_Win_shared_query(win, r, &sz, &du, &p));
        CHECK(sz == (r + 1) * (MPI_Aint)sizeof(int) && du == sizeof(int),
              "query %d: size %ld unit %d", r, (long)sz, du);
        CHECK(prev_end == NULL || (char *)p == prev_end, "rank %d not contiguous", r);
        prev_end = (char *)p + sz;
        for (int i = 0; i <= r; i++)
            CHECK(p[i] == r * 100 + i, "shared[%d][%d] = %d", r, i, p[i]);
        if (r == rank) CHECK(p == mine, "own base");
    }
    MPI_Barrier(node);
    OK(MPI_Win_free(&win));
    /* Ranks that give no memory: size 0 and a NULL base. */
    OK(MPI_Win_allocate_shared(rank % 2 ? 0 : sizeof(int), sizeof(int), MPI_INFO_NULL, node,
                               &mine, &win));
    for (int r = 0; r < size; r++) {
        MPI_Aint sz;
        int du;
        int *p;
        OK(MPI_Win_shared_query(win, r, &sz, &du, &p));
        CHECK(r % 2 == 0 || (sz == 0 && p == NULL), "query %d of nothing: %ld %p", r,
              (long)sz, (void *)p);
    }
    OK(MPI_Win_free(&win));
}

static void caller_memory(void) {
    /* Unaligned malloc'd memory, exported with the pages holding it. */
    char *raw = malloc(100 + 8);
    int *buf = (int *)(raw + 8);
    for (int i = 0; i < 25; i++) buf[i] = 0;
    MPI_Win win;
    OK(MPI_Win_create(buf, 25 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                      MPI_COMM_WORLD, &win));
    OK(MPI_Win_fence(0, win));
    int v = 77 + rank;
    OK(MPI_Put(&v, 1, MPI_INT, (rank + 1) % size, rank % 25, 1, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    int left = (rank + size - 1) % size;
    CHECK(buf[left % 25] == 77 + left, "caller memory got %d", buf[left % 25]);
    void *base;
    MPI_Aint *szp;
    int *dup, *flav, *model, flag;
    OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == buf, "WIN_BASE");
    OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &szp, &flag));
    CHECK(flag && *szp == 25 * (MPI_Aint)sizeof(int), "WIN_SIZE");
    OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &dup, &flag));
    CHECK(flag && *dup == sizeof(int), "WIN_DISP_UNIT");
    OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flav, &flag));
    CHECK(flag && *flav == MPI_WIN_FLAVOR_CREATE, "FLAVOR");
    OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED, "MODEL");
    MPI_Group g;
    int gs;
    OK(MPI_Win_get_group(win, &g));
    MPI_Group_size(g, &gs);
    CHECK(gs == size, "group size %d", gs);
    MPI_Group_free(&g);
    char name[MPI_MAX_OBJECT_NAME];
    int nl;
    OK(MPI_Win_set_name(win, "ring window"));
    OK(MPI_Win_get_name(win, name, &nl));
    CHECK(strcmp(name, "ring window") == 0 && nl == 11, "name %s", name);
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    OK(MPI_Win_free(&win));
    /* Still the program's memory, with its contents. */
    CHECK(buf[left % 25] == 77 + left, "caller memory after free");
    free(raw);
}

/* A dynamic window over `comm` (the node's ranks, or the whole world across nodes:
 * the target's service thread serves it): each rank attaches 8 words, puts into its
 * right neighbour's, fetches-and-adds into it, and reads its left neighbour's back. */
static void dynamic_on(MPI_Comm comm, const char *what) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Win win;
    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win));
    long long *buf = calloc(8, sizeof(long long));
    OK(MPI_Win_attach(win, buf, 8 * sizeof(long long)));
    MPI_Aint mine, *all = malloc(size * sizeof(MPI_Aint));
    MPI_Get_address(buf, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, comm);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    OK(MPI_Win_lock_all(0, win));
    long long v = 5000 + rank, one = 1, old = -1;
    OK(MPI_Put(&v, 1, MPI_LONG_LONG, right, all[right] + 3 * 8, 1, MPI_LONG_LONG,
               win));
    OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, right, all[right] + 5 * 8, MPI_SUM,
                        win));
    OK(MPI_Win_flush(right, win));
    CHECK(old >= 0 && old < size, "%s: fetch_and_op saw %lld", what, old);
    OK(MPI_Win_unlock_all(win));
    MPI_Barrier(comm);
    CHECK(buf[3] == 5000 + left, "%s: dynamic got %lld", what, buf[3]);
    CHECK(buf[5] == 1, "%s: fetch_and_op total %lld", what, buf[5]);
    long long back = -1;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win));
    OK(MPI_Get(&back, 1, MPI_LONG_LONG, left, all[left] + 3 * 8, 1, MPI_LONG_LONG, win));
    OK(MPI_Win_unlock(left, win));
    CHECK(back == 5000 + (left + size - 1) % size, "%s: get read %lld", what, back);
    MPI_Barrier(comm);
    OK(MPI_Win_detach(win, buf));
    OK(MPI_Win_free(&win));
    free(buf);
    free(all);
}

static void dynamic(void) { dynamic_on(node, "node"); }

static void requests_and_refusals(void) {
    int *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                        MPI_COMM_WORLD, &mem, &win));
    MPI_Errhandler eh;
    OK(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default errhandler");
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int v = 1;
    /* No epoch yet. */
    CHECK(class_of(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win)) ==
              MPI_ERR_RMA_SYNC, "put without epoch");
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    CHECK(class_of(MPI_Put(&v, 1, MPI_INT, rank, 4, 1, MPI_INT, win)) ==
              MPI_ERR_RMA_RANGE, "put past the end");
    CHECK(class_of(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win)) ==
              MPI_ERR_RANK, "bad rank");
    CHECK(class_of(MPI_Put(&v, -1, MPI_INT, rank, 0, 1, MPI_INT, win)) ==
              MPI_ERR_COUNT, "bad count");
    double d = 1, dc = 0, dr;
    CHECK(class_of(MPI_Compare_and_swap(&d, &dc, &dr, MPI_DOUBLE, rank, 0,
                                         win)) == MPI_ERR_TYPE, "CAS double");
    CHECK(class_of(MPI_Accumulate(&v, 1, MPI_INT, rank, 0, 1, MPI_INT,
                                   MPI_MAXLOC, win)) == MPI_ERR_OP, "MAXLOC int");
    /* An empty target moves nothing, whatever the types. */
    MPI_Datatype none;
    OK(MPI_Type_contiguous(0, MPI_INT, &none));
    OK(MPI_Type_commit(&none));
    OK(MPI_Accumulate(&v, 1, MPI_DOUBLE, rank, 0, 0, MPI_INT, MPI_SUM, win));
    OK(MPI_Accumulate(&v, 0, MPI_INT, rank, 0, 1, none, MPI_SUM, win));
    OK(MPI_Get_accumulate(NULL, 0, MPI_INT, NULL, 0, MPI_DOUBLE, rank, 0, 1, none,
                          MPI_SUM, win));
    OK(MPI_Type_free(&none));
    CHECK(class_of(MPI_Win_free(&win)) == MPI_ERR_RMA_SYNC, "free while locked");
    OK(MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    MPI_Request rq[2];
    int w = 40 + rank, r = -1;
    OK(MPI_Rput(&w, 1, MPI_INT, rank, 2, 1, MPI_INT, win, &rq[0]));
    OK(MPI_Waitall(1, rq, MPI_STATUSES_IGNORE));
    OK(MPI_Rget(&r, 1, MPI_INT, rank, 2, 1, MPI_INT, win, &rq[1]));
    OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    CHECK(r == 40 + rank && mem[2] == 40 + rank, "rput/rget %d", r);
    OK(MPI_Win_unlock(rank, win));
    CHECK(class_of(MPI_Win_unlock(rank, win)) == MPI_ERR_RMA_SYNC, "double unlock");
    CHECK(class_of(MPI_Win_lock(7, 0, 0, win)) == MPI_ERR_LOCKTYPE, "lock type");
    CHECK(class_of(MPI_Win_fence(12345, win)) == MPI_ERR_ASSERT, "fence assert");
    CHECK(class_of(MPI_Win_attach(win, mem, 4)) == MPI_ERR_RMA_FLAVOR,
          "attach to allocated window");
    OK(MPI_Win_free(&win));
}

/* A world spanning nodes: no shared window over it; a dynamic one works. */
static void spanning(void) {
    MPI_Comm w;
    MPI_Comm_dup(MPI_COMM_WORLD, &w);
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    MPI_Win win = MPI_WIN_NULL;
    int *p;
    CHECK(class_of(MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, w, &p, &win)) ==
              MPI_ERR_UNSUPPORTED_OPERATION, "shared window across nodes");
    CHECK(win == MPI_WIN_NULL, "no window made");
    MPI_Comm_set_errhandler(w, MPI_ERRORS_ARE_FATAL);
    dynamic_on(w, "across nodes");
    MPI_Comm_free(&w);
}

/* Pair types have a gap (MPI_SHORT_INT: short, 2 bytes of padding, int; size 6,
 * extent 8): a put or get of them moves both fields of every element and never
 * the padding, however the library's one-type fast path is taken. */
static void pair_types(void) {
    typedef struct { short s; int i; } si_t;
    si_t *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(4 * sizeof(si_t), sizeof(si_t), MPI_INFO_NULL,
                        MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0x5a, 4 * sizeof(si_t));
    MPI_Barrier(MPI_COMM_WORLD);
    int t = (rank + 1) % size;
    si_t v[2] = {{(short)(100 + rank), 0x12345678 + rank}, {-7, -0x7654321}};
    OK(MPI_Win_lock_all(0, win));
    OK(MPI_Put(v, 2, MPI_SHORT_INT, t, 1, 2, MPI_SHORT_INT, win));
    OK(MPI_Win_flush(t, win));
    si_t back[2];
    memset(back, 0, sizeof back);
    OK(MPI_Get(back, 2, MPI_SHORT_INT, t, 1, 2, MPI_SHORT_INT, win));
    OK(MPI_Win_flush(t, win));
    OK(MPI_Win_unlock_all(win));
    for (int k = 0; k < 2; k++)
        CHECK(back[k].s == v[k].s && back[k].i == v[k].i,
              "MPI_SHORT_INT element %d got (%d, %#x), put (%d, %#x)", k,
              back[k].s, back[k].i, v[k].s, v[k].i);
    MPI_Barrier(MPI_COMM_WORLD);
    int from = (rank + size - 1) % size;
    const unsigned char *b = (const unsigned char *)mem;
    CHECK(mem[1].s == 100 + from && mem[1].i == 0x12345678 + from &&
              mem[2].s == -7 && mem[2].i == -0x7654321,
          "window holds (%d, %#x) (%d, %#x)", mem[1].s, mem[1].i, mem[2].s,
          mem[2].i);
    /* The padding of each element (bytes 2-3) and the untouched elements. */
    CHECK(b[8 + 2] == 0x5a && b[8 + 3] == 0x5a && b[16 + 2] == 0x5a &&
              b[16 + 3] == 0x5a && b[0] == 0x5a && b[24 + 7] == 0x5a,
          "a put of MPI_SHORT_INT wrote padding or a neighbour");
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_free(&win));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    fence_epochs();
    counters();
    cas_lock();
    pscw_ring();
    pair_types();
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    if (nsize < size) spanning();
    shared();
    caller_memory();
    dynamic();
    requests_and_refusals();
    printf("rma ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
