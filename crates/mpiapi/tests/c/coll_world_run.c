/* MPI_Gather, Gatherv, Scatter, Scatterv on MPI_COMM_WORLD back to back, the way the
 * direct path takes them (coll_rooted.rs `direct`): the root changes from call
 * to call, block sizes straddle the 56 bytes a line carries and a 1 KiB slot, one rank
 * at a time sleeps so the others run many calls ahead of it, and calls the direct path
 * must leave to the general one (MPI_IN_PLACE at the root, a derived type, a split
 * communicator) are mixed in between. Every result is checked against values each rank
 * computes; the sequence is the same on every rank. Prints "coll_world_run ok <rank>".
 *
 * Usage: coll_world_run [world|dup|split]: the calls on MPI_COMM_WORLD (the default),
 * on an MPI_Comm_dup of it, or on a split of it with every rank in reverse order (so
 * ranks differ from the world's); the dup or split is freed and made again every
 * EPOCH calls (its handle and context are then reused), and a second one made before
 * that freed first so the slots the library keeps per communicator change hands. */
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c11 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank;
#include "check.h"

enum { CALLS = 1200, MAXB = 1100, EPOCH = 300 };

/* The communicator the calls run on, per mode (0 world, 1 dup, 2 split reversed). */
static MPI_Comm make(int mode, int n) {
    MPI_Comm c = MPI_COMM_WORLD;
    if (mode == 1) OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    if (mode == 2) OK(MPI_Comm_split(MPI_COMM_WORLD, 0, n - rank, &c));
    return c;
}

/* The same pseudo-random number on every rank for (call, a). */
static int draw(int call, int a, int mod) {
    unsigned x = (unsigned)call * 2654435761u ^ (unsigned)a * 40503u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    return (int)(x % (unsigned)mod);
}

/* Bytes of a block: mostly around the line's 56 bytes (for n ranks n*b crosses it),
 * sometimes around a 1 KiB slot, sometimes 0. */
static int size_of(int call, int a) {
    switch (draw(call, a, 8)) {
    case 0: return 0;
    case 1: return 1000 + draw(call, a + 1, 100);
    case 2: return 1 + draw(call, a + 1, 8);
    default: return draw(call, a + 1, 64);
    }
}

static unsigned char val(int call, int from, int to, int i) {
    return (unsigned char)(call * 7 + from * 31 + to * 5 + i * 3 + 1);
}

static void nap(void) {
    struct timespec t = {0, 200000};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
    int n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int mode = 0;
    if (argc > 1) mode = !strcmp(argv[1], "dup") ? 1 : !strcmp(argv[1], "split") ? 2 : 0;
    MPI_Comm half, base = make(mode, n);
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, n - rank, &half));
    MPI_Datatype pair;
    OK(MPI_Type_contiguous(2, MPI_BYTE, &pair));
    OK(MPI_Type_commit(&pair));
    unsigned char *send = malloc((size_t)n * MAXB), *recv = malloc((size_t)n * MAXB);
    int *cs = malloc(sizeof(int) * (size_t)n), *ds = malloc(sizeof(int) * (size_t)n);
    CHECK(send && recv && cs && ds, "out of memory");
    for (int call = 0; call < CALLS; call++) {
        if (mode && call > 0 && call % EPOCH == 0) {
            /* A new one while the old lives (other slots), then the old one freed. */
            MPI_Comm next = make(mode, n);
            OK(MPI_Comm_free(&base));
            base = next;
        }
        int root = draw(call, 1, n), b = size_of(call, 2), kind = draw(call, 3, 4);
        int odd = draw(call, 4, 16); /* 0: in place, 1: derived type, 2: on `half` */
        /* One rank lags now and then: the others run ahead through the lines. */
        if (draw(call, 5, 40) == 0 && rank == draw(call, 6, n)) nap();
        MPI_Comm comm = odd == 2 ? half : base;
        int me, size;
        MPI_Comm_rank(comm, &me);
        MPI_Comm_size(comm, &size);
        if (odd == 2) root = draw(call, 1, size);
        int place = odd == 0 && me == root;
        MPI_Datatype t = odd == 1 ? pair : MPI_BYTE;
        int unit = odd == 1 ? 2 : 1, cnt = b / unit;
        b = cnt * unit;
        /* v-forms: each rank's own size, blocks in reverse order with a gap. */
        int total = 0;
        for (int q = size - 1; q >= 0; q--) {
            cs[q] = (kind >= 2 ? size_of(call, 10 + q) : b) / unit;
            ds[q] = total;
            total += cs[q] + 1;
        }
        memset(recv, 0xee, (size_t)n * MAXB);
        memset(send, 0xdd, (size_t)n * MAXB);
        switch (kind) {
        case 0: /* gather */
            for (int i = 0; i < b; i++) send[i] = val(call, me, root, i);
            if (place)
                for (int i = 0; i < b; i++) recv[me * b + i] = val(call, me, root, i);
            OK(MPI_Gather(place ? MPI_IN_PLACE : send, cnt, t, recv, cnt, t, root, comm));
            if (me == root)
                for (int q = 0; q < size; q++)
                    for (int i = 0; i < b; i++)
                        CHECK(recv[q * b + i] == val(call, q, root, i),
                              "call %d gather from %d byte %d", call, q, i);
            break;
        case 1: /* scatter */
            if (me == root)
                for (int q = 0; q < size; q++)
                    for (int i = 0; i < b; i++) send[q * b + i] = val(call, root, q, i);
            OK(MPI_Scatter(send, cnt, t, place ? MPI_IN_PLACE : recv, cnt, t, root, comm));
            if (!place)
                for (int i = 0; i < b; i++)
                    CHECK(recv[i] == val(call, root, me, i), "call %d scatter byte %d", call, i);
            break;
        case 2: /* gatherv */
            for (int i = 0; i < cs[me] * unit; i++) send[i] = val(call, me, root, i);
            if (place)
                for (int i = 0; i < cs[me] * unit; i++)
                    recv[ds[me] * unit + i] = val(call, me, root, i);
            OK(MPI_Gatherv(place ? MPI_IN_PLACE : send, cs[me], t, recv, cs, ds, t, root, comm));
            if (me == root)
                for (int q = 0; q < size; q++) {
                    for (int i = 0; i < cs[q] * unit; i++)
                        CHECK(recv[ds[q] * unit + i] == val(call, q, root, i),
                              "call %d gatherv from %d byte %d", call, q, i);
                    CHECK(recv[(ds[q] + cs[q]) * unit] == 0xee, "call %d gatherv gap %d", call, q);
                }
            break;
        default: /* scatterv */
            if (me == root)
                for (int q = 0; q < size; q++)
                    for (int i = 0; i < cs[q] * unit; i++)
                        send[ds[q] * unit + i] = val(call, root, q, i);
            OK(MPI_Scatterv(send, cs, ds, t, place ? MPI_IN_PLACE : recv, cs[me], t, root, comm));
            if (!place) {
                for (int i = 0; i < cs[me] * unit; i++)
                    CHECK(recv[i] == val(call, root, me, i), "call %d scatterv byte %d", call, i);
                CHECK(recv[cs[me] * unit] == 0xee, "call %d scatterv wrote past its block", call);
            }
            break;
        }
    }
    OK(MPI_Type_free(&pair));
    OK(MPI_Comm_free(&half));
    if (mode) OK(MPI_Comm_free(&base));
    free(send);
    free(recv);
    free(cs);
    free(ds);
    printf("coll_world_run ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
