//! Myrinet wire formats, as views over byte buffers in the style of smoltcp.
//!
//! A `Packet<T: AsRef<[u8]>>` wraps a buffer; `new_checked` validates the lengths once,
//! after which no accessor can panic. A `Repr` is the parsed, high-level form: `parse`
//! reads one from a checked view and `emit` writes one into a buffer.
//!
//! This crate only knows bytes: no time, no links, no topology (`pcap` stamps records
//! with times its caller passes in).

#![forbid(unsafe_code)]

pub mod codec;
pub mod mx;
pub mod myrinet;
pub mod omx;
pub mod pcap;
pub mod protocol;
pub mod rsm;

pub use myrinet::{forward, Error, Packet, PacketRepr, PacketType, CRC8};
