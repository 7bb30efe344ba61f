/* A sender's one area for the ranks of another host (issue 23, seed 004 §3.1,
 * session 31 `hostnet`): on 4 ranks over two namespaces (rank i in namespace i mod 2),
 * rank 0 sends to ranks 1 and 3, both on the other host: first all of 1's messages,
 * then all of 3's (3 joins the area 1 made), then rounds to both in turn (both
 * receivers' blocks from one pool), short, pool blocks and rendezvous, every byte
 * checked; then 1 says it is done and leaves MPI's progress while 0 sends 3 a
 * pool's worth several times over. Rank 2 hears nothing. Then each rank lists the RSM segments it has mapped
 * ("seg <rank> <file> <bytes>", as hostarea.c) and prints "hostnet ok <rank>". The
 * test (crates/cli/tests/netns_hostnet.rs) checks that 1 and 3 map one area in
 * common. Ranks meet outside MPI before MPI_Finalize, as in hostarea.c. */
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

static unsigned char byte_of(int k, int to, int tag) {
    return (unsigned char)(k * 7 + to * 13 + tag);
}

/* Message `tag` from 0 to `to`, `n` bytes: sent by 0, received and checked by `to`. */
static void one(int to, int tag, int n) {
    unsigned char *buf = malloc(n);
    CHECK(buf, "malloc %d", n);
    if (rank == 0) {
        for (int k = 0; k < n; k++) buf[k] = byte_of(k, to, tag);
        OK(MPI_Send(buf, n, MPI_BYTE, to, tag, MPI_COMM_WORLD));
    } else if (rank == to) {
        MPI_Status st;
        OK(MPI_Recv(buf, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st));
        int got;
        MPI_Get_count(&st, MPI_BYTE, &got);
        CHECK(got == n, "tag %d: %d bytes, not %d", tag, got, n);
        for (int k = 0; k < n; k++)
            CHECK(buf[k] == byte_of(k, to, tag), "tag %d len %d byte %d", tag, n, k);
    }
    free(buf);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 4, "run on 4 ranks, not %d", size);
    /* Short (inline), pool blocks, past the rendezvous switch. */
    static const int lens[] = {8, 3000, 40000, 1 << 20};
    int tag = 0;
    for (int to = 1; to < 4; to += 2)
        for (int i = 0; i < 4; i++) one(to, tag++, lens[i]);
    for (int round = 0; round < 40; round++)
        for (int to = 1; to < 4; to += 2) one(to, tag++, lens[round % 4] + round);
    /* 1 says it is done, then waits outside MPI (below) while 0 goes on sending to 3
     * through the same pool, several times its size: the blocks 1 took must come back
     * although 1 makes no more progress. */
    char done = 1;
    if (rank == 1) OK(MPI_Send(&done, 1, MPI_CHAR, 0, 9999, MPI_COMM_WORLD));
    if (rank == 0) OK(MPI_Recv(&done, 1, MPI_CHAR, 1, 9999, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 24; i++) one(3, tag++, 40000 + i);

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
    printf("hostnet ok %d\n", rank);
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
