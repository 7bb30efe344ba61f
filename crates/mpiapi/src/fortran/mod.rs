//! The Fortran interface of `libmpi_abi.so`: the `mpi_x_` / `pmpi_x_` subroutines
//! gfortran calls for `CALL MPI_X(…)` with `mpif.h` or `use mpi`.
//!
//! `generated.rs`, `include/mpif.h` and `include/mpi.f90` are written by
//! `tools/fortran_gen.py` from `include/mpi.h` (committed; `--check` says whether they
//! are current). Each entry point takes every argument by reference, converts it (the
//! rules are in the generator's docstring) and calls the C function: `mpi_send_` calls
//! `MPI_Send`, `pmpi_send_` calls `PMPI_Send`, so a C profiling layer sees Fortran
//! calls too. C functions whose Fortran form needs more (callbacks, attribute values,
//! `argv` arrays, arrays of handles without a count) get no entry point and are
//! listed in `MISSING.txt`: a Fortran program calling one fails to link.
//!
//! The `mpi_f08` module's procedures (`use mpi_f08`) are `mpi_x_f08_` /
//! `pmpi_x_f08_`, also generated (`f08.rs`): those without a choice buffer forward to
//! `mpi_x_` unchanged, those with one read gfortran's C descriptors (`cfi.rs`).

#![allow(
    clippy::missing_safety_doc,
    clippy::too_many_arguments,
    clippy::not_unsafe_ptr_arg_deref,
    clippy::redundant_closure_call,
    non_snake_case,
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    unused_mut
)]

use crate::abi::{MPI_Status, MPI_SUCCESS};
use std::os::raw::{c_char, c_int, c_void};

pub mod cfi;
pub mod rt;

/// One entry point under its MPI and PMPI names: `|c|` names the C function the
/// body calls (`MPI_X` in the first, `PMPI_X` in the second).
macro_rules! f {
    ($f:ident / $pf:ident = $c:ident / $pc:ident, |$k:ident| ($($a:ident : $t:ty),*) $(-> $r:ty)? $body:block) => {
        #[no_mangle]
        pub unsafe extern "C" fn $f($($a: $t),*) $(-> $r)? {
            let $k = $c;
            $body
        }
        #[no_mangle]
        pub unsafe extern "C" fn $pf($($a: $t),*) $(-> $r)? {
            let $k = $pc;
            $body
        }
    };
}

/// An `mpi_f08` entry point that is its `mpi_x_` twin under another name: with no
/// choice buffer, the f08 arguments are passed as the INTEGERs `mpi_x_` takes
/// (see the generator on the `mpi_f08` module).
macro_rules! f8 {
    ($f:ident / $pf:ident = $g:ident / $pg:ident, ($($a:ident : $t:ty),*) $(-> $r:ty)?) => {
        #[no_mangle]
        pub unsafe extern "C" fn $f($($a: $t),*) $(-> $r)? {
            $g($($a),*)
        }
        #[no_mangle]
        pub unsafe extern "C" fn $pf($($a: $t),*) $(-> $r)? {
            $pg($($a),*)
        }
    };
}

// The bodies are the generator's one-liners: rustfmt would not keep them so.
#[rustfmt::skip]
mod generated;
#[rustfmt::skip]
mod f08;
