//! The link layer of myrix: everything between a stream of packet bytes and the wire.
//!
//! * [`code`]: the 8b/10b code of IEEE 802.3 §36.2.4.
//! * [`symbol`]: Myrinet-2000 control symbols and the pairing of code-groups.
//! * [`framing`]: packets as code-group pairs (GAP framing, IDLE fill, STOP/GO).
//! * [`sync`]: the port synchronization state machine.
//! * [`port`]: a Myrinet-2000 port: sender, receiver, sync machine, BEAT, elastic FIFO.
//! * [`slack`]: the STOP/GO slack buffer and how to size it for a cable.
//! * [`classic`]: the original 9-bit Myrinet channel (80 M characters/s).
//!
//! Everything here is sans-IO: code-groups, characters and bytes go in and out through
//! method calls, and time is passed in as [`Time`] (picoseconds). Nothing here starts a
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

/// Simulated time in picoseconds: 4 ns code-groups and 6.25 ns flits are exact.
pub type Time = u64;

/// One nanosecond in [`Time`] units.
pub const NS: Time = 1_000;
/// One microsecond in [`Time`] units.
pub const US: Time = 1_000_000;
/// One millisecond in [`Time`] units.
pub const MS: Time = 1_000_000_000;
