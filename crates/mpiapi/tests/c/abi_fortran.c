/* MPI-5.0's Fortran type registration as a C program sees it: the info the library
 * gives, the LOGICAL values it knows, and the setters' refusals. */
#include "check.h"
#include <stdlib.h>
#include <string.h>

static int rank;

static int info_int(MPI_Info info, const char *key)
{
    char v[32];
    int len = sizeof v, flag = 0;
    OK(MPI_Info_get_string(info, key, &len, v, &flag));
    CHECK(flag, "key %s missing", key);
    return atoi(v);
}

static int info_bool(MPI_Info info, const char *key)
{
    char v[32];
    int len = sizeof v, flag = 0;
    OK(MPI_Info_get_string(info, key, &len, v, &flag));
    CHECK(flag, "key %s missing", key);
    CHECK(strcmp(v, "true") == 0 || strcmp(v, "false") == 0, "%s = %s", key, v);
    return strcmp(v, "true") == 0;
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    MPI_Info info = MPI_INFO_NULL;
    OK(MPI_Abi_get_fortran_info(&info));
    CHECK(info != MPI_INFO_NULL, "no info");
    int size;
    OK(MPI_Type_size(MPI_INTEGER, &size));
    CHECK(info_int(info, "mpi_integer_size") == size, "integer size");
    OK(MPI_Type_size(MPI_LOGICAL, &size));
    CHECK(info_int(info, "mpi_logical_size") == size, "logical size");
    OK(MPI_Type_size(MPI_REAL, &size));
    CHECK(info_int(info, "mpi_real_size") == size, "real size");
    OK(MPI_Type_size(MPI_DOUBLE_PRECISION, &size));
    CHECK(info_int(info, "mpi_double_precision_size") == size, "double precision size");
    CHECK(info_bool(info, "mpi_logical4_supported"), "LOGICAL4");
    CHECK(info_bool(info, "mpi_integer8_supported"), "INTEGER8");
    CHECK(info_bool(info, "mpi_double_complex_supported"), "DOUBLE COMPLEX");
    (void)info_bool(info, "mpi_real16_supported");
    /* The library's own bindings fixed the Fortran environment: a later set is
     * refused and changes nothing. */
    CHECK(MPI_Abi_set_fortran_info(info) == MPI_ERR_ABI, "set_fortran_info");
    OK(MPI_Info_free(&info));
    CHECK(MPI_Abi_set_fortran_info(MPI_INFO_NULL) != MPI_SUCCESS, "null info");

    /* gfortran's LOGICAL: .TRUE. = 1, .FALSE. = 0. */
    int t = -5, f = -5, is_set = -1;
    OK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set));
    CHECK(is_set == 1 && t == 1 && f == 0, "booleans %d %d %d", t, f, is_set);
    char t1 = 9, f1 = 9;
    OK(MPI_Abi_get_fortran_booleans(1, &t1, &f1, &is_set));
    CHECK(is_set == 1 && t1 == 1 && f1 == 0, "booleans(1)");
    int nt = -1, nf = 0;
    CHECK(MPI_Abi_set_fortran_booleans(4, &nt, &nf) == MPI_ERR_ABI, "known size set");
    OK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set));
    CHECK(t == 1 && f == 0, "a refused set changed the values");
    CHECK(MPI_Abi_get_fortran_booleans(3, &t, &f, &is_set) == MPI_ERR_ARG, "size 3");
    CHECK(MPI_Abi_set_fortran_booleans(6, &t, &f) == MPI_ERR_ARG, "size 6");
    CHECK(MPI_Abi_get_fortran_booleans(-4, &t, &f, &is_set) == MPI_ERR_ARG, "size -4");
    CHECK(MPI_Abi_get_fortran_booleans(4, NULL, &f, &is_set) == MPI_ERR_ARG, "NULL true");

    /* A size the library has no LOGICAL for takes one set. */
    unsigned char big_t[16], big_f[16], got_t[16], got_f[16];
    memset(big_t, 0xff, sizeof big_t);
    memset(big_f, 0, sizeof big_f);
    OK(MPI_Abi_get_fortran_booleans(16, got_t, got_f, &is_set));
    if (!is_set) {
        OK(MPI_Abi_set_fortran_booleans(16, big_t, big_f));
        OK(MPI_Abi_get_fortran_booleans(16, got_t, got_f, &is_set));
        CHECK(is_set && memcmp(got_t, big_t, 16) == 0 && memcmp(got_f, big_f, 16) == 0,
              "size 16 values");
        CHECK(MPI_Abi_set_fortran_booleans(16, big_f, big_t) == MPI_ERR_ABI, "second set");
    }
    OK(MPI_Finalize());
    printf("abi_fortran ok\n");
    return 0;
}
