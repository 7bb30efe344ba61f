/* Small blocks through the collectives' fast paths: Gatherv, Scatterv and Alltoallv
 * whose blocks ride in the first step's line when they all fit (0 to ~60 bytes a
 * block, mixed so some calls fit and some do not, on the line's boundaries), and
 * Gather, Scatter, Reduce of predefined types in the caller's buffers; every root,
 * on MPI_COMM_WORLD and on a reversed split; blocks in reverse order with gaps.
 * Every result is checked against values each rank computes. Prints
 * "coll_small ok <rank>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "coll_small: " __VA_ARGS__);                                               \
        fputc('\n', stderr);                                                                       \
        fails++;                                                                                   \
    } while (0)
#define OK(call)                                                                                   \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) FAIL("%s returned %d", #call, rc_);                                \
    } while (0)

/* The same pseudo-random number on every rank for (trial, a, b). */
static int draw(int trial, int a, int b, int mod) {
    unsigned x = (unsigned)trial * 2654435761u ^ (unsigned)a * 40503u ^ (unsigned)b * 9973u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    return (int)(x % (unsigned)mod);
}

/* Block sizes in bytes: small (all fit a line), around its 48/56 bytes, or larger. */
static int bytes_of(int trial, int a, int b) {
    switch (trial % 4) {
    case 0: return draw(trial, a, b, 9);
    case 1: return 40 + draw(trial, a, b, 20);
    case 2: return draw(trial, a, b, 4) == 0 ? 0 : draw(trial, a, b, 25);
    default: return draw(trial, a, b, 200);
    }
}

static char val(int trial, int from, int to, int i) { return (char)(trial * 7 + from * 31 + to * 5 + i); }

static void vforms(MPI_Comm comm, int trial, int root) {
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    int *cnt = malloc(n * sizeof(int)), *dis = malloc(n * sizeof(int));
    int *rcnt = malloc(n * sizeof(int)), *rdis = malloc(n * sizeof(int));
    int at = 0;
    for (int r = n - 1; r >= 0; r--) {
        cnt[r] = bytes_of(trial, r, root);
        dis[r] = at + draw(trial, r, 99, 3);
        at = dis[r] + cnt[r];
    }
    char *buf = calloc((size_t)at + 1, 1), *mine = calloc(256, 1);
    /* Gatherv: rank r sends cnt[r] bytes val(trial, r, root, i). */
    for (int i = 0; i < cnt[rank]; i++) mine[i] = val(trial, rank, root, i);
    OK(MPI_Gatherv(mine, cnt[rank], MPI_BYTE, buf, cnt, dis, MPI_BYTE, root, comm));
    if (rank == root)
        for (int r = 0; r < n; r++)
            for (int i = 0; i < cnt[r]; i++)
                if (buf[dis[r] + i] != val(trial, r, root, i))
                    FAIL("Gatherv trial %d root %d: rank %d byte %d", trial, root, r, i);
    /* Scatterv: the root's block r is val(trial, root, r, i). */
    if (rank == root)
        for (int r = 0; r < n; r++)
            for (int i = 0; i < cnt[r]; i++) buf[dis[r] + i] = val(trial, root, r, i);
    memset(mine, 0, 256);
    OK(MPI_Scatterv(buf, cnt, dis, MPI_BYTE, mine, cnt[rank], MPI_BYTE, root, comm));
    for (int i = 0; i < cnt[rank]; i++)
        if (mine[i] != val(trial, root, rank, i))
            FAIL("Scatterv trial %d root %d: byte %d", trial, root, i);
    /* Alltoallv: a sends bytes_of(trial + root, a, b) bytes to b. */
    int sat = 0, rat = 0;
    for (int q = n - 1; q >= 0; q--) {
        cnt[q] = bytes_of(trial + root, rank, q);
        dis[q] = sat + draw(trial, q, 7, 2);
        sat = dis[q] + cnt[q];
        rcnt[q] = bytes_of(trial + root, q, rank);
        rdis[q] = rat + draw(trial, q, 8, 2);
        rat = rdis[q] + rcnt[q];
    }
    char *snd = calloc((size_t)sat + 1, 1), *rcv = calloc((size_t)rat + 1, 1);
    for (int q = 0; q < n; q++)
        for (int i = 0; i < cnt[q]; i++) snd[dis[q] + i] = val(trial, rank, q, i);
    OK(MPI_Alltoallv(snd, cnt, dis, MPI_BYTE, rcv, rcnt, rdis, MPI_BYTE, comm));
    for (int q = 0; q < n; q++)
        for (int i = 0; i < rcnt[q]; i++)
            if (rcv[rdis[q] + i] != val(trial, q, rank, i))
                FAIL("Alltoallv trial %d: from %d byte %d", trial, q, i);
    free(snd);
    free(rcv);
    free(buf);
    free(mine);
    free(cnt);
    free(dis);
    free(rcnt);
    free(rdis);
}

static void regular(MPI_Comm comm, int trial, int root) {
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    int k = draw(trial, root, 1, 20); /* ints a rank */
    int *mine = calloc((size_t)k + 1, sizeof(int)), *all = calloc((size_t)k * n + 1, sizeof(int));
    for (int i = 0; i < k; i++) mine[i] = trial * 1000 + rank * 100 + i;
    OK(MPI_Gather(mine, k, MPI_INT, all, k, MPI_INT, root, comm));
    if (rank == root)
        for (int r = 0; r < n; r++)
            for (int i = 0; i < k; i++)
                if (all[r * k + i] != trial * 1000 + r * 100 + i)
                    FAIL("Gather trial %d root %d: rank %d int %d", trial, root, r, i);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < k; i++) all[r * k + i] = trial * 1000 + root * 50 + r * 100 + i;
    OK(MPI_Scatter(all, k, MPI_INT, mine, k, MPI_INT, root, comm));
    for (int i = 0; i < k; i++)
        if (mine[i] != trial * 1000 + root * 50 + rank * 100 + i)
            FAIL("Scatter trial %d root %d: int %d", trial, root, i);
    double *d = calloc((size_t)k + 1, sizeof(double)), *s = calloc((size_t)k + 1, sizeof(double));
    for (int i = 0; i < k; i++) d[i] = rank + 0.5 * i;
    OK(MPI_Reduce(d, s, k, MPI_DOUBLE, MPI_SUM, root, comm));
    if (rank == root)
        for (int i = 0; i < k; i++)
            if (s[i] != (double)n * (n - 1) / 2 + 0.5 * i * n)
                FAIL("Reduce trial %d root %d: element %d", trial, root, i);
    OK(MPI_Reduce(mine, all, k, MPI_INT, MPI_MAX, root, comm));
    if (rank == root)
        for (int i = 0; i < k; i++)
            if (all[i] != trial * 1000 + root * 50 + (n - 1) * 100 + i)
                FAIL("Reduce MAX trial %d root %d: element %d", trial, root, i);
    free(d);
    free(s);
    free(mine);
    free(all);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_set_errhandler(rev, MPI_ERRORS_RETURN);
    for (int c = 0; c < 2; c++) {
        MPI_Comm comm = c == 0 ? MPI_COMM_WORLD : rev;
        int n;
        MPI_Comm_size(comm, &n);
        for (int trial = 0; trial < 48; trial++)
            for (int root = 0; root < n; root++) {
                vforms(comm, trial, root);
                regular(comm, trial, root);
            }
    }
    MPI_Comm_free(&rev);
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (all == 0) printf("coll_small ok %d\n", rank);
    MPI_Finalize();
    return all != 0;
}
