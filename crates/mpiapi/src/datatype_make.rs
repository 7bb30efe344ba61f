//! The bodies of the datatype constructors, shared by the `int` and `MPI_Count`
//! variants of `datatype.rs` (a child module of it).

use super::*;

pub unsafe fn contiguous(
    n: usize,
    old: MPI_Datatype,
    out: *mut MPI_Datatype,
    rc: Recipe,
) -> Result<(), c_int> {
    let old = lookup(old)?;
    // SAFETY: the C contract for out.
    unsafe { store(out, Datatype::contiguous(n, &old), rc) }
}

pub unsafe fn vector(
    n: usize,
    bl: usize,
    stride: isize,
    bytes: bool,
    old: MPI_Datatype,
    out: *mut MPI_Datatype,
    rc: Recipe,
) -> Result<(), c_int> {
    let old = lookup(old)?;
    let t = if bytes {
        Datatype::hvector(n, bl, stride, &old)
    } else {
        Datatype::vector(n, bl, stride, &old)
    };
    // SAFETY: the C contract for out.
    unsafe { store(out, t, rc) }
}

pub unsafe fn indexed(
    bls: &[usize],
    ds: &[isize],
    bytes: bool,
    old: MPI_Datatype,
    out: *mut MPI_Datatype,
    rc: Recipe,
) -> Result<(), c_int> {
    let old = lookup(old)?;
    let t = if bytes {
        Datatype::hindexed(bls, ds, &old)
    } else {
        Datatype::indexed(bls, ds, &old)
    };
    // SAFETY: the C contract for out.
    unsafe { store(out, t, rc) }
}

pub unsafe fn block(
    bl: usize,
    ds: &[isize],
    bytes: bool,
    old: MPI_Datatype,
    out: *mut MPI_Datatype,
    rc: Recipe,
) -> Result<(), c_int> {
    let old = lookup(old)?;
    let t = if bytes {
        Datatype::hindexed_block(bl, ds, &old)
    } else {
        Datatype::indexed_block(bl, ds, &old)
    };
    // SAFETY: the C contract for out.
    unsafe { store(out, t, rc) }
}

pub unsafe fn structure(
    bls: &[usize],
    ds: &[isize],
    ts: &[MPI_Datatype],
    out: *mut MPI_Datatype,
    rc: Recipe,
) -> Result<(), c_int> {
    let ts: Vec<Datatype> = ts
        .iter()
        .map(|&t| lookup(t).map(|a| (*a).clone()))
        .collect::<Result<_, _>>()?;
    // SAFETY: the C contract for out.
    unsafe { store(out, Datatype::create_struct(bls, ds, &ts), rc) }
}
