//! Remote shared memory (RSM) as seed 004 and Sun's RSMAPI describe it, sans-IO.
//!
//! A host *exports* a segment of its memory under a segment id with an access list;
//! other hosts *import* it and put into it or get from it directly, open and close
//! *barriers* that report every transfer error of their scope, and *signal* each other.
//!
//! * [`types`] — node ids, segment ids and their ranges, permissions, barrier modes.
//! * [`acl`] — who may import a segment, and with which permission.
//! * [`error`] — [`RsmError`], with RSMAPI's `RSMERR_*` numbers.
//! * [`engine`] — the network protocol: one [`engine::Engine`] per node serves its
//!   exported segments (through [`engine::Memory`]) and its imports; frames
//!   (`myrix_wire::rsm`) and time in, frames, deadlines and events out, reliable over
//!   lossy transports through the MX engine's reliability layer
//!   (`myrix_mx_proto::reliability`). `docs/rsm.md` describes the protocol.
//! * [`hash`] — the cheap keyed hash of the engine's tables.
//! * [`rails`] — one import over several rails (an engine each): striping, the order
//!   of writes across rails, fail-over, rejoin, the barrier that reports a fail-over.
//!
//! Barrier *modes* are the front end's: the engine reports each get's own result and,
//! at each flush ([`engine::Engine::flush`], [`engine::Engine::close_barrier`]), the
//! first failure since the barrier opened; implicit mode is a flush per transfer.
//!
//! This crate must never open a socket, map memory, spawn a thread or read a clock:
//! controllers in the IO crate `myrix-rsm` (shared memory, UDP, raw Ethernet) and the
//! simulator drive it.
#![forbid(unsafe_code)]

pub mod acl;
pub mod engine;
pub mod error;
pub mod hash;
pub mod rails;
pub mod types;

pub use acl::{Acl, Credentials};
pub use error::RsmError;
pub use types::{AccessEntry, BarrierMode, BarrierType, NodeId, Perm, SegmentId};
