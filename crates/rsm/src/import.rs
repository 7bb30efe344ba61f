//! An imported segment: a connection to a segment another process (or host) published.
//!
//! This front end is where every argument is checked, for every controller: offsets and
//! lengths against the segment (`BadOffset`, `BadLength`), scalar offsets against the
//! access size (`MisalignedOffset`), writes against the permission (`PermDenied`),
//! scatter/gather lists (`BadSgio`), and where barrier scopes are kept (which transfer
//! errors fall in which scope, implicit or explicit mode). It must never pass a backend a
//! request that reaches outside the segment: backends rely on it.
//!
//! Errors, per RSMAPI: in implicit mode (the default) each put or get is its own barrier
//! scope and returns its own error. In explicit mode a put or get that fails also
//! returns its error at once (the shm controller knows it; RSMAPI lets the library
//! report earlier than the close) and every transfer error since a barrier's open is
//! reported again by its close.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use myrix_rsm_proto::{BarrierMode, BarrierType, NodeId, Perm, RsmError, SegmentId};

use crate::backend::ImportBackend;
use crate::export::SignalSender;
use crate::SignalFlags;

/// The most entries a scatter/gather list may hold (RSMAPI's `RSM_MAX_SGIOREQS`).
pub const MAX_SGIO: usize = 16;

/// A slice of scalars of one width, as an import passes them to its backend.
#[derive(Debug)]
pub enum Scalars<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
}

/// A mutable slice of scalars of one width.
#[derive(Debug)]
pub enum ScalarsMut<'a> {
    U8(&'a mut [u8]),
    U16(&'a mut [u16]),
    U32(&'a mut [u32]),
    U64(&'a mut [u64]),
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// The scalar widths of RSMAPI's `put8/16/32/64` and `get8/16/32/64`.
pub trait Scalar: Copy + sealed::Sealed {
    const SIZE: usize;
    fn wrap(s: &[Self]) -> Scalars<'_>;
    fn wrap_mut(s: &mut [Self]) -> ScalarsMut<'_>;
}

macro_rules! scalar {
    ($t:ty, $v:ident) => {
        impl Scalar for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn wrap(s: &[Self]) -> Scalars<'_> {
                Scalars::$v(s)
            }
            fn wrap_mut(s: &mut [Self]) -> ScalarsMut<'_> {
                ScalarsMut::$v(s)
            }
        }
    };
}
scalar!(u8, U8);
scalar!(u16, U16);
scalar!(u32, U32);
scalar!(u64, U64);

/// One entry of a put list: `local` goes to segment offset `offset`.
#[derive(Debug, Clone, Copy)]
pub struct IoVec<'a> {
    pub offset: usize,
    pub local: &'a [u8],
}

/// One entry of a get list: segment bytes from `offset` fill `local`.
#[derive(Debug)]
pub struct IoVecMut<'a> {
    pub offset: usize,
    pub local: &'a mut [u8],
}

/// Whether `n` bytes at `offset` lie in a segment of `seg` bytes.
pub(crate) fn bounds(seg: usize, offset: usize, n: usize) -> Result<(), RsmError> {
    if offset > seg || (offset == seg && n > 0) {
        return Err(RsmError::BadOffset);
    }
    match offset.checked_add(n) {
        Some(end) if end <= seg => Ok(()),
        _ => Err(RsmError::BadLength),
    }
}

fn is_transfer_error(e: RsmError) -> bool {
    matches!(
        e,
        RsmError::ConnAborted
            | RsmError::RemoteNodeUnreachable
            | RsmError::BarrierFailure
            | RsmError::Timeout
            | RsmError::InsufficientResources
    )
}

/// What an import, its barriers and its mapping share; the connection ends when the
/// last of them goes (or at [`Import::disconnect`]).
struct Inner {
    b: Box<dyn ImportBackend>,
    len: usize,
    node: NodeId,
    id: SegmentId,
    perm: Perm,
    map_supported: bool,
    mode: AtomicU32,
    /// Transfer errors so far, and the last one's code: barriers compare.
    errors: AtomicU64,
    last_error: AtomicI32,
    mapped: AtomicBool,
    disconnected: AtomicBool,
}

impl Inner {
    fn transfer<R>(
        &self,
        f: impl FnOnce(&dyn ImportBackend) -> Result<R, RsmError>,
    ) -> Result<R, RsmError> {
        if self.disconnected.load(Ordering::Acquire) {
            return Err(RsmError::SegNotConnected);
        }
        let r = f(&*self.b);
        if let Err(e) = &r {
            if is_transfer_error(*e) {
                self.last_error.store(e.code(), Ordering::Relaxed);
                self.errors.fetch_add(1, Ordering::AcqRel);
            }
        }
        r
    }

    fn writable(&self) -> Result<(), RsmError> {
        if self.perm.can_write() {
            Ok(())
        } else {
            Err(RsmError::PermDenied)
        }
    }

    fn readable(&self) -> Result<(), RsmError> {
        if self.perm.can_read() {
            Ok(())
        } else {
            Err(RsmError::PermDenied)
        }
    }

    /// Ends the connection once: `drain` for an explicit disconnect, which may wait
    /// for what was posted before it; a dropped handle does not wait.
    fn end(&self, drain: bool) -> Result<(), RsmError> {
        if self.disconnected.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        if drain {
            self.b.disconnect()
        } else {
            self.b.disconnect_now()
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let _ = self.end(false);
    }
}

/// A connection to a published segment. `Send + Sync`: every method takes `&self`.
/// Dropping it disconnects (once no [`Mapping`] or [`Barrier`] of it is left).
pub struct Import {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Import {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Import")
            .field("node", &self.inner.node)
            .field("id", &self.inner.id)
            .field("len", &self.inner.len)
            .field("perm", &self.inner.perm)
            .finish_non_exhaustive()
    }
}

impl Import {
    pub(crate) fn new(
        b: Box<dyn ImportBackend>,
        node: NodeId,
        id: SegmentId,
        perm: Perm,
        map_supported: bool,
    ) -> Import {
        Import {
            inner: Arc::new(Inner {
                len: b.len(),
                b,
                node,
                id,
                perm,
                map_supported,
                mode: AtomicU32::new(BarrierMode::Implicit.code()),
                errors: AtomicU64::new(0),
                last_error: AtomicI32::new(0),
                mapped: AtomicBool::new(false),
                disconnected: AtomicBool::new(false),
            }),
        }
    }

    pub fn len(&self) -> usize {
        self.inner.len
    }
    /// Never true: segments have at least one page.
    pub fn is_empty(&self) -> bool {
        false
    }
    pub fn node(&self) -> NodeId {
        self.inner.node
    }
    pub fn id(&self) -> SegmentId {
        self.inner.id
    }
    pub fn perm(&self) -> Perm {
        self.inner.perm
    }

    /// Writes `data` at `offset`.
    pub fn put(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        let i = &self.inner;
        bounds(i.len, offset, data.len())?;
        i.writable()?;
        if data.is_empty() {
            return Ok(());
        }
        i.transfer(|b| b.put(offset, data))
    }

    /// The longest put that is applied at the exporter as one write (one frame: its
    /// first 8 bytes stored last, `net::memory`); a longer put is cut into several,
    /// applied in order. None where any put is one write in place (shm). A caller that
    /// leads a run with a flag word keeps the run within this.
    pub fn one_write(&self) -> Option<usize> {
        self.inner.b.one_write()
    }

    /// Writes `data` at `offset` as [`Import::put`] does, but over a network controller
    /// in explicit barrier mode the write is only queued: it leaves in the datagram of
    /// the next put toward the same node (of any import), or at the controller's next
    /// progress (a poll, a wait, its agent), whichever comes first. A small write that
    /// should ride with the write that follows it (an MPI ack with the reply) costs no
    /// datagram of its own. Elsewhere (shm, implicit mode) it is [`Import::put`].
    pub fn put_deferred(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        let i = &self.inner;
        bounds(i.len, offset, data.len())?;
        i.writable()?;
        if data.is_empty() {
            return Ok(());
        }
        i.transfer(|b| b.put_deferred(offset, data))
    }

    /// Reads `out.len()` bytes from `offset`.
    pub fn get(&self, offset: usize, out: &mut [u8]) -> Result<(), RsmError> {
        let i = &self.inner;
        bounds(i.len, offset, out.len())?;
        i.readable()?;
        if out.is_empty() {
            return Ok(());
        }
        i.transfer(|b| b.get(offset, out))
    }

    fn scalar_bounds<T: Scalar>(&self, offset: usize, n: usize) -> Result<(), RsmError> {
        let seg = self.inner.len;
        if offset > seg || (offset == seg && n > 0) {
            return Err(RsmError::BadOffset);
        }
        if offset % T::SIZE != 0 {
            return Err(RsmError::MisalignedOffset);
        }
        let bytes = n.checked_mul(T::SIZE).ok_or(RsmError::BadLength)?;
        bounds(seg, offset, bytes)
    }

    /// Writes `data.len()` scalars (RSMAPI's repeat count) from `offset`, which must be
    /// a multiple of the scalar's size; each scalar is one access of its width.
    pub fn put_scalars<T: Scalar>(&self, offset: usize, data: &[T]) -> Result<(), RsmError> {
        self.scalar_bounds::<T>(offset, data.len())?;
        self.inner.writable()?;
        if data.is_empty() {
            return Ok(());
        }
        self.inner
            .transfer(|b| b.put_scalars(offset, T::wrap(data)))
    }

    /// Reads `out.len()` scalars from `offset` (aligned to the scalar's size).
    pub fn get_scalars<T: Scalar>(&self, offset: usize, out: &mut [T]) -> Result<(), RsmError> {
        self.scalar_bounds::<T>(offset, out.len())?;
        self.inner.readable()?;
        if out.is_empty() {
            return Ok(());
        }
        self.inner
            .transfer(|b| b.get_scalars(offset, T::wrap_mut(out)))
    }

    /// Writes `data` at `offset + 8`, then the 64-bit `flag` at `offset` (a multiple of
    /// 8), ordered after it: an exporter that sees `flag` (with
    /// [`crate::Export::load_u64`]) sees the data. The postbox pattern of a put-based
    /// ping-pong or a message queue, as one call: over the network both go to the
    /// exporter in one datagram (one write when they fit a frame), where a put, an
    /// `order` and a flag put are two. In implicit mode it returns once both are in
    /// remote memory.
    pub fn put_with_flag(&self, offset: usize, flag: u64, data: &[u8]) -> Result<(), RsmError> {
        self.scalar_bounds::<u64>(offset, 1)?;
        bounds(self.inner.len, offset, data.len().saturating_add(8))?;
        self.inner.writable()?;
        self.inner.transfer(|b| b.put_with_flag(offset, flag, data))
    }

    /// Writes a list of 1 to 16 pieces (`BadSgio` otherwise). Every entry is checked
    /// before any is written.
    pub fn putv(&self, ios: &[IoVec<'_>]) -> Result<(), RsmError> {
        if ios.is_empty() || ios.len() > MAX_SGIO {
            return Err(RsmError::BadSgio);
        }
        for io in ios {
            bounds(self.inner.len, io.offset, io.local.len())?;
        }
        self.inner.writable()?;
        for io in ios.iter().filter(|io| !io.local.is_empty()) {
            self.inner.transfer(|b| b.put(io.offset, io.local))?;
        }
        Ok(())
    }

    /// Reads a list of 1 to 16 pieces (`BadSgio` otherwise), every entry checked first.
    pub fn getv(&self, ios: &mut [IoVecMut<'_>]) -> Result<(), RsmError> {
        if ios.is_empty() || ios.len() > MAX_SGIO {
            return Err(RsmError::BadSgio);
        }
        for io in ios.iter() {
            bounds(self.inner.len, io.offset, io.local.len())?;
        }
        self.inner.readable()?;
        for io in ios.iter_mut().filter(|io| !io.local.is_empty()) {
            self.inner.transfer(|b| b.get(io.offset, io.local))?;
        }
        Ok(())
    }

    /// The segment as memory of this process (shm only: other controllers give
    /// `MapFailed`, RSMAPI having no "not supported" error). Loads and stores through
    /// it are the exporter's memory, with no checks: after an unpublish they go to a
    /// detached copy. A read-only import's mapping is read-only (a store faults).
    /// `SegAlreadyMapped` while a mapping of this import exists.
    pub fn map(&self) -> Result<Mapping, RsmError> {
        let i = &self.inner;
        if !i.map_supported {
            return Err(RsmError::MapFailed);
        }
        if i.mapped.swap(true, Ordering::AcqRel) {
            return Err(RsmError::SegAlreadyMapped);
        }
        match i.transfer(|b| b.map()) {
            Ok((ptr, len)) => Ok(Mapping {
                inner: self.inner.clone(),
                ptr: ptr as usize,
                len,
            }),
            Err(e) => {
                i.mapped.store(false, Ordering::Release);
                Err(e)
            }
        }
    }

    /// Whether a [`Mapping`] of this import exists.
    pub fn is_mapped(&self) -> bool {
        self.inner.mapped.load(Ordering::Acquire)
    }

    pub fn set_mode(&self, mode: BarrierMode) -> Result<(), RsmError> {
        self.inner.mode.store(mode.code(), Ordering::Relaxed);
        self.inner.b.set_mode(mode);
        Ok(())
    }

    pub fn mode(&self) -> BarrierMode {
        BarrierMode::from_code(self.inner.mode.load(Ordering::Relaxed)).unwrap_or_default()
    }

    /// A barrier over this import's transfers (the type is recorded: myrix keeps one
    /// scope per barrier whatever the type).
    pub fn init_barrier(&self, kind: BarrierType) -> Result<Barrier, RsmError> {
        if self.inner.disconnected.load(Ordering::Acquire) {
            return Err(RsmError::SegNotConnected);
        }
        Ok(Barrier {
            inner: self.inner.clone(),
            kind,
            open: None,
        })
    }

    /// Whether the connection still stands: `ConnAborted` once the segment was
    /// unpublished or its exporter died.
    pub fn check(&self) -> Result<(), RsmError> {
        self.inner.transfer(|b| b.check())
    }

    /// Signals the exporter.
    pub fn signal_post(&self, flags: SignalFlags) -> Result<(), RsmError> {
        self.inner.transfer(|b| b.signal_post(flags))
    }

    /// Waits for a signal from the exporter and consumes it; `Timeout` when `timeout`
    /// passes (None: no limit), `ConnAborted` if the segment goes away meanwhile.
    pub fn signal_wait(&self, timeout: Option<Duration>) -> Result<(), RsmError> {
        self.inner.b.signal_wait(timeout).map(|_| ())
    }

    /// As [`Import::signal_wait`], and says who posted it (the exporter's node and pid).
    pub fn signal_wait_from(&self, timeout: Option<Duration>) -> Result<SignalSender, RsmError> {
        self.inner.b.signal_wait(timeout)
    }

    /// Consumes a pending signal if there is one, without waiting.
    pub fn take_signal(&self) -> Result<Option<SignalSender>, RsmError> {
        match self.inner.b.signal_wait(Some(Duration::ZERO)) {
            Ok(s) => Ok(Some(s)),
            Err(RsmError::Timeout) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A descriptor that polls readable while a signal is pending; owned by the handle.
    pub fn pollfd(&self) -> Result<RawFd, RsmError> {
        self.inner.b.pollfd()
    }

    pub fn release_pollfd(&self) -> Result<(), RsmError> {
        self.inner.b.release_pollfd()
    }

    /// Disconnects. `SegStillMapped` while a [`Mapping`] exists: the connection then
    /// ends when the mapping is dropped.
    pub fn disconnect(self) -> Result<(), RsmError> {
        if self.is_mapped() {
            return Err(RsmError::SegStillMapped);
        }
        self.inner.end(true)
    }
}

/// A barrier of one import (RSMAPI's `rsmapi_barrier_t`): open, order, close.
pub struct Barrier {
    inner: Arc<Inner>,
    kind: BarrierType,
    /// The backend's token and the error count at open.
    open: Option<(u64, u64)>,
}

impl std::fmt::Debug for Barrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Barrier")
            .field("kind", &self.kind)
            .field("open", &self.open.is_some())
            .finish_non_exhaustive()
    }
}

impl Barrier {
    pub fn kind(&self) -> BarrierType {
        self.kind
    }

    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Opens a scope; `BarrierOpenFailed` if already open, `ConnAborted` if the
    /// connection is already gone.
    pub fn open(&mut self) -> Result<(), RsmError> {
        if self.open.is_some() {
            return Err(RsmError::BarrierOpenFailed);
        }
        let errors = self.inner.errors.load(Ordering::Acquire);
        let token = self.inner.transfer(|b| b.open_scope())?;
        self.open = Some((token, errors));
        Ok(())
    }

    /// Orders the scope's writes before it before those after it.
    pub fn order(&mut self) -> Result<(), RsmError> {
        if self.open.is_none() {
            return Err(RsmError::BarrierNotOpened);
        }
        self.inner.transfer(|b| b.order())
    }

    /// Closes the scope: returns once every write of it is in the exporter's memory;
    /// `ConnAborted` if the segment was unpublished or its exporter died, or another
    /// transfer error (`BarrierFailure` …) if any transfer since open failed.
    /// `BarrierNotOpened` without an open. The barrier may be opened again after.
    pub fn close(&mut self) -> Result<(), RsmError> {
        let (token, errors) = self.open.take().ok_or(RsmError::BarrierNotOpened)?;
        if self.inner.disconnected.load(Ordering::Acquire) {
            return Err(RsmError::SegNotConnected);
        }
        self.inner.b.close_scope(token)?;
        if self.inner.errors.load(Ordering::Acquire) != errors {
            let last = RsmError::from_code(self.inner.last_error.load(Ordering::Relaxed));
            return Err(match last {
                Some(RsmError::ConnAborted) => RsmError::ConnAborted,
                Some(RsmError::RemoteNodeUnreachable) => RsmError::RemoteNodeUnreachable,
                _ => RsmError::BarrierFailure,
            });
        }
        Ok(())
    }
}

/// An import's segment mapped into this process ([`Import::map`]). Unmapped (from the
/// import's point of view) on drop or [`Mapping::unmap`]; the memory stays valid as long
/// as the `Mapping` lives.
pub struct Mapping {
    inner: Arc<Inner>,
    ptr: usize,
    len: usize,
}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapping")
            .field("ptr", &(self.ptr as *const u8))
            .field("len", &self.len)
            .finish()
    }
}

impl Mapping {
    /// The segment's first byte. Writable only if the import is.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr as *mut u8
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true: segments have at least one page.
    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn unmap(self) -> Result<(), RsmError> {
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        self.inner.mapped.store(false, Ordering::Release);
    }
}
