/* Startup time and memory per rank against job size. Each rank measures MPI_Init (from
 * just before the call to its return, CLOCK_MONOTONIC) and its resident memory (VmRSS
 * from /proc/self/status) at three points: after MPI_Init, after a first MPI_Barrier,
 * and after talking to every other rank (an 8-byte message to each and one from each:
 * every connection made) and a second barrier. Rank 0 prints the job size, the largest
 * MPI_Init time over the ranks, the median and largest RSS at each point, and the time
 * from the first rank entering MPI_Init to the last leaving the all-pairs exchange as
 * each rank's clock sees it (the wall time of startup plus all connections; clocks of
 * one host agree, so on one host this is comparable across ranks).
 * Standard MPI and C99 (plus POSIX clock_gettime) only, so it builds with any MPI.
 *
 * Usage: startup [-q]   (-q: one line of numbers, no header) */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Resident set size in KiB, or -1. */
static double rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double v = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) {
            v = atof(line + 6);
            break;
        }
    fclose(f);
    return v;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    double t0 = now();
    MPI_Init(&argc, &argv);
    double t1 = now();
    int rank, n, quiet = argc > 1 && strcmp(argv[1], "-q") == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    double mine[6];
    mine[0] = t1 - t0;
    mine[1] = rss_kib();
    MPI_Barrier(MPI_COMM_WORLD);
    mine[2] = rss_kib();
    char out = (char)rank, in;
    for (int k = 1; k < n; k++) {
        int to = (rank + k) % n, from = (rank - k + n) % n;
        MPI_Sendrecv(&out, 1, MPI_CHAR, to, 7, &in, 1, MPI_CHAR, from, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (in != (char)from) {
            fprintf(stderr, "startup: rank %d got %d from %d\n", rank, in, from);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = now();
    mine[3] = rss_kib();
    mine[4] = t0;
    mine[5] = t2;
    double *all = rank == 0 ? malloc(sizeof mine * n) : NULL;
    MPI_Gather(mine, 6, MPI_DOUBLE, all, 6, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double init = 0, first = all[4], last = all[5], col[3][n];
        for (int r = 0; r < n; r++) {
            if (all[6 * r] > init) init = all[6 * r];
            if (all[6 * r + 4] < first) first = all[6 * r + 4];
            if (all[6 * r + 5] > last) last = all[6 * r + 5];
            col[0][r] = all[6 * r + 1];
            col[1][r] = all[6 * r + 2];
            col[2][r] = all[6 * r + 3];
        }
        double mx[3] = {0, 0, 0};
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < n; r++)
                if (col[c][r] > mx[c]) mx[c] = col[c][r];
        if (!quiet)
            printf("# ranks init_ms_max rss_init_kib_med rss_barrier_kib_med "
                   "rss_allpairs_kib_med rss_allpairs_kib_max startup_allpairs_ms\n");
        double m0 = median(col[0], n), m1 = median(col[1], n), m2 = median(col[2], n);
        printf("%d %.2f %.0f %.0f %.0f %.0f %.2f\n", n, init * 1e3, m0, m1, m2, mx[2],
               (last - first) * 1e3);
        free(all);
    }
    MPI_Finalize();
    return 0;
}
