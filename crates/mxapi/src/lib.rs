//! `libmyriexpress.so`: the MX (Myrinet Express) C interface of `myriexpress.h` and
//! `mx_extensions.h` over [`myrix_mx::Endpoint`], so programs written for MX or
//! Open-MX build unchanged and run on myrix.
//!
//! * [`types`] — the C types and numeric values, laid out as MX's ABI on LP64.
//! * [`init`] — `mx_init`/`mx_finalize`, error handlers, the environment, and the
//!   guard every exported function runs in (no panic crosses into C).
//! * [`endpoint`] — the table of open endpoints (handles are tokens, never
//!   dereferenced), `mx_open_endpoint` and its parameters, progression calls.
//! * [`addr`] — what an `mx_endpoint_addr_t` holds, connecting, address contexts.
//! * [`naming`] — boards (the host's Ethernet interfaces), NIC ids (MACs), host
//!   names (`nodename:board`), the peer table (`MYRIX_MX_PEERS`).
//! * [`request`] — sends and receives from and into the caller's segments.
//! * [`complete`] — test, wait, peek, probe and the unexpected handler.
//! * [`info`] — `mx_get_info`. [`strings`] — `mx_strerror`, `mx_strstatus`.
//!
//! * [`mxep`] — the `myrix-mx` endpoint under a C endpoint, in myrix's or Open-MX's
//!   frames.
//!
//! Processes on one host talk over shared memory; peers on other hosts are reached
//! over raw Ethernet in Open-MX's frames, chosen per peer by whether its NIC id is a
//! board of this host (`MYRIX_MX_TRANSPORT`, [`init::Mode`]). See `docs/mxapi.md` for
//! what is supported and how it differs from MX.
//!
//! # Safety
//!
//! The exported functions are `unsafe extern "C"` where they take pointers, with one
//! contract for all (stated here rather than on each): every non-NULL pointer points
//! to what `myriexpress.h` says (an out-parameter of its type, `count` segments, a
//! NUL-terminated string, `MX_MAX_HOSTNAME_LEN` bytes for a host name), and a posted
//! receive's segments stay valid until the request completes or is cancelled. NULL
//! pointers and handles that are not the library's are refused with MX's codes.
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![allow(clippy::missing_safety_doc)]

pub mod addr;
pub mod complete;
pub mod endpoint;
pub mod info;
pub mod init;
pub mod mxep;
pub mod naming;
pub mod request;
pub mod strings;
pub mod types;
