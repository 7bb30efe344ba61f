/* Ranks that never talk build no channel state for each other (issue 23: connections
 * are made at the first send). On 4 ranks only 0 and 1 exchange messages, both ways,
 * in the short, pool-block and rendezvous protocols; 2 and 3 make no MPI call between
 * MPI_Init and MPI_Finalize but MPI_Comm_rank/size. Then each rank lists the RSM
 * segments it has mapped (the lines of /proc/self/maps under $MYRIX_RSM_DIR, the
 * registry the job was started with): "seg <rank> <file> <bytes>", one line per
 * mapped file (`ID.seg` data; `ID.ctl` or a `.tmp-…` name for a control block), then
 * "silent ok <rank>". The test (crates/cli/tests/mpi_silent.rs) compares the lists.
 * No barrier or collective: those would make every rank talk. MPI_Finalize is
 * collective too (it talks to every rank), so no rank enters it before all have
 * listed their segments: each leaves a file in $SILENT_SYNC and waits for the
 * others' files (a meeting outside MPI). */
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

static void exchange(int peer) {
    /* Short (inline in postboxes), a few pool blocks, past the rendezvous switch. */
    static const int lens[] = {8, 3000, 1 << 20};
    for (int i = 0; i < 3; i++) {
        int n = lens[i];
        unsigned char *out = malloc(n), *in = malloc(n);
        CHECK(out && in, "malloc %d", n);
        for (int k = 0; k < n; k++) out[k] = (unsigned char)(k * 7 + rank + i);
        OK(MPI_Sendrecv(out, n, MPI_BYTE, peer, i, in, n, MPI_BYTE, peer, i, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        for (int k = 0; k < n; k++)
            CHECK(in[k] == (unsigned char)(k * 7 + peer + i), "len %d byte %d", n, k);
        free(out);
        free(in);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 4, "run on 4 ranks, not %d", size);
    if (rank < 2) exchange(1 - rank);

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
    printf("silent ok %d\n", rank);
    fflush(stdout);

    const char *sync = getenv("SILENT_SYNC");
    CHECK(sync && *sync, "SILENT_SYNC is not set");
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
