/* The MPI-5.0 ABI facts myrix's mpi.h must hold: sizes, layout and values. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) { printf("FAILED: %s\n", #c); return 1; } } while (0)

int main(void)
{
    CHECK(sizeof(MPI_Status) == 32);
    CHECK(offsetof(MPI_Status, MPI_SOURCE) == 0);
    CHECK(offsetof(MPI_Status, MPI_TAG) == 4);
    CHECK(offsetof(MPI_Status, MPI_ERROR) == 8);
    CHECK(sizeof(MPI_Aint) == sizeof(void *));
    CHECK(sizeof(MPI_Count) == 8 && sizeof(MPI_Offset) == 8);
    CHECK(sizeof(MPI_Comm) == sizeof(void *));
    CHECK((intptr_t)MPI_COMM_WORLD == 0x101 && (intptr_t)MPI_COMM_SELF == 0x102);
    CHECK((intptr_t)MPI_COMM_NULL == 0x100);
    CHECK((intptr_t)MPI_INT == 0x209 && (intptr_t)MPI_DOUBLE == 0x214);
    CHECK((intptr_t)MPI_FLOAT == 0x210 && (intptr_t)MPI_CHAR == 0x243);
    CHECK((intptr_t)MPI_BYTE == 0x247 && (intptr_t)MPI_SUM == 0x21);
    CHECK((intptr_t)MPI_MIN == 0x22 && (intptr_t)MPI_MAX == 0x23);
    CHECK((intptr_t)MPI_INFO_NULL == 0x130 && (intptr_t)MPI_REQUEST_NULL == 0x180);
    CHECK((intptr_t)MPI_ERRORS_ARE_FATAL == 0x141 && (intptr_t)MPI_ERRORS_RETURN == 0x143);
    CHECK(MPI_ANY_SOURCE == -1 && MPI_ANY_TAG == -2 && MPI_PROC_NULL == -3);
    CHECK(MPI_IN_PLACE == (void *)1);
    CHECK(MPI_ERR_ABI == 62 && MPI_ERR_UNSUPPORTED_OPERATION == 55);
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED);
    CHECK(MPI_VERSION == 5 && MPI_SUBVERSION == 0);
    int major = -1, minor = -1;
    CHECK(MPI_Abi_get_version(&major, &minor) == MPI_SUCCESS && major == 1 && minor == 0);
    MPI_Info abi;
    char v[8];
    int vlen = sizeof v, flag = 0;
    CHECK(MPI_Abi_get_info(&abi) == MPI_SUCCESS);
    CHECK(MPI_Info_get_string(abi, "mpi_count_size", &vlen, v, &flag) == MPI_SUCCESS && flag &&
          atoi(v) == (int)sizeof(MPI_Count));
    vlen = sizeof v;
    CHECK(MPI_Info_get_string(abi, "mpi_aint_size", &vlen, v, &flag) == MPI_SUCCESS && flag &&
          atoi(v) == (int)sizeof(MPI_Aint));
    CHECK(MPI_Info_free(&abi) == MPI_SUCCESS);
    CHECK(MPI_Get_hw_resource_info(&abi) == MPI_SUCCESS);
    char hw[32];
    vlen = sizeof hw;
    CHECK(MPI_Info_get_string(abi, "mpi_hw_resource_type", &vlen, hw, &flag) == MPI_SUCCESS &&
          flag && strcmp(hw, "mpi_shared_memory") == 0);
    CHECK(MPI_Info_free(&abi) == MPI_SUCCESS);
    CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == 0x101);
    CHECK(MPI_Comm_fromint(0x102) == MPI_COMM_SELF);
    CHECK(MPI_Aint_diff(MPI_Aint_add(100, 28), 28) == 100);
    printf("abi ok\n");
    return 0;
}
