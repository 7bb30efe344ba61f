/* Allreduce results as FNV-1a hashes of their bits, for comparing the C library with
 * the Rust API (crates/mpi/examples/reduce_hash.rs computes the same on the same
 * inputs; bench/rust_same_as_c.sh runs both and compares): MPI_DOUBLE with SUM, PROD,
 * MIN, MAX on inputs whose sums round (so the combining order shows in the bits) at
 * 1, 70 and 4900 elements, and MPI_INT64_T with SUM and the bitwise and logical ops
 * at 5000. Rank 0 prints "type op count hash" per line. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r, n; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &n);
    enum { L = 5000 };
    static double s[L], o[L]; static long long si[L], oi[L];
    for (int i = 0; i < L; i++) { s[i] = 1.0 / (r + 1 + i) + 1e-3 * (i % 7); si[i] = (long long)(r * 7919 + i * 104729) ^ (i << 3); }
    MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    const char *nm[] = {"sum", "prod", "min", "max"};
    for (int k = 0; k < 4; k++) for (int len = 1; len <= L; len *= 70) {
        MPI_Allreduce(s, o, len, MPI_DOUBLE, ops[k], MPI_COMM_WORLD);
        unsigned long long h = 1469598103934665603ULL;
        for (int i = 0; i < len; i++) { unsigned long long b; memcpy(&b, &o[i], 8); h = (h ^ b) * 1099511628211ULL; }
        if (r == 0) printf("f64 %s %d %016llx\n", nm[k], len, h);
    }
    MPI_Op iops[] = {MPI_SUM, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR};
    const char *inm[] = {"sum", "band", "bor", "bxor", "land", "lor", "lxor"};
    for (int k = 0; k < 7; k++) {
        MPI_Allreduce(si, oi, L, MPI_INT64_T, iops[k], MPI_COMM_WORLD);
        unsigned long long h = 1469598103934665603ULL;
        for (int i = 0; i < L; i++) h = (h ^ (unsigned long long)oi[i]) * 1099511628211ULL;
        if (r == 0) printf("i64 %s %d %016llx\n", inm[k], L, h);
    }
    MPI_Finalize();
    return 0;
}
