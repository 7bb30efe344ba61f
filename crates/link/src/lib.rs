//! The link layer of myrix: everything between a stream of packet bytes and the wire.
//!
//! * [`code`]: the 8b/10b code of IEEE 802.3 §36.2.4.
//! * [`symbol`]: Myrinet-2000 control symbols and the pairing of code-groups.
//! * [`framing`]: packets as code-group pairs (GAP framing, IDLE fill, STOP/GO).
//! * [`sync`]: the port synchronization state machine.
//! * [`port`]: a Myrinet-2000 port: sender, receiver, sync machine, BEAT, elastic FIFO.
//! * [`slack`]: the STOP/GO slack buffer and how to size it for a cable.
//! * [`classic`]: the original 9-bit Myrinet channel (80 M characters/s).
//! * [`time`]: the time units, [`Picos`] and [`Nanos`], and their conversions.
//!
//! Everything here is sans-IO: code-groups, characters and bytes go in and out through
//! method calls, and time is passed in as [`Picos`]. Nothing here starts a
//! thread, reads a clock or touches a socket.

#![forbid(unsafe_code)]

pub mod classic;
pub mod code;
pub mod duplex;
pub mod elastic;
pub mod framing;
pub mod port;
pub mod slack;
pub mod symbol;
pub mod sync;
pub mod time;

pub use time::{Nanos, Picos, MS, NS, US};
