//! PMI, the process management interface between MPI processes and their launcher.
//!
//! * [`wire`] — PMI-1 lines and PMI-2 length-prefixed messages: parsing and writing.
//! * [`codec`] — the client's requests and reply checks (sans-IO).
//! * [`client`] — [`PmiClient`]: the socket side (`PMI_FD`, `PMI_PORT`), or a
//!   singleton when the environment names no server.
//! * [`server`] — the PMI-1 server of `myrix mpiexec` (sans-IO).
//! * [`tcp`] — its TCP port for ranks on other hosts (`PMI_PORT`/`PMI_ID`).

pub mod client;
pub mod codec;
pub mod server;
pub mod tcp;
pub mod wire;

pub use client::{Mode, PmiClient};
pub use codec::{PmiError, Request, Version};
