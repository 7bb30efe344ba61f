//! What the generated Fortran entry points share: the address sentinels of
//! `mpif.h` (`MPI_BOTTOM`, `MPI_IN_PLACE`, `MPI_STATUS_IGNORE`, …), blank-padded
//! strings and the error argument.
//!
//! A sentinel is a variable in a common block (`COMMON /MPIF_BOTTOM/ MPI_BOTTOM`):
//! Fortran passes its address, which the library recognises. The program's object
//! files define the block (gfortran emits common blocks as common symbols) or, if
//! none does, the library's definition below is used; either way the one the
//! dynamic linker resolves is what `dlsym(RTLD_DEFAULT, …)` returns, so that is the
//! address compared against, looked up once.

use crate::abi::MPI_Status;
use std::cell::UnsafeCell;
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::OnceLock;

/// A common block's storage (`n` INTEGERs), defined here for programs whose own
/// objects do not.
#[repr(C)]
pub struct Common<const N: usize>(UnsafeCell<[c_int; N]>);
// SAFETY: only its address is used by the library; Fortran code may write it.
unsafe impl<const N: usize> Sync for Common<N> {}

macro_rules! commons {
    ($($sym:ident: $n:expr;)*) => {$(
        #[no_mangle]
        pub static $sym: Common<$n> = Common(UnsafeCell::new([0; $n]));
    )*};
}

commons! {
    mpif_bottom_: 1;
    mpif_in_place_: 1;
    mpif_buffer_automatic_: 1;
    mpif_status_ignore_: 8;
    mpif_statuses_ignore_: 8;
    mpif_errcodes_ignore_: 1;
    mpif_unweighted_: 1;
    mpif_weights_empty_: 1;
}

/// The resolved addresses of the sentinels, in the order of `NAMES`.
struct Sentinels([usize; 8]);

const NAMES: [&std::ffi::CStr; 8] = [
    c"mpif_bottom_",
    c"mpif_in_place_",
    c"mpif_buffer_automatic_",
    c"mpif_status_ignore_",
    c"mpif_statuses_ignore_",
    c"mpif_errcodes_ignore_",
    c"mpif_unweighted_",
    c"mpif_weights_empty_",
];

fn sentinels() -> &'static Sentinels {
    static S: OnceLock<Sentinels> = OnceLock::new();
    S.get_or_init(|| {
        // SAFETY: dlsym with RTLD_DEFAULT and NUL-terminated names; a missing symbol
        // is NULL, which never equals a Fortran argument's address.
        Sentinels(NAMES.map(|n| unsafe { libc::dlsym(libc::RTLD_DEFAULT, n.as_ptr()) } as usize))
    })
}

fn is(p: *const c_void, which: usize) -> bool {
    !p.is_null() && p as usize == sentinels().0[which]
}

/// A choice buffer: `MPI_BOTTOM` is C's NULL, `MPI_IN_PLACE` 1,
/// `MPI_BUFFER_AUTOMATIC` 2 (mpi.h's values).
pub fn buf(p: *mut c_void) -> *mut c_void {
    if is(p, 0) {
        std::ptr::null_mut()
    } else if is(p, 1) {
        std::ptr::without_provenance_mut(1)
    } else if is(p, 2) {
        std::ptr::without_provenance_mut(2)
    } else {
        p
    }
}

/// A status argument: `MPI_STATUS_IGNORE` is NULL; otherwise the Fortran
/// INTEGER(MPI_STATUS_SIZE) array is the C `MPI_Status` (eight ints, SOURCE, TAG and
/// ERROR first), so `MPI_Status_c2f` is the identity and no copy is made.
pub fn status(p: *mut c_int) -> *mut MPI_Status {
    if is(p.cast(), 3) {
        std::ptr::null_mut()
    } else {
        p.cast()
    }
}

/// An array of statuses: `MPI_STATUSES_IGNORE` (or `MPI_STATUS_IGNORE`) is NULL.
pub fn statuses(p: *mut c_int) -> *mut MPI_Status {
    if is(p.cast(), 4) {
        std::ptr::null_mut()
    } else {
        status(p)
    }
}

/// `array_of_errcodes`: `MPI_ERRCODES_IGNORE` is NULL.
pub fn errcodes(p: *mut c_int) -> *mut c_int {
    if is(p.cast(), 5) {
        std::ptr::null_mut()
    } else {
        p
    }
}

/// Graph weights: `MPI_UNWEIGHTED` is 10, `MPI_WEIGHTS_EMPTY` 11 (mpi.h's values).
pub fn weights(p: *mut c_int) -> *mut c_int {
    if is(p.cast(), 6) {
        std::ptr::without_provenance_mut(10)
    } else if is(p.cast(), 7) {
        std::ptr::without_provenance_mut(11)
    } else {
        p
    }
}

/// A count as a length (negative: none; the C function reports the error).
pub fn len(n: c_int) -> usize {
    usize::try_from(n).unwrap_or(0)
}

/// Fortran indices count from 1: the first `n` entries of `p` that are indices
/// (not `MPI_UNDEFINED`, which is negative) get 1 added.
///
/// # Safety
/// `p` holds at least `n` ints when `n > 0`.
pub unsafe fn one_based(p: *mut c_int, n: c_int) {
    for i in 0..len(n) {
        // SAFETY: i < n, the caller's bound.
        let x = unsafe { &mut *p.add(i) };
        if *x >= 0 {
            *x += 1;
        }
    }
}

/// Stores the result in `ierror` (Fortran always passes it; NULL is tolerated).
///
/// # Safety
/// `ierror` is NULL or an INTEGER.
pub unsafe fn set(ierror: *mut c_int, r: c_int) {
    if !ierror.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *ierror = r };
    }
}

/// A Fortran string argument as C's: trailing blanks dropped, cut at a NUL.
///
/// # Safety
/// `p` holds `len` bytes.
pub unsafe fn str_in(p: *const c_char, len: usize) -> CString {
    let bytes: &[u8] = if p.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract (gfortran passes the length).
        unsafe { std::slice::from_raw_parts(p.cast(), len) }
    };
    let bytes = bytes.split(|&b| b == 0).next().unwrap_or(&[]);
    let end = bytes.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    CString::new(&bytes[..end]).unwrap_or_default()
}

/// The longest string a C function writes without being told a size
/// (`MPI_MAX_LIBRARY_VERSION_STRING`).
const C_MAX: usize = 8192;

/// A C buffer for an output string of a Fortran variable of `len` characters: large
/// enough for any MPI_MAX_* string and for `len` (MPI_Info_get writes up to the
/// caller's `valuelen`).
pub fn str_buf(len: usize) -> Vec<c_char> {
    vec![0; C_MAX.max(len) + 1]
}

/// Copies the C string in `s` to the Fortran variable `p` of `len` characters,
/// truncated or blank-padded.
///
/// # Safety
/// `p` holds `len` bytes.
pub unsafe fn str_out(p: *mut c_char, len: usize, s: &[c_char]) {
    if p.is_null() {
        return;
    }
    let n = s.iter().position(|&c| c == 0).unwrap_or(s.len()).min(len);
    // SAFETY: the caller's contract.
    let out = unsafe { std::slice::from_raw_parts_mut(p, len) };
    out[..n].copy_from_slice(&s[..n]);
    out[n..].fill(b' ' as c_char);
}
