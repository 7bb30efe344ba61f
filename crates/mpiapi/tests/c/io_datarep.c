/* MPI-IO data representations on N ranks, each in its own region of a shared file:
 * "external32" (big-endian on disk, read back natively and through the view),
 * "internal", a representation of the program's own (MPI_Register_datarep) whose
 * conversion functions byte-swap ints and count what they were given, and the
 * refusals: a duplicate name, an unknown one, a type whose file size differs
 * (C long in external32), a failing conversion. Prints "io_datarep ok <rank>". */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

#define N 300000 /* ints per rank: more than one conversion piece */

struct calls {
    long long items;     /* typemap entries converted */
    long long next_pos;  /* the position the next call should have */
    int calls, bad_pos, fail;
};

static uint32_t swap(uint32_t x) {
    return (x >> 24) | ((x >> 8) & 0xff00) | ((x << 8) & 0xff0000) | (x << 24);
}

/* Only MPI_INT, contiguous: position and count are in ints. */
static int convert(void *userbuf, MPI_Datatype dt, int count, void *filebuf,
                   MPI_Offset position, void *extra, int to_file) {
    struct calls *c = extra;
    if (c->fail)
        return MPI_ERR_OTHER;
    if (dt != MPI_INT)
        return MPI_ERR_TYPE;
    if (position != c->next_pos)
        c->bad_pos++;
    c->next_pos = position + count;
    c->items += count;
    c->calls++;
    uint32_t *u = (uint32_t *)userbuf + position, *f = filebuf;
    for (int i = 0; i < count; i++) {
        if (to_file)
            f[i] = swap(u[i]);
        else
            u[i] = swap(f[i]);
    }
    return MPI_SUCCESS;
}
static int read_fn(void *u, MPI_Datatype dt, int n, void *f, MPI_Offset p, void *x) {
    return convert(u, dt, n, f, p, x, 0);
}
static int write_fn(void *u, MPI_Datatype dt, int n, void *f, MPI_Offset p, void *x) {
    return convert(u, dt, n, f, p, x, 1);
}
static int extent_fn(MPI_Datatype dt, MPI_Aint *ext, void *x) {
    (void)x;
    int s;
    MPI_Type_size(dt, &s);
    *ext = s;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[512];
    snprintf(path, sizeof path, "%s/myrix-io-datarep-%d.dat", dir, (int)getppid());
    /* Every rank agrees on rank 0's name. */
    OK(MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD));
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
    CHECK(a && b, "malloc");
    for (int i = 0; i < N; i++)
        a[i] = rank * 7919 + i * 31 + 1;
    MPI_Offset mine = (MPI_Offset)rank * N * sizeof(int);
    MPI_Status st;
    int got;

    /* external32: big-endian on disk. */
    OK(MPI_File_set_view(fh, mine, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(strcmp(rep, "external32") == 0 && disp == mine, "get_view %s", rep);
    OK(MPI_File_write_at_all(fh, 0, a, N, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == N, "external32 write count %d", got);
    OK(MPI_File_set_view(fh, mine, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at(fh, 0, b, N, MPI_INT, &st));
    for (int i = 0; i < N; i++)
        CHECK((uint32_t)b[i] == swap((uint32_t)a[i]), "external32 on disk at %d", i);
    OK(MPI_File_set_view(fh, mine, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    memset(b, 0, N * sizeof(int));
    OK(MPI_File_read_at(fh, 0, b, N, MPI_INT, &st));
    CHECK(memcmp(a, b, N * sizeof(int)) == 0, "external32 read back");
    /* A strided memory type through external32. */
    MPI_Datatype every2;
    OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every2));
    OK(MPI_Type_commit(&every2));
    memset(b, 0, N * sizeof(int));
    OK(MPI_File_read_at(fh, 0, b, 1, every2, &st));
    for (int i = 0; i < N / 2; i++)
        CHECK(b[2 * i] == a[i] && b[2 * i + 1] == 0, "strided external32 read at %d", i);
    OK(MPI_Type_free(&every2));
    /* C long takes 4 bytes in external32, 8 here: refused, not misplaced. */
    MPI_Aint ext;
    OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK(ext == 4, "external32 extent of long %ld", (long)ext);
    OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    CHECK(ext == 8, "external32 extent of double");
    long l = 5;
    FAILS(MPI_File_write_at(fh, 0, &l, 1, MPI_LONG, &st), MPI_ERR_UNSUPPORTED_DATAREP);
    FAILS(MPI_File_set_view(fh, mine, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL),
          MPI_ERR_UNSUPPORTED_DATAREP);
    FAILS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-rep", MPI_INFO_NULL),
          MPI_ERR_UNSUPPORTED_DATAREP);

    /* "internal" is the native layout here. */
    OK(MPI_File_set_view(fh, mine, MPI_INT, MPI_INT, "internal", MPI_INFO_NULL));
    OK(MPI_File_write_at(fh, 0, a, N, MPI_INT, &st));
    OK(MPI_File_set_view(fh, mine, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at(fh, 0, b, N, MPI_INT, &st));
    CHECK(memcmp(a, b, N * sizeof(int)) == 0, "internal is native");

    /* The program's own representation. */
    struct calls c = {0};
    OK(MPI_Register_datarep("swap32", read_fn, write_fn, extent_fn, &c));
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    FAILS(MPI_Register_datarep("swap32", read_fn, write_fn, extent_fn, &c), MPI_ERR_DUP_DATAREP);
    FAILS(MPI_Register_datarep("native", read_fn, write_fn, extent_fn, &c), MPI_ERR_DUP_DATAREP);
    FAILS(MPI_Register_datarep("", read_fn, write_fn, extent_fn, &c), MPI_ERR_ARG);
    OK(MPI_File_set_view(fh, mine, MPI_INT, MPI_INT, "swap32", MPI_INFO_NULL));
    OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(strcmp(rep, "swap32") == 0, "get_view %s", rep);
    OK(MPI_File_write_at(fh, 0, a, N, MPI_INT, &st));
    CHECK(c.items == N && c.calls > 1 && c.bad_pos == 0, "write calls: %lld items, %d calls, %d bad",
          c.items, c.calls, c.bad_pos);
    OK(MPI_File_set_view(fh, mine, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at(fh, 0, b, N, MPI_INT, &st));
    for (int i = 0; i < N; i++)
        CHECK((uint32_t)b[i] == swap((uint32_t)a[i]), "swap32 on disk at %d", i);
    OK(MPI_File_set_view(fh, mine, MPI_INT, MPI_INT, "swap32", MPI_INFO_NULL));
    c.items = c.next_pos = c.calls = 0;
    memset(b, 0, N * sizeof(int));
    OK(MPI_File_read_at(fh, 0, b, N, MPI_INT, &st));
    CHECK(memcmp(a, b, N * sizeof(int)) == 0 && c.items == N && c.bad_pos == 0, "swap32 read back");
    c.fail = 1;
    FAILS(MPI_File_write_at(fh, 0, a, 4, MPI_INT, &st), MPI_ERR_CONVERSION);
    FAILS(MPI_File_read_at(fh, 0, b, 4, MPI_INT, &st), MPI_ERR_CONVERSION);
    c.fail = 0;
    /* A type the conversion does not handle fails in it. */
    float fl = 1.5f;
    FAILS(MPI_File_write_at(fh, 0, &fl, 1, MPI_FLOAT, &st), MPI_ERR_CONVERSION);

    OK(MPI_File_close(&fh));
    free(a);
    free(b);
    OK(MPI_Finalize());
    printf("io_datarep ok %d\n", rank);
    return 0;
}
