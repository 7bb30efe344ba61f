/* Windowed bandwidth from rank 0 to rank 1 of MPI_COMM_WORLD: rank 0 starts WINDOW
 * MPI_Isend of one size (64 by default) and waits for all; rank 1 has WINDOW MPI_Irecv
 * posted and waits for all, then answers with a 1-byte message; a round ends when
 * rank 0 has that acknowledgement. MB/s = WINDOW * size * rounds / time (10^6 bytes),
 * the median of several timed repetitions. Standard MPI and C99 only.
 *
 * Usage: bw [-s SIZES | -M MAX -f FACTOR] [-n ROUNDS] [-w WARMUP] [-r REPS] [-W WINDOW]
 *   -s 8,64,1024  the sizes in bytes (default: 8, 32, 128, ... times FACTOR, then MAX)
 *   -M 1048576    the largest size of the default list (default 1 MiB)
 *   -f 4          the factor between sizes of the default list (2 to 1024; default 4)
 *   -n 200        rounds per repetition up to 64 KiB; above, scaled by 65536/size
 *                 (at least 10)
 *   -w N          untimed rounds before each size (default: a tenth of the rounds, >= 2)
 *   -r 5          timed repetitions per size; the median is printed
 *   -W 64         messages in flight per round
 *
 * Prints, from rank 0, one line per size: "bytes MB/s rounds", after comment lines
 * starting with '#'. Any MPI error (the program sets MPI_ERRORS_RETURN) is printed as
 * "bw: ..." on standard error and ends the job with status 3. */
#define BENCH_NAME "bw"
#include "args.h"

/* Buffers for the whole window are allocated at once: cap the product. */
#define MAX_WINDOW_BYTES (1L << 32)

static void usage(void) {
    fprintf(stderr, "usage: bw [-s SIZES | -M MAX -f FACTOR] [-n ROUNDS] [-w WARMUP] [-r REPS] [-W WINDOW]\n");
}

int main(int argc, char **argv) {
    long sizes[MAX_SIZES];
    int nsizes = 0;
    long max = 1L << 20;
    long factor = 4;
    long rounds = 200, warm = -1, reps = 5, window = 64;
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
        case 'n': ok = parse_long(v, 1, 1000000000L, 'n', rank, &rounds); break;
        case 'w': ok = parse_long(v, 0, 1000000000L, 'w', rank, &warm); break;
        case 'r': ok = parse_long(v, 1, 10000, 'r', rank, &reps); break;
        case 'W': ok = parse_long(v, 1, 65536, 'W', rank, &window); break;
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
        if (rank == 0) fprintf(stderr, "bw: needs 2 ranks, got %d\n", nranks);
        MPI_Finalize();
        return 2;
    }

    long biggest = largest(sizes, nsizes);
    if (biggest > MAX_WINDOW_BYTES / window) {
        if (rank == 0)
            fprintf(stderr, "bw: %ld messages of %ld bytes in flight exceed %ld bytes of buffers\n", window,
                    biggest, MAX_WINDOW_BYTES);
        MPI_Finalize();
        return 2;
    }
    /* One buffer per message in flight: pending receives must not overlap. */
    char *buf = malloc((size_t)biggest * (size_t)window);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)window);
    /* Real statuses, not MPI_STATUSES_IGNORE: GCC 12 warns about MPICH's (MPI_Status *)1. */
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)window);
    double *t = malloc(sizeof(double) * (size_t)reps);
    char ack = 0;
    if (buf == NULL || req == NULL || st == NULL || t == NULL) {
        fprintf(stderr, "bw: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    memset(buf, rank + 1, (size_t)biggest * (size_t)window);

    if (rank == 0) {
        printf("# bw: %ld messages in flight, then a 1-byte acknowledgement; median of %ld repetitions\n",
               window, reps);
        print_library();
        printf("# %9s %12s %10s\n", "bytes", "MB/s", "rounds");
    }
    for (int k = 0; k < nsizes; k++) {
        long len = sizes[k];
        long n = len > 65536 ? rounds * 65536 / len : rounds;
        if (n < 10) n = 10;
        long w = warm >= 0 ? warm : (n / 10 > 2 ? n / 10 : 2);
        int count = (int)len;
        for (long r = -1; r < reps; r++) {      /* r == -1: the warm-up */
            long todo = r < 0 ? w : n;
            check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            double t0 = MPI_Wtime();
            for (long i = 0; i < todo; i++) {
                if (rank == 0) {
                    for (long j = 0; j < window; j++)
                        check(MPI_Isend(buf + j * len, count, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &req[j]),
                              "MPI_Isend");
                    check(MPI_Waitall((int)window, req, st), "MPI_Waitall");
                    check(MPI_Recv(&ack, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
                } else if (rank == 1) {
                    for (long j = 0; j < window; j++)
                        check(MPI_Irecv(buf + j * len, count, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &req[j]),
                              "MPI_Irecv");
                    check(MPI_Waitall((int)window, req, st), "MPI_Waitall");
                    check(MPI_Send(&ack, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD), "MPI_Send");
                }
            }
            if (r >= 0) t[r] = MPI_Wtime() - t0;
        }
        if (rank == 0) {
            double med = median(t, reps);
            printf("%11ld %12.1f %10ld\n", len, (double)window * (double)len * (double)n / med / 1e6, n);
            fflush(stdout);
        }
    }
    free(t);
    free(st);
    free(req);
    free(buf);
    MPI_Finalize();
    return 0;
}
