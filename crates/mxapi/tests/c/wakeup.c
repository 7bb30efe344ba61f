/* mx_wakeup ends the blocking calls of other threads: a wait on a receive and a
 * probe, both with MX_INFINITE, return MX_SUCCESS with *result = 0. The endpoint
 * stays usable by the other thread while they block. */
#include <pthread.h>
#include <unistd.h>
#include "check.h"

static mx_endpoint_t ep;
static volatile int started;

static void *waiter(void *arg)
{
  mx_request_t req;
  mx_status_t st;
  mx_segment_t seg = {NULL, 0};
  uint32_t result = 7;
  (void)arg;
  OK(mx_irecv(ep, &seg, 1, 0x77, MX_MATCH_MASK_NONE, NULL, &req));
  __sync_fetch_and_add(&started, 1);
  OK(mx_wait(ep, &req, MX_INFINITE, &st, &result));
  CHECK(result == 0);
  printf("wait woke up\n");
  return NULL;
}

static void *prober(void *arg)
{
  mx_status_t st;
  uint32_t result = 7;
  (void)arg;
  __sync_fetch_and_add(&started, 1);
  OK(mx_probe(ep, MX_INFINITE, 0x78, MX_MATCH_MASK_NONE, &st, &result));
  CHECK(result == 0);
  printf("probe woke up\n");
  return NULL;
}

int main(void)
{
  pthread_t a, b;
  mx_endpoint_addr_t me;
  mx_request_t req;
  mx_status_t st;
  mx_segment_t seg;
  uint32_t result;
  char x = 'x';

  OK(mx_init());
  OK(mx_open_endpoint(0, MX_ANY_ENDPOINT, 9, NULL, 0, &ep));
  OK(mx_get_endpoint_addr(ep, &me));
  CHECK(pthread_create(&a, NULL, waiter, NULL) == 0);
  CHECK(pthread_create(&b, NULL, prober, NULL) == 0);
  while (started < 2)
    usleep(1000);
  usleep(100000);
  /* The endpoint is not held by the blocked threads. */
  seg.segment_ptr = &x;
  seg.segment_length = 1;
  OK(mx_isend(ep, &seg, 1, me, 0x79, NULL, &req));
  OK(mx_wait(ep, &req, 5000, &st, &result));
  CHECK(result == 1);
  printf("sent while two threads block\n");
  OK(mx_wakeup(ep));
  CHECK(pthread_join(a, NULL) == 0 && pthread_join(b, NULL) == 0);
  OK(mx_close_endpoint(ep));
  OK(mx_finalize());
  printf("wakeup ok\n");
  return 0;
}
