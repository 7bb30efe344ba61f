//! MPI_Type_create_subarray and MPI_Type_create_darray (and their `_c` forms, whose
//! sizes and starts are MPI_Counts) at the C boundary: the arguments checked into
//! `myrix_mpi::datatype::Datatype::{subarray, darray}`, the result stored as a new
//! (uncommitted) derived type whose recipe keeps the arguments as given.

use crate::abi::*;
use crate::datatype::{lookup, store};
use crate::ffi::{finish, mpi_fn};
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

fn sizes<T: Copy + TryInto<usize>>(v: &[T]) -> Result<Vec<usize>, c_int> {
    v.iter()
        .map(|&x| x.try_into().map_err(|_| MPI_ERR_ARG))
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

/// `ndims` entries of a C array of `T` (NULL with entries is MPI_ERR_ARG).
///
/// # Safety
/// `p` is NULL or holds `ndims` values.
unsafe fn arr<'a, T>(p: *const T, ndims: c_int) -> Result<&'a [T], c_int> {
    let n = usize::try_from(ndims).map_err(|_| MPI_ERR_ARG)?;
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL, n values by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// MPI_Type_create_subarray(_c)'s body; `T` is `int` or MPI_Count.
///
/// # Safety
/// The three arrays hold `ndims` values; `newtype` is NULL or an MPI_Datatype.
unsafe fn subarray<T: Copy + TryInto<usize> + Arg>(
    ndims: c_int,
    a: *const T,
    b: *const T,
    c: *const T,
    order_: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> Result<(), c_int> {
    // SAFETY: the caller's contract.
    let (a, b, c) = unsafe { (arr(a, ndims)?, arr(b, ndims)?, arr(c, ndims)?) };
    let rc = Recipe::new::<T>(MPI_COMBINER_SUBARRAY);
    let rc = if rc.large {
        // The `_c` form: ndims and order stay ints, the arrays are counts.
        rc.plain(&[ndims, order_]).ints(a).ints(b).ints(c)
    } else {
        rc.int(ndims).ints(a).ints(b).ints(c).int(order_)
    };
    let rc = rc.ty(oldtype)?;
    let old = lookup(oldtype)?;
    let t = Datatype::subarray(&sizes(a)?, &sizes(b)?, &sizes(c)?, order(order_)?, &old);
    // SAFETY: the caller's contract for newtype.
    unsafe { put_type(newtype, t, rc) }
}

mpi_fn! {
    fn MPI_Type_create_subarray / PMPI_Type_create_subarray(ndims: c_int, array_of_sizes: *const c_int, array_of_subsizes: *const c_int, array_of_starts: *const c_int, order_: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        // SAFETY: the C contract, forwarded.
        let r = unsafe { subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order_, oldtype, newtype) };
        finish(MPI_COMM_WORLD, "MPI_Type_create_subarray", r)
    }
}

mpi_fn! {
    fn MPI_Type_create_subarray_c / PMPI_Type_create_subarray_c(ndims: c_int, array_of_sizes: *const MPI_Count, array_of_subsizes: *const MPI_Count, array_of_starts: *const MPI_Count, order_: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        // SAFETY: the C contract, forwarded.
        let r = unsafe { subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order_, oldtype, newtype) };
        finish(MPI_COMM_WORLD, "MPI_Type_create_subarray_c", r)
    }
}

/// MPI_Type_create_darray(_c)'s body; `T` (the global sizes) is `int` or MPI_Count.
///
/// # Safety
/// The four arrays hold `ndims` values; `newtype` is NULL or an MPI_Datatype.
#[allow(clippy::too_many_arguments)]
unsafe fn darray<T: Copy + TryInto<usize> + Arg>(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    gsizes: *const T,
    distribs: *const c_int,
    dargs: *const c_int,
    psizes: *const c_int,
    order_: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> Result<(), c_int> {
    // SAFETY: the caller's contract.
    let (g, d, a, p) = unsafe {
        (
            arr(gsizes, ndims)?,
            arr(distribs, ndims)?,
            arr(dargs, ndims)?,
            arr(psizes, ndims)?,
        )
    };
    let darg = |x: c_int| -> Result<Option<usize>, c_int> {
        if x == MPI_DISTRIBUTE_DFLT_DARG {
            Ok(None)
        } else {
            usize::try_from(x)
                .ok()
                .filter(|&v| v > 0)
                .map(Some)
                .ok_or(MPI_ERR_ARG)
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
    let rc = Recipe::new::<T>(MPI_COMBINER_DARRAY);
    let rc = if rc.large {
        // The `_c` form: the global sizes are counts, the rest ints.
        let plain: Vec<c_int> = [size, rank, ndims]
            .into_iter()
            .chain(d.iter().copied())
            .chain(a.iter().copied())
            .chain(p.iter().copied())
            .chain([order_])
            .collect();
        rc.plain(&plain).ints(g)
    } else {
        rc.int(size)
            .int(rank)
            .int(ndims)
            .ints(g)
            .ints(d)
            .ints(a)
            .ints(p)
            .int(order_)
    };
    let rc = rc.ty(oldtype)?;
    let size = usize::try_from(size).map_err(|_| MPI_ERR_ARG)?;
    let rank = usize::try_from(rank).map_err(|_| MPI_ERR_RANK)?;
    let old = lookup(oldtype)?;
    let t = Datatype::darray(
        size,
        rank,
        &sizes(g)?,
        &ds,
        &sizes(p)?,
        order(order_)?,
        &old,
    );
    // SAFETY: the caller's contract for newtype.
    unsafe { put_type(newtype, t, rc) }
}

mpi_fn! {
    fn MPI_Type_create_darray / PMPI_Type_create_darray(size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const c_int, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order_: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        // SAFETY: the C contract, forwarded.
        let r = unsafe { darray(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes, order_, oldtype, newtype) };
        finish(MPI_COMM_WORLD, "MPI_Type_create_darray", r)
    }
}

mpi_fn! {
    fn MPI_Type_create_darray_c / PMPI_Type_create_darray_c(size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const MPI_Count, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order_: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        // SAFETY: the C contract, forwarded.
        let r = unsafe { darray(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes, order_, oldtype, newtype) };
        finish(MPI_COMM_WORLD, "MPI_Type_create_darray_c", r)
    }
}
