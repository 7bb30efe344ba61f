//! The traits a controller implements: what differs between `shm` and the network
//! controllers. The front end ([`crate::Controller`], [`crate::Export`],
//! [`crate::Import`]) has already checked every argument when it calls them: offsets
//! and lengths are inside the segment, scalar offsets are aligned, a write comes from an
//! import with write permission, scatter/gather lists have 1 to 16 entries, memory
//! given by the caller is page-aligned and not null. A backend must still never trust
//! what another process or host tells it (lengths in shared control blocks, frames).
//!
//! Barrier bookkeeping (modes, which errors fall in which scope) is the front end's; a
//! backend reports the state of its connection at [`ImportBackend::open_scope`] /
//! [`ImportBackend::close_scope`], which is where a network backend flushes its writes
//! and reports a fail-over inside the scope.

use std::os::fd::RawFd;
use std::time::Duration;

use myrix_rsm_proto::{AccessEntry, BarrierMode, NodeId, Perm, RsmError, SegmentId};

use crate::export::SignalSender;
use crate::import::{Scalars, ScalarsMut};
use crate::{ControllerAttr, ExportFlags, SignalFlags};

pub(crate) trait CtlrBackend: Send + Sync {
    /// Attributes; `name` is filled in by the front end.
    fn attr(&self) -> ControllerAttr;
    fn topology(&self) -> Vec<NodeId>;
    /// How many times the progress agent woke (network controllers).
    fn agent_rounds(&self) -> Option<u64> {
        None
    }
    /// Per-rail counters (network controllers).
    fn rail_stats(&self) -> Vec<crate::net::RailStats> {
        Vec::new()
    }
    /// Fault injection: rail `rail` drops every frame in and out while down.
    fn set_rail_down(&self, _rail: usize, _down: bool) -> Result<(), RsmError> {
        Err(RsmError::BadConf)
    }
    /// Unacknowledged frames sent until acknowledged, within the retry limit
    /// (network controllers; [`crate::Controller::drain`]).
    fn drain(&self) -> bool {
        true
    }
    /// [`CtlrBackend::drain`], then the nodes are told this one leaves (network
    /// controllers; [`crate::Controller::leave`]).
    fn leave(&self) -> bool {
        self.drain()
    }
    /// `len` is checked (non-zero, page multiple, ≤ max).
    fn export_create(
        &self,
        len: usize,
        flags: ExportFlags,
    ) -> Result<Box<dyn ExportBackend>, RsmError>;
    /// `ptr`/`len` are checked for alignment; the memory is the caller's promise.
    #[allow(unsafe_code)]
    unsafe fn export_create_at(
        &self,
        ptr: *mut u8,
        len: usize,
        flags: ExportFlags,
    ) -> Result<Box<dyn ExportBackend>, RsmError>;
    /// `perm` is a valid requested permission.
    fn import_connect(
        &self,
        node: NodeId,
        id: SegmentId,
        perm: Perm,
    ) -> Result<Box<dyn ImportBackend>, RsmError>;
}

pub(crate) trait ExportBackend: Send + Sync {
    fn len(&self) -> usize;
    fn as_ptr(&self) -> *mut u8;
    fn id(&self) -> Option<SegmentId>;
    /// `open_mode` applies when `acl` is empty.
    fn publish(
        &self,
        id: Option<SegmentId>,
        acl: &[AccessEntry],
        open_mode: Perm,
    ) -> Result<SegmentId, RsmError>;
    fn republish(&self, acl: &[AccessEntry], open_mode: Perm) -> Result<(), RsmError>;
    fn unpublish(&self) -> Result<(), RsmError>;
    /// Rebind permission and `ptr` alignment are checked; `offset`/`len` are not.
    #[allow(unsafe_code)]
    unsafe fn rebind(&self, ptr: *mut u8, offset: usize, len: usize) -> Result<(), RsmError>;
    fn signal_post(&self, flags: SignalFlags) -> Result<(), RsmError>;
    /// Consumes one pending signal, waiting up to `timeout` (None: forever).
    fn signal_wait(&self, timeout: Option<Duration>) -> Result<SignalSender, RsmError>;
    fn pollfd(&self) -> Result<RawFd, RsmError>;
    fn release_pollfd(&self) -> Result<(), RsmError>;
    /// Unpublishes if published and frees library memory; called once.
    fn destroy(&self) -> Result<(), RsmError>;
    /// The exporter polls its memory ([`crate::Export::load_u64`]): a backend whose
    /// remote writes are applied by this process (the network's) takes in what arrived,
    /// so a polling exporter sees a write without waiting for its progress thread.
    fn poll(&self) {}
}

pub(crate) trait ImportBackend: Send + Sync {
    fn len(&self) -> usize;
    /// In bounds, writable import.
    fn put(&self, offset: usize, data: &[u8]) -> Result<(), RsmError>;
    fn get(&self, offset: usize, out: &mut [u8]) -> Result<(), RsmError>;
    /// In bounds, aligned to the element size; each element is one access of its size.
    fn put_scalars(&self, offset: usize, data: Scalars<'_>) -> Result<(), RsmError>;
    fn get_scalars(&self, offset: usize, out: ScalarsMut<'_>) -> Result<(), RsmError>;
    /// In bounds (`offset` 8-aligned, `8 + data.len()` bytes), writable: `data` at
    /// `offset + 8`, then `flag` at `offset`, ordered after it
    /// ([`crate::Import::put_with_flag`]). A backend that can send both at once (the
    /// network's: one datagram) overrides this.
    fn put_with_flag(&self, offset: usize, flag: u64, data: &[u8]) -> Result<(), RsmError> {
        if !data.is_empty() {
            self.put(offset + 8, data)?;
            self.order()?;
        }
        self.put_scalars(offset, Scalars::U64(&[flag]))
    }
    /// [`crate::Import::put_deferred`]: a put whose sending may wait for the next
    /// one. Only the network's backend defers; the others put at once.
    fn put_deferred(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        self.put(offset, data)
    }
    /// [`crate::Import::one_write`]: None where a put of any length is one write.
    fn one_write(&self) -> Option<usize> {
        None
    }
    /// The segment's memory in this process, if the controller maps (shm only).
    fn map(&self) -> Result<(*mut u8, usize), RsmError> {
        Err(RsmError::MapFailed)
    }
    /// The import's barrier mode changed. In implicit mode each put is its own scope:
    /// a backend whose puts complete later (the network's) waits for each one.
    fn set_mode(&self, _mode: BarrierMode) {}
    /// A barrier scope opens: `Err` if the connection is already unusable.
    fn open_scope(&self) -> Result<u64, RsmError>;
    /// Orders the writes before it before the writes after it.
    fn order(&self) -> Result<(), RsmError>;
    /// Returns when every write since `open_scope` returned `token` is in remote
    /// memory; `Err` if the connection failed (or failed over) since then.
    fn close_scope(&self, token: u64) -> Result<(), RsmError>;
    /// Whether the connection still stands (not unpublished, exporter alive).
    fn check(&self) -> Result<(), RsmError>;
    fn signal_post(&self, flags: SignalFlags) -> Result<(), RsmError>;
    fn signal_wait(&self, timeout: Option<Duration>) -> Result<SignalSender, RsmError>;
    fn pollfd(&self) -> Result<RawFd, RsmError>;
    fn release_pollfd(&self) -> Result<(), RsmError>;
    /// Called once, when no mapping is left, by an explicit disconnect: it may wait
    /// until what was posted before it is confirmed.
    fn disconnect(&self) -> Result<(), RsmError>;
    /// Called once instead of [`disconnect`](Self::disconnect) when the last handle is
    /// dropped without one: ends the connection without waiting (a program tearing
    /// down many imports at exit, MPI's at `MPI_Finalize`, must not wait on each).
    fn disconnect_now(&self) -> Result<(), RsmError> {
        self.disconnect()
    }
}
