/* MPI-IO on N ranks: a collective write through a strided view (each rank's blocks
 * interleaved, from a non-contiguous memory type) read back byte for byte by every
 * rank, the individual pointer, explicit offsets, nonblocking and split collective
 * forms, large-count forms, the shared pointer (ordered writes and reads, shared
 * writes from every rank), sizes, hints, atomicity, DELETE_ON_CLOSE, file error
 * handlers, and the error classes of bad calls. Files go to $TMPDIR (or /tmp).
 * Prints "io ok <rank>". */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int rank, size;

static int handler_calls, handler_code;
static void on_error(MPI_File *fh, int *code, ...) {
    (void)fh;
    handler_calls++;
    handler_code = *code;
}

/* The int written at element i of the file by `owner`. */
static int val(int owner, int i) { return owner * 1000003 + i * 7 + 1; }

enum { B = 3, NBLK = 50 };

static void strided(const char *path) {
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    /* Filetype: B ints, then room for the other ranks' blocks. */
    MPI_Datatype blk, ftype, mtype;
    OK(MPI_Type_contiguous(B, MPI_INT, &blk));
    OK(MPI_Type_create_resized(blk, 0, (MPI_Aint)(B * size * sizeof(int)), &ftype));
    OK(MPI_Type_commit(&ftype));
    /* Memory: every other int of a buffer twice the size. */
    OK(MPI_Type_vector(NBLK * B, 1, 2, MPI_INT, &mtype));
    OK(MPI_Type_commit(&mtype));
    int n = NBLK * B;
    int *mem = calloc(2 * (size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) mem[2 * i] = val(rank, i), mem[2 * i + 1] = -1;
    OK(MPI_File_set_view(fh, (MPI_Offset)(rank * B * sizeof(int)), MPI_INT, ftype, "native",
                         MPI_INFO_NULL));
    MPI_Status st;
    OK(MPI_File_write_all(fh, mem, 1, mtype, &st));
    int cnt;
    OK(MPI_Get_count(&st, mtype, &cnt));
    CHECK(cnt == 1, "write_all count %d", cnt);
    OK(MPI_Get_elements(&st, MPI_INT, &cnt));
    CHECK(cnt == n, "write_all elements %d", cnt);
    MPI_Offset pos, byte;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == n, "position %lld", (long long)pos);
    OK(MPI_File_get_byte_offset(fh, B + 1, &byte));
    CHECK(byte == (MPI_Offset)((rank * B + B * size + 1) * sizeof(int)), "byte offset %lld",
          (long long)byte);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    /* Every byte of the file, read by every rank through the default view. */
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Offset fsize;
    OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == (MPI_Offset)(n * size * sizeof(int)), "size %lld", (long long)fsize);
    int *all = malloc((size_t)fsize);
    OK(MPI_File_read_at_all(fh, 0, all, (int)fsize, MPI_BYTE, &st));
    OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
    CHECK(cnt == fsize, "read %d of %lld", cnt, (long long)fsize);
    for (int k = 0; k < n * size; k++) {
        int owner = (k / B) % size, i = (k / (B * size)) * B + k % B;
        CHECK(all[k] == val(owner, i), "int %d is %d, not rank %d's #%d", k, all[k], owner, i);
    }
    /* Read back through the view: the right ints land in the strided memory. */
    OK(MPI_File_set_view(fh, (MPI_Offset)(rank * B * sizeof(int)), MPI_INT, ftype, "native",
                         MPI_INFO_NULL));
    for (int i = 0; i < 2 * n; i++) mem[i] = -7;
    OK(MPI_File_read_all(fh, mem, 1, mtype, &st));
    for (int i = 0; i < n; i++)
        CHECK(mem[2 * i] == val(rank, i) && mem[2 * i + 1] == -7, "read back %d: %d", i,
              mem[2 * i]);
    /* Past the end: a short read, counted. */
    OK(MPI_File_read_at(fh, n - 2, mem, 5, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 2 && mem[0] == val(rank, n - 2), "short read %d", cnt);
    /* Seek from the end of the file, in etypes of the view. */
    OK(MPI_File_seek(fh, -1, MPI_SEEK_END));
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == n - 1, "seek end %lld", (long long)pos);
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    int sz;
    OK(MPI_Type_size(ft, &sz));
    CHECK(disp == (MPI_Offset)(rank * B * sizeof(int)) && et == MPI_INT && sz == B * 4 &&
              strcmp(rep, "native") == 0,
          "view %lld %d %s", (long long)disp, sz, rep);
    MPI_Type_free(&ft);
    OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close leaves the handle");
    free(all);
    free(mem);
    MPI_Type_free(&blk);
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
}

static void shared(const char *path) {
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_size(fh, 0));
    /* Ordered: rank r writes r + 1 bytes 'a' + r, in rank order. */
    char out[64], in[64];
    memset(out, 'a' + rank, sizeof out);
    MPI_Status st;
    OK(MPI_File_write_ordered(fh, out, rank + 1, MPI_CHAR, &st));
    MPI_Offset pos, total = (MPI_Offset)size * (size + 1) / 2;
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == total, "shared pointer %lld of %lld", (long long)pos, (long long)total);
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_read_ordered(fh, in, rank + 1, MPI_CHAR, &st));
    for (int i = 0; i <= rank; i++) CHECK(in[i] == 'a' + rank, "ordered byte %d: %c", i, in[i]);
    OK(MPI_File_read_at(fh, 0, in, (int)total, MPI_CHAR, &st));
    for (int r = 0, k = 0; r < size; r++)
        for (int i = 0; i <= r; i++, k++) CHECK(in[k] == 'a' + r, "file byte %d: %c", k, in[k]);
    /* Split ordered, then shared writes: each rank's record lands once. */
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    OK(MPI_File_write_ordered_begin(fh, out, 1, MPI_CHAR));
    OK(MPI_File_write_ordered_end(fh, out, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == total + size, "after split ordered %lld", (long long)pos);
    /* Nobody moves the pointer before every rank looked at it. */
    MPI_Barrier(MPI_COMM_WORLD);
    int rec[2] = {rank, 4242};
    for (int k = 0; k < 3; k++) OK(MPI_File_write_shared(fh, rec, 2, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == total + size + 3 * size * 8, "after shared writes %lld", (long long)pos);
    int *recs = malloc(sizeof(int) * 6 * (size_t)size), *seen = calloc((size_t)size, sizeof(int));
    OK(MPI_File_read_at(fh, total + size, recs, 6 * size, MPI_INT, &st));
    for (int k = 0; k < 3 * size; k++) {
        CHECK(recs[2 * k + 1] == 4242 && recs[2 * k] >= 0 && recs[2 * k] < size, "record %d", k);
        seen[recs[2 * k]]++;
    }
    for (int r = 0; r < size; r++) CHECK(seen[r] == 3, "rank %d's records: %d", r, seen[r]);
    MPI_Barrier(MPI_COMM_WORLD);
    /* read_shared takes each record once across the ranks. */
    OK(MPI_File_seek_shared(fh, total + size, MPI_SEEK_SET));
    int got[2];
    OK(MPI_File_read_shared(fh, got, 2, MPI_INT, &st));
    CHECK(got[1] == 4242, "read_shared %d", got[1]);
    free(recs);
    free(seen);
    OK(MPI_File_close(&fh));
}

static void forms(const char *path) {
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_UNIQUE_OPEN,
                     MPI_INFO_NULL, &fh));
    int v[8], w[8];
    for (int i = 0; i < 8; i++) v[i] = val(rank, i);
    MPI_Request q;
    MPI_Status st;
    int cnt, flag = 0;
    OK(MPI_File_iwrite_at(fh, (MPI_Offset)rank * 64, v, 4, MPI_INT, &q));
    OK(MPI_Wait(&q, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 4 && q == MPI_REQUEST_NULL, "iwrite_at %d", cnt);
    OK(MPI_File_write_at_all_begin(fh, (MPI_Offset)rank * 64 + 16, v + 4, 4, MPI_INT));
    OK(MPI_File_write_at_all_end(fh, v + 4, &st));
    MPI_Count big;
    OK(MPI_File_write_at_c(fh, (MPI_Offset)rank * 64 + 32, v, (MPI_Count)8, MPI_INT, &st));
    OK(MPI_Get_count_c(&st, MPI_INT, &big));
    CHECK(big == 8, "write_at_c %lld", (long long)big);
    FAILS(MPI_File_read_at(fh, 0, w, 1, MPI_INT, &st), MPI_ERR_ACCESS);
    int amode;
    OK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_UNIQUE_OPEN), "amode %d", amode);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    OK(MPI_File_seek(fh, (MPI_Offset)rank * 64, MPI_SEEK_SET));
    OK(MPI_File_iread(fh, w, 4, MPI_INT, &q));
    while (!flag) OK(MPI_Test(&q, &flag, &st));
    OK(MPI_File_read_all_begin(fh, w + 4, 4, MPI_INT));
    FAILS(MPI_File_read_all_begin(fh, w + 4, 4, MPI_INT), MPI_ERR_IO);
    OK(MPI_File_read_all_end(fh, w + 4, &st));
    for (int i = 0; i < 8; i++) CHECK(w[i] == v[i], "int %d read back %d", i, w[i]);
    OK(MPI_File_read_at_c(fh, (MPI_Offset)rank * 64 + 32, w, (MPI_Count)8, MPI_INT, &st));
    for (int i = 0; i < 8; i++) CHECK(w[i] == v[i], "read_at_c int %d: %d", i, w[i]);
    FAILS(MPI_File_write(fh, v, 1, MPI_INT, &st), MPI_ERR_READ_ONLY);
    FAILS(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY);
    MPI_Group g, wg;
    int res;
    OK(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &res);
    CHECK(res == MPI_IDENT, "group %d", res);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    OK(MPI_File_close(&fh));
}

static void management(const char *path) {
    MPI_File fh;
    MPI_Info info, used;
    MPI_Info_create(&info);
    MPI_Info_set(info, "access_style", "write_once");
    OK(MPI_File_open(MPI_COMM_WORLD, path,
                     MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, info, &fh));
    OK(MPI_File_preallocate(fh, 1000));
    MPI_Offset sz;
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz >= 1000, "preallocated %lld", (long long)sz);
    OK(MPI_File_set_size(fh, 100));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 100, "set_size %lld", (long long)sz);
    int flag;
    OK(MPI_File_set_atomicity(fh, 1));
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomicity %d", flag);
    int x = rank;
    OK(MPI_File_write_at(fh, rank * 4, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_get_info(fh, &used));
    char value[64];
    MPI_Info_get(used, "access_style", sizeof value, value, &flag);
    CHECK(flag && strcmp(value, "write_once") == 0, "hint %d", flag);
    MPI_Info_free(&used);
    MPI_Info_free(&info);
    /* Bad calls on an open file. */
    MPI_Errhandler eh;
    OK(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "default file handler");
    MPI_Status st;
    FAILS(MPI_File_read_at(fh, -1, &x, 1, MPI_INT, &st), MPI_ERR_ARG);
    FAILS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    FAILS(MPI_File_seek(fh, -5, MPI_SEEK_SET), MPI_ERR_ARG);
    FAILS(MPI_File_write(fh, &x, -1, MPI_INT, &st), MPI_ERR_COUNT);
    FAILS(MPI_File_write(fh, &x, 1, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE);
    FAILS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-rep", MPI_INFO_NULL),
          MPI_ERR_UNSUPPORTED_DATAREP);
    FAILS(MPI_File_set_view(fh, 0, MPI_INT, MPI_BYTE, "native", MPI_INFO_NULL), MPI_ERR_TYPE);
    FAILS(MPI_File_read_all_end(fh, &x, &st), MPI_ERR_IO);
    MPI_Errhandler mine;
    OK(MPI_File_create_errhandler(on_error, &mine));
    OK(MPI_File_set_errhandler(fh, mine));
    FAILS(MPI_File_read_at(fh, -1, &x, 1, MPI_INT, &st), MPI_ERR_ARG);
    CHECK(handler_calls == 1 && class_of(handler_code) == MPI_ERR_ARG, "handler %d %d",
          handler_calls, handler_code);
    OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_IO, "call_errhandler");
    OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&mine));
    OK(MPI_File_close(&fh));
    CHECK(access(path, F_OK) != 0, "DELETE_ON_CLOSE left %s", path);
}

/* MPI_MODE_SEQUENTIAL: shared pointers only, a view at the current position;
 * MPI_MODE_APPEND: both pointers start at the end. */
static void sequential(const char *path) {
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos;
    char c = (char)('A' + rank);
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                     MPI_INFO_NULL, &fh));
    OK(MPI_File_write_ordered(fh, &c, 1, MPI_CHAR, &st));
    FAILS(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION);
    FAILS(MPI_File_write_at(fh, 0, &c, 1, MPI_CHAR, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    FAILS(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_CHAR, "native",
                            MPI_INFO_NULL),
          MPI_ERR_TYPE);
    OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int x = rank;
    OK(MPI_File_write_ordered(fh, &x, 1, MPI_INT, &st));
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == size, "sequential shared pointer %lld", (long long)pos);
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == size + 4 * size, "append position %lld", (long long)pos);
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == size + 4 * size, "append shared position %lld", (long long)pos);
    char in[8];
    int ints[8];
    OK(MPI_File_read_at(fh, 0, in, size, MPI_CHAR, &st));
    OK(MPI_File_read_at(fh, size, ints, size, MPI_INT, &st));
    for (int r = 0; r < size; r++)
        CHECK(in[r] == 'A' + r && ints[r] == r, "sequential record %d: %c %d", r, in[r], ints[r]);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) OK(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void refusals(const char *path, const char *missing) {
    MPI_File fh = MPI_FILE_NULL;
    MPI_Offset sz;
    FAILS(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
          MPI_ERR_NO_SUCH_FILE);
    FAILS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                        &fh),
          MPI_ERR_AMODE);
    FAILS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
          MPI_ERR_AMODE);
    FAILS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    CHECK(fh == MPI_FILE_NULL, "a failed open set the handle");
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    OK(MPI_File_close(&fh));
    FAILS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                        MPI_INFO_NULL, &fh),
          MPI_ERR_FILE_EXISTS);
    /* A rank that may not read the file makes every rank fail (not as root). */
    if (geteuid() != 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) CHECK(chmod(path, 0) == 0, "chmod");
        MPI_Barrier(MPI_COMM_WORLD);
        FAILS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
              MPI_ERR_ACCESS);
    }
    FAILS(MPI_File_get_size(MPI_FILE_NULL, &sz), MPI_ERR_FILE);
    FAILS(MPI_File_close(&fh), MPI_ERR_FILE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        OK(MPI_File_delete(path, MPI_INFO_NULL));
        FAILS(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    }
    /* A representation needs its extent function (io_datarep.c tests the rest);
     * the error goes to MPI_FILE_NULL's handler, MPI_ERRORS_RETURN here. */
    FAILS(MPI_Register_datarep("mine", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, NULL, NULL),
          MPI_ERR_ARG);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char base[200] = {0};
    if (rank == 0) {
        const char *dir = getenv("TMPDIR");
        snprintf(base, sizeof base, "%s/myrix-io-%ld", dir && *dir ? dir : "/tmp", (long)getpid());
    }
    MPI_Bcast(base, sizeof base, MPI_CHAR, 0, MPI_COMM_WORLD);
    char path[256], missing[256];
    snprintf(path, sizeof path, "%s.dat", base);
    snprintf(missing, sizeof missing, "ufs:%s.missing", base);
    strided(path);
    shared(path);
    forms(path);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) OK(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    management(path);
    sequential(path);
    refusals(path, missing);
    printf("io ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
