/* Ping-pong between two processes of this host, data verified.
 *   pingpong recv            prints "eid N" and serves one sender
 *   pingpong send HOST EID   HOST as mx_nic_id_to_hostname gives it ("node:0") */
#include "check.h"

#define KEY 0x7070
#define HELLO UINT64_C(0x0000222211110000)
#define ITER 5

static const uint32_t lens[] = {0, 1, 7, 32, 33, 128, 129, 1000, 4096, 32768, 32769, 100000, 1 << 20};
#define NLENS (sizeof(lens) / sizeof(lens[0]))

struct hello {
  uint64_t nic;
  uint32_t eid;
};

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
  CHECK(result == 1 && st.code == MX_STATUS_SUCCESS);
}

static mx_status_t recv_wait(mx_endpoint_t ep, void *p, uint32_t len, uint64_t m)
{
  mx_segment_t seg = {p, len};
  mx_request_t req;
  mx_status_t st;
  uint32_t result = 0;
  OK(mx_irecv(ep, &seg, 1, m, MX_MATCH_MASK_NONE, NULL, &req));
  /* Polling with mx_test, as mx_pingpong does without -w. */
  while (!result)
    OK(mx_test(ep, &req, &st, &result));
  CHECK(st.code == MX_STATUS_SUCCESS && st.xfer_length == len && st.msg_length == len);
  return st;
}

int main(int argc, char **argv)
{
  mx_endpoint_t ep;
  mx_endpoint_addr_t me, peer;
  struct hello h;
  unsigned char *buf = malloc(1 << 20);
  uint64_t nic;
  uint32_t eid, l, i;
  unsigned long total = 0;

  CHECK(buf != NULL && argc >= 2);
  OK(mx_init());
  OK(mx_open_endpoint(0, MX_ANY_ENDPOINT, KEY, NULL, 0, &ep));
  OK(mx_get_endpoint_addr(ep, &me));
  OK(mx_decompose_endpoint_addr(me, &nic, &eid));

  if (strcmp(argv[1], "recv") == 0) {
    char host[MX_MAX_HOSTNAME_LEN];
    mx_status_t st;
    OK(mx_nic_id_to_hostname(nic, host));
    printf("eid %u host %s\n", eid, host);
    fflush(stdout);
    st = recv_wait(ep, &h, sizeof(h), HELLO);
    /* A message's source can be answered before (without) mx_connect. */
    send_wait(ep, &h, sizeof(h), st.source, HELLO + 1);
    OK(mx_connect(ep, h.nic, h.eid, KEY, 5000, &peer));
    /* The connected address and the message's source name the same endpoint. */
    uint64_t n1, n2;
    uint32_t e1, e2;
    OK(mx_decompose_endpoint_addr(peer, &n1, &e1));
    OK(mx_decompose_endpoint_addr(st.source, &n2, &e2));
    CHECK(n1 == n2 && e1 == e2 && e1 == h.eid);
    for (l = 0; l < NLENS; l++)
      for (i = 0; i < ITER; i++) {
        memset(buf, 0, lens[l]);
        recv_wait(ep, buf, lens[l], 100 + l);
        verify(buf, lens[l], l + i);
        /* Replies go to the message's source address. */
        fill(buf, lens[l], l + i + 1);
        send_wait(ep, buf, lens[l], st.source, 200 + l);
        total += lens[l];
      }
    printf("receiver ok: %lu bytes each way\n", total);
  } else {
    uint64_t his;
    CHECK(argc == 4);
    OK(mx_hostname_to_nic_id(argv[2], &his));
    OK(mx_connect(ep, his, (uint32_t)atoi(argv[3]), KEY, 5000, &peer));
    h.nic = nic;
    h.eid = eid;
    send_wait(ep, &h, sizeof(h), peer, HELLO);
    {
      struct hello back;
      recv_wait(ep, &back, sizeof(back), HELLO + 1);
      CHECK(back.nic == nic && back.eid == eid);
    }
    for (l = 0; l < NLENS; l++)
      for (i = 0; i < ITER; i++) {
        fill(buf, lens[l], l + i);
        send_wait(ep, buf, lens[l], peer, 100 + l);
        memset(buf, 0, lens[l]);
        recv_wait(ep, buf, lens[l], 200 + l);
        verify(buf, lens[l], l + i + 1);
        total += lens[l];
      }
    printf("sender ok: %lu bytes each way\n", total);
  }
  OK(mx_close_endpoint(ep));
  OK(mx_finalize());
  free(buf);
  return 0;
}
