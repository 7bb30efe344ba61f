/* What bench/mpi/pingpong.c and bw.c share: MPI error checks, the median of repeated
 * timings, and bounded parsing of their options (a number out of range is refused with
 * one line and exit status 2, never allocated). Standard MPI and C99 only, so the same
 * programs build with any MPI's mpicc. Include once, after setting BENCH_NAME. */
#ifndef MYRIX_BENCH_ARGS_H
#define MYRIX_BENCH_ARGS_H

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BENCH_NAME
#error "define BENCH_NAME before including args.h"
#endif

#define MAX_SIZES 64
/* The largest message: 1 GiB, the same cap as MX's engine. */
#define MAX_BYTES (1L << 30)

static inline int check(int rc, const char *what) {
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        msg[0] = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, BENCH_NAME ": %s failed: %s\n", what, msg);
        MPI_Abort(MPI_COMM_WORLD, 3);
        exit(3);
    }
    return rc;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place. */
static inline double median(double *v, long n) {
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A whole number in [lo, hi] for option `opt`, or 0 with one line on stderr (rank 0). */
static inline int parse_long(const char *s, long lo, long hi, char opt, int rank, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != 0 || errno != 0 || v < lo || v > hi) {
        if (rank == 0)
            fprintf(stderr, BENCH_NAME ": -%c %s: expected a whole number from %ld to %ld\n", opt, s, lo,
                    hi);
        return 0;
    }
    *out = v;
    return 1;
}

/* A comma list of sizes in bytes (0..MAX_BYTES, at most MAX_SIZES of them). */
static inline int parse_sizes(const char *s, int rank, long *sizes, int *nsizes) {
    char item[32];
    *nsizes = 0;
    while (*s) {
        size_t n = strcspn(s, ",");
        if (n == 0 || n >= sizeof item || *nsizes == MAX_SIZES) {
            if (rank == 0)
                fprintf(stderr, BENCH_NAME ": -s: expected at most %d sizes separated by commas\n", MAX_SIZES);
            return 0;
        }
        memcpy(item, s, n);
        item[n] = 0;
        if (!parse_long(item, 0, MAX_BYTES, 's', rank, &sizes[*nsizes])) return 0;
        (*nsizes)++;
        s += n;
        if (*s == ',') s++;
    }
    return *nsizes > 0;
}

/* The default list: 8, 8·factor, … below max, then max. */
static inline int default_sizes(long max, long factor, long *sizes) {
    int n = 0;
    for (long s = 8; s < max && n < MAX_SIZES - 1; s *= factor) sizes[n++] = s;
    sizes[n++] = max;
    return n;
}

static inline long largest(const long *sizes, int n) {
    long big = 1;
    for (int k = 0; k < n; k++)
        if (sizes[k] > big) big = sizes[k];
    return big;
}

/* The first line of MPI_Get_library_version, for the header comment. */
static inline void print_library(void) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl) *nl = 0;
    printf("# library: %s\n", lib);
}

#endif
