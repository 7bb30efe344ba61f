//! What every exported function shares: the panic guard, and the checks that turn C's
//! pointers and numbers into Rust values or an `RSMERR_*` number.
//!
//! The library cannot tell a valid pointer from a stray one; it refuses NULL,
//! misaligned and wrapping pointers, lengths no object can have, and negative
//! offsets. What a non-NULL pointer points at is the caller's responsibility, as in C.

use std::borrow::Cow;
use std::ffi::{c_int, c_ulong};
use std::panic::{catch_unwind, AssertUnwindSafe};

use myrix_rsm::RsmError;

pub const RSM_SUCCESS: c_int = 0;
/// RSMPI's "internal error": the library failed (a panic caught at the boundary).
pub const RSMERR_INTERNAL_ERROR: c_int = 100;
/// RSMPI's "bad arguments", which rsm_intr_signal_wait_pollfd's manual page names.
pub const RSMERR_BAD_ARGS_ERRORS: c_int = 117;

pub type Res<T = ()> = Result<T, RsmError>;

/// Runs an exported function's body: `RSM_SUCCESS`, the error's number, or
/// `RSMERR_INTERNAL_ERROR` if the body panicked (no panic crosses into C).
pub fn guard(body: impl FnOnce() -> Res) -> c_int {
    guard_code(|| body().map(|()| RSM_SUCCESS))
}

/// As [`guard`], for bodies that choose a number of their own on success.
pub fn guard_code(body: impl FnOnce() -> Res<c_int>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => e.code(),
        Err(payload) => {
            // Dropping a payload can itself panic; forget it instead.
            std::mem::forget(payload);
            RSMERR_INTERNAL_ERROR
        }
    }
}

/// An offset into a segment (`off_t` or `offset_t`): not negative.
pub fn offset(off: i64) -> Res<usize> {
    usize::try_from(off).map_err(|_| RsmError::BadOffset)
}

/// `n` items of `size` bytes, as a byte count no object can exceed (`isize::MAX`).
pub fn byte_len(n: c_ulong, size: usize) -> Res<usize> {
    usize::try_from(n)
        .ok()
        .and_then(|n| n.checked_mul(size))
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or(RsmError::BadLength)
}

/// A caller's pointer to `len` bytes: not NULL, and the range does not wrap.
pub fn check_range(ptr: usize, len: usize) -> Res {
    if ptr == 0 {
        return Err(RsmError::BadAddr);
    }
    if len > isize::MAX as usize {
        return Err(RsmError::BadLength);
    }
    ptr.checked_add(len).ok_or(RsmError::BadAddr).map(|_| ())
}

/// Writes `value` to the caller's `*p`.
///
/// # Safety
/// `p` is NULL or points to writable memory for a `T`.
pub unsafe fn write_out<T>(p: *mut T, value: T) -> Res {
    if p.is_null() {
        return Err(RsmError::BadAddr);
    }
    // SAFETY: not NULL; the caller promises it points to a writable T; unaligned
    // writes are allowed for any address.
    unsafe { p.write_unaligned(value) };
    Ok(())
}

/// Reads the caller's `*p`.
///
/// # Safety
/// `p` is NULL or points to a readable, initialized `T`.
pub unsafe fn read_in<T: Copy>(p: *const T) -> Res<T> {
    if p.is_null() {
        return Err(RsmError::BadAddr);
    }
    // SAFETY: not NULL; the caller promises a readable T there.
    Ok(unsafe { p.read_unaligned() })
}

/// The caller's `len` bytes at `p`.
///
/// # Safety
/// `p` is NULL or points to `len` readable bytes that nothing writes during the call.
pub unsafe fn bytes<'a>(p: *const u8, len: usize) -> Res<&'a [u8]> {
    check_range(p as usize, len)?;
    // SAFETY: not NULL, len ≤ isize::MAX, the range does not wrap; the caller promises
    // the bytes are readable; u8 needs no alignment.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// The caller's `len` writable bytes at `p`.
///
/// # Safety
/// `p` is NULL or points to `len` writable bytes nothing else uses during the call.
pub unsafe fn bytes_mut<'a>(p: *mut u8, len: usize) -> Res<&'a mut [u8]> {
    check_range(p as usize, len)?;
    // SAFETY: as in `bytes`, and the caller promises the bytes are writable and not
    // aliased during the call.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

/// The caller's `n` values at `p`; copied if `p` is not aligned for `T`.
///
/// # Safety
/// `p` is NULL or points to `n` readable `T`s that nothing writes during the call.
pub unsafe fn values<'a, T: Copy>(p: *const T, n: c_ulong) -> Res<Cow<'a, [T]>> {
    let size = std::mem::size_of::<T>();
    let len = byte_len(n, size)?;
    check_range(p as usize, len)?;
    let n = len / size;
    if (p as usize) % std::mem::align_of::<T>() == 0 {
        // SAFETY: not NULL, aligned, n·size ≤ isize::MAX without wrapping; the caller
        // promises n readable values.
        Ok(Cow::Borrowed(unsafe { std::slice::from_raw_parts(p, n) }))
    } else {
        // SAFETY: each read is within the range checked above; unaligned reads are fine.
        Ok(Cow::Owned(
            (0..n)
                .map(|i| unsafe { p.add(i).read_unaligned() })
                .collect(),
        ))
    }
}

/// Fills the caller's `n` values at `p` with `fill`, which receives a slice to write.
///
/// # Safety
/// `p` is NULL or points to `n` writable `T`s nothing else uses during the call.
pub unsafe fn fill_values<T: Copy + Default>(
    p: *mut T,
    n: c_ulong,
    fill: impl FnOnce(&mut [T]) -> Res,
) -> Res {
    let size = std::mem::size_of::<T>();
    let len = byte_len(n, size)?;
    check_range(p as usize, len)?;
    let n = len / size;
    if (p as usize) % std::mem::align_of::<T>() == 0 {
        // SAFETY: not NULL, aligned, in range; the caller promises n writable values
        // not used elsewhere during the call.
        fill(unsafe { std::slice::from_raw_parts_mut(p, n) })
    } else {
        let mut tmp = vec![T::default(); n];
        fill(&mut tmp)?;
        for (i, v) in tmp.into_iter().enumerate() {
            // SAFETY: within the range checked above; unaligned writes are fine.
            unsafe { p.add(i).write_unaligned(v) };
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_internal_errors() {
        assert_eq!(guard(|| Ok(())), 0);
        assert_eq!(guard(|| Err(RsmError::BadOffset)), 18);
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let code = guard(|| panic!("boom"));
        std::panic::set_hook(prev);
        assert_eq!(code, RSMERR_INTERNAL_ERROR);
    }

    #[test]
    fn lengths_offsets_and_ranges() {
        assert_eq!(offset(-1), Err(RsmError::BadOffset));
        assert_eq!(offset(4096), Ok(4096));
        assert_eq!(byte_len(c_ulong::MAX, 8), Err(RsmError::BadLength));
        assert_eq!(byte_len(3, 8), Ok(24));
        assert_eq!(check_range(0, 0), Err(RsmError::BadAddr));
        assert_eq!(check_range(usize::MAX - 4, 8), Err(RsmError::BadAddr));
        assert_eq!(check_range(8, usize::MAX), Err(RsmError::BadLength));
    }

    #[test]
    fn unaligned_values_are_copied() {
        let buf = [0u8, 1, 0, 2, 0, 3, 0];
        // SAFETY: three u16s fit in buf from byte 1.
        let v = unsafe { values(buf.as_ptr().add(1) as *const u16, 3) }.unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0], u16::from_ne_bytes([1, 0]));
        let mut out = [0u8; 9];
        // SAFETY: four u16s fit in out from byte 1.
        unsafe {
            fill_values(out.as_mut_ptr().add(1) as *mut u16, 4, |s| {
                s.copy_from_slice(&[1, 2, 3, 4]);
                Ok(())
            })
        }
        .unwrap();
        assert_eq!(&out[1..3], &1u16.to_ne_bytes());
        assert_eq!(&out[7..9], &4u16.to_ne_bytes());
    }
}
