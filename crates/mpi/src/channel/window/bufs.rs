//! The caller's buffers of `Fabric::send`/`take` ([`SrcBuf`], [`DstBuf`]): raw
//! pointers with the trait's safety promise, carried to the windows' copies, each
//! access bounds-checked against the length the caller gave.

use super::OutOfBounds;
use crate::p2p::Layout;

/// A sender's buffer: `len` bytes at `ptr`, valid until the send is reported done.
#[derive(Debug, Clone, Copy)]
pub struct SrcBuf {
    /// The bytes, or with [`LAYOUT_TAG`] set, the layout they are gathered from.
    ptr: *const u8,
    len: usize,
}

/// The top address bit, set in a buffer's pointer when it is a [`Layout`]'s address:
/// no user-space address has it on the 64-bit targets this library is built for. A
/// tag, not a third field, keeps the buffers at two words on the short-message path
/// (a third field cost the 8-byte ping-pong's send 3 instructions).
const LAYOUT_TAG: usize = 1 << (usize::BITS - 1);

/// The layout behind a tagged pointer, if it is one.
#[inline]
fn untag(p: *const u8) -> Option<*const Layout> {
    (p.addr() & LAYOUT_TAG != 0).then(|| p.map_addr(|a| a & !LAYOUT_TAG).cast())
}

// SAFETY: the caller of `Fabric::send` promised the buffer stays valid for reading
// until `SendDone`; the fabric only reads it.
unsafe impl Send for SrcBuf {}

impl SrcBuf {
    /// # Safety
    /// `ptr` is valid for reading `len` bytes for as long as the `SrcBuf` (or a copy)
    /// is used (`Fabric::send`'s promise). `ptr` may be dangling when `len` is 0.
    pub unsafe fn new(ptr: *const u8, len: usize) -> SrcBuf {
        SrcBuf { ptr, len }
    }

    /// The packed bytes of `lay`, gathered as they are copied out.
    ///
    /// # Safety
    /// `lay` and its memory stay valid for reading for as long as the `SrcBuf` (or a
    /// copy) is used (`Fabric::send_layout`'s promise).
    pub unsafe fn layout(lay: *const Layout) -> SrcBuf {
        SrcBuf {
            ptr: lay.cast::<u8>().map_addr(|a| a | LAYOUT_TAG),
            // SAFETY: the caller's promise.
            len: unsafe { (*lay).len() },
        }
    }

    /// The layout, for a gathered buffer.
    #[inline]
    pub(super) fn lay(&self) -> Option<&Layout> {
        // SAFETY: tagged only as made by `SrcBuf::layout`, valid by its promise.
        untag(self.ptr).map(|l| unsafe { &*l })
    }

    /// Copies `n` bytes from `at` to `d`, gathering them for a layout.
    ///
    /// All `n` bytes are written when it returns Ok, none when the range is out of
    /// bounds.
    ///
    /// # Safety
    /// `d` is writable for `n` bytes and overlaps no part of the buffer.
    #[inline]
    pub(super) unsafe fn gather_to(
        &self,
        at: usize,
        d: *mut u8,
        n: usize,
    ) -> Result<(), OutOfBounds> {
        match at.checked_add(n) {
            Some(end) if end <= self.len => {}
            _ => return Err(OutOfBounds),
        }
        match self.lay() {
            Some(l) => {
                // SAFETY: `d` by our caller; the layout's memory by `layout`'s promise.
                let done = unsafe { l.gather(at, d, n) };
                // Short only if an element's address overflows (no valid layout): an
                // error then, so no caller counts bytes that were never written.
                if done != n {
                    return Err(OutOfBounds);
                }
            }
            // SAFETY: in bounds (checked above) of the buffer `new` promised readable.
            None => unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(at), d, n) },
        }
        Ok(())
    }

    /// Copies `out.len()` bytes from `at` into `out`, gathering them for a layout
    /// (the queued short protocol; [`SrcBuf::copy_into`] is the postbox fast path's).
    #[inline]
    pub fn copy_into_any(&self, at: usize, out: &mut [u8]) -> Result<(), OutOfBounds> {
        if untag(self.ptr).is_none() {
            return self.copy_into(at, out);
        }
        // SAFETY: `out` is ours, writable for its length.
        unsafe { self.gather_to(at, out.as_mut_ptr(), out.len()) }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A pointer into a flat buffer. Not for a layout, which has no pointer to give:
    /// its users (`Mem::write_from`, `copy_to`, `copy_into_any`) branch to
    /// `gather_to` first, and the postbox fast path (`copy_into`) is never given one;
    /// the check is left out of this path, which every short message takes.
    pub(super) fn range(&self, at: usize, n: usize) -> Result<*const u8, OutOfBounds> {
        debug_assert!(untag(self.ptr).is_none(), "a layout read through a pointer");
        match at.checked_add(n) {
            Some(end) if end <= self.len => {
                // SAFETY: `at <= len`: inside or one past the buffer.
                Ok(unsafe { self.ptr.add(at) })
            }
            _ => Err(OutOfBounds),
        }
    }

    /// Copies `out.len()` bytes from `at` into `out`.
    #[inline]
    pub fn copy_into(&self, at: usize, out: &mut [u8]) -> Result<(), OutOfBounds> {
        let s = self.range(at, out.len())?;
        // SAFETY: `s..s+len` is inside the sender's buffer (checked), valid by
        // `Fabric::send`'s promise; `out` is ours.
        unsafe { copy_bytes(s, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Copies `n` bytes from `at` into `dst` from `dst_at` (the in-process path to
    /// self), truncating at `dst`'s capacity.
    pub fn copy_to(&self, at: usize, dst: &DstBuf, dst_at: usize, n: usize) {
        let n = n.min(dst.cap.saturating_sub(dst_at));
        if n == 0 {
            return;
        }
        if untag(self.ptr).is_some() || dst.is_layout() {
            return self.copy_to_layout(at, dst, dst_at, n);
        }
        let Ok(s) = self.range(at, n) else { return };
        // SAFETY: both ranges are inside their buffers (checked above), valid by the
        // two trait promises; a send and a receive buffer may alias only if the
        // program passed overlapping buffers, which MPI forbids.
        unsafe { std::ptr::copy(s, dst.ptr.add(dst_at), n) };
    }

    /// [`SrcBuf::copy_to`] where either side is a layout: straight from one into the
    /// other when one is flat, through a bounce buffer when both are layouts.
    #[cold]
    fn copy_to_layout(&self, at: usize, dst: &DstBuf, dst_at: usize, n: usize) {
        if !dst.is_layout() {
            // SAFETY: `dst_at + n <= cap`, inside the receive buffer (valid by
            // `Fabric::take`'s promise); MPI forbids it overlapping the send buffer.
            let _ = unsafe { self.gather_to(at, dst.ptr.add(dst_at), n) };
            return;
        }
        if let Some(s) = untag(self.ptr)
            .is_none()
            .then(|| self.range(at, n).ok())
            .flatten()
        {
            // SAFETY: `s..s+n` inside the send buffer (checked); the receive layout
            // is valid by `Fabric::take_layout`'s promise.
            unsafe { dst.scatter_from(dst_at, s, n) };
            return;
        }
        let mut tmp = vec![0u8; n];
        if self.copy_into_any(at, &mut tmp).is_ok() {
            // SAFETY: `tmp` is ours and holds n bytes.
            unsafe { dst.scatter_from(dst_at, tmp.as_ptr(), n) };
        }
    }

    /// Reads `n <= 8` bytes as a slice copy (tests of small payloads).
    pub fn get(&self, at: usize, out: &mut [u8]) -> Result<(), OutOfBounds> {
        let s = self.range(at, out.len())?;
        // SAFETY: in bounds of the sender's buffer.
        unsafe { std::ptr::copy_nonoverlapping(s, out.as_mut_ptr(), out.len()) };
        Ok(())
    }
}

/// A receiver's buffer: `cap` bytes at `ptr`, valid until its data is reported received.
#[derive(Debug, Clone, Copy)]
pub struct DstBuf {
    /// The buffer, or with [`LAYOUT_TAG`] set, the layout the bytes are scattered
    /// into.
    pub(super) ptr: *mut u8,
    pub(super) cap: usize,
}

// SAFETY: as for `SrcBuf`, with `Fabric::take`'s promise.
unsafe impl Send for DstBuf {}

impl DstBuf {
    /// # Safety
    /// `ptr` is valid for writing `cap` bytes for as long as the `DstBuf` is used
    /// (`Fabric::take`'s promise). `ptr` may be dangling when `cap` is 0.
    pub unsafe fn new(ptr: *mut u8, cap: usize) -> DstBuf {
        DstBuf { ptr, cap }
    }

    /// The first `cap` packed bytes of `lay`, scattered as they are copied in.
    ///
    /// # Safety
    /// `lay` and its memory stay valid for writing for as long as the `DstBuf` is
    /// used (`Fabric::take_layout`'s promise); `cap <= lay.len()`.
    pub unsafe fn layout(lay: *const Layout, cap: usize) -> DstBuf {
        DstBuf {
            ptr: lay.cast::<u8>().cast_mut().map_addr(|a| a | LAYOUT_TAG),
            cap,
        }
    }

    /// Whether the bytes are scattered into a layout.
    #[inline]
    pub fn is_layout(&self) -> bool {
        self.ptr.addr() & LAYOUT_TAG != 0
    }

    /// Scatters `n` bytes at `s` into the layout as packed bytes `at ..` (cut at
    /// the capacity).
    ///
    /// # Safety
    /// The buffer is a layout ([`DstBuf::layout`]); `s` is readable for `n` bytes and
    /// overlaps none of the layout's memory.
    #[inline]
    pub(super) unsafe fn scatter_from(&self, at: usize, s: *const u8, n: usize) {
        let n = n.min(self.cap.saturating_sub(at));
        if let Some(lay) = untag(self.ptr).filter(|_| n > 0) {
            // SAFETY: the layout by `layout`'s promise, `s` by our caller's.
            unsafe { (*lay).scatter(at, s, n) };
        }
    }

    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Copies `data` to the start of the buffer, truncated at its capacity. Not for
    /// a layout.
    #[inline]
    pub fn write_slice(&self, data: &[u8]) {
        let n = data.len().min(self.cap);
        if n == 0 {
            return;
        }
        // Only the direct receives (`recv_now`, claims) write a slice, and they are
        // never given a layout (the engine keeps layout receives off both paths).
        debug_assert!(!self.is_layout(), "a slice written to a layout");
        // SAFETY: `n <= cap`, inside the receive buffer (valid by `Fabric::take`'s
        // promise); `data` is ours.
        unsafe { copy_bytes(data.as_ptr(), self.ptr, n) };
    }
}

/// `copy_nonoverlapping` of `n` bytes, without a call into the C library's `memcpy`
/// for up to 64 (a short message's payload, copied twice on the critical path of a
/// ping-pong, docs/mpi-p2p.md "Session 27"): two loads and two stores of the widest
/// size that fits, overlapping in the middle. No loop, so the compiler does not turn
/// it back into a `memcpy` call.
///
/// # Safety
/// As `copy_nonoverlapping`: `s` readable and `d` writable for `n` bytes, the two
/// ranges disjoint.
#[inline(always)]
pub(crate) unsafe fn copy_bytes(s: *const u8, d: *mut u8, n: usize) {
    use std::ptr::{read_unaligned as rd, write_unaligned as wr};
    // SAFETY: in every arm each access covers `[0, k)` or `[n - k, n)` with `k <= n`,
    // inside both ranges by the caller's promise.
    unsafe {
        match n {
            0 => {}
            1..=3 => {
                *d = *s;
                *d.add(n / 2) = *s.add(n / 2);
                *d.add(n - 1) = *s.add(n - 1);
            }
            4..=7 => {
                wr(d.cast::<u32>(), rd(s.cast::<u32>()));
                wr(d.add(n - 4).cast::<u32>(), rd(s.add(n - 4).cast::<u32>()));
            }
            8..=16 => {
                wr(d.cast::<u64>(), rd(s.cast::<u64>()));
                wr(d.add(n - 8).cast::<u64>(), rd(s.add(n - 8).cast::<u64>()));
            }
            17..=32 => {
                wr(d.cast::<u128>(), rd(s.cast::<u128>()));
                wr(
                    d.add(n - 16).cast::<u128>(),
                    rd(s.add(n - 16).cast::<u128>()),
                );
            }
            33..=64 => {
                let (a, b) = (
                    rd(s.cast::<[u128; 2]>()),
                    rd(s.add(n - 32).cast::<[u128; 2]>()),
                );
                wr(d.cast::<[u128; 2]>(), a);
                wr(d.add(n - 32).cast::<[u128; 2]>(), b);
            }
            _ => std::ptr::copy_nonoverlapping(s, d, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::copy_bytes;

    #[test]
    fn copy_bytes_copies_every_length_exactly() {
        let src: Vec<u8> = (1..=100u8).collect();
        for n in 0..=100 {
            let mut dst = vec![0u8; 102];
            // SAFETY: both buffers hold at least n bytes past the offsets used.
            unsafe { copy_bytes(src.as_ptr(), dst.as_mut_ptr().add(1), n) };
            assert_eq!(&dst[1..=n], &src[..n], "length {n}");
            assert_eq!(dst[0], 0, "length {n}: wrote before");
            assert!(
                dst[n + 1..].iter().all(|&b| b == 0),
                "length {n}: wrote after"
            );
        }
    }
}
