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

use myrix_rsm_proto::engine::{check_range, Memory};
use myrix_rsm_proto::hash::FastMap;
use myrix_rsm_proto::RsmError;
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
        if let Some(dst) = self.at(seg, offset, data.len()) {
            // SAFETY: `at` found the range inside a bound segment.
            unsafe { store(dst, data) };
        }
    }

    /// One lookup of the segment for the check and the write (the engine's remote
    /// writes; the default would look twice).
    #[allow(unsafe_code)]
    fn write_checked(&mut self, seg: SegmentId, offset: u64, data: &[u8]) -> Result<(), RsmError> {
        let r = *self.map.get(&seg).ok_or(RsmError::ConnAborted)?;
        check_range(r.len as u64, offset, data.len() as u64)?;
        // SAFETY: `offset + data.len() <= r.len` (checked just above), and `r` is a
        // bound segment's range.
        unsafe { store(r.ptr + offset as usize, data) };
        Ok(())
    }

    #[allow(unsafe_code)]
    fn read(&self, seg: SegmentId, offset: u64, out: &mut [u8]) {
        let Some(src) = self.at(seg, offset, out.len()) else {
            return;
        };
        // SAFETY: as for `store`: the range is inside mapped, readable segment memory,
        // and `out` is the engine's own buffer.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, out.as_mut_ptr(), out.len()) };
    }
}

/// Stores `data` at address `dst`, first word last (module docs).
///
/// # Safety
/// `dst..dst + data.len()` lies inside a range bound in the table (mapped and
/// writable while it is there).
#[allow(unsafe_code)]
unsafe fn store(dst: usize, data: &[u8]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_checked_writes_inside_and_refuses_outside() {
        let mut backing = vec![0u64; 4]; // 32 bytes, 8-aligned
        let mut segs = Segments::default();
        let r = Range {
            ptr: backing.as_mut_ptr() as usize,
            len: 32,
        };
        segs.bind(SegmentId(7), r);
        let data: Vec<u8> = (1..=12).collect();
        assert_eq!(segs.write_checked(SegmentId(7), 8, &data), Ok(()));
        assert_eq!(
            segs.write_checked(SegmentId(7), 24, &data),
            Err(RsmError::BadLength)
        );
        assert_eq!(
            segs.write_checked(SegmentId(7), 33, &[1]),
            Err(RsmError::BadOffset)
        );
        assert_eq!(
            segs.write_checked(SegmentId(7), u64::MAX, &data),
            Err(RsmError::BadOffset)
        );
        assert_eq!(
            segs.write_checked(SegmentId(8), 0, &data),
            Err(RsmError::ConnAborted)
        );
        // The same answers as the engine's own check (`Memory::len` + `check_range`).
        for off in [0u64, 20, 21, 32, 33] {
            let want = check_range(32, off, data.len() as u64);
            let mut copy = Segments::default();
            let mut b2 = vec![0u64; 4];
            copy.bind(
                SegmentId(7),
                Range {
                    ptr: b2.as_mut_ptr() as usize,
                    len: 32,
                },
            );
            assert_eq!(
                copy.write_checked(SegmentId(7), off, &data),
                want,
                "offset {off}"
            );
        }
        let mut out = [0u8; 32];
        segs.read(SegmentId(7), 0, &mut out);
        let mut want = [0u8; 32];
        want[8..20].copy_from_slice(&data);
        assert_eq!(out, want, "only the accepted write landed");
    }
}
