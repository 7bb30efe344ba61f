//! The exporter's memory as the engine reaches it: published segments by id, each a
//! raw range of this process's memory (library-allocated with guard pages, by the shm
//! controller's helper, or the caller's).
//!
//! Only the engine touches a segment through this table, and only while the
//! controller's core lock is held; a range leaves the table (unpublish, rebind,
//! destroy) under that lock before its memory is freed or given back, so no access
//! outlives the memory. The application may load and store the same memory meanwhile
//! (through `Export::as_ptr`): as on real RSM hardware, concurrent access to one byte
//! from both sides is the application's to order.
//!
//! **First word last.** A write that starts 8-aligned and is at least 8 bytes long is
//! stored from its ninth byte on first, then (after a release fence) its first 8
//! bytes with one atomic store (so an 8-byte write is never seen torn): an exporter that sees the first word with an acquire
//! load ([`crate::Export::load_u64`]) sees the rest of that write. A put travels as one
//! write when it fits one frame (the board's MTU less the headers; 64-byte postboxes
//! always do), so a flag word at the start of such a put is published after its data
//! with no second put (MPI's network channel relies on it).

use myrix_rsm_proto::engine::Memory;
use myrix_rsm_proto::hash::FastMap;
use myrix_rsm_proto::SegmentId;

/// One segment's memory: `ptr..ptr + len`, kept as integers so the table is `Send`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Range {
    pub(crate) ptr: usize,
    pub(crate) len: usize,
}

/// Published segments' memory; see the module docs.
#[derive(Debug, Default)]
pub(crate) struct Segments {
    map: FastMap<SegmentId, Range>,
}

impl Segments {
    /// `seg` is backed by `r` from now on. The caller guarantees `r` is mapped
    /// readable and writable until it is removed or replaced here.
    pub(crate) fn bind(&mut self, seg: SegmentId, r: Range) {
        self.map.insert(seg, r);
    }

    pub(crate) fn unbind(&mut self, seg: SegmentId) {
        self.map.remove(&seg);
    }

    /// The range at `offset` of `n` bytes, if it lies inside the segment (checked again
    /// here although the engine checked: a mistake must not write outside).
    fn at(&self, seg: SegmentId, offset: u64, n: usize) -> Option<usize> {
        let r = self.map.get(&seg)?;
        let off = usize::try_from(offset).ok()?;
        let end = off.checked_add(n)?;
        (end <= r.len).then_some(r.ptr + off)
    }
}

impl Memory for Segments {
    fn len(&self, seg: SegmentId) -> Option<u64> {
        self.map.get(&seg).map(|r| r.len as u64)
    }

    #[allow(unsafe_code)]
    fn write(&mut self, seg: SegmentId, offset: u64, data: &[u8]) {
        let Some(dst) = self.at(seg, offset, data.len()) else {
            return;
        };
        if data.len() >= 8 && dst % 8 == 0 {
            // SAFETY: as below, for the bytes after the first 8.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    data.as_ptr().add(8),
                    (dst + 8) as *mut u8,
                    data.len() - 8,
                )
            };
            std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
            let mut w = [0u8; 8];
            w.copy_from_slice(&data[..8]);
            // SAFETY: `dst` is 8-aligned and in the range (as below); an atomic view of
            // segment memory is always defined.
            unsafe { std::sync::atomic::AtomicU64::from_ptr(dst as *mut u64) }
                .store(u64::from_ne_bytes(w), std::sync::atomic::Ordering::Release);
            return;
        }
        // SAFETY: `dst..dst + data.len()` lies inside a range `bind` was given, which
        // its caller keeps mapped and writable while it is in the table (we hold the
        // table, so it is); `data` is a frame buffer, not segment memory, so the two do
        // not overlap.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, data.len()) };
    }

    #[allow(unsafe_code)]
    fn read(&self, seg: SegmentId, offset: u64, out: &mut [u8]) {
        let Some(src) = self.at(seg, offset, out.len()) else {
            return;
        };
        // SAFETY: as for `write`: the range is inside mapped, readable segment memory,
        // and `out` is the engine's own buffer.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, out.as_mut_ptr(), out.len()) };
    }
}
