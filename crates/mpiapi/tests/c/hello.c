/* myrix MPI test: rank, size, processor name, a barrier, the version queries and
 * error handling. With an argument "abort" rank 1 (or 0 when alone) calls MPI_Abort(7);
 * with "fatal" a call fails under MPI_ERRORS_RETURN, then under the default
 * MPI_ERRORS_ARE_FATAL. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int provided = -1, flag = 0, rank = -1, size = -1, len = 0, v = 0, sv = 0;
    char name[MPI_MAX_PROCESSOR_NAME];
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    char err[MPI_MAX_ERROR_STRING];

    MPI_Initialized(&flag);
    if (flag) return 10;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return 11;
    if (provided != MPI_THREAD_SERIALIZED) return 12;
    MPI_Initialized(&flag);
    if (!flag) return 13;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    if ((int)strlen(name) != len) return 14;
    MPI_Get_version(&v, &sv);
    MPI_Get_library_version(lib, &len);
    if (rank == 0)
        printf("version %d.%d library %.12s\n", v, sv, lib);

    int *tag_ub = 0, *usize = 0, cmp = -1;
    if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag) != MPI_SUCCESS || !flag) return 24;
    if (*tag_ub < 32767) return 25;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    if (!flag || *usize != size) return 26;
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &cmp);
    if (cmp != MPI_IDENT) return 27;
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &cmp);
    if (cmp != (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL)) return 28;

    int srank = -1, ssize = -1;
    MPI_Comm_rank(MPI_COMM_SELF, &srank);
    MPI_Comm_size(MPI_COMM_SELF, &ssize);
    if (srank != 0 || ssize != 1) return 15;

    /* Errors return once asked to; the default is fatal. */
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    if (eh != MPI_ERRORS_ARE_FATAL) return 16;
    MPI_Errhandler_free(&eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad = MPI_Comm_size(MPI_COMM_NULL, &ssize);
    int cls = -1;
    MPI_Error_class(bad, &cls);
    MPI_Error_string(bad, err, &len);
    if (cls != MPI_ERR_COMM) return 17;
    if (rank == 0) printf("error %d: %s\n", bad, err);
    fflush(stdout);

    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        int rc = MPI_Comm_rank(MPI_COMM_NULL, &ssize);
        printf("rank %d: MPI_Comm_rank returned %d\n", rank, rc);
        fflush(stdout);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Comm_rank(MPI_COMM_NULL, &ssize);
        printf("rank %d: still running after a fatal error\n", rank);
        fflush(stdout);
        return 18;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    double t0 = MPI_Wtime();
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) return 19;
    if (MPI_Wtime() < t0 || MPI_Wtick() <= 0.0) return 20;
    printf("rank %d of %d on %s passed the barrier\n", rank, size, name);
    int *appnum = NULL, has_appnum = 0;
    if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &has_appnum) != MPI_SUCCESS) return 21;
    printf("rank %d appnum %d\n", rank, has_appnum ? *appnum : -1);
    fflush(stdout);

    if (argc > 1 && strcmp(argv[1], "abort") == 0 && rank == (size > 1 ? 1 : 0)) {
        MPI_Abort(MPI_COMM_WORLD, 7);
        return 21;
    }
    if (argc > 1 && strcmp(argv[1], "abort") == 0) {
        /* The others wait in a barrier the aborting rank never joins. */
        MPI_Barrier(MPI_COMM_WORLD);
        return 22;
    }
    MPI_Finalize();
    MPI_Finalized(&flag);
    return flag ? 0 : 23;
}
