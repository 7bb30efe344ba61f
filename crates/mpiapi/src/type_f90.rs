//! The Fortran 90 parameterized types from C: MPI_Type_create_f90_real, _complex
//! and _integer (MPI-4.0 §19.1.9). Each gives the predefined type of the smallest
//! kind that holds the precision `p` and decimal exponent range `r` asked for
//! (MPI_UNDEFINED: no constraint), as a type whose envelope says MPI_COMBINER_F90_*
//! with `p`/`r` as given and no datatypes. The same (kind, p, r) always gets the
//! same handle, which the program must not free (MPI_ERR_TYPE if it tries).
//!
//! Kinds are IEEE binary32/binary64 and two's-complement integers of 1–8 bytes:
//! a precision beyond binary64's (15 digits, range 307) or a range beyond 18 digits
//! is MPI_ERR_ARG (this library has no quad-precision type).

use crate::abi::*;
use crate::datatype::{insert_parts, lookup};
use crate::ffi::{finish, mpi_fn, put};
use crate::type_decode::Recipe;
use std::collections::HashMap;
use std::os::raw::c_int;
use std::sync::{Arc, LazyLock, Mutex};

const MPI_COMBINER_F90_REAL: c_int = 113;
const MPI_COMBINER_F90_COMPLEX: c_int = 114;
const MPI_COMBINER_F90_INTEGER: c_int = 115;

const MPI_INTEGER1: MPI_Datatype = 0x2c1;
const MPI_INTEGER2: MPI_Datatype = 0x2c9;
const MPI_INTEGER4: MPI_Datatype = 0x2d1;
const MPI_INTEGER8: MPI_Datatype = 0x2d9;
const MPI_REAL4: MPI_Datatype = 0x2d2;
const MPI_REAL8: MPI_Datatype = 0x2da;
const MPI_COMPLEX8: MPI_Datatype = 0x2db;
const MPI_COMPLEX16: MPI_Datatype = 0x2e3;

/// Handles made so far, by (combiner, p, r).
type Made = HashMap<(c_int, c_int, c_int), MPI_Datatype>;
static MADE: LazyLock<Mutex<Made>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Whether `h` is one of these types (MPI_Type_free refuses them).
pub fn is_f90(h: MPI_Datatype) -> bool {
    MADE.lock()
        .unwrap_or_else(|p| p.into_inner())
        .values()
        .any(|&v| v == h)
}

/// `v` within `max`, MPI_UNDEFINED counting as no constraint.
fn within(v: c_int, max: c_int) -> bool {
    v == MPI_UNDEFINED || (0..=max).contains(&v)
}

/// The real kind (REAL4 / REAL8) for `p` digits and exponent range `r`.
fn real_kind(p: c_int, r: c_int) -> Result<usize, c_int> {
    if p == MPI_UNDEFINED && r == MPI_UNDEFINED {
        return Err(MPI_ERR_ARG);
    }
    if within(p, 6) && within(r, 37) {
        Ok(0)
    } else if within(p, 15) && within(r, 307) {
        Ok(1)
    } else {
        Err(MPI_ERR_ARG)
    }
}

/// The type for (combiner, p, r) over predefined `base`: made once, then the same
/// handle.
fn made(combiner: c_int, p: c_int, r: c_int, base: MPI_Datatype) -> Result<MPI_Datatype, c_int> {
    let mut m = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&h) = m.get(&(combiner, p, r)) {
        return Ok(h);
    }
    let rc = Recipe::new::<c_int>(combiner).int(p);
    let rc = if combiner == MPI_COMBINER_F90_INTEGER {
        rc
    } else {
        rc.int(r)
    };
    let h = insert_parts(lookup(base)?, true, Arc::new(rc))?;
    m.insert((combiner, p, r), h);
    Ok(h)
}

mpi_fn! {
    fn MPI_Type_create_f90_real / PMPI_Type_create_f90_real(p: c_int, r: c_int, newtype: *mut MPI_Datatype) -> c_int {
        let r = real_kind(p, r)
            .and_then(|k| made(MPI_COMBINER_F90_REAL, p, r, [MPI_REAL4, MPI_REAL8][k]))
            // SAFETY: newtype is NULL or an MPI_Datatype.
            .and_then(|h| unsafe { put(newtype, h) });
        finish(MPI_COMM_WORLD, "MPI_Type_create_f90_real", r)
    }
}

mpi_fn! {
    fn MPI_Type_create_f90_complex / PMPI_Type_create_f90_complex(p: c_int, r: c_int, newtype: *mut MPI_Datatype) -> c_int {
        let r = real_kind(p, r)
            .and_then(|k| made(MPI_COMBINER_F90_COMPLEX, p, r, [MPI_COMPLEX8, MPI_COMPLEX16][k]))
            // SAFETY: newtype is NULL or an MPI_Datatype.
            .and_then(|h| unsafe { put(newtype, h) });
        finish(MPI_COMM_WORLD, "MPI_Type_create_f90_complex", r)
    }
}

mpi_fn! {
    fn MPI_Type_create_f90_integer / PMPI_Type_create_f90_integer(r: c_int, newtype: *mut MPI_Datatype) -> c_int {
        let kind = match r {
            0..=2 => Ok(MPI_INTEGER1),
            3..=4 => Ok(MPI_INTEGER2),
            5..=9 => Ok(MPI_INTEGER4),
            10..=18 => Ok(MPI_INTEGER8),
            _ => Err(MPI_ERR_ARG),
        };
        let res = kind
            .and_then(|base| made(MPI_COMBINER_F90_INTEGER, r, MPI_UNDEFINED, base))
            // SAFETY: newtype is NULL or an MPI_Datatype.
            .and_then(|h| unsafe { put(newtype, h) });
        finish(MPI_COMM_WORLD, "MPI_Type_create_f90_integer", res)
    }
}
