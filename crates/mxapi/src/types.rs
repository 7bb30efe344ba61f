//! The C types and numeric values of `myriexpress.h` and `mx_extensions.h`, laid out
//! as MX's ABI on LP64 (checked against the header by `tests/c/abi.c`).
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

/// `mx_return_t`: what a call returns (a C enum: 32 bits).
pub type mx_return_t = u32;
/// `mx_status_code_t`: how a request ended.
pub type mx_status_code_t = u32;

/// An endpoint handle: a token looked up in the library's table, never dereferenced.
pub type mx_endpoint_t = *mut c_void;
/// A request handle: a token looked up in its endpoint's table, never dereferenced.
pub type mx_request_t = *mut c_void;

/// `mx_endpoint_addr_t`: 16 opaque bytes (see [`crate::addr`] for what they hold).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct mx_endpoint_addr_t {
    pub stuff: [u64; 2],
}

/// `mx_segment_t`: a buffer and its length (16 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mx_segment_t {
    pub segment_ptr: *mut c_void,
    pub segment_length: u32,
}

/// `mx_status_t` (48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mx_status_t {
    pub code: mx_status_code_t,
    pub source: mx_endpoint_addr_t,
    pub match_info: u64,
    pub msg_length: u32,
    pub xfer_length: u32,
    pub context: *mut c_void,
}

pub type mx_error_handler_t = Option<unsafe extern "C" fn(*mut c_char, mx_return_t) -> mx_return_t>;

/// `mx_param_t`'s context-id member.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ContextIdParam {
    pub bits: u8,
    pub shift: u8,
}

/// `mx_param_t`'s value.
#[repr(C)]
#[derive(Clone, Copy)]
pub union ParamVal {
    pub error_handler: mx_error_handler_t,
    pub unexp_queue_max: u32,
    pub context_id: ContextIdParam,
}

/// `mx_param_t` (16 bytes: a key, then a pointer-aligned union).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mx_param_t {
    pub key: u32,
    pub val: ParamVal,
}

pub type mx_unexp_handler_t =
    Option<unsafe extern "C" fn(*mut c_void, mx_endpoint_addr_t, u64, u32, *mut c_void) -> u32>;
pub type mx_matching_callback_t = Option<unsafe extern "C" fn(*mut c_void, u64, i32)>;

pub const MX_API: i32 = 0x301;
pub const MX_ANY_NIC: u32 = 0xffff_ffff;
pub const MX_ANY_ENDPOINT: u32 = 0xffff_ffff;
pub const MX_MAX_SEGMENTS: u32 = 256;
pub const MX_INFINITE: u32 = 0;
pub const MX_MAX_HOSTNAME_LEN: usize = 80;
pub const MX_MAX_STR_LEN: usize = 128;
pub const MX_CONTEXT_ID_BITS_MAX: u8 = 16;

pub const MX_PARAM_ERROR_HANDLER: u32 = 0;
pub const MX_PARAM_UNEXP_QUEUE_MAX: u32 = 1;
pub const MX_PARAM_CONTEXT_ID: u32 = 2;

pub const MX_RECV_CONTINUE: u32 = 0;
pub const MX_RECV_FINISHED: u32 = 1;

/// Every `mx_return_t`, by value.
pub mod ret {
    use super::mx_return_t;
    pub const SUCCESS: mx_return_t = 0;
    pub const BAD_BAD_BAD: mx_return_t = 1;
    pub const FAILURE: mx_return_t = 2;
    pub const ALREADY_INITIALIZED: mx_return_t = 3;
    pub const NOT_INITIALIZED: mx_return_t = 4;
    pub const NO_DEV: mx_return_t = 5;
    pub const NO_DRIVER: mx_return_t = 6;
    pub const NO_PERM: mx_return_t = 7;
    pub const BOARD_UNKNOWN: mx_return_t = 8;
    pub const BAD_ENDPOINT: mx_return_t = 9;
    pub const BAD_SEG_LIST: mx_return_t = 10;
    pub const BAD_SEG_MEM: mx_return_t = 11;
    pub const BAD_SEG_CNT: mx_return_t = 12;
    pub const BAD_REQUEST: mx_return_t = 13;
    pub const BAD_MATCH_MASK: mx_return_t = 14;
    pub const NO_RESOURCES: mx_return_t = 15;
    pub const BAD_ADDR_LIST: mx_return_t = 16;
    pub const BAD_ADDR_COUNT: mx_return_t = 17;
    pub const BAD_ROOT: mx_return_t = 18;
    pub const NOT_COMPLETED: mx_return_t = 19;
    pub const BUSY: mx_return_t = 20;
    pub const BAD_INFO_KEY: mx_return_t = 21;
    pub const BAD_INFO_VAL: mx_return_t = 22;
    pub const BAD_NIC: mx_return_t = 23;
    pub const BAD_PARAM_LIST: mx_return_t = 24;
    pub const BAD_PARAM_NAME: mx_return_t = 25;
    pub const BAD_PARAM_VAL: mx_return_t = 26;
    pub const BAD_HOSTNAME_ARGS: mx_return_t = 27;
    pub const HOST_NOT_FOUND: mx_return_t = 28;
    pub const REQUEST_PENDING: mx_return_t = 29;
    pub const TIMEOUT: mx_return_t = 30;
    pub const NO_MATCH: mx_return_t = 31;
    pub const BAD_ENDPOINT_ID: mx_return_t = 32;
    pub const CONNECTION_FAILED: mx_return_t = 33;
    pub const BAD_CONNECTION_KEY: mx_return_t = 34;
    pub const BAD_INFO_LENGTH: mx_return_t = 35;
    pub const NIC_NOT_FOUND: mx_return_t = 36;
    pub const BAD_KERNEL_VERSION: mx_return_t = 37;
    pub const BAD_LIB_VERSION: mx_return_t = 38;
    pub const NIC_DEAD: mx_return_t = 39;
    pub const CANCEL_NOT_SUPPORTED: mx_return_t = 40;
    pub const CLOSE_IN_HANDLER: mx_return_t = 41;
    pub const BAD_MATCHING_FOR_CONTEXT_ID_MASK: mx_return_t = 42;
    pub const NOT_SUPPORTED_WITH_CONTEXT_ID: mx_return_t = 43;
    /// One past the last code.
    pub const COUNT: mx_return_t = 44;
}

/// Every `mx_status_code_t`, by value.
pub mod st {
    use super::mx_status_code_t;
    pub const SUCCESS: mx_status_code_t = 0;
    pub const PENDING: mx_status_code_t = 1;
    pub const BUFFERED: mx_status_code_t = 2;
    pub const REJECTED: mx_status_code_t = 3;
    pub const TIMEOUT: mx_status_code_t = 4;
    pub const TRUNCATED: mx_status_code_t = 5;
    pub const CANCELLED: mx_status_code_t = 6;
    pub const ENDPOINT_UNKNOWN: mx_status_code_t = 7;
    pub const ENDPOINT_CLOSED: mx_status_code_t = 8;
    pub const ENDPOINT_UNREACHABLE: mx_status_code_t = 9;
    pub const BAD_SESSION: mx_status_code_t = 10;
    pub const BAD_KEY: mx_status_code_t = 11;
    pub const BAD_ENDPOINT: mx_status_code_t = 12;
    pub const BAD_RDMAWIN: mx_status_code_t = 13;
    pub const ABORTED: mx_status_code_t = 14;
    pub const EVENTQ_FULL: mx_status_code_t = 15;
    pub const NO_RESOURCES: mx_status_code_t = 16;
    /// One past the last code.
    pub const COUNT: mx_status_code_t = 17;
}

/// `mx_get_info` keys.
pub mod info {
    pub const NIC_COUNT: u32 = 1;
    pub const NIC_IDS: u32 = 2;
    pub const MAX_NATIVE_ENDPOINTS: u32 = 3;
    pub const NATIVE_REQUESTS: u32 = 4;
    pub const COUNTERS_COUNT: u32 = 5;
    pub const COUNTERS_LABELS: u32 = 6;
    pub const COUNTERS_VALUES: u32 = 7;
    pub const PRODUCT_CODE: u32 = 8;
    pub const PART_NUMBER: u32 = 9;
    pub const SERIAL_NUMBER: u32 = 10;
    pub const PORT_COUNT: u32 = 11;
    pub const PIO_SEND_MAX: u32 = 12;
    pub const COPY_SEND_MAX: u32 = 13;
    pub const NUMA_NODE: u32 = 14;
    pub const NET_TYPE: u32 = 15;
    pub const LINE_SPEED: u32 = 16;
    /// `mx_net_type`'s Ethernet and `mx_line_speed`'s Open-MX values.
    pub const NET_ETHER: u32 = 1;
    pub const SPEED_OPEN_MX: u32 = 2;
}

const _: () = {
    assert!(std::mem::size_of::<mx_endpoint_addr_t>() == 16);
    assert!(std::mem::size_of::<mx_segment_t>() == 16);
    assert!(std::mem::size_of::<mx_status_t>() == 48);
    assert!(std::mem::offset_of!(mx_status_t, source) == 8);
    assert!(std::mem::offset_of!(mx_status_t, match_info) == 24);
    assert!(std::mem::offset_of!(mx_status_t, msg_length) == 32);
    assert!(std::mem::offset_of!(mx_status_t, xfer_length) == 36);
    assert!(std::mem::offset_of!(mx_status_t, context) == 40);
    assert!(std::mem::size_of::<mx_param_t>() == 16);
};
