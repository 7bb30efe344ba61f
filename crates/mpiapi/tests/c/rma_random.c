/* Random one-sided traffic checked against a serial reference.
 *
 * Every rank draws the same random program (seed: argv[1], default 1) for all
 * ranks and runs its own part of it; the reference applies the whole program.
 *   1. Fence epochs: puts, gets and MPI_SUM accumulates of 1 to 300 long longs
 *      (the long ones cross several network frames), now and then a whole window
 *      (more accumulate records than a ring holds), at random targets and
 *      displacements, without conflicts inside an epoch (a location is put by one
 *      origin, or accumulated by any, or read); gets are checked against the
 *      reference; after each fence every rank checks its whole window.
 *   2. Lock epochs (exclusive, shared, lock_all): the first half of each window is
 *      cut into locations owned by one origin each (only it puts there, and reads
 *      back after a flush); the second half are counters that every origin adds to
 *      with Accumulate, Fetch_and_op and Get_accumulate. Epochs of different
 *      origins interleave at random; the final windows are exact anyway.
 * Prints "rma_random ok <rank>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 8192
#define EPOCHS 12
#define OPS 24
#define ROUNDS 30

static int rank, size;

static unsigned long long rng_state;

static unsigned long long rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int below(int n) { return (int)(rnd() % (unsigned long long)n); }

/* The reference: every rank's window. */
static long long *ref;
/* Per location of the current fence epoch: 0 free, 1 put, 2 accumulated, 3 read. */
static unsigned char *use;

static void check_window(const long long *mine, const char *when) {
    for (int i = 0; i < N; i++)
        CHECK(mine[i] == ref[rank * N + i], "%s: window[%d] = %lld, expected %lld",
              when, i, mine[i], ref[rank * N + i]);
}

struct get {
    long long *buf;
    int t, at, len;
};

static void fence_epochs(long long *mine, MPI_Win win) {
    long long *buf = malloc(N * sizeof(long long));
    struct get *gets = malloc(OPS * size * sizeof(struct get));
    OK(MPI_Win_fence(0, win));
    for (int e = 0; e < EPOCHS; e++) {
        int ngets = 0;
        memset(use, 0, (size_t)size * N);
        for (int k = 0; k < OPS * size; k++) {
            int o = below(size), t = below(size), kind = below(3);
            int len = below(4) == 0 ? 1 + below(300) : 1 + below(8);
            /* Now and then a whole window: more records than a ring holds. */
            if (below(40) == 0) len = N;
            int at = below(N - len + 1);
            unsigned char want = kind == 0 ? 1 : kind == 1 ? 2 : 3;
            long long base = (long long)(rnd() % 100000);
            int ok = 1;
            for (int i = at; i < at + len; i++) {
                unsigned char u = use[t * N + i];
                if (!(u == 0 || (u == want && want != 1))) ok = 0;
            }
            if (!ok) continue;
            for (int i = at; i < at + len; i++) use[t * N + i] = want;
            if (o == rank) {
                for (int i = 0; i < len; i++) buf[i] = base + i;
                if (kind == 0)
                    OK(MPI_Put(buf, len, MPI_LONG_LONG, t, at, len, MPI_LONG_LONG, win));
                else if (kind == 1)
                    OK(MPI_Accumulate(buf, len, MPI_LONG_LONG, t, at, len, MPI_LONG_LONG,
                                      MPI_SUM, win));
                else {
                    struct get *g = &gets[ngets++];
                    g->buf = malloc(len * sizeof(long long));
                    g->t = t, g->at = at, g->len = len;
                    OK(MPI_Get(g->buf, len, MPI_LONG_LONG, t, at, len, MPI_LONG_LONG, win));
                }
            }
            for (int i = 0; i < len; i++) {
                if (kind == 0) ref[t * N + at + i] = base + i;
                if (kind == 1) ref[t * N + at + i] += base + i;
            }
        }
        OK(MPI_Win_fence(0, win));
        check_window(mine, "after a fence epoch");
        /* What was read is untouched in its epoch: the reference now. */
        for (int g = 0; g < ngets; g++) {
            for (int i = 0; i < gets[g].len; i++)
                CHECK(gets[g].buf[i] == ref[gets[g].t * N + gets[g].at + i],
                      "get of rank %d [%d] = %lld, expected %lld", gets[g].t,
                      gets[g].at + i, gets[g].buf[i], ref[gets[g].t * N + gets[g].at + i]);
            free(gets[g].buf);
        }
        /* The next epoch is open: nobody puts before everyone checked. */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    free(buf);
    free(gets);
}

/* Location i < N/2 of a window is owned by origin i % size; the rest are counters. */
static void lock_epochs(long long *mine, MPI_Win win) {
    long long buf[64], back[64], res[64];
    for (int round = 0; round < ROUNDS; round++) {
        for (int o = 0; o < size; o++) {
            int t = below(size), mode = below(3), nput = 1 + below(6);
            int npl = 1 + below(16), ncnt = 1 + below(64);
            int own = o + size * below((N / 2 - o + size - 1) / size);
            int cnt = N / 2 + below(N / 2 - ncnt + 1);
            long long v = (long long)(rnd() % 1000);
            int fop = below(2);
            if (npl > 1 && own + size * (npl - 1) >= N / 2) npl = 1;
            (void)nput;
            if (o == rank) {
                if (mode == 0) OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
                else if (mode == 1) OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
                else OK(MPI_Win_lock_all(0, win));
                /* Owned locations, strided by size: a vector type at the target. */
                MPI_Datatype vec;
                MPI_Type_vector(npl, 1, size, MPI_LONG_LONG, &vec);
                MPI_Type_commit(&vec);
                for (int i = 0; i < npl; i++) buf[i] = v * 7 + i + round;
                OK(MPI_Put(buf, npl, MPI_LONG_LONG, t, own, 1, vec, win));
                OK(MPI_Win_flush(t, win));
                OK(MPI_Get(back, npl, MPI_LONG_LONG, t, own, 1, vec, win));
                OK(MPI_Win_flush(t, win));
                for (int i = 0; i < npl; i++)
                    CHECK(back[i] == buf[i], "read back %lld, put %lld", back[i], buf[i]);
                MPI_Type_free(&vec);
                for (int i = 0; i < ncnt; i++) buf[i] = v + i;
                if (fop) {
                    for (int i = 0; i < ncnt; i++)
                        OK(MPI_Fetch_and_op(&buf[i], &res[i], MPI_LONG_LONG, t, cnt + i,
                                            MPI_SUM, win));
                } else {
                    OK(MPI_Get_accumulate(buf, ncnt, MPI_LONG_LONG, res, ncnt,
                                          MPI_LONG_LONG, t, cnt, ncnt, MPI_LONG_LONG,
                                          MPI_SUM, win));
                }
                OK(MPI_Accumulate(buf, ncnt, MPI_LONG_LONG, t, cnt, ncnt, MPI_LONG_LONG,
                                  MPI_SUM, win));
                if (mode == 2) {
                    OK(MPI_Win_flush_all(win));
                    OK(MPI_Win_unlock_all(win));
                } else {
                    OK(MPI_Win_unlock(t, win));
                }
            }
            for (int i = 0; i < npl; i++) ref[t * N + own + size * i] = v * 7 + i + round;
            for (int i = 0; i < ncnt; i++) ref[t * N + cnt + i] += 2 * (v + i);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    check_window(mine, "after the lock epochs");
    OK(MPI_Win_unlock(rank, win));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rng_state = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    if (rng_state == 0) rng_state = 1;
    ref = calloc((size_t)size * N, sizeof(long long));
    use = calloc((size_t)size * N, 1);
    long long *mine;
    MPI_Win win;
    OK(MPI_Win_allocate(N * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                        MPI_COMM_WORLD, &mine, &win));
    fence_epochs(mine, win);
    lock_epochs(mine, win);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_free(&win));
    printf("rma_random ok %d\n", rank);
    free(ref);
    free(use);
    MPI_Finalize();
    return 0;
}
