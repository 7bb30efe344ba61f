//! MPI-5.0's Fortran type registration (§21.4.1): `MPI_Abi_get_fortran_info`,
//! `MPI_Abi_set_fortran_info`, `MPI_Abi_get_fortran_booleans`,
//! `MPI_Abi_set_fortran_booleans`.
//!
//! myrix builds its own Fortran bindings (`mpif.h`, `use mpi`) for gfortran's
//! default kinds, so the library knows the Fortran environment from the start: the
//! sizes come from the datatype table (`MPI_INTEGER`, `MPI_REAL`, ...), an optional
//! type is "supported" when the table has it, and the LOGICAL values of every kind
//! the table has are gfortran's (.TRUE. = 1, .FALSE. = 0). That counts as the
//! standard's first call to the setters, so `MPI_Abi_set_fortran_info`, and
//! `MPI_Abi_set_fortran_booleans` for a size already known, answer `MPI_ERR_ABI`
//! and change nothing. Booleans of other power-of-two sizes (up to 16 bytes) may be
//! set once each. This module must never change how the library reads a LOGICAL.

use crate::abi::*;
use crate::ffi::{finish, mpi_fn, put};
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::{LazyLock, Mutex};

/// `MPI_LOGICAL16`, `MPI_INTEGER16`, `MPI_REAL2`, `MPI_REAL16`, `MPI_COMPLEX4`,
/// `MPI_COMPLEX32` (mpi.h): optional types the datatype table may lack.
const MPI_LOGICAL16: Handle = 0x2e0;
const MPI_INTEGER16: Handle = 0x2e1;
const MPI_REAL2: Handle = 0x2ca;
const MPI_REAL16: Handle = 0x2e2;
const MPI_COMPLEX4: Handle = 0x2d3;
const MPI_COMPLEX32: Handle = 0x2eb;

/// The largest LOGICAL the booleans may describe, in bytes.
const LOGICAL_MAX: usize = 16;

/// A LOGICAL's (.TRUE., .FALSE.) bytes.
type Booleans = (Vec<u8>, Vec<u8>);

/// Booleans the program set for sizes the library did not know, by size.
static SET_BOOLEANS: LazyLock<Mutex<HashMap<usize, Booleans>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn size_of(dt: Handle) -> Option<usize> {
    crate::datatype::lookup(dt).ok().map(|t| t.size())
}

/// The pairs `MPI_Abi_get_fortran_info` returns.
pub fn fortran_info() -> Vec<(String, String)> {
    let mut v = Vec::new();
    for (key, dt) in [
        ("mpi_logical_size", MPI_LOGICAL),
        ("mpi_integer_size", MPI_INTEGER),
        ("mpi_real_size", MPI_REAL),
        ("mpi_double_precision_size", MPI_DOUBLE_PRECISION),
    ] {
        if let Some(n) = size_of(dt) {
            v.push((key.to_string(), n.to_string()));
        }
    }
    for (key, dt) in [
        ("mpi_logical1_supported", MPI_LOGICAL1),
        ("mpi_logical2_supported", MPI_LOGICAL2),
        ("mpi_logical4_supported", MPI_LOGICAL4),
        ("mpi_logical8_supported", MPI_LOGICAL8),
        ("mpi_logical16_supported", MPI_LOGICAL16),
        ("mpi_integer1_supported", MPI_INTEGER1),
        ("mpi_integer2_supported", MPI_INTEGER2),
        ("mpi_integer4_supported", MPI_INTEGER4),
        ("mpi_integer8_supported", MPI_INTEGER8),
        ("mpi_integer16_supported", MPI_INTEGER16),
        ("mpi_real2_supported", MPI_REAL2),
        ("mpi_real4_supported", MPI_REAL4),
        ("mpi_real8_supported", MPI_REAL8),
        ("mpi_real16_supported", MPI_REAL16),
        ("mpi_complex4_supported", MPI_COMPLEX4),
        ("mpi_complex8_supported", MPI_COMPLEX8),
        ("mpi_complex16_supported", MPI_COMPLEX16),
        ("mpi_complex32_supported", MPI_COMPLEX32),
        ("mpi_double_complex_supported", MPI_DOUBLE_COMPLEX),
    ] {
        let yes = size_of(dt).is_some();
        v.push((
            key.to_string(),
            if yes { "true" } else { "false" }.to_string(),
        ));
    }
    v
}

/// Whether the library's own bindings have a LOGICAL of `size` bytes.
fn known_logical(size: usize) -> bool {
    [
        MPI_LOGICAL1,
        MPI_LOGICAL2,
        MPI_LOGICAL4,
        MPI_LOGICAL8,
        MPI_LOGICAL16,
    ]
    .into_iter()
    .any(|dt| size_of(dt) == Some(size))
}

/// A checked LOGICAL size: a power of two of at most [`LOGICAL_MAX`] bytes.
fn logical_size(n: c_int) -> Result<usize, c_int> {
    match usize::try_from(n) {
        Ok(s) if s.is_power_of_two() && s <= LOGICAL_MAX => Ok(s),
        _ => Err(MPI_ERR_ARG),
    }
}

/// gfortran's .TRUE. (1) or .FALSE. (0) in `size` bytes, little-endian.
fn gfortran_value(size: usize, truth: bool) -> Vec<u8> {
    let mut v = vec![0u8; size];
    v[0] = u8::from(truth);
    v
}

/// The (true, false) values known for `size`, if any.
pub fn booleans(size: usize) -> Option<Booleans> {
    if known_logical(size) {
        return Some((gfortran_value(size, true), gfortran_value(size, false)));
    }
    let set = SET_BOOLEANS.lock().unwrap_or_else(|p| p.into_inner());
    set.get(&size).cloned()
}

/// Records the program's (true, false) values for a size the library does not know;
/// `MPI_ERR_ABI` when the size is known or was set before.
pub fn set_booleans(size: usize, t: Vec<u8>, f: Vec<u8>) -> Result<(), c_int> {
    if known_logical(size) {
        return Err(MPI_ERR_ABI);
    }
    let mut set = SET_BOOLEANS.lock().unwrap_or_else(|p| p.into_inner());
    if set.contains_key(&size) {
        return Err(MPI_ERR_ABI);
    }
    set.insert(size, (t, f));
    Ok(())
}

/// Reads `size` bytes from a C pointer (NULL: `MPI_ERR_ARG`).
///
/// # Safety
/// `p` is NULL or valid for `size` bytes (the C caller's contract).
unsafe fn read_bytes(p: *const c_void, size: usize) -> Result<Vec<u8>, c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL and valid for `size` bytes by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), size) }.to_vec())
}

mpi_fn! {
    fn MPI_Abi_get_fortran_info / PMPI_Abi_get_fortran_info(info: *mut MPI_Info) -> c_int {
        let r = crate::info::insert(fortran_info())
            // SAFETY: info is NULL or an MPI_Info.
            .and_then(|h| unsafe { put(info, h) });
        finish(MPI_COMM_WORLD, "MPI_Abi_get_fortran_info", r)
    }
}

mpi_fn! {
    fn MPI_Abi_set_fortran_info / PMPI_Abi_set_fortran_info(info: MPI_Info) -> c_int {
        // A bad handle is the caller's first error; a good one meets the library's
        // own Fortran registration (the module doc).
        let r = crate::info::pairs(info).and(Err(MPI_ERR_ABI));
        finish(MPI_COMM_WORLD, "MPI_Abi_set_fortran_info", r)
    }
}

mpi_fn! {
    fn MPI_Abi_get_fortran_booleans / PMPI_Abi_get_fortran_booleans(logical_size: c_int, logical_true: *mut c_void, logical_false: *mut c_void, is_set: *mut c_int) -> c_int {
        let r = logical_size_checked(logical_size, logical_true, logical_false).and_then(|size| {
            match booleans(size) {
                Some((t, f)) => {
                    // SAFETY: both point to `size` writable bytes (checked non-NULL
                    // above; the length is the caller's contract).
                    unsafe {
                        std::ptr::copy_nonoverlapping(t.as_ptr(), logical_true.cast::<u8>(), size);
                        std::ptr::copy_nonoverlapping(f.as_ptr(), logical_false.cast::<u8>(), size);
                    }
                    // SAFETY: is_set is NULL or an int.
                    unsafe { put(is_set, 1) }
                }
                // SAFETY: is_set is NULL or an int.
                None => unsafe { put(is_set, 0) },
            }
        });
        finish(MPI_COMM_WORLD, "MPI_Abi_get_fortran_booleans", r)
    }
}

mpi_fn! {
    fn MPI_Abi_set_fortran_booleans / PMPI_Abi_set_fortran_booleans(logical_size: c_int, logical_true: *mut c_void, logical_false: *mut c_void) -> c_int {
        let r = logical_size_checked(logical_size, logical_true, logical_false).and_then(|size| {
            // SAFETY: both are non-NULL and hold `size` bytes (the caller's contract).
            let t = unsafe { read_bytes(logical_true, size) }?;
            // SAFETY: as above.
            let f = unsafe { read_bytes(logical_false, size) }?;
            if t == f {
                return Err(MPI_ERR_ARG);
            }
            set_booleans(size, t, f)
        });
        finish(MPI_COMM_WORLD, "MPI_Abi_set_fortran_booleans", r)
    }
}

/// The size, checked, with both value pointers non-NULL.
fn logical_size_checked(n: c_int, t: *mut c_void, f: *mut c_void) -> Result<usize, c_int> {
    let size = logical_size(n)?;
    if t.is_null() || f.is_null() {
        return Err(MPI_ERR_ARG);
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_come_from_the_datatype_table() {
        let info = fortran_info();
        let get = |k: &str| {
            info.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get("mpi_integer_size").as_deref(), Some("4"));
        assert_eq!(get("mpi_double_precision_size").as_deref(), Some("8"));
        assert_eq!(get("mpi_logical4_supported").as_deref(), Some("true"));
        assert_eq!(
            get("mpi_logical16_supported").as_deref(),
            Some(if size_of(MPI_LOGICAL16).is_some() {
                "true"
            } else {
                "false"
            })
        );
    }

    #[test]
    fn booleans_known_sizes_refuse_a_set_and_others_take_one() {
        assert_eq!(logical_size(3), Err(MPI_ERR_ARG));
        assert_eq!(logical_size(0), Err(MPI_ERR_ARG));
        assert_eq!(logical_size(32), Err(MPI_ERR_ARG));
        let (t, f) = booleans(4).expect("LOGICAL4 is known");
        assert_eq!((t, f), (vec![1, 0, 0, 0], vec![0; 4]));
        assert_eq!(set_booleans(4, vec![0xff; 4], vec![0; 4]), Err(MPI_ERR_ABI));
        if !known_logical(16) {
            assert_eq!(booleans(16), None);
            assert_eq!(set_booleans(16, vec![0xff; 16], vec![0; 16]), Ok(()));
            assert_eq!(booleans(16), Some((vec![0xff; 16], vec![0; 16])));
            assert_eq!(set_booleans(16, vec![1; 16], vec![0; 16]), Err(MPI_ERR_ABI));
        }
    }
}
