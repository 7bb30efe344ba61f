//! MPI_Type_create_subarray and MPI_Type_create_darray at the C boundary: the
//! arguments checked into `myrix_mpi::datatype::Datatype::{subarray, darray}`,
//! the result stored as a new (uncommitted) derived type.

use crate::abi::*;
use crate::datatype::{lookup, store};
use crate::ffi::{finish, mpi_fn};
use crate::topo::ints;
use crate::type_decode::*;
use myrix_mpi::datatype::{Datatype, Distrib, GridError};
use std::os::raw::c_int;

const MPI_ORDER_C: c_int = 0xC;
const MPI_ORDER_FORTRAN: c_int = 0xF;
const MPI_DISTRIBUTE_NONE: c_int = 16;
const MPI_DISTRIBUTE_BLOCK: c_int = 17;
const MPI_DISTRIBUTE_CYCLIC: c_int = 18;
const MPI_DISTRIBUTE_DFLT_DARG: c_int = 19;

fn order(o: c_int) -> Result<bool, c_int> {
    match o {
        MPI_ORDER_C => Ok(true),
        MPI_ORDER_FORTRAN => Ok(false),
        _ => Err(MPI_ERR_ARG),
    }
}

fn sizes(v: &[c_int]) -> Result<Vec<usize>, c_int> {
    v.iter()
        .map(|&x| usize::try_from(x).map_err(|_| MPI_ERR_ARG))
        .collect()
}

/// Stores a built grid type (`GridError::Arg` is MPI_ERR_ARG).
///
/// # Safety
/// `out` is NULL or valid for an MPI_Datatype.
unsafe fn put_type(
    out: *mut MPI_Datatype,
    made: Result<Datatype, GridError>,
    rc: Recipe,
) -> Result<(), c_int> {
    match made {
        Err(GridError::Arg(_)) => Err(MPI_ERR_ARG),
        // SAFETY: the caller's contract.
        Err(GridError::Type(e)) => unsafe { store(out, Err(e), rc) },
        // SAFETY: the caller's contract.
        Ok(t) => unsafe { store(out, Ok(t), rc) },
    }
}

mpi_fn! {
    fn MPI_Type_create_subarray / PMPI_Type_create_subarray(ndims: c_int, array_of_sizes: *const c_int, array_of_subsizes: *const c_int, array_of_starts: *const c_int, order_: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let r = (|| {
            // SAFETY: the three arrays hold ndims ints (C contract).
            let (a, b, c) = unsafe {
                (
                    ints(array_of_sizes, ndims, MPI_ERR_ARG)?,
                    ints(array_of_subsizes, ndims, MPI_ERR_ARG)?,
                    ints(array_of_starts, ndims, MPI_ERR_ARG)?,
                )
            };
            let rc = Recipe::new::<c_int>(MPI_COMBINER_SUBARRAY).int(ndims).ints(a).ints(b).ints(c).int(order_).ty(oldtype)?;
            let old = lookup(oldtype)?;
            let t = Datatype::subarray(&sizes(a)?, &sizes(b)?, &sizes(c)?, order(order_)?, &old);
            // SAFETY: newtype is NULL or an MPI_Datatype.
            unsafe { put_type(newtype, t, rc) }
        })();
        finish(MPI_COMM_WORLD, "MPI_Type_create_subarray", r)
    }
}

mpi_fn! {
    fn MPI_Type_create_darray / PMPI_Type_create_darray(size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const c_int, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order_: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let r = (|| {
            // SAFETY: the four arrays hold ndims ints (C contract).
            let (g, d, a, p) = unsafe {
                (
                    ints(array_of_gsizes, ndims, MPI_ERR_ARG)?,
                    ints(array_of_distribs, ndims, MPI_ERR_ARG)?,
                    ints(array_of_dargs, ndims, MPI_ERR_ARG)?,
                    ints(array_of_psizes, ndims, MPI_ERR_ARG)?,
                )
            };
            let darg = |x: c_int| -> Result<Option<usize>, c_int> {
                if x == MPI_DISTRIBUTE_DFLT_DARG {
                    Ok(None)
                } else {
                    usize::try_from(x).ok().filter(|&v| v > 0).map(Some).ok_or(MPI_ERR_ARG)
                }
            };
            let ds = d
                .iter()
                .zip(a)
                .map(|(&k, &x)| match k {
                    MPI_DISTRIBUTE_NONE => Ok(Distrib::None),
                    MPI_DISTRIBUTE_BLOCK => darg(x).map(Distrib::Block),
                    MPI_DISTRIBUTE_CYCLIC => darg(x).map(Distrib::Cyclic),
                    _ => Err(MPI_ERR_ARG),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let rc = Recipe::new::<c_int>(MPI_COMBINER_DARRAY).int(size).int(rank).int(ndims);
            let rc = rc.ints(g).ints(d).ints(a).ints(p).int(order_).ty(oldtype)?;
            let size = usize::try_from(size).map_err(|_| MPI_ERR_ARG)?;
            let rank = usize::try_from(rank).map_err(|_| MPI_ERR_RANK)?;
            let old = lookup(oldtype)?;
            let t = Datatype::darray(size, rank, &sizes(g)?, &ds, &sizes(p)?, order(order_)?, &old);
            // SAFETY: newtype is NULL or an MPI_Datatype.
            unsafe { put_type(newtype, t, rc) }
        })();
        finish(MPI_COMM_WORLD, "MPI_Type_create_darray", r)
    }
}
