/* Window memory on the caller's stack (as MPICH's rma tests use it): MPI_Win_create
 * of small and page-spanning stack arrays, a dynamic window with a stack array
 * attached, attachments sharing a page with each other (puts, gets and accumulates
 * across the cut between them), a lock right after a fence no access used, and
 * many windows over small MPI_Alloc_mem blocks. Between the calls the program
 * recurses deeply and checks its own frames, so a stack the library corrupted
 * shows up as a wrong sum or a crash. Prints "rma_stack ok RANK". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c, ...)                                                          \
    do {                                                                       \
        if (!(c)) {                                                            \
            failures++;                                                        \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
        }                                                                      \
    } while (0)

static int rank, size;

/* Recursion with a frame full of values checked on the way back. */
static long deep(int n) {
    volatile long mine[32];
    for (int i = 0; i < 32; i++)
        mine[i] = (long)n * 31 + i;
    long s = n > 0 ? deep(n - 1) : 0;
    for (int i = 0; i < 32; i++)
        if (mine[i] != (long)n * 31 + i)
            return -1000000;
    return s + n;
}

static void check_deep(void) {
    long want = 2000L * 2001 / 2;
    CHECK(deep(2000) == want, "the stack was corrupted (deep recursion)");
}

/* A fence epoch on a stack array of `n` ints: every rank puts into its right
 * neighbour, then gets from its left one. */
static void __attribute__((noinline)) fence_on_stack(int n) {
    int buf[n]; /* VLA: on this frame */
    for (int i = 0; i < n; i++)
        buf[i] = -1;
    MPI_Win win;
    CHECK(MPI_Win_create(buf, (MPI_Aint)(n * sizeof(int)), sizeof(int), MPI_INFO_NULL,
                         MPI_COMM_WORLD, &win) == MPI_SUCCESS,
          "MPI_Win_create on the stack (%d ints)", n);
    check_deep();
    int *src = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        src[i] = rank * 100000 + i;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win_fence(0, win);
    MPI_Put(src, n, MPI_INT, right, 0, n, MPI_INT, win);
    MPI_Win_fence(0, win);
    check_deep();
    for (int i = 0; i < n; i++)
        if (buf[i] != left * 100000 + i) {
            CHECK(0, "buf[%d] = %d, want %d", i, buf[i], left * 100000 + i);
            break;
        }
    /* A lock right after a fence that no access followed. */
    MPI_Win_fence(0, win);
    CHECK(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win) == MPI_SUCCESS, "lock after fence");
    int got = -7;
    MPI_Get(&got, 1, MPI_INT, left, n - 1, 1, MPI_INT, win);
    MPI_Win_unlock(left, win);
    int ll = (left + size - 1) % size;
    CHECK(got == ll * 100000 + n - 1, "get under lock: %d", got);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(src);
    check_deep();
    buf[0] = 5; /* still ours, private again */
    CHECK(buf[0] == 5, "stack memory after free");
}

/* A dynamic window: a stack array attached, addresses exchanged, accumulates. */
static void __attribute__((noinline)) dynamic_on_stack(void) {
    int val[4] = {0, 0, 0, 0};
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    CHECK(MPI_Win_attach(win, val, sizeof val) == MPI_SUCCESS, "attach a stack array");
    /* Two small heap blocks that likely share a page, attached one by one. */
    int *a = malloc(3 * sizeof(int)), *b = malloc(3 * sizeof(int));
    a[0] = a[1] = a[2] = b[0] = b[1] = b[2] = 0;
    CHECK(MPI_Win_attach(win, a, 3 * sizeof(int)) == MPI_SUCCESS, "attach a");
    CHECK(MPI_Win_attach(win, b, 3 * sizeof(int)) == MPI_SUCCESS,
          "attach b (sharing a page with a)");
    MPI_Aint mine[3], *all = malloc(3 * size * sizeof(MPI_Aint));
    MPI_Get_address(val, &mine[0]);
    MPI_Get_address(a, &mine[1]);
    MPI_Get_address(b, &mine[2]);
    MPI_Allgather(mine, 3, MPI_AINT, all, 3, MPI_AINT, MPI_COMM_WORLD);
    check_deep();
    MPI_Win_fence(0, win);
    int one = 1;
    for (int t = 0; t < size; t++) {
        MPI_Accumulate(&one, 1, MPI_INT, t, all[3 * t], 1, MPI_INT, MPI_SUM, win);
        MPI_Accumulate(&one, 1, MPI_INT, t, all[3 * t + 1] + 2 * sizeof(int), 1, MPI_INT,
                       MPI_SUM, win);
        MPI_Accumulate(&one, 1, MPI_INT, t, all[3 * t + 2] + sizeof(int), 1, MPI_INT,
                       MPI_SUM, win);
    }
    MPI_Win_fence(0, win);
    check_deep();
    CHECK(val[0] == size, "val[0] = %d, want %d", val[0], size);
    CHECK(a[2] == size && a[0] == 0, "a = %d %d %d", a[0], a[1], a[2]);
    CHECK(b[1] == size && b[0] == 0, "b = %d %d %d", b[0], b[1], b[2]);
    MPI_Win_detach(win, b);
    MPI_Win_detach(win, a);
    MPI_Win_detach(win, val);
    MPI_Win_free(&win);
    free(all);
    free(a);
    free(b);
    check_deep();
}

/* A region whose first page holds memory attached before it: the library cuts it
 * where the pages meet (two segments). Accesses inside each piece work from every
 * rank; the owner's own access across the cut works too, and so do another
 * rank's puts and gets (piece by piece); an accumulate across it is refused with
 * MPI_ERR_UNSUPPORTED_OPERATION (never a wrong result). */
static void __attribute__((noinline)) attach_across_pages(void) {
    enum { PAGE = 4096, CUT = PAGE / sizeof(int) };
    int *buf = aligned_alloc(PAGE, 3 * PAGE);
    memset(buf, 0, 3 * PAGE);
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK(MPI_Win_attach(win, buf, 100 * sizeof(int)) == MPI_SUCCESS, "attach x");
    int *y = buf + 100;
    CHECK(MPI_Win_attach(win, y, 3 * PAGE - 100 * sizeof(int)) == MPI_SUCCESS,
          "attach y (its first page shared with x)");
    MPI_Aint mine, *all = malloc(size * sizeof(MPI_Aint));
    MPI_Get_address(buf, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Win_fence(0, win);
    int one = 1;
    for (int t = 0; t < size; t++) {
        /* Just before and just after the cut, and in x. */
        MPI_Accumulate(&one, 1, MPI_INT, t, all[t] + (CUT - 1) * sizeof(int), 1, MPI_INT,
                       MPI_SUM, win);
        MPI_Accumulate(&one, 1, MPI_INT, t, all[t] + CUT * sizeof(int), 1, MPI_INT, MPI_SUM,
                       win);
        MPI_Accumulate(&one, 1, MPI_INT, t, all[t] + 5 * sizeof(int), 1, MPI_INT, MPI_SUM,
                       win);
    }
    CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS, "fence after accumulates");
    CHECK(buf[CUT - 1] == size && buf[CUT] == size && buf[5] == size,
          "pieces: %d %d %d, want %d", buf[CUT - 1], buf[CUT], buf[5], size);
    /* The owner's own access across the cut. */
    int two[2] = {7, 8};
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    CHECK(MPI_Put(two, 2, MPI_INT, rank, mine + (CUT - 1) * sizeof(int), 2, MPI_INT, win) ==
              MPI_SUCCESS,
          "own put across the cut");
    CHECK(MPI_Win_unlock(rank, win) == MPI_SUCCESS, "unlock after own put");
    CHECK(buf[CUT - 1] == 7 && buf[CUT] == 8, "own put across the cut: %d %d", buf[CUT - 1],
          buf[CUT]);
    MPI_Barrier(MPI_COMM_WORLD); /* every owner's check done before others write */
    if (size > 1) {
        /* Another rank's put and get across the cut (copied piece by piece), and
         * its accumulate across it, refused. */
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int mine2[2] = {100 + rank, 200 + rank}, got[2] = {-1, -1};
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
        CHECK(MPI_Put(mine2, 2, MPI_INT, right, all[right] + (CUT - 1) * sizeof(int), 2,
                      MPI_INT, win) == MPI_SUCCESS,
              "a put across another rank's cut");
        CHECK(MPI_Win_flush(right, win) == MPI_SUCCESS, "flush after the put");
        CHECK(MPI_Get(got, 2, MPI_INT, right, all[right] + (CUT - 1) * sizeof(int), 2,
                      MPI_INT, win) == MPI_SUCCESS,
              "a get across another rank's cut");
        CHECK(MPI_Win_flush(right, win) == MPI_SUCCESS, "flush after the get");
        CHECK(got[0] == 100 + rank && got[1] == 200 + rank, "got across the cut: %d %d",
              got[0], got[1]);
        /* Accumulates across the cut: applied piece by piece as one. */
        CHECK(MPI_Accumulate(two, 2, MPI_INT, right, all[right] + (CUT - 1) * sizeof(int), 2,
                             MPI_INT, MPI_SUM, win) == MPI_SUCCESS,
              "an accumulate across the cut");
        int seen[2] = {-1, -1};
        CHECK(MPI_Get_accumulate(NULL, 0, MPI_INT, seen, 2, MPI_INT, right,
                                 all[right] + (CUT - 1) * sizeof(int), 2, MPI_INT, MPI_NO_OP,
                                 win) == MPI_SUCCESS,
              "a get_accumulate across the cut");
        CHECK(MPI_Win_flush(right, win) == MPI_SUCCESS, "flush after the accumulates");
        CHECK(seen[0] == 107 + rank && seen[1] == 208 + rank, "accumulated across the cut: %d %d",
              seen[0], seen[1]);
        MPI_Win_unlock(right, win);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(buf[CUT - 1] == 107 + left && buf[CUT] == 208 + left,
              "after the left rank's put and sum: %d %d", buf[CUT - 1], buf[CUT]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(win, y);
    MPI_Win_detach(win, buf);
    MPI_Win_free(&win);
    free(all);
    free(buf);
}

/* Many windows at once, each over its own small MPI_Alloc_mem block (4000 bytes,
 * as programs allocate window memory): all must be created, and each keeps its own
 * data. Then the alignment hint of MPI-4.1 and its refusal. */
static void __attribute__((noinline)) many_alloc_mem_windows(void) {
    enum { NWIN = 40, NINT = 1000 };
    int *base[NWIN];
    MPI_Win win[NWIN];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int w = 0; w < NWIN; w++) {
        CHECK(MPI_Alloc_mem(NINT * sizeof(int), MPI_INFO_NULL, &base[w]) == MPI_SUCCESS,
              "MPI_Alloc_mem %d", w);
        for (int i = 0; i < NINT; i++)
            base[w][i] = -1;
        CHECK(MPI_Win_create(base[w], NINT * sizeof(int), sizeof(int), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win[w]) == MPI_SUCCESS,
              "MPI_Win_create over MPI_Alloc_mem block %d", w);
    }
    for (int w = 0; w < NWIN; w++) {
        int v[2] = {rank * 1000 + w, w};
        MPI_Win_fence(0, win[w]);
        MPI_Put(v, 2, MPI_INT, right, (MPI_Aint)(NINT - 2), 2, MPI_INT, win[w]);
        MPI_Win_fence(0, win[w]);
    }
    for (int w = 0; w < NWIN; w++) {
        CHECK(base[w][NINT - 2] == left * 1000 + w && base[w][NINT - 1] == w,
              "window %d holds %d,%d, not %d,%d", w, base[w][NINT - 2], base[w][NINT - 1],
              left * 1000 + w, w);
        CHECK(base[w][0] == -1, "window %d: the put wrote outside its target", w);
    }
    for (int w = 0; w < NWIN; w++) {
        MPI_Win_free(&win[w]);
        MPI_Free_mem(base[w]);
    }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", "65536");
    void *p = NULL;
    CHECK(MPI_Alloc_mem(10, info, &p) == MPI_SUCCESS && ((size_t)p % 65536) == 0,
          "MPI_Alloc_mem with a 64 KiB alignment hint gave %p", p);
    MPI_Free_mem(p);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", "3000");
    int err = MPI_Alloc_mem(10, info, &p), cls = -1;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_INFO_VALUE, "an alignment of 3000 gave class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Info_free(&info);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 3; round++) {
        fence_on_stack(1);
        fence_on_stack(10);
        fence_on_stack(3000); /* spans pages */
        dynamic_on_stack();
        attach_across_pages();
    }
    many_alloc_mem_windows();
    check_deep();
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failures == 0)
        printf("rma_stack ok %d\n", rank);
    MPI_Finalize();
    return bad != 0;
}
