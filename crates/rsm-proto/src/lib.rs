//! Remote shared memory (RSM) as seed 004 and Sun's RSMAPI describe it, sans-IO.
//!
//! A host *exports* a segment of its memory under a segment id with an access list;
//! other hosts *import* it and put into it or get from it directly, open and close
//! *barriers* that report every transfer error of their scope, and *signal* each other.
//!
//! * [`types`] — node ids, segment ids and their ranges, permissions, barrier modes.
//! * [`acl`] — who may import a segment, and with which permission.
//! * [`error`] — [`RsmError`], with RSMAPI's `RSMERR_*` numbers.
//!
//! This crate must never open a socket, map memory, spawn a thread or read a clock:
//! controllers in the IO crate `myrix-rsm` (shared memory, UDP, raw Ethernet) and the
//! simulator drive it.
#![forbid(unsafe_code)]

pub mod acl;
pub mod engine;
pub mod error;
pub mod types;

pub use acl::{Acl, Credentials};
pub use error::RsmError;
pub use types::{AccessEntry, BarrierMode, BarrierType, NodeId, Perm, SegmentId};
