/* Randomized derived datatypes sent between ranks (issue 23: non-contiguous data
 * gathered and scattered in place). Usage: dtype_random SEED ROUNDS [lenient].
 *
 * Every rank derives the same schedule from SEED. Each round picks a sender, a
 * receiver (sometimes the same rank), a base type (byte, int, double), a send type
 * and a receive type built at random from vectors (negative strides too), indexed
 * blocks in shuffled order, structs, resized types with holes and contiguous
 * repeats, a message size in one of five tiers (inline postboxes, one pool block,
 * many, past the eager limit, about 1 MiB), a way to send and receive (blocking,
 * nonblocking, arriving before the receive is posted, probe then receive, matched
 * probe, synchronous, sendrecv), and now and then a receive buffer too small
 * (MPI_ERR_TRUNCATE). Next to each MPI type the program keeps its map by hand (the
 * blocks of one element in type-map order); the sender's memory holds a pattern,
 * and the receiver checks byte for byte that the packed stream computed by hand from
 * the sender's map landed at its own map's places, that every byte outside them
 * (holes, guards) is untouched, and the status, MPI_Get_count and MPI_Get_elements.
 * The sender also checks MPI_Pack of its buffer against the stream by hand. A
 * third argument "lenient" skips the status and the data of truncated receives
 * (MPICH delivers none of it; myrix the bytes that fit). 
 * Prints "dtype_random ok <rank> <rounds received> <bytes received>". */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;
#include "check.h"

static uint64_t rng;
static uint32_t next(void) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng >> 33);
}
static long pick(long lo, long hi) { return lo + (long)(next() % (uint32_t)(hi - lo + 1)); }

#define MAXB 4096
typedef struct {
    long off, len; /* bytes, relative to an element's origin */
} Blk;
typedef struct {
    MPI_Datatype t;
    Blk b[MAXB];
    int n;
    MPI_Aint lb, extent, size;
} Ty;

static void finish(Ty *ty) {
    OK(MPI_Type_commit(&ty->t));
    MPI_Aint lb, ext;
    int size;
    OK(MPI_Type_get_extent(ty->t, &lb, &ext));
    OK(MPI_Type_size(ty->t, &size));
    ty->lb = lb;
    ty->extent = ext;
    ty->size = size;
    long sum = 0, lo = 0, hi = 0;
    for (int i = 0; i < ty->n; i++) {
        sum += ty->b[i].len;
        if (i == 0 || ty->b[i].off < lo) lo = ty->b[i].off;
        if (i == 0 || ty->b[i].off + ty->b[i].len > hi) hi = ty->b[i].off + ty->b[i].len;
    }
    CHECK(sum == size, "map by hand holds %ld bytes, MPI_Type_size %d", sum, size);
    CHECK(lb <= lo && lb + ext >= hi, "extent [%ld, %ld) misses the map [%ld, %ld)", (long)lb,
          (long)(lb + ext), lo, hi);
}

/* A leaf: a vector (any stride sign, holes or none) or shuffled indexed blocks. */
static void leaf(Ty *ty, MPI_Datatype base, long u) {
    ty->n = 0;
    if (next() % 2) {
        int nb = (int)pick(1, 6), bl = (int)pick(1, 4);
        long stride = bl + pick(0, 3);
        if (next() % 2) stride = -stride;
        OK(MPI_Type_vector(nb, bl, (int)stride, base, &ty->t));
        for (int i = 0; i < nb; i++) ty->b[ty->n++] = (Blk){i * stride * u, bl * u};
    } else {
        int nb = (int)pick(1, 5), lens[5], disps[5];
        long pos = pick(0, 2);
        for (int i = 0; i < nb; i++) {
            lens[i] = (int)pick(1, 3);
            disps[i] = (int)pos;
            pos += lens[i] + pick(0, 3);
        }
        for (int i = nb - 1; i > 0; i--) { /* type-map order need not be address order */
            int j = (int)pick(0, i), l = lens[i], d = disps[i];
            lens[i] = lens[j], disps[i] = disps[j], lens[j] = l, disps[j] = d;
        }
        OK(MPI_Type_indexed(nb, lens, disps, base, &ty->t));
        for (int i = 0; i < nb; i++) ty->b[ty->n++] = (Blk){disps[i] * u, lens[i] * u};
    }
    finish(ty);
}

/* Appends `count` copies of `in`'s map at `disp`, `in->extent` apart. */
static void append(Ty *out, const Ty *in, long disp, int count) {
    for (int k = 0; k < count; k++)
        for (int i = 0; i < in->n; i++) {
            CHECK(out->n < MAXB, "map too long");
            out->b[out->n++] = (Blk){disp + k * (long)in->extent + in->b[i].off, in->b[i].len};
        }
}

static void make(Ty *ty, MPI_Datatype base, long u, int depth) {
    if (depth == 0) {
        leaf(ty, base, u);
        return;
    }
    static Ty inner_store[4];
    Ty *in = &inner_store[depth];
    make(in, base, u, depth - 1);
    ty->n = 0;
    switch (next() % 3) {
    case 0: { /* a struct: the inner type and a base block past it, either order */
        int c1 = (int)pick(1, 2);
        long d1 = pick(0, 3) * u;
        long d2 = d1 + in->lb + c1 * (long)in->extent + pick(0, 3) * u;
        int bl2 = (int)pick(1, 3);
        MPI_Aint disps[2];
        int lens[2];
        MPI_Datatype types[2];
        Ty blk = {.n = 1};
        blk.b[0] = (Blk){0, bl2 * u};
        blk.extent = bl2 * u;
        if (next() % 2) {
            disps[0] = d1, lens[0] = c1, types[0] = in->t;
            disps[1] = d2, lens[1] = bl2, types[1] = base;
            append(ty, in, d1, c1);
            append(ty, &blk, d2, 1);
        } else {
            disps[0] = d2, lens[0] = bl2, types[0] = base;
            disps[1] = d1, lens[1] = c1, types[1] = in->t;
            append(ty, &blk, d2, 1);
            append(ty, in, d1, c1);
        }
        OK(MPI_Type_create_struct(2, lens, disps, types, &ty->t));
        /* A resized inner type's bounds are sticky: the struct's then ignore the
         * base block's data (the standard's markers) and may not cover it, so
         * copies of the struct could overlap. Resized once more to cover it all. */
        MPI_Aint slb, sext;
        OK(MPI_Type_get_extent(ty->t, &slb, &sext));
        long lo = ty->b[0].off, hi = ty->b[0].off + ty->b[0].len;
        for (int i = 1; i < ty->n; i++) {
            if (ty->b[i].off < lo) lo = ty->b[i].off;
            if (ty->b[i].off + ty->b[i].len > hi) hi = ty->b[i].off + ty->b[i].len;
        }
        if (lo < slb || hi > slb + sext) {
            long nlb = lo < slb ? lo : (long)slb, nub = hi > slb + sext ? hi : (long)(slb + sext);
            MPI_Datatype wide;
            OK(MPI_Type_create_resized(ty->t, nlb, nub - nlb, &wide));
            OK(MPI_Type_free(&ty->t));
            ty->t = wide;
        }
        break;
    }
    case 1: { /* resized wider: holes between elements */
        long lb = in->lb - pick(0, 2) * u;
        long ext = (in->lb + in->extent) - lb + pick(0, 3) * u;
        OK(MPI_Type_create_resized(in->t, lb, ext, &ty->t));
        append(ty, in, 0, 1);
        break;
    }
    default: { /* contiguous repeats */
        int c = (int)pick(2, 3);
        OK(MPI_Type_contiguous(c, in->t, &ty->t));
        append(ty, in, 0, c);
        break;
    }
    }
    OK(MPI_Type_free(&in->t));
    finish(ty);
}

/* Memory for `count` elements of `ty` with 64-byte guards: returns the allocation,
 * sets *base (the buffer argument) and *span. */
static unsigned char *alloc_for(const Ty *ty, int count, unsigned char **base, long *span) {
    long lo = 0, hi = 0;
    for (int i = 0; i < ty->n; i++) {
        if (i == 0 || ty->b[i].off < lo) lo = ty->b[i].off;
        if (i == 0 || ty->b[i].off + ty->b[i].len > hi) hi = ty->b[i].off + ty->b[i].len;
    }
    long ext = ty->extent;
    long first = lo, last = (count - 1) * ext + hi;
    *span = last - first + 128;
    unsigned char *m = malloc((size_t)*span);
    CHECK(m != NULL, "malloc %ld", *span);
    *base = m + 64 - first;
    return m;
}

/* The packed stream's byte `j` is at this offset from the buffer argument. */
static long *offsets(const Ty *ty, int count, long n) {
    long *o = malloc(sizeof(long) * (size_t)(n > 0 ? n : 1));
    CHECK(o != NULL, "malloc");
    long j = 0;
    for (int k = 0; k < count && j < n; k++)
        for (int i = 0; i < ty->n && j < n; i++)
            for (long x = 0; x < ty->b[i].len && j < n; x++)
                o[j++] = k * (long)ty->extent + ty->b[i].off + x;
    CHECK(j == n, "map covers %ld of %ld bytes", j, n);
    return o;
}

static unsigned char pat(int round, long at) { return (unsigned char)(1 + (round * 131 + at * 7 + at / 251) % 251); }

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rng = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    int lenient = argc > 3 && strcmp(argv[3], "lenient") == 0;
    static const long tiers[5][2] = {{1, 40}, {41, 3000}, {3001, 60000}, {70000, 300000}, {900000, 1200000}};
    static Ty st, rt;
    long got_rounds = 0, got_bytes = 0;
    for (int round = 0; round < rounds; round++) {
        int s = (int)pick(0, size - 1), r = (int)pick(0, size - 1);
        int kind = (int)pick(0, 2);
        MPI_Datatype base = kind == 0 ? MPI_BYTE : kind == 1 ? MPI_INT : MPI_DOUBLE;
        long u = kind == 0 ? 1 : kind == 1 ? 4 : 8;
        make(&st, base, u, (int)pick(0, 2));
        make(&rt, base, u, (int)pick(0, 2));
        const long *tier = tiers[pick(0, 4)];
        long target = pick(tier[0], tier[1]);
        int scount = (int)(target / st.size > 0 ? target / st.size : 1);
        long n = scount * (long)st.size;
        int trunc = next() % 6 == 0;
        long rfit = (n + rt.size - 1) / rt.size;
        int rcount = trunc ? (int)(rfit > 1 ? pick(0, rfit - 1) : 0) : (int)(rfit + pick(0, 1));
        long rcap = rcount * (long)rt.size;
        if (rcap >= n) trunc = 0;
        int mode = s == r ? 6 : (int)pick(0, 5);
        int tag = (int)pick(0, 1000);

        unsigned char *sbase, *rbase;
        long sspan, rspan;
        unsigned char *smem = alloc_for(&st, scount, &sbase, &sspan);
        unsigned char *rmem = alloc_for(&rt, rcount > 0 ? rcount : 1, &rbase, &rspan);
        for (long i = 0; i < sspan; i++) smem[i] = pat(round, i);
        memset(rmem, 0xEE, (size_t)rspan);
        long *so = offsets(&st, scount, n);
        unsigned char *stream = malloc((size_t)n);
        CHECK(stream != NULL, "malloc");
        for (long j = 0; j < n; j++) stream[j] = sbase[so[j]];

        if (rank == s) { /* the library's packing agrees with the map by hand */
            int psize, pos = 0;
            OK(MPI_Pack_size(scount, st.t, MPI_COMM_WORLD, &psize));
            unsigned char *packed = malloc((size_t)psize + 1);
            OK(MPI_Pack(sbase, scount, st.t, packed, psize, &pos, MPI_COMM_WORLD));
            CHECK(pos == n && memcmp(packed, stream, (size_t)n) == 0,
                  "round %d: MPI_Pack differs from the map by hand", round);
            free(packed);
        }
        MPI_Status stt;
        int rc = MPI_SUCCESS;
        MPI_Request sr, rr;
        if (rank == s && rank != r) {
            switch (mode) {
            case 1:
                OK(MPI_Isend(sbase, scount, st.t, r, tag, MPI_COMM_WORLD, &sr));
                OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
                break;
            case 2: /* arrives before the receive is posted */
                OK(MPI_Isend(sbase, scount, st.t, r, tag, MPI_COMM_WORLD, &sr));
                MPI_Barrier(MPI_COMM_WORLD);
                OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
                break;
            case 5:
                OK(MPI_Ssend(sbase, scount, st.t, r, tag, MPI_COMM_WORLD));
                break;
            default:
                OK(MPI_Send(sbase, scount, st.t, r, tag, MPI_COMM_WORLD));
            }
        } else if (rank == r && rank != s) {
            switch (mode) {
            case 1:
                OK(MPI_Irecv(rbase, rcount, rt.t, s, tag, MPI_COMM_WORLD, &rr));
                rc = MPI_Wait(&rr, &stt);
                break;
            case 2:
                MPI_Barrier(MPI_COMM_WORLD);
                rc = MPI_Recv(rbase, rcount, rt.t, s, tag, MPI_COMM_WORLD, &stt);
                break;
            case 3: {
                MPI_Status ps;
                /* ANY_TAG, not ANY_SOURCE: a rank idle this round may already have
                 * sent its message of a later one. */
                OK(MPI_Probe(s, MPI_ANY_TAG, MPI_COMM_WORLD, &ps));
                int pc;
                OK(MPI_Get_count(&ps, MPI_BYTE, &pc));
                CHECK(ps.MPI_SOURCE == s && ps.MPI_TAG == tag && pc == n,
                      "round %d: probe saw %d/%d/%d", round, ps.MPI_SOURCE, ps.MPI_TAG, pc);
                rc = MPI_Recv(rbase, rcount, rt.t, ps.MPI_SOURCE, ps.MPI_TAG, MPI_COMM_WORLD, &stt);
                break;
            }
            case 4: {
                MPI_Message m;
                MPI_Status ps;
                OK(MPI_Mprobe(s, tag, MPI_COMM_WORLD, &m, &ps));
                rc = MPI_Mrecv(rbase, rcount, rt.t, &m, &stt);
                break;
            }
            default:
                rc = MPI_Recv(rbase, rcount, rt.t, s, tag, MPI_COMM_WORLD, &stt);
            }
        } else if (rank == s) { /* to itself */
            rc = MPI_Sendrecv(sbase, scount, st.t, r, tag, rbase, rcount, rt.t, s, tag, MPI_COMM_WORLD, &stt);
        } else if (mode == 2) {
            MPI_Barrier(MPI_COMM_WORLD);
        }

        if (rank == r) {
            long want = trunc ? rcap : n;
            if (trunc)
                CHECK(class_of(rc) == MPI_ERR_TRUNCATE, "round %d: %ld bytes into %ld: rc %d", round, n, rcap, rc);
            else
                CHECK(rc == MPI_SUCCESS, "round %d: rc %d", round, rc);
            /* After a truncation the standard leaves the status's count open (MPICH
             * gives 0 or the message's length); myrix's is the bytes delivered,
             * checked unless the third argument is "lenient". */
            int filled = !trunc || !lenient;
            CHECK(!filled || (stt.MPI_SOURCE == s && stt.MPI_TAG == tag), "round %d: status %d/%d", round,
                  stt.MPI_SOURCE, stt.MPI_TAG);
            int cb = (int)want, ce, ct;
            if (filled) {
            OK(MPI_Get_count(&stt, MPI_BYTE, &cb));
            CHECK(cb == want, "round %d: %d bytes counted, %ld expected", round, cb, want);
            long cnt = cb;
            OK(MPI_Get_elements(&stt, base, &ce));
            CHECK(ce == cnt / u, "round %d: %d elements, %ld expected", round, ce, cnt / u);
            OK(MPI_Get_count(&stt, rt.t, &ct));
            CHECK(ct == (cnt % rt.size ? MPI_UNDEFINED : (int)(cnt / rt.size)), "round %d: count %d", round, ct);
            }
            long *ro = offsets(&rt, rcount, want);
            unsigned char *mark = calloc((size_t)rspan, 1);
            for (long j = 0; j < want; j++) {
                long at = ro[j] + (rbase - rmem);
                mark[at] = 1;
                if (!filled) continue; /* MPICH delivers nothing of a truncated message */
                CHECK(rbase[ro[j]] == stream[j], "round %d (mode %d, %ld bytes): packed byte %ld is %u, not %u",
                      round, mode, n, j, rbase[ro[j]], stream[j]);
            }
            for (long i = 0; i < rspan; i++)
                CHECK(mark[i] || rmem[i] == 0xEE, "round %d (mode %d): byte %ld outside the map written", round,
                      mode, i - (rbase - rmem));
            free(mark);
            free(ro);
            got_rounds++;
            got_bytes += want;
        }
        free(so);
        free(stream);
        free(smem);
        free(rmem);
        OK(MPI_Type_free(&st.t));
        OK(MPI_Type_free(&rt.t));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("dtype_random ok %d %ld %ld\n", rank, got_rounds, got_bytes);
    OK(MPI_Finalize());
    return 0;
}
