//! What the `mpi_f08` entry points with choice buffers share: reading the C
//! descriptor (`CFI_cdesc_t`, Fortran 2018 §18.5) gfortran passes for a
//! `TYPE(*), DIMENSION(..)` dummy of a `BIND(C)` procedure, and for a
//! `CHARACTER(LEN=*)` one.
//!
//! A contiguous actual argument (a whole array, a scalar, a contiguous section) is
//! passed on as its base address. A non-contiguous section (`a(1, :)`, `a(::2)`) is
//! copied into a contiguous temporary for a call that is finished with the buffer
//! when it returns, and copied back afterwards when the C parameter is not `const`;
//! a call that keeps the address (nonblocking, persistent and one-sided operations,
//! attached buffers, split collectives) cannot be given a temporary, so it fails with
//! `MPI_ERR_BUFFER` through the error handler. That is why `MPI_SUBARRAYS_SUPPORTED`
//! is `.FALSE.` in the `mpi_f08` module.

use crate::abi::{MPI_ERR_BUFFER, MPI_SUCCESS};
use std::os::raw::{c_char, c_int, c_void};

/// One dimension of a descriptor (`CFI_dim_t`): extents and byte strides.
#[repr(C)]
pub struct CfiDim {
    pub lower_bound: isize,
    pub extent: isize,
    pub sm: isize,
}

/// `CFI_cdesc_t` as gfortran's `ISO_Fortran_binding.h` lays it out, followed by
/// `rank` dimensions.
#[repr(C)]
pub struct Cfi {
    pub base_addr: *mut c_void,
    pub elem_len: usize,
    pub version: c_int,
    pub rank: i8,
    pub attribute: i8,
    pub type_: i16,
    dim: [CfiDim; 0],
}

/// The largest rank Fortran allows (`CFI_MAX_RANK`).
const MAX_RANK: usize = 15;

/// The dimensions of descriptor `d` (none for a scalar). A raw pointer, not a
/// reference: the dimensions lie past the fixed part.
///
/// # Safety
/// `d` is a descriptor with `rank` dimensions after it.
unsafe fn dims<'a>(d: *const Cfi) -> &'a [CfiDim] {
    // SAFETY: the caller's contract.
    unsafe {
        let rank = usize::try_from((*d).rank).unwrap_or(0).min(MAX_RANK);
        std::slice::from_raw_parts(std::ptr::addr_of!((*d).dim).cast::<CfiDim>(), rank)
    }
}

/// What a call does with a choice buffer after it returns.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Done with it: a non-contiguous section is copied.
    Copy,
    /// Keeps the address: a non-contiguous section is an error.
    Keep,
    /// Only its address matters (`MPI_Get_address`, `MPI_Free_mem`).
    Addr,
}

/// A choice buffer as the C function sees it.
pub struct Choice {
    ptr: *mut c_void,
    /// The temporary of a non-contiguous section and the descriptor to copy back
    /// into (when the C parameter is not `const`).
    copy: Option<(Vec<u8>, *const Cfi)>,
}

/// The byte offsets of a descriptor's elements from its base address, in array
/// element order (the first subscript varies fastest).
///
/// # Safety
/// `d` is a valid descriptor.
unsafe fn offsets(d: *const Cfi) -> Vec<isize> {
    // SAFETY: the caller's contract.
    let dims = unsafe { dims(d) };
    let n: usize = dims
        .iter()
        .map(|x| usize::try_from(x.extent).unwrap_or(0))
        .product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0isize; dims.len()];
    for _ in 0..n {
        out.push(idx.iter().zip(dims).map(|(i, x)| i * x.sm).sum());
        for (i, x) in idx.iter_mut().zip(dims) {
            *i += 1;
            if *i < x.extent {
                break;
            }
            *i = 0;
        }
    }
    out
}

impl Choice {
    /// The buffer of descriptor `d` for a call of `mode`; `out`: the C parameter
    /// is not `const`, so a temporary is copied back when dropped. Err is
    /// `MPI_ERR_BUFFER`: a non-contiguous section the call would keep.
    ///
    /// # Safety
    /// `d` is NULL or a descriptor gfortran passed.
    pub unsafe fn new(d: *const Cfi, mode: Mode, out: bool) -> Result<Choice, c_int> {
        if d.is_null() {
            return Ok(Choice {
                ptr: std::ptr::null_mut(),
                copy: None,
            });
        }
        // SAFETY: the caller's contract.
        let desc = unsafe { &*d };
        // SAFETY: as above.
        let dims = unsafe { dims(d) };
        let mut want = desc.elem_len as isize;
        let mut contiguous = true;
        for x in dims {
            if x.extent == 0 {
                // An empty section has no elements to be apart.
                contiguous = true;
                break;
            }
            if x.extent > 1 && x.sm != want {
                contiguous = false;
            }
            want = want.saturating_mul(x.extent);
        }
        if contiguous || mode == Mode::Addr {
            return Ok(Choice {
                ptr: desc.base_addr,
                copy: None,
            });
        }
        if mode == Mode::Keep {
            return Err(MPI_ERR_BUFFER);
        }
        let len = desc.elem_len;
        // SAFETY: as above.
        let offs = unsafe { offsets(d) };
        let mut tmp = vec![0u8; len * offs.len()];
        for (k, off) in offs.iter().enumerate() {
            // SAFETY: each element of the section is `len` readable bytes.
            unsafe {
                let src = desc.base_addr.cast::<u8>().offset(*off);
                std::ptr::copy_nonoverlapping(src, tmp.as_mut_ptr().add(k * len), len);
            }
        }
        let ptr = tmp.as_mut_ptr().cast();
        Ok(Choice {
            ptr,
            copy: Some((tmp, if out { d } else { std::ptr::null() })),
        })
    }

    /// The address handed to the C function.
    pub fn ptr(&self) -> *mut c_void {
        self.ptr
    }
}

impl Drop for Choice {
    fn drop(&mut self) {
        let Some((tmp, d)) = &self.copy else { return };
        if d.is_null() {
            return;
        }
        // SAFETY: `d` is the descriptor `new` read; the call has returned, so the
        // section is the caller's again.
        unsafe {
            let desc = &**d;
            let len = desc.elem_len;
            for (k, off) in offsets(*d).iter().enumerate() {
                let dst = desc.base_addr.cast::<u8>().offset(*off);
                std::ptr::copy_nonoverlapping(tmp.as_ptr().add(k * len), dst, len);
            }
        }
    }
}

/// A `CHARACTER(LEN=*)` dummy of a `BIND(C)` procedure: its address and length.
///
/// # Safety
/// `d` is NULL or a descriptor gfortran passed.
pub unsafe fn str_arg(d: *const Cfi) -> (*mut c_char, usize) {
    if d.is_null() {
        return (std::ptr::null_mut(), 0);
    }
    // SAFETY: the caller's contract.
    let desc = unsafe { &*d };
    (desc.base_addr.cast(), desc.elem_len)
}

extern "C" {
    fn MPI_Comm_fromint(i: c_int) -> usize;
    fn MPI_Win_fromint(i: c_int) -> usize;
    fn MPI_File_fromint(i: c_int) -> usize;
    fn MPI_Comm_call_errhandler(comm: usize, errorcode: c_int) -> c_int;
    fn MPI_Win_call_errhandler(win: usize, errorcode: c_int) -> c_int;
    fn MPI_File_call_errhandler(fh: usize, errorcode: c_int) -> c_int;
}

/// The object whose error handler a rejected buffer is reported to.
pub enum Obj {
    Comm(c_int),
    Win(c_int),
    File(c_int),
}

/// Reports error `r` of a call that did not reach its C function: the object's
/// error handler runs (it aborts under `MPI_ERRORS_ARE_FATAL`), then `ierror` is
/// set.
///
/// # Safety
/// `ierror` is NULL or an INTEGER.
pub unsafe fn fail(ierror: *mut c_int, r: c_int, obj: Obj) {
    debug_assert_ne!(r, MPI_SUCCESS);
    // SAFETY: plain calls into the library with handles converted as the C
    // interface wants them; an invalid handle is reported, not dereferenced.
    unsafe {
        match obj {
            Obj::Comm(h) => MPI_Comm_call_errhandler(MPI_Comm_fromint(h), r),
            Obj::Win(h) => MPI_Win_call_errhandler(MPI_Win_fromint(h), r),
            Obj::File(h) => MPI_File_call_errhandler(MPI_File_fromint(h), r),
        };
        super::rt::set(ierror, r);
    }
}

/// `==` and `/=` on the `mpi_f08` handle types (`myrix_f08_<type>_eq_` and `_ne_`,
/// named in the module's operator interfaces): handles are equal when their
/// `MPI_VAL` components are.
macro_rules! handle_ops {
    ($($eq:ident $ne:ident;)*) => {$(
        /// `==` of two handles of one type (each an INTEGER `MPI_VAL`).
        ///
        /// # Safety
        /// Both are addresses of handles.
        #[no_mangle]
        pub unsafe extern "C" fn $eq(a: *const c_int, b: *const c_int) -> c_int {
            // SAFETY: the caller's contract.
            c_int::from(unsafe { *a == *b })
        }
        /// `/=` of two handles of one type.
        ///
        /// # Safety
        /// Both are addresses of handles.
        #[no_mangle]
        pub unsafe extern "C" fn $ne(a: *const c_int, b: *const c_int) -> c_int {
            // SAFETY: the caller's contract.
            c_int::from(unsafe { *a != *b })
        }
    )*};
}

handle_ops! {
    myrix_f08_comm_eq_ myrix_f08_comm_ne_;
    myrix_f08_datatype_eq_ myrix_f08_datatype_ne_;
    myrix_f08_errhandler_eq_ myrix_f08_errhandler_ne_;
    myrix_f08_file_eq_ myrix_f08_file_ne_;
    myrix_f08_group_eq_ myrix_f08_group_ne_;
    myrix_f08_info_eq_ myrix_f08_info_ne_;
    myrix_f08_message_eq_ myrix_f08_message_ne_;
    myrix_f08_op_eq_ myrix_f08_op_ne_;
    myrix_f08_request_eq_ myrix_f08_request_ne_;
    myrix_f08_session_eq_ myrix_f08_session_ne_;
    myrix_f08_win_eq_ myrix_f08_win_ne_;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rank-1 descriptor of `n` INTEGERs `stride` apart starting at `base`.
    #[repr(C)]
    struct Desc1 {
        head: Cfi,
        dim: CfiDim,
    }

    fn desc(base: *mut c_int, n: isize, stride: isize) -> Desc1 {
        Desc1 {
            head: Cfi {
                base_addr: base.cast(),
                elem_len: 4,
                version: 1,
                rank: 1,
                attribute: 0,
                type_: 0,
                dim: [],
            },
            dim: CfiDim {
                lower_bound: 0,
                extent: n,
                sm: 4 * stride,
            },
        }
    }

    #[test]
    fn contiguous_is_passed_by_address() {
        let mut a = [1, 2, 3, 4];
        let d = desc(a.as_mut_ptr(), 4, 1);
        // SAFETY: `d` describes `a`.
        let c = unsafe { Choice::new(std::ptr::addr_of!(d).cast(), Mode::Keep, true) }
            .expect("contiguous");
        assert_eq!(c.ptr(), a.as_mut_ptr().cast());
    }

    #[test]
    fn a_section_is_copied_in_and_back() {
        let mut a = [1, 2, 3, 4, 5, 6];
        let d = desc(a.as_mut_ptr(), 3, 2);
        {
            // SAFETY: `d` describes a(1:6:2).
            let c = unsafe { Choice::new(std::ptr::addr_of!(d).cast(), Mode::Copy, true) }
                .expect("copied");
            assert_ne!(c.ptr(), a.as_mut_ptr().cast());
            // SAFETY: the temporary holds 3 INTEGERs.
            let t = unsafe { std::slice::from_raw_parts_mut(c.ptr().cast::<c_int>(), 3) };
            assert_eq!(t, [1, 3, 5]);
            t.copy_from_slice(&[7, 8, 9]);
        }
        assert_eq!(a, [7, 2, 8, 4, 9, 6]);
        // `const` parameters are not copied back; a section reversed by a negative
        // stride is gathered in its order.
        // SAFETY: a(6:2:-2).
        let d = desc(unsafe { a.as_mut_ptr().add(5) }, 3, -2);
        // SAFETY: as above.
        let c = unsafe { Choice::new(std::ptr::addr_of!(d).cast(), Mode::Copy, false) }
            .expect("copied");
        // SAFETY: the temporary holds 3 INTEGERs.
        let t = unsafe { std::slice::from_raw_parts_mut(c.ptr().cast::<c_int>(), 3) };
        assert_eq!(t, [6, 4, 2]);
        t.fill(0);
        drop(c);
        assert_eq!(a, [7, 2, 8, 4, 9, 6]);
    }

    #[test]
    fn a_kept_section_is_refused() {
        let mut a = [0; 6];
        let d = desc(a.as_mut_ptr(), 3, 2);
        // SAFETY: `d` describes a(1:6:2).
        let r = unsafe { Choice::new(std::ptr::addr_of!(d).cast(), Mode::Keep, true) };
        assert_eq!(r.err(), Some(MPI_ERR_BUFFER));
        // SAFETY: as above.
        let c = unsafe { Choice::new(std::ptr::addr_of!(d).cast(), Mode::Addr, false) }
            .expect("address");
        assert_eq!(c.ptr(), a.as_mut_ptr().cast());
    }
}
