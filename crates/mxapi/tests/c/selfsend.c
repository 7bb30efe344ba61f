/* One process sending to its own address without mx_connect: gathered sends,
 * scattered receives, truncation, synchronous sends, probe, peek, cancel, contexts,
 * address contexts and the naming calls. */
#include "check.h"

#define KEY 0x5e1f

static int handler_calls;

/* Finishes (drops) messages with match 0x99, leaves the others queued. */
static mx_unexp_handler_action_t unexp(void *ctx, mx_endpoint_addr_t source, uint64_t match,
                                       uint32_t length, void *data)
{
  uint64_t nic;
  uint32_t eid;
  (void)data;
  CHECK(ctx == (void *)0x5555 && length == 10);
  OK(mx_decompose_endpoint_addr(source, &nic, &eid));
  handler_calls++;
  return match == 0x99 ? MX_RECV_FINISHED : MX_RECV_CONTINUE;
}

int main(void)
{
  mx_endpoint_t ep;
  mx_endpoint_addr_t me;
  mx_request_t sreq, rreq, req;
  mx_status_t st;
  mx_segment_t ss[2], rs[3];
  uint32_t result, eid, board, count;
  uint64_t nic, nic2, ids[16];
  char a[3], b[1], c[100], src[60], host[MX_MAX_HOSTNAME_LEN];
  void *ctx;
  size_t i;

  OK(mx_init());
  OK(mx_open_endpoint(MX_ANY_NIC, MX_ANY_ENDPOINT, KEY, NULL, 0, &ep));
  OK(mx_get_endpoint_addr(ep, &me));
  OK(mx_decompose_endpoint_addr(me, &nic, &eid));
  CHECK(nic != 0 && nic < (UINT64_C(1) << 48));

  /* Naming: board 0 is ours; its host name maps back to its NIC id. */
  OK(mx_board_number_to_nic_id(0, &nic2));
  CHECK(nic2 == nic);
  OK(mx_nic_id_to_board_number(nic, &board));
  CHECK(board == 0);
  OK(mx_nic_id_to_hostname(nic, host));
  CHECK(strchr(host, ':') != NULL);
  OK(mx_hostname_to_nic_id(host, &nic2));
  CHECK(nic2 == nic);
  OK(mx_get_info(ep, MX_NIC_COUNT, NULL, 0, &count, sizeof(count)));
  CHECK(count >= 1 && count < 16);
  memset(ids, 0xff, sizeof(ids));
  OK(mx_get_info(ep, MX_NIC_IDS, NULL, 0, ids, sizeof(ids)));
  CHECK(ids[0] == nic && ids[count] == 0);
  printf("board 0: %s nic %012" PRIx64 " endpoint %u, %u boards\n", host, nic, eid, count);

  /* Two send segments gathered into three receive segments (one empty). */
  for (i = 0; i < sizeof(src); i++)
    src[i] = (char)pattern(i, 1);
  memset(a, 0, sizeof(a)); memset(c, 0, sizeof(c));
  rs[0].segment_ptr = a; rs[0].segment_length = sizeof(a);
  rs[1].segment_ptr = b; rs[1].segment_length = 0;
  rs[2].segment_ptr = c; rs[2].segment_length = sizeof(c);
  OK(mx_irecv(ep, rs, 3, 0x42, MX_MATCH_MASK_NONE, (void *)0x1111, &rreq));
  OK(mx_context(&rreq, &ctx));
  CHECK(ctx == (void *)0x1111);
  ss[0].segment_ptr = src; ss[0].segment_length = 10;
  ss[1].segment_ptr = src + 10; ss[1].segment_length = 50;
  OK(mx_isend(ep, ss, 2, me, 0x42, (void *)0x2222, &sreq));
  OK(mx_ibuffered(ep, &sreq, &result));
  CHECK(result == 1);
  OK(mx_wait(ep, &sreq, 5000, &st, &result));
  CHECK(result == 1 && st.code == MX_STATUS_SUCCESS && st.context == (void *)0x2222);
  OK(mx_wait(ep, &rreq, 5000, &st, &result));
  CHECK(result == 1 && st.code == MX_STATUS_SUCCESS);
  CHECK(st.msg_length == 60 && st.xfer_length == 60 && st.match_info == 0x42);
  CHECK(st.context == (void *)0x1111);
  OK(mx_decompose_endpoint_addr(st.source, &nic2, &eid));
  CHECK(nic2 == nic);
  CHECK(memcmp(a, src, 3) == 0 && memcmp(c, src + 3, 57) == 0 && c[57] == 0);
  printf("gathered 2 segments into 3: 60 bytes ok\n");

  /* The source address works for replies, and carries a context. */
  OK(mx_set_endpoint_addr_context(st.source, (void *)0x3333));
  OK(mx_get_endpoint_addr_context(st.source, &ctx));
  CHECK(ctx == (void *)0x3333);

  /* A receive shorter than the message is truncated. */
  rs[0].segment_ptr = c; rs[0].segment_length = 4;
  OK(mx_irecv(ep, rs, 1, 0x43, MX_MATCH_MASK_NONE, NULL, &rreq));
  ss[0].segment_ptr = src; ss[0].segment_length = 10;
  OK(mx_issend(ep, ss, 1, st.source, 0x43, NULL, &sreq));
  OK(mx_wait(ep, &rreq, 5000, &st, &result));
  CHECK(result == 1 && st.code == MX_STATUS_TRUNCATED && st.msg_length == 10 && st.xfer_length == 4);
  OK(mx_wait(ep, &sreq, 5000, &st, &result));
  CHECK(result == 1 && st.code == MX_STATUS_SUCCESS);
  printf("truncated: %s, 4 of 10 bytes\n", mx_strstatus(MX_STATUS_TRUNCATED));

  /* An unexpected message is probed, then received; peek finds the completion. */
  OK(mx_isend(ep, ss, 1, me, 0x44, NULL, &sreq));
  OK(mx_wait(ep, &sreq, 5000, &st, &result));
  OK(mx_probe(ep, 5000, 0x44, MX_MATCH_MASK_NONE, &st, &result));
  CHECK(result == 1 && st.msg_length == 10 && st.match_info == 0x44);
  rs[0].segment_ptr = c; rs[0].segment_length = sizeof(c);
  OK(mx_irecv(ep, rs, 1, 0x44, MX_MATCH_MASK_NONE, (void *)0x4444, &rreq));
  OK(mx_peek(ep, 5000, &req, &result));
  CHECK(result == 1 && req == rreq);
  OK(mx_test(ep, &req, &st, &result));
  CHECK(result == 1 && st.context == (void *)0x4444 && memcmp(c, src, 10) == 0);
  OK(mx_iprobe(ep, 0x44, MX_MATCH_MASK_NONE, &st, &result));
  CHECK(result == 0);
  printf("probe, peek, test ok\n");

  /* A pending receive is cancelled; a wait with a timeout times out. */
  OK(mx_irecv(ep, rs, 1, 0x45, MX_MATCH_MASK_NONE, NULL, &rreq));
  OK(mx_wait(ep, &rreq, 20, &st, &result));
  CHECK(result == 0);
  OK(mx_cancel(ep, &rreq, &result));
  CHECK(result == 1);
  printf("cancelled a pending receive\n");

  /* The unexpected handler sees messages no receive was posted for. */
  OK(mx_register_unexp_handler(ep, unexp, (void *)0x5555));
  OK(mx_isend(ep, ss, 1, me, 0x99, NULL, &sreq));
  OK(mx_wait(ep, &sreq, 5000, &st, &result));
  OK(mx_isend(ep, ss, 1, me, 0x98, NULL, &sreq));
  OK(mx_wait(ep, &sreq, 5000, &st, &result));
  OK(mx_probe(ep, 5000, 0x98, MX_MATCH_MASK_NONE, &st, &result));
  CHECK(result == 1);
  OK(mx_iprobe(ep, 0x99, MX_MATCH_MASK_NONE, &st, &result));
  CHECK(result == 0 && handler_calls == 2);
  OK(mx_register_unexp_handler(ep, NULL, NULL));
  OK(mx_irecv(ep, rs, 1, 0x98, MX_MATCH_MASK_NONE, NULL, &rreq));
  OK(mx_wait(ep, &rreq, 5000, &st, &result));
  CHECK(result == 1 && st.msg_length == 10);
  OK(mx_test_any(ep, 0, 0, &st, &result));
  CHECK(result == 0);
  printf("unexpected handler: 2 calls, 1 message finished\n");

  /* After mx_disconnect, one's own address works again (it reconnects). */
  OK(mx_disconnect(ep, me));
  OK(mx_isend(ep, ss, 1, me, 0x46, NULL, &sreq));
  OK(mx_irecv(ep, rs, 1, 0x46, MX_MATCH_MASK_NONE, NULL, &rreq));
  OK(mx_wait(ep, &rreq, 5000, &st, &result));
  CHECK(result == 1 && st.msg_length == 10);
  OK(mx_wait(ep, &sreq, 5000, &st, &result));
  CHECK(result == 1);
  printf("disconnected and sent again\n");

  OK(mx_close_endpoint(ep));
  OK(mx_finalize());
  printf("selfsend ok\n");
  return 0;
}
