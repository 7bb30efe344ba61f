/*
 * myriexpress.h: the MX (Myrinet Express) C interface of myrix.
 *
 * Source compatible with programs written for Myricom's MX and for Open-MX, and
 * binary compatible with their ABI on LP64 Linux: every type's size and layout and
 * every numeric value below is MX's (crates/mxapi/tests/c/abi.c checks them).
 * The implementation is the Rust crate crates/mxapi (libmyriexpress.so); see
 * docs/mxapi.md for what is supported and how it differs.
 *
 * Build a program with:  cc prog.c $(pkg-config --cflags --libs myriexpress)
 */
#ifndef MYRIEXPRESS_H
#define MYRIEXPRESS_H

#include <stdint.h>
#include <inttypes.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The API version a program is compiled for; mx_init() passes it to the library. */
#define MX_API 0x301

/* Room for one counter label (mx_get_info MX_COUNTERS_LABELS). */
#define MX_MAX_STR_LEN 128

/* An open endpoint: an opaque handle, never dereferenced by programs. */
typedef struct mx_endpoint *mx_endpoint_t;

/* A request in flight: an opaque handle. */
typedef union mx_request *mx_request_t;

/* The address of a (possibly remote) endpoint: 16 opaque bytes, passed by value. */
#define MX_SIZEOF_ADDR 16
typedef struct {
  uint64_t stuff[MX_SIZEOF_ADDR / sizeof(uint64_t)];
} mx_endpoint_addr_t;

/* Wildcards for mx_open_endpoint's board and endpoint numbers. */
#define MX_ANY_NIC 0xffffffffU
#define MX_ANY_ENDPOINT 0xffffffffU

/* One piece of a message: a buffer and its length. */
typedef void *mx_segment_ptr_t;
typedef struct {
  mx_segment_ptr_t segment_ptr;
  uint32_t segment_length;
} mx_segment_t;

/* At most this many segments in one send or receive. */
#define MX_MAX_SEGMENTS 256

/* A timeout of 0 milliseconds means "wait for ever". */
#define MX_INFINITE 0

/* What a call returns. */
enum mx_return_code {
  MX_SUCCESS = 0,
  MX_BAD_BAD_BAD = 1,
  MX_FAILURE = 2,
  MX_ALREADY_INITIALIZED = 3,
  MX_NOT_INITIALIZED = 4,
  MX_NO_DEV = 5,
  MX_NO_DRIVER = 6,
  MX_NO_PERM = 7,
  MX_BOARD_UNKNOWN = 8,
  MX_BAD_ENDPOINT = 9,
  MX_BAD_SEG_LIST = 10,
  MX_BAD_SEG_MEM = 11,
  MX_BAD_SEG_CNT = 12,
  MX_BAD_REQUEST = 13,
  MX_BAD_MATCH_MASK = 14,
  MX_NO_RESOURCES = 15,
  MX_BAD_ADDR_LIST = 16,
  MX_BAD_ADDR_COUNT = 17,
  MX_BAD_ROOT = 18,
  MX_NOT_COMPLETED = 19,
  MX_BUSY = 20,
  MX_BAD_INFO_KEY = 21,
  MX_BAD_INFO_VAL = 22,
  MX_BAD_NIC = 23,
  MX_BAD_PARAM_LIST = 24,
  MX_BAD_PARAM_NAME = 25,
  MX_BAD_PARAM_VAL = 26,
  MX_BAD_HOSTNAME_ARGS = 27,
  MX_HOST_NOT_FOUND = 28,
  MX_REQUEST_PENDING = 29,
  MX_TIMEOUT = 30,
  MX_NO_MATCH = 31,
  MX_BAD_ENDPOINT_ID = 32,
  MX_CONNECTION_FAILED = 33,
  MX_BAD_CONNECTION_KEY = 34,
  MX_BAD_INFO_LENGTH = 35,
  MX_NIC_NOT_FOUND = 36,
  MX_BAD_KERNEL_VERSION = 37,
  MX_BAD_LIB_VERSION = 38,
  MX_NIC_DEAD = 39,
  MX_CANCEL_NOT_SUPPORTED = 40,
  MX_CLOSE_IN_HANDLER = 41,
  MX_BAD_MATCHING_FOR_CONTEXT_ID_MASK = 42,
  MX_NOT_SUPPORTED_WITH_CONTEXT_ID = 43
};
typedef enum mx_return_code mx_return_t;

/* Endpoint parameters given to mx_open_endpoint. */
enum mx_param_key {
  MX_PARAM_ERROR_HANDLER = 0,
  MX_PARAM_UNEXP_QUEUE_MAX = 1,
  MX_PARAM_CONTEXT_ID = 2
};
typedef enum mx_param_key mx_param_key_t;

/* An error handler: called with a description and the code; what it returns is
   what the failing call returns. */
typedef mx_return_t (*mx_error_handler_t)(char *str, mx_return_t ret);

/* At most this many match bits select a context (MX_PARAM_CONTEXT_ID). */
#define MX_CONTEXT_ID_BITS_MAX 16

typedef struct {
  mx_param_key_t key;
  union {
    mx_error_handler_t error_handler;
    uint32_t unexp_queue_max;
    struct {
      uint8_t bits;
      uint8_t shift;
    } context_id;
  } val;
} mx_param_t;

/* How a request ended (mx_status_t.code). */
enum mx_status_code {
  MX_STATUS_SUCCESS = 0,
  MX_STATUS_PENDING = 1,
  MX_STATUS_BUFFERED = 2,
  MX_STATUS_REJECTED = 3,
  MX_STATUS_TIMEOUT = 4,
  MX_STATUS_TRUNCATED = 5,
  MX_STATUS_CANCELLED = 6,
  MX_STATUS_ENDPOINT_UNKNOWN = 7,
  MX_STATUS_ENDPOINT_CLOSED = 8,
  MX_STATUS_ENDPOINT_UNREACHABLE = 9,
  MX_STATUS_BAD_SESSION = 10,
  MX_STATUS_BAD_KEY = 11,
  MX_STATUS_BAD_ENDPOINT = 12,
  MX_STATUS_BAD_RDMAWIN = 13,
  MX_STATUS_ABORTED = 14,
  MX_STATUS_EVENTQ_FULL = 15,
  MX_STATUS_NO_RESOURCES = 16
};
typedef enum mx_status_code mx_status_code_t;

/* A completed request (48 bytes on LP64). */
typedef struct mx_status {
  mx_status_code_t code;        /* how it ended */
  mx_endpoint_addr_t source;    /* the peer: sender of a receive, target of a send */
  uint64_t match_info;          /* the message's match value */
  uint32_t msg_length;          /* the length the sender sent */
  uint32_t xfer_length;         /* the bytes delivered */
  void *context;                /* the context given when the request was posted */
} mx_status_t;

/* Library set-up. */
#define mx_init() mx__init_api(MX_API)
extern mx_return_t mx__init_api(int api);
extern mx_return_t mx_finalize(void);

/* The two predefined error handlers: abort the program after printing the error
   (the default), or return the code to the caller. */
extern const mx_error_handler_t MX_ERRORS_ARE_FATAL;
extern const mx_error_handler_t MX_ERRORS_RETURN;
extern mx_error_handler_t mx_set_error_handler(mx_error_handler_t handler);

/* Endpoints. */
extern mx_return_t mx_open_endpoint(uint32_t board_number, uint32_t endpoint_id,
                                    uint32_t endpoint_key, mx_param_t *params_array,
                                    uint32_t params_count, mx_endpoint_t *endpoint);
extern mx_return_t mx_close_endpoint(mx_endpoint_t endpoint);
extern mx_return_t mx_wakeup(mx_endpoint_t endpoint);
extern mx_return_t mx_disable_progression(mx_endpoint_t endpoint);
extern mx_return_t mx_reenable_progression(mx_endpoint_t endpoint);

typedef void (*mx_matching_callback_t)(void *context, uint64_t match_value, int length);

/* Messages. */
extern mx_return_t mx_isend(mx_endpoint_t endpoint, mx_segment_t *segments_list,
                            uint32_t segments_count, mx_endpoint_addr_t dest_endpoint,
                            uint64_t match_info, void *context, mx_request_t *request);
extern mx_return_t mx_issend(mx_endpoint_t endpoint, mx_segment_t *segments_list,
                             uint32_t segments_count, mx_endpoint_addr_t dest_endpoint,
                             uint64_t match_info, void *context, mx_request_t *request);
extern mx_return_t mx_irecv(mx_endpoint_t endpoint, mx_segment_t *segments_list,
                            uint32_t segments_count, uint64_t match_info,
                            uint64_t match_mask, void *context, mx_request_t *request);

/* A receive mask that compares every bit of the match value. */
#define MX_MATCH_MASK_NONE (~(uint64_t)0)

extern mx_return_t mx_cancel(mx_endpoint_t endpoint, mx_request_t *request, uint32_t *result);

/* Completion. */
extern mx_return_t mx_test(mx_endpoint_t endpoint, mx_request_t *request,
                           mx_status_t *status, uint32_t *result);
extern mx_return_t mx_wait(mx_endpoint_t endpoint, mx_request_t *request, uint32_t timeout,
                           mx_status_t *status, uint32_t *result);
extern mx_return_t mx_test_any(mx_endpoint_t endpoint, uint64_t match_info,
                               uint64_t match_mask, mx_status_t *status, uint32_t *result);
extern mx_return_t mx_wait_any(mx_endpoint_t endpoint, uint32_t timeout, uint64_t match_info,
                               uint64_t match_mask, mx_status_t *status, uint32_t *result);
extern mx_return_t mx_ipeek(mx_endpoint_t endpoint, mx_request_t *request, uint32_t *result);
extern mx_return_t mx_peek(mx_endpoint_t endpoint, uint32_t timeout, mx_request_t *request,
                           uint32_t *result);
extern mx_return_t mx_iprobe(mx_endpoint_t endpoint, uint64_t match_info, uint64_t match_mask,
                             mx_status_t *status, uint32_t *result);
extern mx_return_t mx_probe(mx_endpoint_t endpoint, uint32_t timeout, uint64_t match_info,
                            uint64_t match_mask, mx_status_t *status, uint32_t *result);
extern mx_return_t mx_ibuffered(mx_endpoint_t endpoint, mx_request_t *request, uint32_t *result);
extern mx_return_t mx_context(mx_request_t *request, void **context);

/* Information. */
typedef enum mx_line_speed {
  MX_SPEED_2G,
  MX_SPEED_10G,
  MX_SPEED_OPEN_MX
} mx_line_speed_t;

enum mx_net_type {
  MX_NET_MYRI,
  MX_NET_ETHER
};

enum mx_get_info_key {
  MX_NIC_COUNT = 1,
  MX_NIC_IDS = 2,
  MX_MAX_NATIVE_ENDPOINTS = 3,
  MX_NATIVE_REQUESTS = 4,
  MX_COUNTERS_COUNT = 5,
  MX_COUNTERS_LABELS = 6,
  MX_COUNTERS_VALUES = 7,
  MX_PRODUCT_CODE = 8,
  MX_PART_NUMBER = 9,
  MX_SERIAL_NUMBER = 10,
  MX_PORT_COUNT = 11,
  MX_PIO_SEND_MAX = 12,
  MX_COPY_SEND_MAX = 13,
  MX_NUMA_NODE = 14,
#define MX_HAS_NET_TYPE
  MX_NET_TYPE = 15,
  MX_LINE_SPEED = 16
};
typedef enum mx_get_info_key mx_get_info_key_t;

extern mx_return_t mx_get_info(mx_endpoint_t endpoint, mx_get_info_key_t key, void *in_val,
                               uint32_t in_len, void *out_val, uint32_t out_len);

/* Printing a 64-bit value as two 32-bit halves. */
#define MX_U32(x) \
  ((sizeof (x) == 8) ? ((uint32_t)((uint64_t)(x) >> 32)) : ((void)(x), 0))
#define MX_L32(x) ((uint32_t)(x))

/* Names: a NIC id is a 48-bit MAC address; a host name is "nodename:board". */
#define MX_MAX_HOSTNAME_LEN 80

extern mx_return_t mx_hostname_to_nic_id(char *hostname, uint64_t *nic_id);
extern mx_return_t mx_board_number_to_nic_id(uint32_t board_number, uint64_t *nic_id);
extern mx_return_t mx_nic_id_to_board_number(uint64_t nic_id, uint32_t *board_number);
extern mx_return_t mx_nic_id_to_hostname(uint64_t nic_id, char *hostname);

/* Addresses. */
extern mx_return_t mx_connect(mx_endpoint_t endpoint, uint64_t nic_id, uint32_t endpoint_id,
                              uint32_t key, uint32_t timeout, mx_endpoint_addr_t *addr);
extern mx_return_t mx_decompose_endpoint_addr(mx_endpoint_addr_t endpoint_addr,
                                              uint64_t *nic_id, uint32_t *endpoint_id);
extern mx_return_t mx_get_endpoint_addr(mx_endpoint_t endpoint, mx_endpoint_addr_t *endpoint_addr);

extern const char *mx_strerror(mx_return_t return_code);
extern const char *mx_strstatus(mx_status_code_t status);

/* Present for linking; they print why and abort, as in Open-MX. */
extern mx_return_t mx_register_unexp_callback(mx_endpoint_t endpoint, mx_matching_callback_t cb,
                                              void *context);
extern mx_return_t mx_iput(mx_endpoint_t endpoint, void *local_addr, uint32_t length,
                           mx_endpoint_addr_t dest_endpoint, uint64_t remote_addr,
                           void *context, mx_request_t *request);
extern mx_return_t mx_iget(mx_endpoint_t endpoint, void *local_addr, uint32_t length,
                           mx_endpoint_addr_t dest_endpoint, uint64_t remote_addr,
                           void *context, mx_request_t *request);
extern mx_return_t mx_buffered(mx_endpoint_t endpoint, mx_request_t *request, uint32_t timeout,
                               uint32_t *result);

#ifdef __cplusplus
}
#endif

#endif /* MYRIEXPRESS_H */
