/* MPI_Comm_spawn and MPI_Comm_get_parent, run by crates/cli/tests/mpi_dynproc.rs:
 *
 *   spawn N       the job spawns N copies of this program (argument "child"); they
 *                 meet over the intercommunicator, merge, and disconnect
 *   spawn multi   MPI_Comm_spawn_multiple of two commands (1 + 2 children: the
 *                 second with another argument and wdir "/"), told apart by
 *                 MPI_APPNUM
 *   spawn bad     spawning a command that does not exist gives error codes
 *   spawn args    bad arguments (NULL command, maxprocs 0, -1) give error codes
 *
 * Parents print "spawn ok <rank>", children "child ok <rank>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "spawn: %s failed at line %d\n", #c, __LINE__); MPI_Abort(MPI_COMM_WORLD, 3); } } while (0)

/* Both sides: a message each way between rank 0s, a bcast from the parents'
 * root, the merge (parents first) and an allreduce over it. */
static void exercise(MPI_Comm ic, int parent)
{
    int rank, size, rsize;
    MPI_Comm_rank(ic, &rank);
    MPI_Comm_size(ic, &size);
    MPI_Comm_remote_size(ic, &rsize);
    if (rank == 0) {
        int mine = parent ? 11 : 22, theirs = 0;
        CHECK(MPI_Sendrecv(&mine, 1, MPI_INT, 0, 5, &theirs, 1, MPI_INT, 0, 5, ic, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(theirs == (parent ? 22 : 11));
    }
    int v = parent ? 77 : 0;
    if (parent)
        MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    else
        MPI_Bcast(&v, 1, MPI_INT, 0, ic);
    CHECK(v == 77);
    MPI_Comm m;
    CHECK(MPI_Intercomm_merge(ic, !parent, &m) == MPI_SUCCESS);
    int mrank, msize, sum = 0;
    MPI_Comm_rank(m, &mrank);
    MPI_Comm_size(m, &msize);
    CHECK(msize == size + rsize);
    CHECK(mrank == (parent ? rank : rsize + rank));
    CHECK(MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, m) == MPI_SUCCESS);
    CHECK(sum == msize * (msize - 1) / 2);
    MPI_Comm_free(&m);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parent;
    CHECK(MPI_Comm_get_parent(&parent) == MPI_SUCCESS);
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        CHECK(parent != MPI_COMM_NULL);
        CHECK(argc > 2 && strcmp(argv[2], "x y") == 0);
        /* MPI_APPNUM: 0 for MPI_Comm_spawn, the command's index for _multiple (the
         * second command of "multi" says "second" and runs in "/"). */
        int *appnum = NULL, flag = 0;
        CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag) == MPI_SUCCESS && flag);
        int second = argc > 3 && strcmp(argv[3], "second") == 0;
        CHECK(*appnum == second);
        if (second) {
            char cwd[256];
            CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") == 0);
            CHECK(rank >= 1); /* the first command's child is rank 0 */
        }
        exercise(parent, 0);
        CHECK(MPI_Comm_disconnect(&parent) == MPI_SUCCESS);
        MPI_Comm_get_parent(&parent);
        CHECK(parent == MPI_COMM_NULL);
        printf("child ok %d\n", rank);
        MPI_Finalize();
        return 0;
    }
    CHECK(parent == MPI_COMM_NULL);
    CHECK(argc > 1);
    char *cargv[] = {"child", "x y", NULL};
    MPI_Comm ic;
    if (strcmp(argv[1], "bad") == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int codes[2] = {-1, -1}, cls = 0;
        int rc = MPI_Comm_spawn("/nonexistent/program", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, codes);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_SPAWN && ic == MPI_COMM_NULL);
        CHECK(codes[0] != MPI_SUCCESS && codes[1] != MPI_SUCCESS);
    } else if (strcmp(argv[1], "args") == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK(MPI_Comm_spawn(NULL, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE) != MPI_SUCCESS);
        CHECK(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 0, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE) != MPI_SUCCESS);
        CHECK(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, -1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE) != MPI_SUCCESS);
        CHECK(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, NULL, MPI_ERRCODES_IGNORE) != MPI_SUCCESS);
        CHECK(MPI_Comm_spawn_multiple(-1, NULL, NULL, NULL, NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE) != MPI_SUCCESS);
    } else if (strcmp(argv[1], "multi") == 0) {
        char *cmds[2] = {argv[0], argv[0]};
        char *second[] = {"child", "x y", "second", NULL};
        char **argvs[2] = {cargv, second};
        int np[2] = {1, 2}, codes[3] = {-1, -1, -1}, rsize = 0;
        MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
        MPI_Info_create(&infos[1]);
        MPI_Info_set(infos[1], "wdir", "/");
        CHECK(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &ic, codes) == MPI_SUCCESS);
        MPI_Info_free(&infos[1]);
        CHECK(codes[0] == MPI_SUCCESS && codes[1] == MPI_SUCCESS && codes[2] == MPI_SUCCESS);
        MPI_Comm_remote_size(ic, &rsize);
        CHECK(rsize == 3);
        exercise(ic, 1);
        CHECK(MPI_Comm_disconnect(&ic) == MPI_SUCCESS);
    } else {
        int n = atoi(argv[1]);
        CHECK(n >= 1 && n <= 16);
        int codes[16], rsize = 0;
        for (int i = 0; i < 16; i++)
            codes[i] = -1;
        /* "wdir" is honoured, "host" ignored. */
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "wdir", "/");
        MPI_Info_set(info, "host", "localhost");
        CHECK(MPI_Comm_spawn(argv[0], cargv, n, info, size - 1, MPI_COMM_WORLD, &ic, codes) == MPI_SUCCESS);
        MPI_Info_free(&info);
        for (int i = 0; i < n; i++)
            CHECK(codes[i] == MPI_SUCCESS);
        MPI_Comm_remote_size(ic, &rsize);
        CHECK(rsize == n);
        exercise(ic, 1);
        CHECK(MPI_Comm_disconnect(&ic) == MPI_SUCCESS);
    }
    printf("spawn ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
