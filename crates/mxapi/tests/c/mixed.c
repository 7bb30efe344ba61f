/* One endpoint serving clients of both kinds at once: a process of its own host
 * (shared memory) and a process of another host (raw Ethernet), data verified.
 *   mixed serve N           prints "eid E", then echoes every message of N clients
 *                           back to its source, and one line per client at the end
 *   mixed client HOST EID T connects to HOST (a peer-table name) endpoint EID and sends
 *                           every length ITER times as client T, verifying the echoes */
#include <time.h>

#include "check.h"

#define KEY 0x3e3e
#define ITER 3
#define ECHO (UINT64_C(1) << 62)
/* A client's last message: its echoes all arrived (and were acknowledged with it). */
#define DONE (UINT64_C(1) << 61)
#define MAXC 8

static const uint32_t lens[] = {0, 1, 7, 32, 128, 129, 1000, 4096, 8192, 9000, 32768, 32769, 100000, 1 << 20};
#define NLENS (sizeof(lens) / sizeof(lens[0]))

static uint64_t match_of(uint32_t tag, uint32_t l, uint32_t i)
{
  return ((uint64_t)tag << 32) | (l << 8) | i;
}

static unsigned seed_of(uint64_t m)
{
  return (unsigned)((m >> 32) * 31 + ((m >> 8) & 0xff) * 3 + (m & 0xff));
}

static void fill(unsigned char *p, uint32_t len, unsigned seed)
{
  uint32_t i;
  for (i = 0; i < len; i++)
    p[i] = pattern(i, seed);
}

static void verify(const unsigned char *p, uint32_t len, unsigned seed)
{
  uint32_t i;
  for (i = 0; i < len; i++)
    if (p[i] != pattern(i, seed)) {
      fprintf(stderr, "data corruption at %u of %u (seed %u)\n", i, len, seed);
      exit(2);
    }
}

static void send_wait(mx_endpoint_t ep, void *p, uint32_t len, mx_endpoint_addr_t to, uint64_t m)
{
  mx_segment_t seg = {p, len};
  mx_request_t req;
  mx_status_t st;
  uint32_t result;
  OK(mx_isend(ep, &seg, 1, to, m, NULL, &req));
  OK(mx_wait(ep, &req, MX_INFINITE, &st, &result));
  if (result != 1 || st.code != MX_STATUS_SUCCESS) {
    fprintf(stderr, "send of %u bytes (match %llx): %s\n", len, (unsigned long long)m,
            mx_strstatus(st.code));
    exit(1);
  }
}

static mx_status_t recv_wait(mx_endpoint_t ep, void *p, uint32_t len, uint64_t m, uint64_t mask)
{
  mx_segment_t seg = {p, len};
  mx_request_t req;
  mx_status_t st;
  uint32_t result = 0;
  OK(mx_irecv(ep, &seg, 1, m, mask, NULL, &req));
  OK(mx_wait(ep, &req, MX_INFINITE, &st, &result));
  CHECK(result == 1 && st.code == MX_STATUS_SUCCESS);
  return st;
}

int main(int argc, char **argv)
{
  mx_endpoint_t ep;
  mx_endpoint_addr_t me, peer;
  unsigned char *buf = malloc(1 << 20);
  uint64_t nic;
  uint32_t eid, l, i;
  unsigned long total = 0;

  CHECK(buf != NULL && argc >= 2);
  OK(mx_init());
  OK(mx_open_endpoint(0, MX_ANY_ENDPOINT, KEY, NULL, 0, &ep));
  OK(mx_get_endpoint_addr(ep, &me));
  OK(mx_decompose_endpoint_addr(me, &nic, &eid));

  if (strcmp(argv[1], "serve") == 0) {
    uint32_t n, c, want, got = 0, done = 0;
    uint32_t count[MAXC] = {0};
    uint64_t nics[MAXC] = {0};
    uint32_t eids[MAXC] = {0};
    unsigned long bytes[MAXC] = {0};
    CHECK(argc == 3);
    n = (uint32_t)atoi(argv[2]);
    CHECK(n >= 1 && n <= MAXC);
    want = n * ITER * NLENS;
    printf("eid %u\n", eid);
    fflush(stdout);
    while (got < want || done < n) {
      /* Any message (no bit of the match info compared). */
      mx_status_t st = recv_wait(ep, buf, 1 << 20, 0, 0);
      uint64_t m = st.match_info;
      if (m & DONE) {
        CHECK(st.msg_length == 0);
        done++;
        continue;
      }
      uint32_t tag = (uint32_t)(m >> 32), li = (uint32_t)(m >> 8) & 0xff;
      uint64_t from_nic;
      uint32_t from_eid;
      CHECK(tag >= 1 && tag <= n && li < NLENS && st.msg_length == lens[li]);
      verify(buf, st.xfer_length, seed_of(m));
      OK(mx_decompose_endpoint_addr(st.source, &from_nic, &from_eid));
      c = tag - 1;
      /* Every message of one client comes from one NIC and endpoint. */
      CHECK(count[c] == 0 || (nics[c] == from_nic && eids[c] == from_eid));
      nics[c] = from_nic;
      eids[c] = from_eid;
      count[c]++;
      bytes[c] += st.xfer_length;
      /* The echo, to the message's source, with the next seed. */
      fill(buf, st.xfer_length, seed_of(m) + 1);
      send_wait(ep, buf, st.xfer_length, st.source, m | ECHO);
      got++;
    }
    for (c = 0; c < n; c++) {
      char host[MX_MAX_HOSTNAME_LEN];
      if (mx_nic_id_to_hostname(nics[c], host) != MX_SUCCESS)
        strcpy(host, "?");
      printf("client %u: %u messages, %lu bytes, from %s (nic %012llx) endpoint %u\n", c + 1,
             count[c], bytes[c], host, (unsigned long long)nics[c], eids[c]);
    }
    /* A client's "done" is acknowledged once it is here; should that acknowledgement
       be lost, the client sends it again: stay a while to acknowledge it again. */
    {
      struct timespec t0, t;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      do {
        OK(mx_progress(ep));
        clock_gettime(CLOCK_MONOTONIC, &t);
      } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 1500);
    }
    printf("server ok\n");
  } else {
    uint64_t his;
    uint32_t tag;
    CHECK(argc == 5 && strcmp(argv[1], "client") == 0);
    tag = (uint32_t)atoi(argv[4]);
    OK(mx_hostname_to_nic_id(argv[2], &his));
    OK(mx_connect(ep, his, (uint32_t)atoi(argv[3]), KEY, 10000, &peer));
    for (i = 0; i < ITER; i++)
      for (l = 0; l < NLENS; l++) {
        uint64_t m = match_of(tag, l, i);
        fill(buf, lens[l], seed_of(m));
        send_wait(ep, buf, lens[l], peer, m);
        memset(buf, 0, lens[l]);
        {
          mx_status_t st = recv_wait(ep, buf, lens[l], m | ECHO, MX_MATCH_MASK_NONE);
          CHECK(st.xfer_length == lens[l]);
        }
        verify(buf, lens[l], seed_of(m) + 1);
        total += lens[l];
      }
    /* Without it the acknowledgement of the last echo could be lost after this process
       ended, and the server would resend the echo to nobody. */
    send_wait(ep, buf, 0, peer, DONE | match_of(tag, 0, 0));
    printf("client %u ok: %lu bytes each way\n", tag, total);
  }
  OK(mx_close_endpoint(ep));
  OK(mx_finalize());
  free(buf);
  return 0;
}
