/* Checks myriexpress.h against MX's ABI on LP64: every type's size and layout and
 * every numeric value. Compiling is the test (_Static_assert); running prints the
 * values and links every symbol the header declares. */
#include <stddef.h>
#include <stdio.h>
#include <myriexpress.h>
#include <mx_extensions.h>

#define SA(cond) _Static_assert(cond, #cond)
#define EQ(name, value) SA((name) == (value))

SA(sizeof(void *) == 8);
SA(sizeof(mx_endpoint_addr_t) == 16);
SA(MX_SIZEOF_ADDR == 16);
SA(sizeof(mx_segment_t) == 16);
SA(offsetof(mx_segment_t, segment_ptr) == 0);
SA(offsetof(mx_segment_t, segment_length) == 8);
SA(sizeof(mx_status_t) == 48);
SA(offsetof(mx_status_t, code) == 0);
SA(offsetof(mx_status_t, source) == 8);
SA(offsetof(mx_status_t, match_info) == 24);
SA(offsetof(mx_status_t, msg_length) == 32);
SA(offsetof(mx_status_t, xfer_length) == 36);
SA(offsetof(mx_status_t, context) == 40);
SA(sizeof(mx_endpoint_t) == 8);
SA(sizeof(mx_request_t) == 8);
SA(sizeof(mx_return_t) == 4);
SA(sizeof(mx_status_code_t) == 4);
SA(sizeof(mx_param_t) == 16);
SA(offsetof(mx_param_t, val) == 8);
SA(offsetof(mx_param_t, val.context_id.bits) == 8);
SA(offsetof(mx_param_t, val.context_id.shift) == 9);

EQ(MX_API, 0x301);
EQ(MX_ANY_NIC, 0xffffffffU);
EQ(MX_ANY_ENDPOINT, 0xffffffffU);
EQ(MX_MAX_SEGMENTS, 256);
EQ(MX_INFINITE, 0);
EQ(MX_MATCH_MASK_NONE, ~(uint64_t)0);
EQ(MX_MAX_HOSTNAME_LEN, 80);
EQ(MX_MAX_STR_LEN, 128);
EQ(MX_CONTEXT_ID_BITS_MAX, 16);
EQ(MX_HAS_ICONNECT_V2, 1);

EQ(MX_SUCCESS, 0); EQ(MX_BAD_BAD_BAD, 1); EQ(MX_FAILURE, 2); EQ(MX_ALREADY_INITIALIZED, 3);
EQ(MX_NOT_INITIALIZED, 4); EQ(MX_NO_DEV, 5); EQ(MX_NO_DRIVER, 6); EQ(MX_NO_PERM, 7);
EQ(MX_BOARD_UNKNOWN, 8); EQ(MX_BAD_ENDPOINT, 9); EQ(MX_BAD_SEG_LIST, 10); EQ(MX_BAD_SEG_MEM, 11);
EQ(MX_BAD_SEG_CNT, 12); EQ(MX_BAD_REQUEST, 13); EQ(MX_BAD_MATCH_MASK, 14); EQ(MX_NO_RESOURCES, 15);
EQ(MX_BAD_ADDR_LIST, 16); EQ(MX_BAD_ADDR_COUNT, 17); EQ(MX_BAD_ROOT, 18); EQ(MX_NOT_COMPLETED, 19);
EQ(MX_BUSY, 20); EQ(MX_BAD_INFO_KEY, 21); EQ(MX_BAD_INFO_VAL, 22); EQ(MX_BAD_NIC, 23);
EQ(MX_BAD_PARAM_LIST, 24); EQ(MX_BAD_PARAM_NAME, 25); EQ(MX_BAD_PARAM_VAL, 26);
EQ(MX_BAD_HOSTNAME_ARGS, 27); EQ(MX_HOST_NOT_FOUND, 28); EQ(MX_REQUEST_PENDING, 29);
EQ(MX_TIMEOUT, 30); EQ(MX_NO_MATCH, 31); EQ(MX_BAD_ENDPOINT_ID, 32); EQ(MX_CONNECTION_FAILED, 33);
EQ(MX_BAD_CONNECTION_KEY, 34); EQ(MX_BAD_INFO_LENGTH, 35); EQ(MX_NIC_NOT_FOUND, 36);
EQ(MX_BAD_KERNEL_VERSION, 37); EQ(MX_BAD_LIB_VERSION, 38); EQ(MX_NIC_DEAD, 39);
EQ(MX_CANCEL_NOT_SUPPORTED, 40); EQ(MX_CLOSE_IN_HANDLER, 41);
EQ(MX_BAD_MATCHING_FOR_CONTEXT_ID_MASK, 42); EQ(MX_NOT_SUPPORTED_WITH_CONTEXT_ID, 43);

EQ(MX_STATUS_SUCCESS, 0); EQ(MX_STATUS_PENDING, 1); EQ(MX_STATUS_BUFFERED, 2);
EQ(MX_STATUS_REJECTED, 3); EQ(MX_STATUS_TIMEOUT, 4); EQ(MX_STATUS_TRUNCATED, 5);
EQ(MX_STATUS_CANCELLED, 6); EQ(MX_STATUS_ENDPOINT_UNKNOWN, 7); EQ(MX_STATUS_ENDPOINT_CLOSED, 8);
EQ(MX_STATUS_ENDPOINT_UNREACHABLE, 9); EQ(MX_STATUS_BAD_SESSION, 10); EQ(MX_STATUS_BAD_KEY, 11);
EQ(MX_STATUS_BAD_ENDPOINT, 12); EQ(MX_STATUS_BAD_RDMAWIN, 13); EQ(MX_STATUS_ABORTED, 14);
EQ(MX_STATUS_EVENTQ_FULL, 15); EQ(MX_STATUS_NO_RESOURCES, 16);

EQ(MX_PARAM_ERROR_HANDLER, 0); EQ(MX_PARAM_UNEXP_QUEUE_MAX, 1); EQ(MX_PARAM_CONTEXT_ID, 2);

EQ(MX_NIC_COUNT, 1); EQ(MX_NIC_IDS, 2); EQ(MX_MAX_NATIVE_ENDPOINTS, 3); EQ(MX_NATIVE_REQUESTS, 4);
EQ(MX_COUNTERS_COUNT, 5); EQ(MX_COUNTERS_LABELS, 6); EQ(MX_COUNTERS_VALUES, 7);
EQ(MX_PRODUCT_CODE, 8); EQ(MX_PART_NUMBER, 9); EQ(MX_SERIAL_NUMBER, 10); EQ(MX_PORT_COUNT, 11);
EQ(MX_PIO_SEND_MAX, 12); EQ(MX_COPY_SEND_MAX, 13); EQ(MX_NUMA_NODE, 14); EQ(MX_NET_TYPE, 15);
EQ(MX_LINE_SPEED, 16);
EQ(MX_NET_MYRI, 0); EQ(MX_NET_ETHER, 1);
EQ(MX_SPEED_2G, 0); EQ(MX_SPEED_10G, 1); EQ(MX_SPEED_OPEN_MX, 2);
EQ(MX_RECV_CONTINUE, 0); EQ(MX_RECV_FINISHED, 1);

/* Every declared function, so a missing symbol fails the link. */
static void *const symbols[] = {
  (void *)mx__init_api, (void *)mx_finalize, (void *)mx_set_error_handler,
  (void *)mx_open_endpoint, (void *)mx_close_endpoint, (void *)mx_wakeup,
  (void *)mx_disable_progression, (void *)mx_reenable_progression, (void *)mx_progress,
  (void *)mx_isend, (void *)mx_issend, (void *)mx_irecv, (void *)mx_cancel, (void *)mx_forget,
  (void *)mx_test, (void *)mx_wait, (void *)mx_test_any, (void *)mx_wait_any, (void *)mx_ipeek,
  (void *)mx_peek, (void *)mx_iprobe, (void *)mx_probe, (void *)mx_ibuffered, (void *)mx_context,
  (void *)mx_get_info, (void *)mx_hostname_to_nic_id, (void *)mx_board_number_to_nic_id,
  (void *)mx_nic_id_to_board_number, (void *)mx_nic_id_to_hostname, (void *)mx_connect,
  (void *)mx_iconnect, (void *)mx_disconnect, (void *)mx_decompose_endpoint_addr,
  (void *)mx_decompose_endpoint_addr2, (void *)mx_get_endpoint_addr,
  (void *)mx_set_endpoint_addr_context, (void *)mx_get_endpoint_addr_context,
  (void *)mx_register_unexp_handler, (void *)mx_set_request_timeout, (void *)mx_strerror,
  (void *)mx_strstatus, (void *)mx_register_unexp_callback, (void *)mx_iput, (void *)mx_iget,
  (void *)mx_buffered,
};

int main(void)
{
  size_t i;
  for (i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++)
    if (!symbols[i])
      return 1;
  if (!MX_ERRORS_ARE_FATAL || !MX_ERRORS_RETURN || MX_ERRORS_ARE_FATAL == MX_ERRORS_RETURN)
    return 2;
  printf("sizeof mx_endpoint_addr_t %zu\n", sizeof(mx_endpoint_addr_t));
  printf("sizeof mx_segment_t %zu\n", sizeof(mx_segment_t));
  printf("sizeof mx_status_t %zu: code@%zu source@%zu match_info@%zu msg_length@%zu "
         "xfer_length@%zu context@%zu\n", sizeof(mx_status_t), offsetof(mx_status_t, code),
         offsetof(mx_status_t, source), offsetof(mx_status_t, match_info),
         offsetof(mx_status_t, msg_length), offsetof(mx_status_t, xfer_length),
         offsetof(mx_status_t, context));
  printf("MX_API %#x, %zu functions linked\n", MX_API, sizeof(symbols) / sizeof(symbols[0]));
  for (i = 0; i <= MX_NOT_SUPPORTED_WITH_CONTEXT_ID; i++)
    printf("return %zu: %s\n", i, mx_strerror((mx_return_t)i));
  for (i = 0; i <= MX_STATUS_NO_RESOURCES; i++)
    printf("status %zu: %s\n", i, mx_strstatus((mx_status_code_t)i));
  printf("abi ok\n");
  return 0;
}
