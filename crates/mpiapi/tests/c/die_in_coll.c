/* A rank dies inside a collective; the others, with MPI_ERRORS_RETURN, must get an
 * error back (never hang). Usage: die_in_coll allreduce|bcast|ibarrier exit|kill
 * (ibarrier: MPI_Ibarrier and MPI_Wait, through the shared segment on one node).
 *
 * The last rank forks before MPI_Init: the child is the MPI process and dies inside
 * the collective (_exit(0) or SIGKILL, from a user reduction op or a timer signal);
 * the parent, which the launcher sees, keeps the PMI socket open and waits, so the
 * launcher does not end the job before the survivors saw the death themselves.
 * Each survivor prints "survivor R error CLASS" and leaves with _exit(0) (the job
 * then ends: a rank exited without MPI_Finalize). */
#define _GNU_SOURCE
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int use_kill, rank, size, armed;

static void die(void) {
    if (use_kill)
        raise(SIGKILL);
    _exit(0);
}

static void die_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    if (armed)
        die();
    for (int i = 0; i < *len; i++)
        ((long *)inout)[i] += ((long *)in)[i];
}

static void on_alarm(int sig) {
    (void)sig;
    die();
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: die_in_coll allreduce|bcast|ibarrier exit|kill\n");
        return 2;
    }
    int bcast = strcmp(argv[1], "bcast") == 0;
    int ibarrier = strcmp(argv[1], "ibarrier") == 0;
    use_kill = strcmp(argv[2], "kill") == 0;
    const char *r = getenv("PMI_RANK"), *s = getenv("PMI_SIZE");
    int victim = r && s && atoi(r) == atoi(s) - 1;
    if (victim) {
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
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Op op;
    MPI_Op_create(die_op, 1, &op);
    enum { N = 1 << 17 };
    long *buf = calloc(N, sizeof(long)), *out = calloc(N, sizeof(long));
    MPI_Barrier(MPI_COMM_WORLD);
    if (victim) {
        if (bcast || ibarrier) {
            signal(SIGALRM, on_alarm);
            struct itimerval it = {{0, 0}, {0, 30000}};
            setitimer(ITIMER_REAL, &it, NULL);
        } else {
            armed = 1;
        }
    }
    double t0 = now();
    int rc = MPI_SUCCESS;
    for (long i = 0; now() - t0 < 10; i++) {
        if (ibarrier) {
            MPI_Request req;
            rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (bcast)
            rc = MPI_Bcast(buf, N, MPI_LONG, 0, MPI_COMM_WORLD);
        else
            rc = MPI_Allreduce(buf, out, 1 + (int)(i % 4096), MPI_LONG, op, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS)
            break;
    }
    if (rc == MPI_SUCCESS) {
        printf("rank %d saw no error in 10 s\n", rank);
        fflush(stdout);
        _exit(1);
    }
    int cls = 0;
    MPI_Error_class(rc, &cls);
    printf("survivor %d error %d after %.3f s\n", rank, cls, now() - t0);
    fflush(stdout);
    _exit(0);
}
