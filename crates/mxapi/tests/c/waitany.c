/* mx_wait_any and mx_test_any with a mask, on an endpoint opened with a context id
 * (the top 4 match bits) and MX_ERRORS_RETURN as its error handler. */
#include "check.h"

#define CTX_SHIFT 60
#define CTX(c) ((uint64_t)(c) << CTX_SHIFT)
#define CTX_MASK CTX(0xf)
#define TAG_MASK UINT64_C(0xffff)

int main(void)
{
  mx_endpoint_t ep;
  mx_endpoint_addr_t me;
  mx_request_t sreq[6], rreq[6];
  mx_status_t st;
  mx_segment_t seg;
  mx_param_t params[2];
  uint32_t result;
  uint64_t bufs[6], val;
  int i, seen[6] = {0};

  OK(mx_init());
  params[0].key = MX_PARAM_ERROR_HANDLER;
  params[0].val.error_handler = MX_ERRORS_RETURN;
  params[1].key = MX_PARAM_CONTEXT_ID;
  params[1].val.context_id.bits = 4;
  params[1].val.context_id.shift = CTX_SHIFT;
  OK(mx_open_endpoint(0, MX_ANY_ENDPOINT, 7, params, 2, &ep));
  OK(mx_get_endpoint_addr(ep, &me));

  /* Nothing completed yet; a timed wait_any times out. */
  OK(mx_test_any(ep, 0, 0 | CTX_MASK, &st, &result));
  CHECK(result == 0);
  OK(mx_wait_any(ep, 30, 0, CTX_MASK, &st, &result));
  CHECK(result == 0);

  /* Six receives: three in context 1, three in context 2, tags 0..5. */
  for (i = 0; i < 6; i++) {
    uint64_t m = CTX(1 + i / 3) | (uint64_t)i;
    seg.segment_ptr = &bufs[i];
    seg.segment_length = sizeof(bufs[i]);
    OK(mx_irecv(ep, &seg, 1, m, CTX_MASK | TAG_MASK, (void *)(intptr_t)(100 + i), &rreq[i]));
  }
  /* Sends in the reverse order, each carrying its tag. */
  for (i = 5; i >= 0; i--) {
    val = 1000 + i;
    seg.segment_ptr = &val;
    seg.segment_length = sizeof(val);
    OK(mx_isend(ep, &seg, 1, me, CTX(1 + i / 3) | (uint64_t)i, (void *)(intptr_t)(200 + i), &sreq[i]));
  }
  for (i = 0; i < 6; i++) {
    OK(mx_wait(ep, &sreq[i], 5000, &st, &result));
    CHECK(result == 1);
  }
  /* Only context 2's receives, whatever the tag. */
  for (i = 0; i < 3; i++) {
    OK(mx_wait_any(ep, 5000, CTX(2), CTX_MASK, &st, &result));
    CHECK(result == 1 && st.code == MX_STATUS_SUCCESS);
    CHECK((st.match_info & CTX_MASK) == CTX(2));
    int tag = (int)(st.match_info & TAG_MASK);
    CHECK(tag >= 3 && tag < 6 && !seen[tag]);
    CHECK(st.context == (void *)(intptr_t)(100 + tag) && bufs[tag] == (uint64_t)(1000 + tag));
    seen[tag] = 1;
    printf("wait_any context 2: tag %d\n", tag);
  }
  OK(mx_test_any(ep, CTX(2), CTX_MASK, &st, &result));
  CHECK(result == 0);
  /* Then context 1's, by exact match. */
  for (i = 0; i < 3; i++) {
    OK(mx_test_any(ep, CTX(1) | (uint64_t)i, CTX_MASK | TAG_MASK, &st, &result));
    CHECK(result == 1 && st.match_info == (CTX(1) | (uint64_t)i) && bufs[i] == (uint64_t)(1000 + i));
  }
  printf("test_any context 1: tags 0 1 2\n");

  /* Masks that leave out the context bits, or match bits outside the mask. */
  FAILS(MX_BAD_MATCHING_FOR_CONTEXT_ID_MASK, mx_wait_any(ep, 10, 0, TAG_MASK, &st, &result));
  FAILS(MX_BAD_MATCHING_FOR_CONTEXT_ID_MASK, mx_irecv(ep, &seg, 1, 0, 0, NULL, &rreq[0]));
  FAILS(MX_BAD_MATCH_MASK, mx_test_any(ep, 1, CTX_MASK, &st, &result));

  OK(mx_close_endpoint(ep));
  OK(mx_finalize());
  printf("waitany ok\n");
  return 0;
}
