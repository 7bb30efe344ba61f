//! MX (Myrinet Express) message passing over real transports: the IO half of the
//! quinn-proto/quinn split. The protocol itself is the sans-IO crate `myrix-mx-proto`,
//! re-exported here ([`engine`], [`reliability`], [`testnet`], [`addr`]) so applications
//! need one crate.
//!
//! * [`endpoint`] — the application's API: an engine driven over a transport, progress
//!   inside the calls or from a progress thread, and other protocols served beside MX
//!   on the same transport ([`protocol`]).
//! * [`transport`] — `self`, `shm`, `udp` and `eth`/`omx` (raw Ethernet, in myrix's or
//!   Open-MX's frames): moving frames.
//! * [`capture`] — every frame an endpoint sends and receives, to a pcap file
//!   (`MYRIX_PCAP`).
//! * [`raw`] — receives into raw caller memory (for a C ABI).
//! * [`sys`] — the operating system calls that are neither a transport nor the
//!   endpoint (pinning to a CPU).
//!
//! `unsafe` is denied here but in the modules that must map memory or make raw system
//! calls (`transport::shm`, `transport::eth`, `sys`) or write to caller memory (`raw`),
//! each block with a `SAFETY:` note.
//!
//! [`Endpoint`] shows the API in a few lines; `examples/hello.rs` is a complete
//! program of two processes (`cargo run -p myrix-mx --example hello`).

#![deny(unsafe_code)]

pub mod capture;
pub mod endpoint;
pub mod protocol;
pub mod raw;
pub mod sys;
pub mod transport;

pub use endpoint::{Completion, Endpoint, MxError, OmxEndpoint, OmxMxWireEndpoint, ProgressThread};
pub use myrix_mx_proto::{addr, engine, reliability, testnet};
pub use myrix_mx_proto::{
    AddrError, Code, Config, DirectRecv, EndpointAddr, Engine, Error, Handled, HandlerAction, Lent,
    PeerId, RecvBuf, RecvTarget, Request, Stats, Status, UnexpectedInfo,
};
pub use sys::pin_to_cpu;
