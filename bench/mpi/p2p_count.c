/* Windows of short messages with no waiting on the measured rank, for counting
 * instructions per message (valgrind --tool=callgrind on one rank): the pattern of
 * bw.c (rank 0: WINDOW MPI_Isend + MPI_Waitall; rank 1: WINDOW MPI_Irecv +
 * MPI_Waitall), but before each call that depends on the other rank, the measured
 * rank (-m) sleeps long enough for the other one to be done, so its waits find what
 * they wait for at once and count no empty polls (whose number is the scheduler's).
 * A round: rank 1 sends a 1-byte "go" (tag 9), rank 0 receives it and sends the
 * window (tag 2), rank 1 receives the window.
 *
 * Usage: p2p_count [-m RANK] [-n ROUNDS] [-W WINDOW] [-s BYTES] [-u MICROSECONDS]
 *   instructions per message = (count at -n A - count at -n B) / ((A - B) * WINDOW).
 * Standard MPI and C99 (plus POSIX usleep) only. */
#define _DEFAULT_SOURCE
#define BENCH_NAME "p2p_count"
#include "args.h"
#include <unistd.h>

int main(int argc, char **argv) {
    long measured = 1, rounds = 100, window = 64, size = 8, pause = 20000;
    int rank, nranks;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int a = 1; a + 1 < argc; a += 2) {
        const char *v = argv[a + 1];
        int ok = strlen(argv[a]) == 2 && argv[a][0] == '-';
        switch (ok ? argv[a][1] : 0) {
        case 'm': ok = parse_long(v, 0, 1, 'm', rank, &measured); break;
        case 'n': ok = parse_long(v, 1, 100000000L, 'n', rank, &rounds); break;
        case 'W': ok = parse_long(v, 1, 4096, 'W', rank, &window); break;
        case 's': ok = parse_long(v, 0, 1 << 20, 's', rank, &size); break;
        case 'u': ok = parse_long(v, 0, 10000000L, 'u', rank, &pause); break;
        default: ok = 0;
        }
        if (!ok) {
            if (rank == 0) fprintf(stderr, "usage: p2p_count [-m RANK] [-n ROUNDS] [-W WINDOW] [-s BYTES] [-u US]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (nranks != 2) {
        if (rank == 0) fprintf(stderr, "p2p_count: needs 2 ranks, got %d\n", nranks);
        MPI_Finalize();
        return 2;
    }
    char *buf = calloc((size_t)(size > 0 ? size : 1) * (size_t)window, 1);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)window);
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)window);
    char go = 0;
    if (buf == NULL || req == NULL || st == NULL) {
        fprintf(stderr, "p2p_count: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    int me_measured = rank == measured;
    for (long i = 0; i < rounds; i++) {
        if (rank == 0) {
            if (me_measured) usleep((useconds_t)pause);
            check(MPI_Recv(&go, 1, MPI_CHAR, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
            for (long j = 0; j < window; j++)
                check(MPI_Isend(buf + j * size, (int)size, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &req[j]),
                      "MPI_Isend");
            check(MPI_Waitall((int)window, req, st), "MPI_Waitall");
        } else {
            check(MPI_Send(&go, 1, MPI_CHAR, 0, 9, MPI_COMM_WORLD), "MPI_Send");
            if (me_measured) usleep((useconds_t)pause);
            for (long j = 0; j < window; j++)
                check(MPI_Irecv(buf + j * size, (int)size, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &req[j]),
                      "MPI_Irecv");
            check(MPI_Waitall((int)window, req, st), "MPI_Waitall");
        }
    }
    if (rank == 0) printf("p2p_count: %ld rounds of %ld messages of %ld bytes\n", rounds, window, size);
    free(st);
    free(req);
    free(buf);
    MPI_Finalize();
    return 0;
}
