/* Where the ranks run, and what it costs: repetitions of ITERS calls of one
 * collective at 8 B (the pattern's letters in turn: r MPI_Iallreduce of one double,
 * g MPI_Iallgather of one byte per rank, i MPI_Ireduce of one double to rank 0, each
 * with MPI_Wait; a the blocking MPI_Allreduce), printing per repetition the slowest
 * rank's mean per call in µs and the CPU each rank was on at its end
 * (sched_getcpu). Made for jobs with more ranks than cores (session 30): the time
 * of an 8-rank job on 2 cores follows how many ranks share each core, which the
 * kernel changes seldom; run it free, pinned (`taskset`) or on one core.
 *
 * Usage: placement [REPS [ITERS [PATTERN]]]   (default 20 1000 rg)
 *   myrix mpiexec -n 8 placement 16 1000 rg
 *   myrix mpiexec -n 8 sh -c 'exec taskset -c $((PMI_RANK % 2)) placement 8 1000 rga'
 * Prints "letter us cpus c0 c1 ..." from rank 0; a wrong result of the last call of
 * a repetition ends the job with status 4. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int reps = argc > 1 ? atoi(argv[1]) : 20, it = argc > 2 ? atoi(argv[2]) : 1000;
    const char *pat = argc > 3 && argv[3][0] ? argv[3] : "rg";
    double s = rank, r = 0;
    char gb[1] = {(char)rank}, *rb = malloc((size_t)n);
    int *cpu_of = rank == 0 ? malloc(sizeof(int) * (size_t)n) : NULL;
    if (!rb || (rank == 0 && !cpu_of)) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int k = 0; k < reps; k++) {
        char t = pat[k % strlen(pat)];
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < it; i++) {
            MPI_Request q;
            if (t == 'a') {
                MPI_Allreduce(&s, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                continue;
            }
            if (t == 'r')
                MPI_Iallreduce(&s, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
            else if (t == 'g')
                MPI_Iallgather(gb, 1, MPI_BYTE, rb, 1, MPI_BYTE, MPI_COMM_WORLD, &q);
            else
                MPI_Ireduce(&s, &r, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        double us = (MPI_Wtime() - t0) * 1e6 / it, worst = 0;
        /* The last call's result: the sum of the ranks, or every rank's byte. */
        int bad = (t == 'g') ? 0 : ((t != 'i' || rank == 0) && r != (double)n * (n - 1) / 2);
        for (int q = 0; t == 'g' && q < n; q++) bad |= rb[q] != (char)q;
        if (bad) {
            fprintf(stderr, "placement: wrong result of '%c' on rank %d\n", t, rank);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
        int cpu = sched_getcpu();
        MPI_Reduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Gather(&cpu, 1, MPI_INT, cpu_of, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%c %8.3f cpus", t, worst);
            for (int q = 0; q < n; q++) printf(" %d", cpu_of[q]);
            printf("\n");
        }
    }
    free(rb);
    free(cpu_of);
    MPI_Finalize();
    return 0;
}
