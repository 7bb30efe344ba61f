//! An exported segment: memory of this process that importers reach by segment id.
//!
//! The front end checks what RSMAPI requires (rebind allowed and its memory aligned,
//! one destroy) and hands the rest to the controller's backend. It must never touch the
//! segment's memory itself: only the backend knows whether it is shared right now.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use myrix_rsm_proto::{AccessEntry, NodeId, Perm, RsmError, SegmentId};

use crate::backend::ExportBackend;
use crate::{ExportFlags, SignalFlags};

/// Who posted a signal, as the library recorded it (never taken from the sender's data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignalSender {
    /// The sender's node.
    pub node: NodeId,
    /// The sender's process id on its node.
    pub pid: u32,
}

/// A segment this process exports. `Send + Sync`: every method takes `&self`.
/// Dropping it destroys it (unpublishing it first).
pub struct Export {
    b: Box<dyn ExportBackend>,
    flags: ExportFlags,
    open_mode: AtomicU32,
    destroyed: AtomicBool,
}

impl std::fmt::Debug for Export {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Export")
            .field("len", &self.len())
            .field("id", &self.id())
            .finish_non_exhaustive()
    }
}

impl Export {
    pub(crate) fn new(b: Box<dyn ExportBackend>, flags: ExportFlags) -> Export {
        Export {
            b,
            flags,
            open_mode: AtomicU32::new(0o666),
            destroyed: AtomicBool::new(false),
        }
    }

    pub fn len(&self) -> usize {
        self.b.len()
    }

    /// Never true: segments have at least one page.
    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn flags(&self) -> ExportFlags {
        self.flags
    }

    /// The exported memory in this process. Loads and stores through it are seen by
    /// importers while the segment is published.
    pub fn as_ptr(&self) -> *mut u8 {
        self.b.as_ptr()
    }

    /// On a network controller: takes in the frames that arrived (a non-blocking
    /// receive), as [`Export::load_u64`] does before its load; nothing on shm. For an
    /// exporter that polls its memory through [`Export::as_ptr`] and only needs the
    /// frames applied (no bounds check, no look at the segment's state).
    #[inline]
    pub fn poll(&self) {
        self.b.poll();
    }

    /// Reads the 8-byte word at `offset` (8-aligned) of this segment with acquire
    /// ordering: how an exporter polls a flag that importers set with an 8-byte
    /// [`crate::Import::put_scalars`], after which the bytes they put before it are
    /// visible. `BadOffset`/`BadLength` outside the segment, `MisalignedOffset`.
    /// On a network controller each call also takes in the frames that arrived (a
    /// non-blocking receive), so a polling exporter applies remote writes itself.
    #[allow(unsafe_code)]
    pub fn load_u64(&self, offset: usize) -> Result<u64, RsmError> {
        crate::import::bounds(self.len(), offset, 8)?;
        if offset % 8 != 0 {
            return Err(RsmError::MisalignedOffset);
        }
        // Over the network: apply what arrived first (the caller drives the endpoint).
        self.b.poll();
        // SAFETY: in bounds and 8-aligned (segments are page-aligned) in memory that
        // stays mapped while `self` lives; other processes write it only with atomic
        // 8-byte accesses or plain copies, and an atomic load of it is always defined.
        let word = unsafe { AtomicU64::from_ptr(self.as_ptr().add(offset).cast::<u64>()) };
        Ok(word.load(Ordering::Acquire))
    }

    /// Copies this segment's bytes at `offset` into `out`: the exporter's own view of
    /// what importers wrote (after [`Export::load_u64`] saw their flag).
    #[allow(unsafe_code)]
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), RsmError> {
        crate::import::bounds(self.len(), offset, out.len())?;
        // SAFETY: in bounds of memory mapped while `self` lives; `out` is ours and
        // cannot overlap a segment the library mapped.
        unsafe {
            std::ptr::copy_nonoverlapping(self.as_ptr().add(offset), out.as_mut_ptr(), out.len())
        };
        Ok(())
    }

    /// The id it is published under, while published.
    pub fn id(&self) -> Option<SegmentId> {
        self.b.id()
    }

    /// The mode an empty access list grants every node (three octal digits; default
    /// 0o666, RSMAPI's "creation mode"); `BadPerms` if not a valid mode.
    pub fn set_open_mode(&self, mode: Perm) -> Result<(), RsmError> {
        let mode = Perm::granted(mode.0)?;
        self.open_mode.store(mode.0, Ordering::Relaxed);
        Ok(())
    }

    /// Publishes under `id` (None: one assigned from the user range) with access list
    /// `acl` (empty: every node, with the open mode). `SegAlreadyPublished`,
    /// `ReservedSegid` (an id below 0x8000_0000), `SegidInUse`, `BadAcl`, `BadPerms`.
    pub fn publish(
        &self,
        id: Option<SegmentId>,
        acl: &[AccessEntry],
    ) -> Result<SegmentId, RsmError> {
        if let Some(id) = id {
            SegmentId::user(id.0)?;
        }
        self.b.publish(id, acl, self.mode())
    }

    /// A new access list for later connections; connected importers keep theirs.
    /// `SegNotPublished` if not published.
    pub fn republish(&self, acl: &[AccessEntry]) -> Result<(), RsmError> {
        self.b.republish(acl, self.mode())
    }

    /// Withdraws the segment: importers' later accesses fail with `ConnAborted` and
    /// nothing they write afterwards reaches this memory. `SegNotPublished` if not
    /// published.
    pub fn unpublish(&self) -> Result<(), RsmError> {
        self.b.unpublish()
    }

    /// Backs the segment with other memory, `ptr` (page-aligned) for segment bytes
    /// `offset..offset + len`. Importers see the new memory's contents from now on,
    /// without reconnecting. The shm controller rebinds the whole segment only
    /// (`offset` 0 → else `BadOffset`, `len` the segment's → else `BadLength`).
    /// `RebindNotAllowed` without [`ExportFlags::allow_rebind`].
    ///
    /// # Safety
    /// As for [`crate::Controller::export_create_at`], for the new memory. Library
    /// memory of the old binding is freed; caller memory of the old binding stays
    /// valid (a private copy) and is the caller's again.
    #[allow(unsafe_code)]
    pub unsafe fn rebind(&self, ptr: *mut u8, offset: usize, len: usize) -> Result<(), RsmError> {
        if !self.flags.allow_rebind {
            return Err(RsmError::RebindNotAllowed);
        }
        if ptr.is_null() {
            return Err(RsmError::BadAddr);
        }
        // SAFETY: the caller's promise, passed on.
        unsafe { self.b.rebind(ptr, offset, len) }
    }

    /// Signals every connected importer (RSMAPI's `rsm_intr_signal_post` on an export
    /// handle). `SegNotPublished` if not published.
    pub fn signal_post(&self, flags: SignalFlags) -> Result<(), RsmError> {
        self.b.signal_post(flags)
    }

    /// Waits for a signal from an importer and consumes it; `Timeout` when `timeout`
    /// passes first (None: no limit).
    pub fn signal_wait(&self, timeout: Option<Duration>) -> Result<(), RsmError> {
        self.b.signal_wait(timeout).map(|_| ())
    }

    /// As [`Export::signal_wait`], and says who posted the signal.
    pub fn signal_wait_from(&self, timeout: Option<Duration>) -> Result<SignalSender, RsmError> {
        self.b.signal_wait(timeout)
    }

    /// Consumes a pending signal if there is one, without waiting.
    pub fn take_signal(&self) -> Result<Option<SignalSender>, RsmError> {
        match self.b.signal_wait(Some(Duration::ZERO)) {
            Ok(s) => Ok(Some(s)),
            Err(RsmError::Timeout) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A descriptor that polls readable while a signal is pending (RSMAPI's
    /// `rsm_memseg_get_pollfd`); consume signals with [`Export::signal_wait`] or
    /// [`Export::take_signal`]. It may rarely poll readable with nothing pending (a
    /// take finds nothing then). Owned by the handle: do not close it.
    pub fn pollfd(&self) -> Result<RawFd, RsmError> {
        self.b.pollfd()
    }

    /// Gives the descriptor back (RSMAPI's `rsm_memseg_release_pollfd`).
    pub fn release_pollfd(&self) -> Result<(), RsmError> {
        self.b.release_pollfd()
    }

    /// Destroys the segment: unpublishes it if published, frees library memory (caller
    /// memory stays the caller's, with its contents).
    pub fn destroy(self) -> Result<(), RsmError> {
        self.destroy_once()
    }

    fn destroy_once(&self) -> Result<(), RsmError> {
        if self.destroyed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        self.b.destroy()
    }

    fn mode(&self) -> Perm {
        Perm(self.open_mode.load(Ordering::Relaxed))
    }
}

impl Drop for Export {
    fn drop(&mut self) {
        let _ = self.destroy_once();
    }
}
