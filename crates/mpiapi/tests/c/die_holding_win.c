/* The last rank is killed (SIGKILL, as kill -9) while holding an exclusive lock on
 * a window, with windows of every flavor open (library memory, heap memory, a
 * stack array, a dynamic window with memory attached, a shared window); the others
 * wait for that lock or in a fence. Every rank first prints "names PID NAME…", the
 * names of the RSM segments it has published, and "pid RANK PID SEGS", SEGS being
 * how many, so the test can check that there were some and that none is left once
 * the launcher returned.
 *
 * With the argument "hidden" the last rank forks before MPI_Init and its child is
 * the MPI process, so the launcher does not see it die (the parent keeps the PMI
 * socket open): the others, with MPI_ERRORS_RETURN on the windows, must get an
 * error from MPI_Win_lock or MPI_Win_fence (never hang), print "survivor RANK
 * error CLASS" and leave. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "own_names.h"

int main(int argc, char **argv) {
    int rank, size;
    int hidden = argc > 1 && strcmp(argv[1], "hidden") == 0;
    const char *r = getenv("PMI_RANK"), *s = getenv("PMI_SIZE");
    if (hidden && r && s && atoi(r) == atoi(s) - 1) {
        pid_t child = fork();
        if (child < 0)
            return 3;
        if (child > 0) {
            int st = 0;
            waitpid(child, &st, 0);
            sleep(20); /* the survivors end the job long before */
            return 4;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *base, *shared;
    int on_stack[300];
    memset(on_stack, 0, sizeof on_stack);
    MPI_Win w1, w2, w3, w4, w5;
    MPI_Win_allocate(1 << 20, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w1);
    int *heap = calloc(4096, sizeof(int));
    MPI_Win_create(heap, 4096 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w2);
    MPI_Win_create(on_stack, sizeof on_stack, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w3);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w4);
    int *att = calloc(10000, sizeof(int));
    MPI_Win_attach(w4, att, 10000 * sizeof(int));
    MPI_Win_allocate_shared(4096, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &shared, &w5);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("pid %d %d %d\n", rank, (int)getpid(), own_names());
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w1);
        int one = 1;
        MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, w1);
    }
    /* The lock is held before anyone asks for it. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1)
        raise(SIGKILL);
    /* The others wait for a lock the dead rank holds, or in a fence. */
    MPI_Win_set_errhandler(w1, MPI_ERRORS_RETURN);
    MPI_Win_set_errhandler(w2, MPI_ERRORS_RETURN);
    int rc;
    if (rank == 0)
        rc = MPI_Win_fence(0, w2);
    else {
        rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w1);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_unlock(0, w1);
    }
    if (hidden) {
        int cls = 0;
        MPI_Error_class(rc, &cls);
        printf("survivor %d error %d\n", rank, cls);
        fflush(stdout);
        _exit(0);
    }
    sleep(30);
    MPI_Finalize();
    return 0;
}
