//! `mx_strerror` and `mx_strstatus`: a fixed text for every code.

use std::ffi::{c_char, CStr};

use crate::types::*;

/// The text of a return code.
pub fn strerror_c(code: mx_return_t) -> &'static CStr {
    match code {
        ret::SUCCESS => c"Success",
        ret::BAD_BAD_BAD => c"Internal error",
        ret::FAILURE => c"Failure",
        ret::ALREADY_INITIALIZED => c"Already initialized",
        ret::NOT_INITIALIZED => c"Not initialized",
        ret::NO_DEV => c"No device",
        ret::NO_DRIVER => c"No driver",
        ret::NO_PERM => c"Permission denied",
        ret::BOARD_UNKNOWN => c"Unknown board",
        ret::BAD_ENDPOINT => c"Bad endpoint",
        ret::BAD_SEG_LIST => c"Bad segment list",
        ret::BAD_SEG_MEM => c"Bad segment memory",
        ret::BAD_SEG_CNT => c"Bad segment count",
        ret::BAD_REQUEST => c"Bad request",
        ret::BAD_MATCH_MASK => c"Bad match mask",
        ret::NO_RESOURCES => c"No resources",
        ret::BAD_ADDR_LIST => c"Bad address list",
        ret::BAD_ADDR_COUNT => c"Bad address count",
        ret::BAD_ROOT => c"Bad root",
        ret::NOT_COMPLETED => c"Not completed",
        ret::BUSY => c"Busy",
        ret::BAD_INFO_KEY => c"Bad info key",
        ret::BAD_INFO_VAL => c"Bad info value pointer",
        ret::BAD_NIC => c"Bad NIC id",
        ret::BAD_PARAM_LIST => c"Bad parameter list",
        ret::BAD_PARAM_NAME => c"Bad parameter name",
        ret::BAD_PARAM_VAL => c"Bad parameter value",
        ret::BAD_HOSTNAME_ARGS => c"Bad hostname arguments",
        ret::HOST_NOT_FOUND => c"Host not found",
        ret::REQUEST_PENDING => c"Request pending",
        ret::TIMEOUT => c"Timeout",
        ret::NO_MATCH => c"No match",
        ret::BAD_ENDPOINT_ID => c"Bad endpoint id",
        ret::CONNECTION_FAILED => c"Connection failed",
        ret::BAD_CONNECTION_KEY => c"Bad connection key",
        ret::BAD_INFO_LENGTH => c"Bad info length",
        ret::NIC_NOT_FOUND => c"NIC not found",
        ret::BAD_KERNEL_VERSION => c"Bad kernel version",
        ret::BAD_LIB_VERSION => c"Bad library version",
        ret::NIC_DEAD => c"NIC dead",
        ret::CANCEL_NOT_SUPPORTED => c"Cancel not supported",
        ret::CLOSE_IN_HANDLER => c"Not allowed in the unexpected handler",
        ret::BAD_MATCHING_FOR_CONTEXT_ID_MASK => c"Match mask does not cover the context id",
        ret::NOT_SUPPORTED_WITH_CONTEXT_ID => c"Not supported with context ids",
        _ => c"Unknown error code",
    }
}

/// The text of a return code, as a Rust string.
pub fn strerror(code: mx_return_t) -> &'static str {
    strerror_c(code).to_str().unwrap_or("?")
}

/// The text of a status code.
pub fn strstatus_c(code: mx_status_code_t) -> &'static CStr {
    match code {
        st::SUCCESS => c"Success",
        st::PENDING => c"Pending",
        st::BUFFERED => c"Buffered",
        st::REJECTED => c"Rejected",
        st::TIMEOUT => c"Timeout",
        st::TRUNCATED => c"Truncated",
        st::CANCELLED => c"Cancelled",
        st::ENDPOINT_UNKNOWN => c"Endpoint unknown",
        st::ENDPOINT_CLOSED => c"Endpoint closed",
        st::ENDPOINT_UNREACHABLE => c"Endpoint unreachable",
        st::BAD_SESSION => c"Bad session",
        st::BAD_KEY => c"Bad connection key",
        st::BAD_ENDPOINT => c"Bad endpoint",
        st::BAD_RDMAWIN => c"Bad RDMA window",
        st::ABORTED => c"Aborted",
        st::EVENTQ_FULL => c"Event queue full",
        st::NO_RESOURCES => c"No resources",
        _ => c"Unknown status code",
    }
}

#[no_mangle]
pub extern "C" fn mx_strerror(return_code: mx_return_t) -> *const c_char {
    strerror_c(return_code).as_ptr()
}

#[no_mangle]
pub extern "C" fn mx_strstatus(status: mx_status_code_t) -> *const c_char {
    strstatus_c(status).as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_own_text() {
        let unknown = strerror_c(ret::COUNT);
        let mut seen = std::collections::HashSet::new();
        for c in 0..ret::COUNT {
            assert_ne!(strerror_c(c), unknown, "{c}");
            assert!(seen.insert(strerror_c(c)), "{c}");
        }
        let unknown = strstatus_c(st::COUNT);
        for c in 0..st::COUNT {
            assert_ne!(strstatus_c(c), unknown, "{c}");
        }
    }
}
