//! The one-element paths of a window: a put or get of one run of a predefined
//! type, and an accumulate, fetch-and-op or compare-and-swap of one element of a
//! predefined type, on memory mapped here. They skip the datatype objects, the
//! packing and the result vectors of the general paths in `ops.rs`, because
//! these calls are the latency benchmarks' (and lock and counter codes') whole
//! work. Anything they do not cover (a dynamic window, a rank on another node for
//! the accumulates) is handed back untouched to the general path.

use super::ops::{byte, bytes, Span};
use super::Window;
use crate::datatype::{Basic, Datatype};
use crate::op::BuiltinOp;
use crate::rma::{acc, Flavor, RmaError};

/// The widest predefined element (MPI_C_LONG_DOUBLE_COMPLEX, 32 bytes) fits.
const ELEM_MAX: usize = 64;

/// `std::ptr::copy` of `n` bytes, with the sizes of one predefined element done
/// inline: a one-element put or get would otherwise call `memmove` through the
/// PLT, its size dispatch included, for a single load and store.
///
/// # Safety
/// As `std::ptr::copy(src, dst, n)`.
#[inline(always)]
unsafe fn copy_small(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: every arm: the caller's contract for n bytes at src and dst; each
    // value is loaded whole before it is stored, so overlap is harmless.
    unsafe {
        match n {
            8 => dst
                .cast::<u64>()
                .write_unaligned(src.cast::<u64>().read_unaligned()),
            4 => dst
                .cast::<u32>()
                .write_unaligned(src.cast::<u32>().read_unaligned()),
            16 => dst
                .cast::<u128>()
                .write_unaligned(src.cast::<u128>().read_unaligned()),
            _ => std::ptr::copy(src, dst, n),
        }
    }
}

impl Window {
    /// MPI_Put of `n` contiguous bytes at `disp` (in displacement units) of rank
    /// `r`: the path of a put of a predefined type.
    ///
    /// # Safety
    /// `origin` is readable for `n` bytes.
    #[inline]
    pub unsafe fn put_bytes(
        &self,
        origin: *const u8,
        n: usize,
        r: usize,
        disp: isize,
    ) -> Result<(), RmaError> {
        let t = match self.fast_span(r, disp, n)? {
            Span::Here(t) => t,
            Span::There(rem, off) => {
                // SAFETY: the origin's contract.
                rem.put(off, unsafe { bytes(origin, n) });
                return Ok(());
            }
            Span::Dyn(rem, off) => {
                // SAFETY: the origin's contract.
                // n elements of MPI_BYTE: the records cover the whole run.
                self.put_dyn(rem, off, unsafe { bytes(origin, n) }, n, &byte());
                return Ok(());
            }
            Span::Cut(r, off) => {
                // SAFETY: the origin's contract.
                let data = unsafe { bytes(origin, n) };
                return self.cut_put(r, off, data, n, &byte());
            }
            Span::Skip => return Ok(()),
        };
        if n == 0 {
            return Ok(());
        }
        // SAFETY: the origin's contract; the target range is inside the mapped
        // window (fast_span). They may overlap in a shared window.
        unsafe { copy_small(origin, t, n) };
        Ok(())
    }

    /// MPI_Get of `n` contiguous bytes (a predefined type).
    ///
    /// # Safety
    /// `origin` is writable for `n` bytes.
    #[inline]
    pub unsafe fn get_bytes(
        &self,
        origin: *mut u8,
        n: usize,
        r: usize,
        disp: isize,
    ) -> Result<(), RmaError> {
        let t = match self.fast_span(r, disp, n)? {
            Span::Here(t) => t,
            Span::There(rem, off) => {
                if n > 0 {
                    // SAFETY: the origin's contract (writable for n bytes).
                    rem.get(off, unsafe { std::slice::from_raw_parts_mut(origin, n) });
                }
                return Ok(());
            }
            Span::Dyn(rem, off) => {
                if n > 0 {
                    // SAFETY: the origin's contract (writable for n bytes).
                    let out = unsafe { std::slice::from_raw_parts_mut(origin, n) };
                    self.get_dyn(rem, off, out, n, &byte());
                }
                return Ok(());
            }
            Span::Cut(r, off) => {
                // SAFETY: the origin's contract (writable for n bytes; n > 0 here).
                let out = unsafe { std::slice::from_raw_parts_mut(origin, n) };
                return self.cut_get(r, off, out, n, &byte());
            }
            Span::Skip => return Ok(()),
        };
        if n == 0 {
            return Ok(());
        }
        // SAFETY: as in put_bytes.
        unsafe { copy_small(t, origin, n) };
        Ok(())
    }

    /// [`Window::span`] for `n` contiguous bytes.
    #[inline]
    fn fast_span(&self, r: usize, disp: isize, n: usize) -> Result<Span<'_>, RmaError> {
        if self.flavor == Flavor::Dynamic {
            let dt = Datatype::basic(Basic::Byte);
            return self.span(r, disp, n, &dt);
        }
        let t = self.target(r)?;
        let off = disp as i128 * t.disp_unit as i128;
        let hi = off + n as i128;
        if off < 0 || hi > t.len as i128 {
            return Err(RmaError::Range {
                rank: r,
                lo: off,
                hi,
                len: t.len,
            });
        }
        if let Some(rem) = &t.remote {
            return Ok(Span::There(rem, off as usize));
        }
        Ok(Span::Here((t.base as *mut u8).wrapping_add(off as usize)))
    }
}

impl Window {
    /// One element of the predefined `basic` combined with `op` at `disp` of rank
    /// `r` (MPI_Accumulate, Get_accumulate and Fetch_and_op of count 1), atomic
    /// with respect to every other accumulate of that element ([`acc`]'s rules:
    /// the same path as the general one takes for it). `origin` is read unless
    /// `op` is MPI_NO_OP (NULL then allowed); the old value goes to `result`
    /// unless it is NULL.
    ///
    /// `None`, with nothing done, when the element is not in memory mapped here (a
    /// dynamic window, a rank on another node) or wider than any predefined type:
    /// the caller takes the general path.
    ///
    /// # Safety
    /// `origin` (unless NULL or the op NO_OP) is readable and `result` (unless
    /// NULL) writable for `basic.size()` bytes.
    #[inline]
    pub unsafe fn acc_one(
        &self,
        op: BuiltinOp,
        basic: Basic,
        origin: *const u8,
        result: *mut u8,
        r: usize,
        disp: isize,
    ) -> Option<Result<(), RmaError>> {
        let w = acc::width(basic);
        if self.flavor == Flavor::Dynamic || w > ELEM_MAX || w == 0 {
            return None;
        }
        // The general path checks the op before the target, and so does this one.
        if !acc::allowed(op, basic) {
            return Some(Err(RmaError::Op));
        }
        let t = match self.fast_span(r, disp, w) {
            Ok(Span::Here(t)) => t,
            Ok(_) => return None,
            Err(e) => return Some(Err(e)),
        };
        let zero = [0u8; ELEM_MAX];
        let o = if op == BuiltinOp::NoOp || origin.is_null() {
            &zero[..w]
        } else {
            // SAFETY: the caller's contract for origin.
            unsafe { bytes(origin, w) }
        };
        // The old value lands here first: `result` may lie in this rank's own
        // window, the very element being updated.
        let mut old = [0u8; ELEM_MAX];
        let res = (!result.is_null()).then_some(&mut old[..w]);
        // SAFETY: t is w bytes inside the mapped window (fast_span).
        let done = unsafe { acc::accumulate_one(op, basic, o, t, res, self.targets[r].ctrl()) };
        if done.is_err() {
            return Some(Err(RmaError::Op));
        }
        if !result.is_null() {
            // SAFETY: the caller's contract for result.
            unsafe { copy_small(old.as_ptr(), result, w) };
        }
        Some(Ok(()))
    }

    /// MPI_Compare_and_swap of one element of the predefined `basic` at `disp` of
    /// rank `r`, on memory mapped here: as [`Window::compare_and_swap`], without
    /// its vectors. `None`, with nothing done, where [`Window::acc_one`] gives it.
    ///
    /// # Safety
    /// `origin` and `compare` are readable and `result` writable for
    /// `basic.size()` bytes.
    #[inline]
    pub unsafe fn cas_one(
        &self,
        basic: Basic,
        origin: *const u8,
        compare: *const u8,
        result: *mut u8,
        r: usize,
        disp: isize,
    ) -> Option<Result<(), RmaError>> {
        let w = acc::width(basic);
        if self.flavor == Flavor::Dynamic || w > ELEM_MAX || w == 0 {
            return None;
        }
        if !acc::cas_allowed(basic) {
            return Some(Err(RmaError::Type(
                "compare_and_swap needs an integer, logical or byte type",
            )));
        }
        let t = match self.fast_span(r, disp, w) {
            Ok(Span::Here(t)) => t,
            Ok(_) => return None,
            Err(e) => return Some(Err(e)),
        };
        let mut old = [0u8; ELEM_MAX];
        // SAFETY: the caller's contract for origin and compare; t is w bytes inside
        // the mapped window (fast_span).
        let done = unsafe {
            acc::compare_and_swap(
                basic,
                bytes(origin, w),
                bytes(compare, w),
                t,
                &mut old[..w],
                self.targets[r].ctrl(),
            )
        };
        if done.is_err() {
            return Some(Err(RmaError::Type("compare_and_swap arguments")));
        }
        // SAFETY: the caller's contract for result.
        unsafe { copy_small(old.as_ptr(), result, w) };
        Some(Ok(()))
    }
}
