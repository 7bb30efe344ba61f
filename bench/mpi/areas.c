/* The channel segments each rank maps after an all-to-all (issue 23, seed 004 §3.1:
 * one area per sender and host). Every rank sends an 8-byte and a 3000-byte message
 * (inline in a postbox; pool blocks) to every other and receives theirs, then a
 * barrier; then it counts the RSM segments it has mapped (the files of
 * /proc/self/maps under $MYRIX_RSM_DIR; each segment is two files, data and control
 * block) and their bytes, and its resident memory, and prints
 * "areas <rank> <files> <bytes mapped> <VmRSS KiB>". Standard MPI and C99 (plus
 * POSIX), for myrix's library (the listing needs its registry directory). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const int lens[] = {8, 3000};
    static char out[3000], in[3000];
    memset(out, rank, sizeof out);
    for (int i = 0; i < 2; i++)
        for (int k = 1; k < size; k++) {
            int to = (rank + k) % size, from = (rank - k + size) % size;
            MPI_Sendrecv(out, lens[i], MPI_BYTE, to, i, in, lens[i], MPI_BYTE, from, i,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (in[lens[i] - 1] != (char)from) {
                fprintf(stderr, "rank %d: bad byte from %d\n", rank, from);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
    MPI_Barrier(MPI_COMM_WORLD);
    const char *dir = getenv("MYRIX_RSM_DIR");
    size_t dlen = dir ? strlen(dir) : 0;
    char names[1024][64];
    int files = 0;
    unsigned long bytes = 0;
    FILE *m = fopen("/proc/self/maps", "r");
    char line[1024];
    while (dir && m && fgets(line, sizeof line, m)) {
        unsigned long lo, hi;
        char *path = strchr(line, '/');
        if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || !path) continue;
        path[strcspn(path, "\n")] = 0;
        if (strncmp(path, dir, dlen) != 0 || path[dlen] != '/') continue;
        const char *file = path + dlen + 1;
        int k = 0;
        while (k < files && strncmp(names[k], file, 63) != 0) k++;
        if (k == files && files < 1024) {
            strncpy(names[files], file, 63);
            names[files++][63] = 0;
        }
        bytes += hi - lo;
    }
    if (m) fclose(m);
    printf("areas %d %d %lu %.0f\n", rank, files, bytes, rss_kib());
    MPI_Finalize();
    return 0;
}
