//! `mx_get_info`: the keys that make sense here answered, the rest refused.
//!
//! | key | answer |
//! |---|---|
//! | `MX_NIC_COUNT` | u32: the boards ([`crate::naming`]) |
//! | `MX_NIC_IDS` | u64 per board, then a 0 when there is room |
//! | `MX_MAX_NATIVE_ENDPOINTS` | u32: 256 (endpoint ids are 0-255 per host) |
//! | `MX_NATIVE_REQUESTS` | u32: 65535 outstanding requests per endpoint |
//! | `MX_COUNTERS_COUNT`/`_LABELS`/`_VALUES` | the endpoint's counters (values need an endpoint) |
//! | `MX_PRODUCT_CODE`/`_PART_NUMBER`/`_SERIAL_NUMBER` | the string `N/A (myrix)` |
//! | `MX_PORT_COUNT` | u32: 1 |
//! | `MX_PIO_SEND_MAX` / `MX_COPY_SEND_MAX` | u32: the small and medium message limits |
//! | `MX_NUMA_NODE` | u32 for the board number in `in_val` (0xffffffff: unknown) |
//! | `MX_NET_TYPE` | `MX_NET_ETHER`; `MX_LINE_SPEED`: `MX_SPEED_OPEN_MX` |
//!
//! Other keys get `MX_BAD_INFO_KEY`; an output shorter than the answer
//! `MX_BAD_INFO_LENGTH`; a NULL output `MX_BAD_INFO_VAL`.

use std::ffi::c_void;

use myrix_mx::{Config, Stats};

use crate::endpoint::{entry, with_ep};
use crate::init::{fail, guard, need_init};
use crate::naming;
use crate::types::*;

const COUNTERS: [&str; 12] = [
    "frames in",
    "frames out",
    "bad frames",
    "stale frames",
    "duplicates",
    "early frames held",
    "retransmits",
    "acks sent",
    "unexpected queue full",
    "pull re-requests",
    "fast sends",
    "fast receives",
];

fn counter_values(s: &Stats) -> [u64; 12] {
    [
        s.frames_in,
        s.frames_out,
        s.bad_frames,
        s.stale_frames,
        s.duplicates,
        s.early_held,
        s.retransmits,
        s.acks_sent,
        s.busy,
        s.pull_rerequests,
        s.fast_sends,
        s.fast_recvs,
    ]
}

/// Copies `bytes` to the caller's output of `out_len` bytes.
fn put(out: *mut c_void, out_len: u32, bytes: &[u8]) -> mx_return_t {
    if (out_len as usize) < bytes.len() {
        return fail(
            ret::BAD_INFO_LENGTH,
            &format!("mx_get_info: {} bytes of room for {}", out_len, bytes.len()),
        );
    }
    // SAFETY: the caller gives `out_len` writable bytes at `out` (non-NULL, checked
    // by the caller of `put`), and `bytes` fits in them.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>(), bytes.len()) };
    ret::SUCCESS
}

fn put_u32(out: *mut c_void, out_len: u32, v: u32) -> mx_return_t {
    put(out, out_len, &v.to_ne_bytes())
}

/// A string, truncated to the room and NUL-terminated.
fn put_str(out: *mut c_void, out_len: u32, s: &str) -> mx_return_t {
    if out_len == 0 {
        return fail(ret::BAD_INFO_LENGTH, "mx_get_info: no room for a string");
    }
    let n = s.len().min(out_len as usize - 1);
    let mut v = s.as_bytes()[..n].to_vec();
    v.push(0);
    put(out, out_len, &v)
}

fn numa_node(board: u32) -> u32 {
    naming::board(board)
        .and_then(|b| {
            std::fs::read_to_string(format!("/sys/class/net/{}/device/numa_node", b.iface)).ok()
        })
        .and_then(|s| s.trim().parse::<i32>().ok())
        .filter(|&n| n >= 0)
        .map_or(u32::MAX, |n| n as u32)
}

#[no_mangle]
pub unsafe extern "C" fn mx_get_info(
    endpoint: mx_endpoint_t,
    key: u32,
    in_val: *mut c_void,
    in_len: u32,
    out_val: *mut c_void,
    out_len: u32,
) -> mx_return_t {
    guard("mx_get_info", || {
        if let Err(e) = need_init("mx_get_info") {
            return e;
        }
        if out_val.is_null() {
            return fail(ret::BAD_INFO_VAL, "mx_get_info: NULL output");
        }
        if !endpoint.is_null() && entry(endpoint).is_none() {
            return fail(ret::BAD_ENDPOINT, "mx_get_info: not an open endpoint");
        }
        let cfg = Config::default();
        match key {
            info::NIC_COUNT => put_u32(out_val, out_len, naming::boards().len() as u32),
            info::NIC_IDS => {
                let boards = naming::boards();
                let mut v: Vec<u8> = boards.iter().flat_map(|b| b.nic.to_ne_bytes()).collect();
                if out_len as usize >= v.len() + 8 {
                    v.extend_from_slice(&0u64.to_ne_bytes());
                }
                put(out_val, out_len, &v)
            }
            info::MAX_NATIVE_ENDPOINTS => put_u32(out_val, out_len, 256),
            info::NATIVE_REQUESTS => put_u32(out_val, out_len, 65535),
            info::COUNTERS_COUNT => put_u32(out_val, out_len, COUNTERS.len() as u32),
            info::COUNTERS_LABELS => {
                let mut v = vec![0u8; COUNTERS.len() * MX_MAX_STR_LEN];
                for (i, l) in COUNTERS.iter().enumerate() {
                    v[i * MX_MAX_STR_LEN..][..l.len()].copy_from_slice(l.as_bytes());
                }
                put(out_val, out_len, &v)
            }
            info::COUNTERS_VALUES => with_ep(endpoint, "mx_get_info", |ep, _| {
                let v: Vec<u8> = counter_values(&ep.mx.stats())
                    .iter()
                    .flat_map(|&c| (c.min(u32::MAX as u64) as u32).to_ne_bytes())
                    .collect();
                put(out_val, out_len, &v)
            }),
            info::PRODUCT_CODE | info::PART_NUMBER | info::SERIAL_NUMBER => {
                put_str(out_val, out_len, "N/A (myrix)")
            }
            info::PORT_COUNT => put_u32(out_val, out_len, 1),
            info::PIO_SEND_MAX => put_u32(out_val, out_len, cfg.small_max as u32),
            info::COPY_SEND_MAX => put_u32(out_val, out_len, cfg.medium_max as u32),
            info::NUMA_NODE => {
                let board = if in_val.is_null() || in_len < 4 {
                    0
                } else {
                    // SAFETY: the caller gives `in_len` (at least 4) readable bytes at `in_val`.
                    unsafe { in_val.cast::<u32>().read_unaligned() }
                };
                if naming::board(board).is_none() {
                    return fail(
                        ret::BOARD_UNKNOWN,
                        &format!("mx_get_info: no board {board}"),
                    );
                }
                put_u32(out_val, out_len, numa_node(board))
            }
            info::NET_TYPE => put_u32(out_val, out_len, info::NET_ETHER),
            info::LINE_SPEED => put_u32(out_val, out_len, info::SPEED_OPEN_MX),
            k => fail(ret::BAD_INFO_KEY, &format!("mx_get_info: unknown key {k}")),
        }
    })
}
