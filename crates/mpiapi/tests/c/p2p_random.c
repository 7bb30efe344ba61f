/* Randomized point-to-point over the whole stack. Usage: p2p_random SEED ROUNDS.
 *
 * Every rank draws the same global schedule from one generator seeded by SEED, so
 * each receiver knows what it must get without extra messages: per round a few
 * messages per rank, each (source, destination, communicator, tag, size, Isend or
 * Issend, sent from a vector datatype or not), with sizes from 0 to past the
 * eager/rendezvous switch (65536 by default, MYRIX_MPI_EAGER), up to 1.2 MB. The
 * communicators are the world, a dup of it and a split with the ranks reversed (so
 * ranks and sources differ from world ranks). How a rank receives is its own
 * choice, from a second generator seeded by (SEED, rank): per communicator the
 * receives name source and tag, or take MPI_ANY_SOURCE, MPI_ANY_TAG, both, or
 * named ones first and wildcards after (any of these always leaves a receive for
 * every message, whatever matches first), in a random order, each one blocking,
 * nonblocking (completed by Waitall, Waitany, Waitsome, Testany, Testsome or
 * Testall), after Probe or Iprobe, or by Mprobe/Improbe with Mrecv/Imrecv, into
 * bytes or a strided vector datatype. A receive that can never match (a tag never
 * sent) is posted beside the traffic now and then and cancelled
 * (MPI_Test_cancelled must say so). Rounds are separated by a barrier.
 *
 * Checked: every byte (a message's bytes are a function of (SEED, source, sequence
 * number), so the receiver identifies which message it got from its status and
 * bytes), the status's source and tag against the receive's filter, the count
 * (MPI_Get_count, MPI_Get_elements on the vector type), the gaps of a vector
 * untouched, every message received exactly once, and MPI's non-overtaking rule: of
 * two receives, the one posted first never gets a later message of a sender when it
 * could have matched the earlier one that the second got. Once, before the rounds,
 * an eager and a rendezvous message into short buffers under MPI_ERRORS_RETURN must
 * fail with MPI_ERR_TRUNCATE, the sender succeeding. Prints
 * "p2p_random ok RANK RECEIVED BYTES ORDERED" (ORDERED: the pairs of receives the
 * non-overtaking check applied to); on a mismatch it says what and exits 1. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, round_no = -1, failures;
static uint64_t seed;

#define FAIL(...)                                                                       \
    do {                                                                                \
        if (failures++ < 10) {                                                          \
            fprintf(stderr, "p2p_random: rank %d round %d: ", rank, round_no);          \
            fprintf(stderr, __VA_ARGS__);                                               \
            fprintf(stderr, "\n");                                                      \
        }                                                                               \
    } while (0)

#define OK(call)                                                                        \
    do {                                                                                \
        int rc_ = (call);                                                               \
        if (rc_ != MPI_SUCCESS) {                                                       \
            fprintf(stderr, "p2p_random: rank %d round %d: line %d: %s returned %d\n",  \
                    rank, round_no, __LINE__, #call, rc_);                              \
            MPI_Abort(MPI_COMM_WORLD, 2);                                               \
        }                                                                               \
    } while (0)

static uint64_t mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The schedule every rank draws alike, and this rank's own choices. */
static uint64_t global, local;
static int pick(int n) { return (int)((global = mix(global)) % (uint64_t)n); }
static int lpick(int n) { return (int)((local = mix(local)) % (uint64_t)n); }

enum { NCOMM = 3, NTAG = 4, NEVER_TAG = 30000, VBLK = 8, VITEM = 16, VEXT = 24 };
static MPI_Comm comms[NCOMM];
/* Strided bytes: two blocks of 8 with a gap of 8 between them, extent 24. */
static MPI_Datatype vtype;

static int crank(int c, int w) { return c == 2 ? size - 1 - w : w; }
static int wrank_of(int c, int r) { return c == 2 ? size - 1 - r : r; }

typedef struct {
    int src, dst, comm, tag, len, ssend, vec;
    uint32_t seq;
    int got;
} Msg;

static uint64_t msg_key(const Msg *m) {
    return mix(seed ^ ((uint64_t)m->seq << 24) ^ (uint64_t)m->src);
}

static unsigned char byte_at(uint64_t key, size_t i) {
    return (unsigned char)(mix(key + (i >> 3)) >> (8 * (i & 7)));
}

/* Where byte i of a message lies in a buffer of vtype items. */
static size_t vpos(size_t i) {
    return (i / VITEM) * VEXT + ((i % VITEM) / VBLK) * (2 * VBLK) + i % VBLK;
}

/* Index of the first byte of `b` that differs from message m, or -1. */
static long differs(const unsigned char *b, size_t n, const Msg *m) {
    uint64_t key = msg_key(m);
    for (size_t i = 0; i < n; i++)
        if (b[i] != byte_at(key, i)) return (long)i;
    return -1;
}

/* Sizes across the protocols: empty, inline in one postbox, pool blocks, up to the
 * eager limit, around it and past it (rendezvous; now and then past the 256 KiB pool,
 * up to 1.2 MB). */
static int draw_len(void) {
    switch (pick(10)) {
    case 0: return 0;
    case 1: case 2: return 1 + pick(40);
    case 3: case 4: return 41 + pick(2000);
    case 5: case 6: return 2041 + pick(14000);
    case 7: return 16384 + pick(49150);
    case 8: return 65535 + pick(4);
    default: return pick(4) ? 65539 + pick(100000) : 200000 + pick(1000000);
    }
}

enum { H_RECV, H_IRECV, H_PROBE, H_IPROBE, H_MPROBE, H_IMPROBE, NHOW };
static const char *how_name[NHOW] = {"Recv", "Irecv", "Probe+Recv", "Iprobe+Recv",
                                     "Mprobe+Mrecv", "Improbe+Imrecv"};

typedef struct {
    int comm, fsrc, ftag, how, vec, cap;
    unsigned char *buf;
    size_t buflen;
    int got, ambiguous, probed;
} Recv;

static int filter_takes(const Recv *r, const Msg *m) {
    return (r->fsrc == MPI_ANY_SOURCE || r->fsrc == crank(m->comm, m->src)) &&
           (r->ftag == MPI_ANY_TAG || r->ftag == m->tag);
}

static Msg *msgs;
static int nmsg;
static long long received, received_bytes, ordered;

/* A buffer for a receive of up to `cap` bytes (vtype items when r->vec). */
static void alloc_buf(Recv *r, int cap) {
    r->cap = cap;
    r->buflen = r->vec ? (size_t)((cap + VITEM - 1) / VITEM) * VEXT : (size_t)cap;
    r->buf = malloc(r->buflen ? r->buflen : 1);
    memset(r->buf, 0xEE, r->buflen);
}

static int rcount(const Recv *r) { return r->vec ? (r->cap + VITEM - 1) / VITEM : r->cap; }
static MPI_Datatype rtype(const Recv *r) { return r->vec ? vtype : MPI_BYTE; }

/* Checks a completed receive: filter, count, gaps, bytes; finds which message it got. */
static void finish(Recv *r, MPI_Status *st) {
    int c = r->comm, n = 0;
    if (r->fsrc != MPI_ANY_SOURCE && st->MPI_SOURCE != r->fsrc)
        FAIL("%s from %d: status source %d", how_name[r->how], r->fsrc, st->MPI_SOURCE);
    if (r->ftag != MPI_ANY_TAG && st->MPI_TAG != r->ftag)
        FAIL("%s tag %d: status tag %d", how_name[r->how], r->ftag, st->MPI_TAG);
    if (st->MPI_SOURCE < 0 || st->MPI_SOURCE >= size || st->MPI_TAG < 0 ||
        st->MPI_TAG >= NTAG) {
        FAIL("%s: status source %d tag %d out of range", how_name[r->how], st->MPI_SOURCE,
             st->MPI_TAG);
        return;
    }
    unsigned char *data = r->buf;
    if (r->vec) {
        int items;
        OK(MPI_Get_elements(st, vtype, &n));
        OK(MPI_Get_count(st, vtype, &items));
        int want = n % VITEM ? MPI_UNDEFINED : n / VITEM;
        if (items != want) FAIL("vector receive of %d bytes: count %d, not %d", n, items, want);
        if (n < 0 || n > r->cap) {
            FAIL("vector receive: %d elements into %d", n, r->cap);
            return;
        }
        data = malloc(n ? (size_t)n : 1);
        size_t i = 0, end = (size_t)n ? vpos((size_t)n - 1) : 0;
        for (size_t p = 0; n && p <= end; p++) {
            if (i < (size_t)n && p == vpos(i))
                data[i++] = r->buf[p];
            else if (r->buf[p] != 0xEE)
                FAIL("vector receive of %d bytes: gap byte %zu written", n, p);
        }
    } else {
        OK(MPI_Get_count(st, MPI_BYTE, &n));
        if (n < 0 || n > r->cap) {
            FAIL("%s: count %d into %d bytes", how_name[r->how], n, r->cap);
            return;
        }
    }
    if (r->probed >= 0 && n != r->probed)
        FAIL("%s: probed %d bytes, received %d", how_name[r->how], r->probed, n);
    /* Which message: the first outstanding one of this sender and tag with these
     * bytes. Another one with the same bytes (empty ones, say), outstanding or not,
     * makes the choice a guess: then the ordering check leaves this receive out. */
    int src = wrank_of(c, st->MPI_SOURCE), found = -1, others = 0, near = -1;
    for (int k = 0; k < nmsg; k++) {
        Msg *m = &msgs[k];
        if (m->dst != rank || m->comm != c || m->src != src || m->tag != st->MPI_TAG) continue;
        if (near < 0 && !m->got) near = k;
        if (m->len != n || differs(data, (size_t)n, m) >= 0) continue;
        if (found < 0 && !m->got)
            found = k;
        else
            others++;
    }
    if (found < 0) {
        if (near < 0)
            FAIL("comm %d: %d bytes from %d tag %d: no such message outstanding", c, n, src,
                 st->MPI_TAG);
        else
            FAIL("comm %d: %d bytes from %d tag %d match no outstanding message (next one: "
                 "seq %u, %d bytes, first differing byte %ld)",
                 c, n, src, st->MPI_TAG, msgs[near].seq, msgs[near].len,
                 msgs[near].len == n ? differs(data, (size_t)n, &msgs[near]) : -1L);
    } else {
        msgs[found].got = 1;
        r->got = found;
        r->ambiguous = others > 0;
        received++;
        received_bytes += n;
    }
    if (data != r->buf) free(data);
}

/* After a probe: a receive of exactly the probed message. */
static void recv_probed(Recv *r, MPI_Comm comm, MPI_Status *pst) {
    OK(MPI_Get_count(pst, MPI_BYTE, &r->probed));
    alloc_buf(r, r->probed);
    MPI_Status st;
    OK(MPI_Recv(r->buf, rcount(r), rtype(r), pst->MPI_SOURCE, pst->MPI_TAG, comm, &st));
    if (st.MPI_SOURCE != pst->MPI_SOURCE || st.MPI_TAG != pst->MPI_TAG)
        FAIL("probed source %d tag %d, received source %d tag %d", pst->MPI_SOURCE,
             pst->MPI_TAG, st.MPI_SOURCE, st.MPI_TAG);
    finish(r, &st);
}

/* Completes the nonblocking receives in one of six ways. */
static void complete_recvs(Recv *rs, int *pend, MPI_Request *reqs, int np) {
    MPI_Status *sts = malloc(sizeof(MPI_Status) * (np ? np : 1));
    int *idx = malloc(sizeof(int) * (np ? np : 1));
    switch (lpick(6)) {
    case 0:
        OK(MPI_Waitall(np, reqs, sts));
        for (int i = 0; i < np; i++) finish(&rs[pend[i]], &sts[i]);
        break;
    case 1:
        for (int left = np; left > 0; left--) {
            int i;
            OK(MPI_Waitany(np, reqs, &i, &sts[0]));
            if (i == MPI_UNDEFINED) {
                FAIL("Waitany: no active request with %d left", left);
                break;
            }
            finish(&rs[pend[i]], &sts[0]);
        }
        break;
    case 2:
        for (int left = np; left > 0;) {
            int out;
            OK(MPI_Waitsome(np, reqs, &out, idx, sts));
            if (out == MPI_UNDEFINED || out <= 0) {
                FAIL("Waitsome: %d with %d left", out, left);
                break;
            }
            for (int j = 0; j < out; j++) finish(&rs[pend[idx[j]]], &sts[j]);
            left -= out;
        }
        break;
    case 3:
        for (int left = np; left > 0;) {
            int i, flag = 0;
            OK(MPI_Testany(np, reqs, &i, &flag, &sts[0]));
            if (flag && i == MPI_UNDEFINED) {
                FAIL("Testany: no active request with %d left", left);
                break;
            }
            if (flag) {
                finish(&rs[pend[i]], &sts[0]);
                left--;
            }
        }
        break;
    case 4:
        for (int left = np; left > 0;) {
            int out;
            OK(MPI_Testsome(np, reqs, &out, idx, sts));
            if (out == MPI_UNDEFINED) {
                FAIL("Testsome: no active request with %d left", left);
                break;
            }
            for (int j = 0; j < out; j++) finish(&rs[pend[idx[j]]], &sts[j]);
            left -= out;
        }
        break;
    default: {
        int flag = 0;
        while (!flag) OK(MPI_Testall(np, reqs, &flag, sts));
        for (int i = 0; i < np; i++) finish(&rs[pend[i]], &sts[i]);
    }
    }
    for (int i = 0; i < np; i++)
        if (reqs[i] != MPI_REQUEST_NULL) FAIL("receive request %d not freed", i);
    free(sts);
    free(idx);
}

static void complete_sends(MPI_Request *reqs, int ns) {
    /* A status array, not MPI_STATUSES_IGNORE: gcc's access checks on MPICH's
     * header take that for an array of size 0. */
    MPI_Status *sts = malloc(sizeof(MPI_Status) * (ns ? ns : 1));
    switch (lpick(3)) {
    case 0: OK(MPI_Waitall(ns, reqs, sts)); break;
    case 1:
        for (int left = ns; left > 0; left--) {
            int i;
            OK(MPI_Waitany(ns, reqs, &i, &sts[0]));
        }
        break;
    default: {
        int flag = 0;
        while (!flag) OK(MPI_Testall(ns, reqs, &flag, sts));
    }
    }
    free(sts);
}

/* This rank's receives on communicator c: one per message to it there. */
static int plan_recvs(int c, Recv *rs) {
    int n = 0, cap = 0, mode = lpick(5);
    for (int k = 0; k < nmsg; k++) {
        Msg *m = &msgs[k];
        if (m->dst != rank || m->comm != c) continue;
        if (m->len > cap) cap = m->len;
        Recv *r = &rs[n++];
        memset(r, 0, sizeof *r);
        r->comm = c;
        r->got = r->probed = -1;
        int named = mode == 0 || (mode == 4 && lpick(2));
        r->fsrc = named || mode == 2 ? crank(c, m->src) : MPI_ANY_SOURCE;
        r->ftag = named || mode == 1 ? m->tag : MPI_ANY_TAG;
        r->how = lpick(NHOW);
        r->vec = lpick(5) == 0;
    }
    /* A random order; with mode 4 the named receives first, so no wildcard can take
     * a message a named one needs. */
    for (int i = n - 1; i > 0; i--) {
        int j = lpick(i + 1);
        Recv t = rs[i];
        rs[i] = rs[j];
        rs[j] = t;
    }
    if (mode == 4)
        for (int i = 0, w = 0; i < n; i++)
            if (rs[i].fsrc != MPI_ANY_SOURCE) {
                Recv t = rs[i];
                rs[i] = rs[w];
                rs[w++] = t;
            }
    for (int i = 0; i < n; i++) rs[i].cap = cap;
    return n;
}

static void one_round(void) {
    nmsg = size + pick(2 * size + 1);
    static uint32_t next_seq;
    msgs = calloc((size_t)nmsg, sizeof(Msg));
    for (int k = 0; k < nmsg; k++) {
        Msg *m = &msgs[k];
        m->src = pick(size);
        m->dst = pick(size);
        m->comm = pick(NCOMM);
        m->tag = pick(NTAG);
        /* Half the time the same sender, receiver and communicator as the message
         * before (a stream, with the same tag or not), for the ordering rule to bite. */
        if (k > 0 && pick(2)) {
            m->src = m[-1].src;
            m->dst = m[-1].dst;
            m->comm = m[-1].comm;
            if (pick(2)) m->tag = m[-1].tag;
        }
        m->len = draw_len();
        m->ssend = pick(4) == 0;
        m->vec = pick(6) == 0 && m->len >= VITEM;
        if (m->vec) m->len -= m->len % VITEM;
        m->seq = next_seq++;
    }
    /* Sends, in schedule order (the order the non-overtaking rule speaks of). */
    MPI_Request *sreq = malloc(sizeof(MPI_Request) * (size_t)nmsg);
    unsigned char **sbuf = calloc((size_t)nmsg, sizeof(unsigned char *));
    int ns = 0;
    for (int k = 0; k < nmsg; k++) {
        Msg *m = &msgs[k];
        if (m->src != rank) continue;
        uint64_t key = msg_key(m);
        size_t blen = m->vec ? (size_t)(m->len / VITEM) * VEXT : (size_t)m->len;
        unsigned char *b = sbuf[ns] = malloc(blen ? blen : 1);
        memset(b, 0x77, blen);
        for (size_t i = 0; i < (size_t)m->len; i++) b[m->vec ? vpos(i) : i] = byte_at(key, i);
        int cnt = m->vec ? m->len / VITEM : m->len;
        MPI_Datatype t = m->vec ? vtype : MPI_BYTE;
        int dst = crank(m->comm, m->dst);
        if (m->ssend)
            OK(MPI_Issend(b, cnt, t, dst, m->tag, comms[m->comm], &sreq[ns]));
        else
            OK(MPI_Isend(b, cnt, t, dst, m->tag, comms[m->comm], &sreq[ns]));
        ns++;
    }
    /* Now and then a receive no message can match, beside the traffic. */
    MPI_Request never = MPI_REQUEST_NULL;
    char never_buf[8];
    if (lpick(2)) {
        int c = lpick(NCOMM), s = lpick(size + 1);
        OK(MPI_Irecv(never_buf, 8, MPI_BYTE, s == size ? MPI_ANY_SOURCE : s, NEVER_TAG,
                     comms[c], &never));
    }
    /* The receives: each communicator's in its planned order, interleaved at random. */
    Recv *rs = calloc((size_t)nmsg, sizeof(Recv));
    int start[NCOMM + 1], at[NCOMM], nr = 0;
    for (int c = 0; c < NCOMM; c++) {
        start[c] = nr;
        nr += plan_recvs(c, rs + nr);
        at[c] = start[c];
    }
    start[NCOMM] = nr;
    int *pend = malloc(sizeof(int) * (size_t)(nr ? nr : 1));
    MPI_Request *rreq = malloc(sizeof(MPI_Request) * (size_t)(nr ? nr : 1));
    int *order = malloc(sizeof(int) * (size_t)(nr ? nr : 1));
    int np = 0;
    for (int done = 0; done < nr; done++) {
        int c;
        do c = lpick(NCOMM);
        while (at[c] == start[c + 1]);
        int i = at[c]++;
        order[done] = i;
        Recv *r = &rs[i];
        MPI_Comm comm = comms[c];
        MPI_Status st;
        int flag = 0;
        MPI_Message msg;
        switch (r->how) {
        case H_RECV:
            alloc_buf(r, r->cap);
            OK(MPI_Recv(r->buf, rcount(r), rtype(r), r->fsrc, r->ftag, comm, &st));
            finish(r, &st);
            break;
        case H_IRECV:
            alloc_buf(r, r->cap);
            pend[np] = i;
            OK(MPI_Irecv(r->buf, rcount(r), rtype(r), r->fsrc, r->ftag, comm, &rreq[np++]));
            break;
        case H_PROBE:
            OK(MPI_Probe(r->fsrc, r->ftag, comm, &st));
            recv_probed(r, comm, &st);
            break;
        case H_IPROBE:
            while (!flag) OK(MPI_Iprobe(r->fsrc, r->ftag, comm, &flag, &st));
            recv_probed(r, comm, &st);
            break;
        case H_MPROBE:
            OK(MPI_Mprobe(r->fsrc, r->ftag, comm, &msg, &st));
            OK(MPI_Get_count(&st, MPI_BYTE, &r->probed));
            alloc_buf(r, r->probed);
            OK(MPI_Mrecv(r->buf, rcount(r), rtype(r), &msg, &st));
            if (msg != MPI_MESSAGE_NULL) FAIL("Mrecv left the message handle set");
            finish(r, &st);
            break;
        default:
            while (!flag) OK(MPI_Improbe(r->fsrc, r->ftag, comm, &flag, &msg, &st));
            OK(MPI_Get_count(&st, MPI_BYTE, &r->probed));
            alloc_buf(r, r->probed);
            pend[np] = i;
            OK(MPI_Imrecv(r->buf, rcount(r), rtype(r), &msg, &rreq[np++]));
        }
    }
    complete_recvs(rs, pend, rreq, np);
    if (never != MPI_REQUEST_NULL) {
        MPI_Status st;
        int cancelled = 0;
        OK(MPI_Cancel(&never));
        OK(MPI_Wait(&never, &st));
        OK(MPI_Test_cancelled(&st, &cancelled));
        if (!cancelled) FAIL("a receive of tag %d was not cancelled", NEVER_TAG);
    }
    complete_sends(sreq, ns);
    for (int k = 0; k < nmsg; k++)
        if (msgs[k].dst == rank && !msgs[k].got)
            FAIL("message seq %u from %d (comm %d tag %d, %d bytes) never received",
                 msgs[k].seq, msgs[k].src, msgs[k].comm, msgs[k].tag, msgs[k].len);
    /* Non-overtaking: receive x posted before y never got a later message of a sender
     * than y did, if x could have taken y's. */
    for (int a = 0; a < nr; a++)
        for (int b = a + 1; b < nr; b++) {
            Recv *x = &rs[order[a]], *y = &rs[order[b]];
            if (x->comm != y->comm || x->got < 0 || y->got < 0 || x->ambiguous || y->ambiguous)
                continue;
            Msg *mx = &msgs[x->got], *my = &msgs[y->got];
            if (mx->src != my->src || !filter_takes(x, my)) continue;
            ordered++;
            if (my->seq < mx->seq)
                FAIL("overtaken: comm %d, from %d: %s (src %d tag %d) got seq %u (tag %d), "
                     "%s posted after it got the earlier seq %u (tag %d)",
                     x->comm, mx->src, how_name[x->how], x->fsrc, x->ftag, mx->seq, mx->tag,
                     how_name[y->how], my->seq, my->tag);
        }
    for (int i = 0; i < nr; i++) free(rs[i].buf);
    for (int i = 0; i < ns; i++) free(sbuf[i]);
    free(rs);
    free(pend);
    free(rreq);
    free(order);
    free(sreq);
    free(sbuf);
    free(msgs);
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* An eager and a rendezvous message into short buffers: MPI_ERR_TRUNCATE under
 * MPI_ERRORS_RETURN for the receiver, success for the sender; the communicator
 * works afterwards. Rank 0 sends to rank 1 (to itself when alone). */
static void truncation(void) {
    MPI_Comm tc;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &tc));
    OK(MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN));
    int to = size > 1 ? 1 : 0;
    static unsigned char big[100000], small[1000];
    MPI_Request req[3];
    if (rank == 0) {
        memset(big, 0x42, sizeof big);
        OK(MPI_Isend(big, 100, MPI_BYTE, to, 1, tc, &req[0]));
        OK(MPI_Isend(big, (int)sizeof big, MPI_BYTE, to, 2, tc, &req[1]));
        OK(MPI_Isend(big, 10, MPI_BYTE, to, 3, tc, &req[2]));
    }
    if (rank == to) {
        MPI_Status st;
        int rc = MPI_Recv(small, 50, MPI_BYTE, 0, 1, tc, &st), cls = -1, n = -1;
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_TRUNCATE)
            FAIL("100 bytes into 50: error class %d, not MPI_ERR_TRUNCATE", cls);
        rc = MPI_Recv(small, (int)sizeof small, MPI_BYTE, 0, 2, tc, &st);
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_TRUNCATE)
            FAIL("%zu bytes into %zu: error class %d, not MPI_ERR_TRUNCATE", sizeof big,
                 sizeof small, cls);
        OK(MPI_Recv(small, (int)sizeof small, MPI_BYTE, 0, 3, tc, &st));
        OK(MPI_Get_count(&st, MPI_BYTE, &n));
        if (n != 10 || small[0] != 0x42 || small[9] != 0x42)
            FAIL("after truncation: %d bytes, first %d", n, small[0]);
    }
    if (rank == 0) {
        MPI_Status sts[3];
        int rc = MPI_Waitall(3, req, sts);
        if (rc != MPI_SUCCESS) FAIL("the sender of truncated messages got %d", rc);
    }
    OK(MPI_Comm_free(&tc));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    global = mix(seed);
    local = mix(seed ^ (0x100000000ULL * (uint64_t)(rank + 1)));
    comms[0] = MPI_COMM_WORLD;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &comms[2]));
    int r2;
    OK(MPI_Comm_rank(comms[2], &r2));
    if (r2 != crank(2, rank)) FAIL("split rank %d, not %d", r2, crank(2, rank));
    OK(MPI_Type_vector(2, VBLK, 2 * VBLK, MPI_BYTE, &vtype));
    OK(MPI_Type_commit(&vtype));
    truncation();
    for (round_no = 0; round_no < rounds; round_no++) one_round();
    if (failures) {
        fprintf(stderr, "p2p_random: rank %d: %d mismatch(es), seed %llu\n", rank, failures,
                (unsigned long long)seed);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    printf("p2p_random ok %d %lld %lld %lld\n", rank, received, received_bytes, ordered);
    fflush(stdout);
    OK(MPI_Type_free(&vtype));
    OK(MPI_Comm_free(&comms[1]));
    OK(MPI_Comm_free(&comms[2]));
    OK(MPI_Finalize());
    return 0;
}
