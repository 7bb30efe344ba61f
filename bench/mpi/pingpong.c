/* Ping-pong between ranks 0 and 1 of MPI_COMM_WORLD: one-way latency (half the round
 * trip) per message size, the median of several timed repetitions, and the ping-pong
 * bandwidth (size / one-way time; the 1 MiB row is the "1 MiB ping-pong bandwidth").
 * Standard MPI and C99 only, so the same source builds with any MPI's mpicc.
 *
 * Usage: pingpong [-s SIZES | -M MAX -f FACTOR] [-i ITERS] [-w WARMUP] [-r REPS]
 *   -s 8,64,1024  the sizes in bytes (default: 8, 32, 128, ... times FACTOR, then MAX)
 *   -M 1048576    the largest size of the default list (default 1 MiB)
 *   -f 4          the factor between sizes of the default list (2 to 1024; default 4)
 *   -i 10000      round trips per repetition up to 4 KiB; above, scaled by 4096/size
 *                 (at least 50)
 *   -w N          untimed round trips before each size (default: a tenth of -i's count)
 *   -r 5          timed repetitions per size; the median is printed
 *   -t TYPE       how the SIZE bytes lie in memory (issue 23's non-contiguous data):
 *                 contig (default: SIZE MPI_CHARs), vector (doubles in 8-byte blocks
 *                 16 bytes apart: MPI_Type_vector(SIZE/8, 1, 2, MPI_DOUBLE), one
 *                 element), column (a column of a 2-D array of doubles 16 to a row:
 *                 MPI_Type_vector(SIZE/8, 1, 16, MPI_DOUBLE)), indexed (blocks of
 *                 1, 2, 3, 4, 1, 2, ... doubles, each followed by a one-double hole:
 *                 MPI_Type_indexed, one element); SIZE rounded down to a multiple
 *                 of 8 (at least 8) for the last three
 *
 * Prints, from rank 0, one line per size: "bytes latency_us MB/s iterations", after
 * comment lines starting with '#'. Any MPI error (the program sets MPI_ERRORS_RETURN)
 * is printed as "pingpong: ..." on standard error and ends the job with status 3. */
#define BENCH_NAME "pingpong"
#include "args.h"

static void usage(void) {
    fprintf(stderr, "usage: pingpong [-s SIZES | -M MAX -f FACTOR] [-i ITERS] [-w WARMUP] [-r REPS] [-t contig|vector|column|indexed]\n");
}

int main(int argc, char **argv) {
    long sizes[MAX_SIZES];
    int nsizes = 0;
    long max = 1L << 20;
    long factor = 4;
    long iters = 10000, warm = -1, reps = 5;
    long stride = 0; /* in doubles; 0: contiguous MPI_CHARs */
    int indexed = 0; /* -t indexed: blocks of 1..4 doubles with one-double holes */
    int rank, nranks;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    for (int a = 1; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (v == NULL || argv[a][0] != '-' || strlen(argv[a]) != 2) {
            if (rank == 0) usage();
            MPI_Finalize();
            return 2;
        }
        int ok;
        switch (argv[a][1]) {
        case 's': ok = parse_sizes(v, rank, sizes, &nsizes); break;
        case 'M': ok = parse_long(v, 1, MAX_BYTES, 'M', rank, &max); break;
        case 'f': ok = parse_long(v, 2, 1024, 'f', rank, &factor); break;
        case 'i': ok = parse_long(v, 1, 1000000000L, 'i', rank, &iters); break;
        case 'w': ok = parse_long(v, 0, 1000000000L, 'w', rank, &warm); break;
        case 'r': ok = parse_long(v, 1, 10000, 'r', rank, &reps); break;
        case 't':
            ok = 1;
            if (strcmp(v, "contig") == 0) stride = 0;
            else if (strcmp(v, "vector") == 0) stride = 2;
            else if (strcmp(v, "column") == 0) stride = 16;
            else if (strcmp(v, "indexed") == 0) stride = 2, indexed = 1; /* span <= 2 x bytes */
            else {
                ok = 0;
                if (rank == 0) usage();
            }
            break;
        default:
            ok = 0;
            if (rank == 0) usage();
        }
        if (!ok) {
            MPI_Finalize();
            return 2;
        }
        a++;
    }
    if (nsizes == 0) nsizes = default_sizes(max, factor, sizes);
    if (nranks < 2) {
        if (rank == 0) fprintf(stderr, "pingpong: needs 2 ranks, got %d\n", nranks);
        MPI_Finalize();
        return 2;
    }

    long biggest = largest(sizes, nsizes);
    if (stride > 0) biggest = (biggest / 8 + 1) * 8 * stride; /* the strided span */
    char *buf = malloc((size_t)biggest);
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (buf == NULL || t == NULL) {
        fprintf(stderr, "pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    memset(buf, rank + 1, (size_t)biggest);

    if (rank == 0) {
        printf("# pingpong: one-way latency (half the round trip), median of %ld repetitions\n", reps);
        if (indexed)
            printf("# data: MPI_Type_indexed, blocks of 1, 2, 3, 4, ... doubles each followed by a one-double hole, one element\n");
        else if (stride > 0)
            printf("# data: MPI_Type_vector(bytes/8, 1, %ld, MPI_DOUBLE), one element\n", stride);
        print_library();
        printf("# %9s %12s %12s %10s\n", "bytes", "latency_us", "MB/s", "iterations");
    }
    for (int k = 0; k < nsizes; k++) {
        long len = sizes[k];
        long n = len > 4096 ? iters * 4096 / len : iters;
        if (n < 50) n = 50;
        long w = warm >= 0 ? warm : (n / 10 > 2 ? n / 10 : 2);
        int count = (int)len;
        MPI_Datatype type = MPI_CHAR;
        if (stride > 0) {
            len = len / 8 > 0 ? len / 8 * 8 : 8;
            if (indexed) {
                int nd = (int)(len / 8), nb = 0;
                int *bl = malloc(sizeof(int) * (size_t)nd), *disp = malloc(sizeof(int) * (size_t)nd);
                if (bl == NULL || disp == NULL) {
                    fprintf(stderr, "pingpong: out of memory\n");
                    MPI_Abort(MPI_COMM_WORLD, 3);
                }
                for (int d = 0, at = 0; d < nd; nb++) {
                    bl[nb] = nb % 4 + 1 < nd - d ? nb % 4 + 1 : nd - d;
                    disp[nb] = at;
                    d += bl[nb];
                    at += bl[nb] + 1;
                }
                check(MPI_Type_indexed(nb, bl, disp, MPI_DOUBLE, &type), "MPI_Type_indexed");
                free(bl);
                free(disp);
            } else
                check(MPI_Type_vector((int)(len / 8), 1, (int)stride, MPI_DOUBLE, &type), "MPI_Type_vector");
            check(MPI_Type_commit(&type), "MPI_Type_commit");
            count = 1;
        }
        for (long r = -1; r < reps; r++) {      /* r == -1: the warm-up */
            long rounds = r < 0 ? w : n;
            check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            double t0 = MPI_Wtime();
            for (long i = 0; i < rounds; i++) {
                if (rank == 0) {
                    check(MPI_Send(buf, count, type, 1, 1, MPI_COMM_WORLD), "MPI_Send");
                    check(MPI_Recv(buf, count, type, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
                } else if (rank == 1) {
                    check(MPI_Recv(buf, count, type, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
                    check(MPI_Send(buf, count, type, 0, 1, MPI_COMM_WORLD), "MPI_Send");
                }
            }
            if (r >= 0) t[r] = (MPI_Wtime() - t0) / (2.0 * (double)n);
        }
        if (rank == 0) {
            double med = median(t, reps);
            printf("%11ld %12.3f %12.1f %10ld\n", len, med * 1e6, (double)len / med / 1e6, n);
            fflush(stdout);
        }
        if (stride > 0) check(MPI_Type_free(&type), "MPI_Type_free");
    }
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
