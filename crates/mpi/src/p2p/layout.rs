//! A message's bytes where they lie in the caller's memory when they are not one
//! block: `count` elements of a derived datatype at a base address (issue 23,
//! "non-contiguous data packed without an extra copy"). A fabric that can
//! ([`super::Fabric::layouts`]) gathers a send's packed bytes straight from it into
//! its postboxes and pool blocks, and scatters a receive's straight into it, piece by
//! piece at any offset of the packed stream: no temporary the size of the message on
//! either side.
//!
//! The engine and the fabric hold a `*const Layout` as they hold a raw data pointer:
//! the caller (the C layer, which keeps the `Layout` boxed in its request) promises
//! it stays valid, and its memory readable or writable, until the request completes.

use crate::datatype::Datatype;

/// `count` elements of `dt` at `base`: `len` bytes once packed.
pub struct Layout {
    base: *mut u8,
    count: usize,
    dt: Datatype,
    len: usize,
}

// SAFETY: a `Layout` is the caller's buffer with the promise that it stays valid until
// its request completes; it is used by the one thread that drives the engine.
unsafe impl Send for Layout {}
// SAFETY: as above: shared references only read `base`, `count` and the datatype.
unsafe impl Sync for Layout {}

impl std::fmt::Debug for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Layout")
            .field("count", &self.count)
            .field("len", &self.len)
            .finish()
    }
}

impl Layout {
    /// `None` when the packed size does not fit a `usize`.
    ///
    /// # Safety
    /// Every byte of the `count` elements' map at `base` (`base` may be NULL with
    /// absolute displacements: MPI_BOTTOM) stays readable (a send) or writable (a
    /// receive) for as long as the layout is used.
    pub unsafe fn new(base: *mut u8, count: usize, dt: Datatype) -> Option<Layout> {
        let len = dt.size().checked_mul(count)?;
        Some(Layout {
            base,
            count,
            dt,
            len,
        })
    }

    /// The packed length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies packed bytes `at .. at + n` (cut at the packed length) to `dst`;
    /// returns the bytes copied.
    ///
    /// # Safety
    /// `dst` is writable for `n` bytes and overlaps none of the layout's memory.
    #[inline]
    pub unsafe fn gather(&self, at: usize, dst: *mut u8, n: usize) -> usize {
        // SAFETY: the layout's memory is readable by `new`'s promise; `dst` by ours.
        unsafe { self.dt.pack_raw(self.base, self.count, at, dst, n) }
    }

    /// Copies `n` bytes at `src` into the layout as packed bytes `at .. at + n` (cut
    /// at the packed length: the rest of a truncated message is dropped); returns
    /// the bytes copied.
    ///
    /// # Safety
    /// `src` is readable for `n` bytes and overlaps none of the layout's memory.
    #[inline]
    pub unsafe fn scatter(&self, at: usize, src: *const u8, n: usize) -> usize {
        // SAFETY: the layout's memory is writable by `new`'s promise; `src` by ours.
        unsafe { self.dt.unpack_raw(src, n, self.base, self.count, at) }
    }
}

#[cfg(test)]
mod tests {
    use super::Layout;
    use crate::datatype::{Basic, Datatype};

    /// Gathered in pieces of every size from every offset, a layout's bytes are its
    /// packed form; scattered back the same way into a cleared buffer, they land
    /// where they came from and nowhere else.
    #[test]
    fn pieces_at_any_offset_pack_and_unpack_like_the_whole() {
        let d = Datatype::basic(Basic::Double);
        let v = Datatype::vector(3, 2, -4, &d).unwrap(); // negative stride
        let mut src: Vec<u8> = (1..=255u8).cycle().take(512).collect();
        let base = src.as_mut_ptr().wrapping_add(256);
        let count = 2;
        let mut whole = vec![0u8; v.size() * count];
        // SAFETY: the elements lie inside `src` (256 bytes either side of base).
        unsafe { v.pack(base, count, &mut whole) };
        // SAFETY: as above.
        let lay = unsafe { Layout::new(base, count, v.clone()) }.unwrap();
        assert_eq!(lay.len(), whole.len());
        let mut dst = vec![0u8; 512];
        let dbase = dst.as_mut_ptr().wrapping_add(256);
        // SAFETY: as above, in `dst`.
        let back = unsafe { Layout::new(dbase, count, v.clone()) }.unwrap();
        for piece in [1, 3, 8, 13, 96] {
            let mut got = vec![0u8; whole.len()];
            let mut at = 0;
            while at < whole.len() {
                let n = piece.min(whole.len() - at);
                // SAFETY: got holds the n bytes from at.
                assert_eq!(unsafe { lay.gather(at, got.as_mut_ptr().add(at), n) }, n);
                at += n;
            }
            assert_eq!(got, whole, "gathered in pieces of {piece}");
            // SAFETY: dst is ours; nothing else uses it now.
            unsafe { std::ptr::write_bytes(dst.as_mut_ptr(), 0, 512) };
            let mut at = 0;
            while at < whole.len() {
                let n = piece.min(whole.len() - at);
                // SAFETY: whole holds the n bytes from at.
                assert_eq!(unsafe { back.scatter(at, whole.as_ptr().add(at), n) }, n);
                at += n;
            }
            // Every byte of the map came back, and nothing else was written.
            for (i, (&s, &d)) in src.iter().zip(dst.iter()).enumerate() {
                assert!(d == 0 || d == s, "byte {i} written wrongly");
            }
            assert_eq!(dst.iter().filter(|&&b| b != 0).count(), whole.len());
        }
        // Past the packed length nothing is copied (a truncated message's tail).
        let mut out = [0u8; 8];
        // SAFETY: out holds 8 bytes.
        assert_eq!(unsafe { lay.gather(whole.len(), out.as_mut_ptr(), 8) }, 0);
    }
}
