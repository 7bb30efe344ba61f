//! MX (Myrinet Express) message passing, as the Open-MX paper describes it: endpoints,
//! matched messages with 64-bit match info and mask, tiny/small/medium/large classes,
//! eager and rendezvous-and-pull protocols, and reliability in the library.
//!
//! * [`engine`] — the protocol engine, sans-IO: frames and time in, frames and timer
//!   deadlines out. It never opens a socket, spawns a thread or reads a clock.
//! * [`testnet`] — a deterministic in-memory lossy network that drives engines.
//! * [`endpoint`] — the application's API: an engine driven over a transport.
//! * [`transport`] — `self`, `shm`, `udp` and `eth` (raw Ethernet).
//! * [`addr`] — endpoint addresses and their printable form.
//!
//! [`Endpoint`] shows the API in a few lines; `examples/hello.rs` is a complete
//! program of two processes (`cargo run -p myrix-mx --example hello`).

pub mod addr;
pub mod endpoint;
pub mod engine;
pub mod testnet;
pub mod transport;

pub use addr::{AddrError, EndpointAddr};
pub use endpoint::{pin_to_cpu, Completion, Endpoint, MxError, ProgressThread};
pub use engine::{
    Code, Config, DirectRecv, Engine, Error, Handled, HandlerAction, Lent, PeerId, RecvBuf,
    Request, Stats, Status, UnexpectedInfo,
};
