/* A sender's one area for the ranks of its host (issue 23, seed 004 §3.1): on 4 ranks
 * of one host rank 0 sends to ranks 1 and 2 (short, pool blocks, rendezvous; every
 * byte checked), rank 3 hears nothing. Then each rank lists the RSM segments it has
 * mapped, as silent.c does ("seg <rank> <file> <bytes>"), then "hostarea ok <rank>".
 * The test (crates/cli/tests/mpi_hostarea.rs) compares the lists: 0's receivers map
 * the same one area of 0's, 3 maps nothing of 0's. Ranks meet outside MPI before
 * MPI_Finalize (which talks to every rank), as in silent.c. */
#define _POSIX_C_SOURCE 200809L /* nanosleep, access under -std=c11 */
#include "check.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

#define SEGS 64

static void one_way(int peer) {
    /* Short (inline in postboxes), a few pool blocks, past the rendezvous switch. */
    static const int lens[] = {8, 3000, 1 << 20};
    for (int i = 0; i < 3; i++) {
        int n = lens[i];
        unsigned char *buf = malloc(n);
        CHECK(buf, "malloc %d", n);
        int from = rank == 0 ? peer : 0;
        if (rank == 0) {
            for (int k = 0; k < n; k++) buf[k] = (unsigned char)(k * 7 + peer + i);
            OK(MPI_Send(buf, n, MPI_BYTE, peer, i, MPI_COMM_WORLD));
        } else {
            OK(MPI_Recv(buf, n, MPI_BYTE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int k = 0; k < n; k++)
                CHECK(buf[k] == (unsigned char)(k * 7 + rank + i), "from %d len %d byte %d",
                      from, n, k);
        }
        free(buf);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 4, "run on 4 ranks, not %d", size);
    if (rank == 0) {
        one_way(1);
        one_way(2);
    } else if (rank < 3) {
        one_way(0);
    }

    const char *dir = getenv("MYRIX_RSM_DIR");
    CHECK(dir && *dir, "MYRIX_RSM_DIR is not set");
    size_t dlen = strlen(dir);
    char names[SEGS][256];
    unsigned long bytes[SEGS];
    int nseg = 0;
    FILE *m = fopen("/proc/self/maps", "r");
    CHECK(m, "opening /proc/self/maps");
    char line[1024];
    while (fgets(line, sizeof line, m)) {
        unsigned long lo, hi;
        char *path = strchr(line, '/');
        if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || !path) continue;
        path[strcspn(path, "\n")] = 0;
        if (strncmp(path, dir, dlen) != 0 || path[dlen] != '/') continue;
        const char *file = path + dlen + 1;
        int k = 0;
        while (k < nseg && strcmp(names[k], file) != 0) k++;
        if (k == nseg) {
            CHECK(nseg < SEGS && strlen(file) < sizeof names[0], "too many segments");
            strcpy(names[nseg], file);
            bytes[nseg++] = 0;
        }
        bytes[k] += hi - lo;
    }
    fclose(m);
    for (int k = 0; k < nseg; k++) printf("seg %d %s %lu\n", rank, names[k], bytes[k]);
    printf("hostarea ok %d\n", rank);
    fflush(stdout);

    const char *sync = getenv("HOSTAREA_SYNC");
    CHECK(sync && *sync, "HOSTAREA_SYNC is not set");
    char f[512];
    snprintf(f, sizeof f, "%s/%d", sync, rank);
    FILE *mine = fopen(f, "w");
    CHECK(mine, "creating %s", f);
    fclose(mine);
    for (int waited = 0, all = 0; !all; waited++) {
        CHECK(waited < 60000, "the other ranks did not list their segments in 60 s");
        all = 1;
        for (int r = 0; r < size; r++) {
            snprintf(f, sizeof f, "%s/%d", sync, r);
            all &= access(f, F_OK) == 0;
        }
        struct timespec ms = {0, 1000000};
        if (!all) nanosleep(&ms, NULL);
    }
    MPI_Finalize();
    return 0;
}
