//! The MX (Myrinet Express) protocol as the Open-MX paper describes it, sans-IO: matched
//! messages with 64-bit match info and mask, tiny/small/medium/large classes, eager and
//! rendezvous-and-pull protocols, and reliability in the library.
//!
//! * [`engine`] — the protocol engine: frames and time in, frames and timer deadlines
//!   out.
//! * [`reliability`] — sessions, sequence numbers, acks and resends for any protocol on
//!   lossy transports (MX's engine uses it; remote shared memory will).
//! * [`testnet`] — a deterministic in-memory lossy network that drives engines.
//! * [`addr`] — endpoint addresses and their printable form.
//!
//! This crate must never open a socket, map memory, spawn a thread or read a clock: the
//! simulator drives it on simulated time, the IO crate `myrix-mx` on real transports.
#![forbid(unsafe_code)]

pub mod addr;
pub mod engine;
pub mod reliability;
pub mod testnet;

pub use addr::{AddrError, EndpointAddr};
pub use engine::{
    Code, Config, DirectRecv, Engine, Error, Handled, HandlerAction, Lent, PeerId, RecvBuf,
    RecvTarget, Request, Stats, Status, UnexpectedInfo,
};
