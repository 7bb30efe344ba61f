/* Collective latency on MPI_COMM_WORLD: MPI_Allreduce (MPI_SUM of doubles),
 * MPI_Bcast (bytes, root 0), MPI_Alltoall (the size is each rank's whole send
 * buffer, split evenly among the ranks) and MPI_Barrier, per message size; the
 * median of several timed repetitions, each the mean over its iterations, measured
 * on every rank and the slowest rank's taken (MPI_MAX), as OSU's benchmarks do.
 * Standard MPI and C99 only, so the same source builds with any MPI's mpicc.
 *
 * Usage: coll [-d] [-t TESTS] [-s SIZES | -M MAX -f FACTOR] [-i ITERS] [-r REPS]
 *   -d            run the tests on an MPI_Comm_dup of MPI_COMM_WORLD (the timing's
 *                 barrier and maximum stay on the world)
 *   -t allreduce,bcast,alltoall,barrier   the tests (default: these four); also
 *                 reduce (doubles, MPI_SUM, root 0), gather, scatter, allgather (the
 *                 size is the root's or each rank's whole receive or send buffer,
 *                 split evenly among the ranks; root 0); gatherv, scatterv,
 *                 allgatherv, alltoallv (the same blocks through the v-forms, every
 *                 count alike), iallreduce, ibcast, ibarrier, ireduce, iallgather,
 *                 ialltoall (the nonblocking call and MPI_Wait)
 *   -s 8,64,1024  the sizes in bytes (default: 8, 32, 128, ... times FACTOR, to MAX)
 *   -M 1048576    the largest size of the default list (default 1 MiB)
 *   -f 4          the factor between sizes of the default list (default 4)
 *   -i 2000       iterations per repetition up to 4 KiB; above, scaled by 4096/size
 *                 (at least 20)
 *   -r 5          timed repetitions per size (after one untimed warm-up of a tenth)
 *
 * Prints, from rank 0, "test bytes latency_us iterations" per line after '#'
 * comment lines (barrier: one line, size 0). Results are checked once per size
 * (allreduce sums, bcast and alltoall bytes); a wrong result prints
 * "coll: wrong ..." and ends the job with status 4. */
#define BENCH_NAME "coll"
#include "args.h"

static void wrong(const char *what, long size) {
    fprintf(stderr, "coll: wrong %s result at %ld bytes\n", what, size);
    MPI_Abort(MPI_COMM_WORLD, 4);
    exit(4);
}

static int rank, nranks;
static char *sbuf, *rbuf;
static int *vcounts, *vdispls; /* the v-forms' counts and displacements */
/* The communicator the tests run on: MPI_COMM_WORLD, or with -d a dup of it. */
static MPI_Comm comm = MPI_COMM_WORLD;

#define NTESTS 18

/* The test whose result check and size rule test t shares. */
static int base(int t) {
    static const int b[NTESTS] = {0, 1, 2, 3, 4, 5, 6, 7, 5, 6, 7, 2, 0, 1, 3, 4, 7, 2};
    return b[t];
}

/* The v-forms' arrays for blocks of `b` bytes. */
static void vsetup(long b) {
    for (int q = 0; q < nranks; q++) {
        vcounts[q] = (int)b;
        vdispls[q] = (int)(q * b);
    }
}

/* One call of test t on `size` bytes. */
static void once(int t, long size) {
    switch (t) {
    case 0:
        check(MPI_Allreduce(sbuf, rbuf, (int)(size / 8), MPI_DOUBLE, MPI_SUM, comm),
              "MPI_Allreduce");
        break;
    case 1:
        check(MPI_Bcast(sbuf, (int)size, MPI_BYTE, 0, comm), "MPI_Bcast");
        break;
    case 2:
        check(MPI_Alltoall(sbuf, (int)(size / nranks), MPI_BYTE, rbuf, (int)(size / nranks),
                           MPI_BYTE, comm),
              "MPI_Alltoall");
        break;
    case 3:
        check(MPI_Barrier(comm), "MPI_Barrier");
        break;
    case 4:
        check(MPI_Reduce(sbuf, rbuf, (int)(size / 8), MPI_DOUBLE, MPI_SUM, 0, comm),
              "MPI_Reduce");
        break;
    case 5:
        check(MPI_Gather(sbuf, (int)(size / nranks), MPI_BYTE, rbuf, (int)(size / nranks),
                         MPI_BYTE, 0, comm),
              "MPI_Gather");
        break;
    case 6:
        check(MPI_Scatter(sbuf, (int)(size / nranks), MPI_BYTE, rbuf, (int)(size / nranks),
                          MPI_BYTE, 0, comm),
              "MPI_Scatter");
        break;
    case 7:
        check(MPI_Allgather(sbuf, (int)(size / nranks), MPI_BYTE, rbuf, (int)(size / nranks),
                            MPI_BYTE, comm),
              "MPI_Allgather");
        break;
    case 8:
        check(MPI_Gatherv(sbuf, (int)(size / nranks), MPI_BYTE, rbuf, vcounts, vdispls, MPI_BYTE,
                          0, comm),
              "MPI_Gatherv");
        break;
    case 9:
        check(MPI_Scatterv(sbuf, vcounts, vdispls, MPI_BYTE, rbuf, (int)(size / nranks),
                           MPI_BYTE, 0, comm),
              "MPI_Scatterv");
        break;
    case 10:
        check(MPI_Allgatherv(sbuf, (int)(size / nranks), MPI_BYTE, rbuf, vcounts, vdispls,
                             MPI_BYTE, comm),
              "MPI_Allgatherv");
        break;
    case 11:
        check(MPI_Alltoallv(sbuf, vcounts, vdispls, MPI_BYTE, rbuf, vcounts, vdispls, MPI_BYTE,
                            comm),
              "MPI_Alltoallv");
        break;
    case 12: {
        MPI_Request q;
        check(MPI_Iallreduce(sbuf, rbuf, (int)(size / 8), MPI_DOUBLE, MPI_SUM, comm,
                             &q),
              "MPI_Iallreduce");
        check(MPI_Wait(&q, MPI_STATUS_IGNORE), "MPI_Wait");
        break;
    }
    default: {
        MPI_Request q;
        const char *what = "MPI_Ibcast";
        int e;
        if (t == 13)
            e = MPI_Ibcast(sbuf, (int)size, MPI_BYTE, 0, comm, &q);
        else if (t == 14)
            what = "MPI_Ibarrier", e = MPI_Ibarrier(comm, &q);
        else if (t == 15)
            what = "MPI_Ireduce", e = MPI_Ireduce(sbuf, rbuf, (int)(size / 8), MPI_DOUBLE, MPI_SUM,
                                                 0, comm, &q);
        else if (t == 16)
            what = "MPI_Iallgather", e = MPI_Iallgather(sbuf, (int)(size / nranks), MPI_BYTE, rbuf,
                                                       (int)(size / nranks), MPI_BYTE,
                                                       comm, &q);
        else
            what = "MPI_Ialltoall", e = MPI_Ialltoall(sbuf, (int)(size / nranks), MPI_BYTE, rbuf,
                                                     (int)(size / nranks), MPI_BYTE,
                                                     comm, &q);
        check(e, what);
        check(MPI_Wait(&q, MPI_STATUS_IGNORE), "MPI_Wait");
    }
    }
}

static void fill(long size) {
    double *d = (double *)sbuf;
    for (long i = 0; i < size / 8; i++) d[i] = rank + 1 + (double)(i % 7);
}

static void verify(int t0, long size) {
    int t = base(t0);
    if (t0 >= 8 && t0 <= 11) vsetup(size / nranks);
#define once(t, size) once(t0, size)
    if (t == 0 || t == 4) {
        fill(size);
        once(t, size);
        if (t == 4 && rank != 0) return;
        const double *d = (const double *)rbuf;
        double ranks = (double)nranks * (nranks + 1) / 2;
        for (long i = 0; i < size / 8; i++)
            if (d[i] != ranks + (double)nranks * (double)(i % 7)) wrong("allreduce", size);
    } else if (t == 1) {
        for (long i = 0; i < size; i++) sbuf[i] = rank == 0 ? (char)(i * 7 + 1) : 0;
        once(t, size);
        for (long i = 0; i < size; i++)
            if (sbuf[i] != (char)(i * 7 + 1)) wrong("bcast", size);
    } else if (t == 2) {
        long b = size / nranks;
        for (int q = 0; q < nranks; q++)
            for (long i = 0; i < b; i++) sbuf[q * b + i] = (char)(rank * 31 + q * 7 + i);
        once(t, size);
        for (int q = 0; q < nranks; q++)
            for (long i = 0; i < b; i++)
                if (rbuf[q * b + i] != (char)(q * 31 + rank * 7 + i)) wrong("alltoall", size);
    } else if (t >= 5) {
        /* Block q of the gathered buffer (or of the root's, scattered) is rank q's. */
        long b = size / nranks;
        for (int q = 0; q < nranks; q++)
            for (long i = 0; i < b; i++)
                sbuf[q * b + i] = (char)((t == 6 ? q : rank) * 31 + i);
        once(t, size);
        if (t == 6) {
            for (long i = 0; i < b; i++)
                if (rbuf[i] != (char)(rank * 31 + i)) wrong("scatter", size);
        } else if (t == 7 || rank == 0) {
            for (int q = 0; q < nranks; q++)
                for (long i = 0; i < b; i++)
                    if (rbuf[q * b + i] != (char)(q * 31 + i)) wrong(t == 5 ? "gather" : "allgather", size);
        }
    }
#undef once
}

int main(int argc, char **argv) {
    static const char *names[NTESTS] = {
        "allreduce", "bcast",    "alltoall",   "barrier",   "reduce",     "gather", "scatter",
        "allgather", "gatherv",  "scatterv",   "allgatherv", "alltoallv", "iallreduce",
        "ibcast",    "ibarrier", "ireduce",    "iallgather", "ialltoall"};
    long sizes[MAX_SIZES];
    int nsizes = 0, tests[NTESTS] = {1, 1, 1, 1};
    long max = 1L << 20, factor = 4, iters = 2000, reps = 5;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int dup = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-d")) {
            dup = 1;
            continue;
        }
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!v) goto usage;
        if (!strcmp(argv[a], "-t")) {
            memset(tests, 0, sizeof tests);
            /* Comma-separated names, each matched whole ("allreduce" holds "reduce"). */
            for (const char *p = v; *p;) {
                size_t n = strcspn(p, ",");
                for (int t = 0; t < NTESTS; t++)
                    if (strlen(names[t]) == n && !strncmp(p, names[t], n)) tests[t] = 1;
                p += n + (p[n] == ',');
            }
        } else if (!strcmp(argv[a], "-s")) {
            if (!parse_sizes(v, rank, sizes, &nsizes)) goto bad;
        } else if (!strcmp(argv[a], "-M")) {
            if (!parse_long(v, 8, MAX_BYTES, 'M', rank, &max)) goto bad;
        } else if (!strcmp(argv[a], "-f")) {
            if (!parse_long(v, 2, 1024, 'f', rank, &factor)) goto bad;
        } else if (!strcmp(argv[a], "-i")) {
            if (!parse_long(v, 1, 1000000000L, 'i', rank, &iters)) goto bad;
        } else if (!strcmp(argv[a], "-r")) {
            if (!parse_long(v, 1, 1000, 'r', rank, &reps)) goto bad;
        } else {
            goto usage;
        }
        a++;
    }
    if (dup) {
        check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    }
    if (nsizes == 0)
        for (long s = 8; s <= max && nsizes < MAX_SIZES; s *= factor) sizes[nsizes++] = s;
    long most = largest(sizes, nsizes);
    if (most < 8) most = 8;
    sbuf = malloc(most + 64);
    rbuf = malloc(most + 64);
    double *times = malloc(sizeof(double) * reps);
    vcounts = malloc(sizeof(int) * nranks);
    vdispls = malloc(sizeof(int) * nranks);
    if (!sbuf || !rbuf || !times || !vcounts || !vdispls) {
        fprintf(stderr, "coll: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(sbuf, 0, most + 64);
    memset(rbuf, 0, most + 64);
    if (rank == 0) {
        printf("# coll: %d ranks%s, median of %ld repetitions, slowest rank's mean per call\n",
               nranks, dup ? " on a dup of MPI_COMM_WORLD" : "", reps);
        print_library();
        printf("# test bytes latency_us iterations\n");
    }
    for (int t = 0; t < NTESTS; t++) {
        if (!tests[t]) continue;
        int bt = base(t);
        for (int k = 0; k < (bt == 3 ? 1 : nsizes); k++) {
            long size = bt == 3 ? 0 : sizes[k];
            if (bt == 2 || bt >= 5) size = size / nranks * nranks;
            if (bt == 0 || bt == 4) size = size / 8 * 8;
            long it = size <= 4096 ? iters : iters * 4096 / size;
            if (it < 20) it = 20;
            verify(t, size);
            for (long i = 0; i < it / 10 + 1; i++) once(t, size);
            for (long r = 0; r < reps; r++) {
                check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
                double t0 = MPI_Wtime();
                for (long i = 0; i < it; i++) once(t, size);
                double us = (MPI_Wtime() - t0) * 1e6 / (double)it, worst = 0;
                check(MPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
                      "MPI_Allreduce");
                times[r] = worst;
            }
            qsort(times, reps, sizeof(double), cmp_double);
            if (rank == 0) {
                printf("%s %ld %.3f %ld\n", names[t], size, times[reps / 2], it);
                fflush(stdout);
            }
        }
    }
    if (dup) MPI_Comm_free(&comm);
    free(times);
    free(vcounts);
    free(vdispls);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
usage:
    if (rank == 0)
        fprintf(stderr, "usage: coll [-d] [-t TESTS] [-s SIZES | -M MAX -f FACTOR] [-i ITERS] [-r REPS]\n");
bad:
    MPI_Finalize();
    return 2;
}
