//! The large-count (`_c`) forms of MPI 4.0 (`MPI_Send_c`, `MPI_Allgatherv_c`, …): counts
//! and displacements as `MPI_Count` / `MPI_Aint`. Each calls the `PMPI_` int form with
//! the counts narrowed, so both forms share one implementation (and a profiling
//! library that wraps the int form sees these calls too). Point-to-point calls carry
//! a count above `INT_MAX` as one element of a contiguous type of that many elements
//! ([`wide`]), so messages of any length go through; elsewhere a count or displacement
//! above `INT_MAX` is refused with `MPI_ERR_COUNT` and a message saying so: it is
//! never truncated. Programs built against an MPI-4 header (mpi4py among them) call
//! these forms for every message, whatever its size.
//!
//! The persistent v-forms (`MPI_Allgatherv_init_c` …), whose arrays must outlive the
//! call, own narrowed copies (`lc_pcoll.rs`). The blocking neighbourhood v-forms read
//! as many entries as the topology gives neighbours.
//!
//! The functions themselves are in `lc_p2p.rs`, `lc_coll.rs`, `lc_icoll.rs` and
//! `lc_pcoll.rs`, most of them as lines of [`narrowed!`]; the helpers here.
//!
//! This module must never call an `MPI_` (non-`P`) function: a tool wrapping both
//! forms would count one call twice.

pub(crate) use crate::abi::*;
pub(crate) use crate::ffi::{finish, mpi_fn};
pub(crate) use std::os::raw::{c_int, c_void};

extern "C" {
    fn PMPI_Topo_test(comm: MPI_Comm, status: *mut c_int) -> c_int;
    fn PMPI_Cartdim_get(comm: MPI_Comm, ndims: *mut c_int) -> c_int;
    fn PMPI_Graph_neighbors_count(comm: MPI_Comm, rank: c_int, nneighbors: *mut c_int) -> c_int;
    fn PMPI_Dist_graph_neighbors_count(
        comm: MPI_Comm,
        indegree: *mut c_int,
        outdegree: *mut c_int,
        weighted: *mut c_int,
    ) -> c_int;
    fn PMPI_Comm_size(comm: MPI_Comm, size: *mut c_int) -> c_int;
    fn PMPI_Comm_rank(comm: MPI_Comm, rank: *mut c_int) -> c_int;
    fn PMPI_Comm_test_inter(comm: MPI_Comm, flag: *mut c_int) -> c_int;
    fn PMPI_Comm_remote_size(comm: MPI_Comm, size: *mut c_int) -> c_int;
    fn PMPI_Type_contiguous_c(
        count: MPI_Count,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int;
    fn PMPI_Type_commit(datatype: *mut MPI_Datatype) -> c_int;
    fn PMPI_Type_free(datatype: *mut MPI_Datatype) -> c_int;
}

use crate::intercoll::MPI_ROOT;

/// A count narrowed to the int form's `int`.
pub(crate) fn int_of<T: TryInto<c_int> + Copy>(n: T) -> Result<c_int, c_int> {
    n.try_into().map_err(|_| MPI_ERR_COUNT)
}

/// An array of `n` counts or displacements narrowed to ints; `None` (no array is read
/// on this rank) or a NULL pointer stays NULL, for the int form to judge.
///
/// # Safety
/// `p` is NULL or holds `n` values (the C caller's contract).
pub(crate) unsafe fn ints_of<T: TryInto<c_int> + Copy>(
    p: *const T,
    n: Option<usize>,
) -> Result<Option<Vec<c_int>>, c_int> {
    let Some(n) = n else { return Ok(None) };
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's contract.
    let src = unsafe { std::slice::from_raw_parts(p, n) };
    src.iter()
        .map(|&v| int_of(v))
        .collect::<Result<_, _>>()
        .map(Some)
}

pub(crate) fn ptr_of(v: &Option<Vec<c_int>>) -> *const c_int {
    v.as_ref().map_or(std::ptr::null(), |v| v.as_ptr())
}

/// Ints a communicator query answers; `None` if it fails (the int form reports it).
fn query(f: unsafe extern "C" fn(MPI_Comm, *mut c_int) -> c_int, comm: MPI_Comm) -> Option<c_int> {
    let mut v: c_int = 0;
    // SAFETY: a valid out-pointer; the handle is checked by the callee.
    (unsafe { f(comm, &mut v) } == MPI_SUCCESS).then_some(v)
}

fn is_inter(comm: MPI_Comm) -> bool {
    query(PMPI_Comm_test_inter, comm).is_some_and(|f| f != 0)
}

/// Entries of a per-peer array: the remote group's size on an intercommunicator, else
/// the communicator's.
pub(crate) fn peers(comm: MPI_Comm) -> Option<usize> {
    let n = if is_inter(comm) {
        query(PMPI_Comm_remote_size, comm)?
    } else {
        query(PMPI_Comm_size, comm)?
    };
    usize::try_from(n).ok()
}

/// Entries of an array over the local group (`MPI_Reduce_scatter`'s counts).
pub(crate) fn local(comm: MPI_Comm) -> Option<usize> {
    usize::try_from(query(PMPI_Comm_size, comm)?).ok()
}

/// Entries of a rooted v-form's array: read at the root only.
pub(crate) fn root_len(comm: MPI_Comm, root: c_int) -> Option<usize> {
    if is_inter(comm) {
        return if root == MPI_ROOT { peers(comm) } else { None };
    }
    if query(PMPI_Comm_rank, comm)? == root {
        peers(comm)
    } else {
        None
    }
}

const MPI_CART: c_int = 211;
const MPI_GRAPH: c_int = 212;
const MPI_DIST_GRAPH: c_int = 213;

/// A neighbourhood collective's (in, out) degree on a communicator with a topology;
/// `None` without one (the int form reports MPI_ERR_TOPOLOGY).
fn degrees(comm: MPI_Comm) -> Option<(usize, usize)> {
    let (i, o) = match query(PMPI_Topo_test, comm)? {
        MPI_CART => {
            let n = 2 * query(PMPI_Cartdim_get, comm)?;
            (n, n)
        }
        MPI_GRAPH => {
            let me = query(PMPI_Comm_rank, comm)?;
            let mut n = 0;
            // SAFETY: a valid out-pointer; the handle is checked by the callee.
            (unsafe { PMPI_Graph_neighbors_count(comm, me, &mut n) } == MPI_SUCCESS)
                .then_some(())?;
            (n, n)
        }
        MPI_DIST_GRAPH => {
            let (mut i, mut o, mut w) = (0, 0, 0);
            // SAFETY: valid out-pointers; the handle is checked by the callee.
            (unsafe { PMPI_Dist_graph_neighbors_count(comm, &mut i, &mut o, &mut w) }
                == MPI_SUCCESS)
                .then_some(())?;
            (i, o)
        }
        _ => return None,
    };
    Some((usize::try_from(i).ok()?, usize::try_from(o).ok()?))
}

/// Entries of a neighbourhood collective's receive arrays.
pub(crate) fn in_degree(comm: MPI_Comm) -> Option<usize> {
    degrees(comm).map(|d| d.0)
}

/// Entries of a neighbourhood collective's send arrays.
pub(crate) fn out_degree(comm: MPI_Comm) -> Option<usize> {
    degrees(comm).map(|d| d.1)
}

/// The int form's code as it is (it has called the error handler already); a count
/// that did not fit goes through `comm`'s handler here.
pub(crate) fn relay(comm: MPI_Comm, name: &str, r: Result<c_int, c_int>) -> c_int {
    match r {
        Ok(rc) => rc,
        Err(code) => {
            crate::ffi::say!(
                "myrix MPI: {name}: a count or displacement above INT_MAX is not supported yet"
            );
            finish(comm, name, Err(code))
        }
    }
}

/// Calls `f(count, datatype)` with the count as an `int`: as it is when it fits, else
/// as 1 of a contiguous type of `count` elements of `dt`, made for this call and freed
/// after it (a request the call left pending holds the type itself). `Err` is an
/// error this function found (a negative count, a bad `dt`); `f`'s code is `Ok`.
pub(crate) fn wide(
    count: MPI_Count,
    dt: MPI_Datatype,
    f: impl FnOnce(c_int, MPI_Datatype) -> c_int,
) -> Result<c_int, c_int> {
    if let Ok(n) = c_int::try_from(count) {
        return Ok(f(n, dt));
    }
    if count < 0 {
        return Err(MPI_ERR_COUNT);
    }
    // Checked here so that a bad handle is this call's error, not the constructor's.
    crate::datatype::lookup_committed(dt)?;
    let mut t = MPI_DATATYPE_NULL;
    // SAFETY: out-pointer to a local; `dt` is a committed type.
    let rc = unsafe { PMPI_Type_contiguous_c(count, dt, &mut t) };
    if rc != MPI_SUCCESS {
        return Err(rc);
    }
    // SAFETY: `t` is the handle just made.
    let rc = unsafe { PMPI_Type_commit(&mut t) };
    let r = if rc == MPI_SUCCESS {
        Ok(f(1, t))
    } else {
        Err(rc)
    };
    // SAFETY: as above; freeing leaves pending operations their own reference.
    unsafe { PMPI_Type_free(&mut t) };
    r
}

/// [`wide`]'s result: `f`'s code as it is, else this call's error through `comm`'s
/// handler.
pub(crate) fn widened(comm: MPI_Comm, name: &str, r: Result<c_int, c_int>) -> c_int {
    match r {
        Ok(rc) => rc,
        Err(code) => finish(comm, name, Err(code)),
    }
}

/// Defines `MPI_X_c` / `PMPI_X_c` over the int form `PMPI_X` (and declares it):
/// each argument is passed as it is, or narrowed. `count: MPI_Count => c_int` is a
/// count checked to fit an `int`; `counts: *const MPI_Count => *const c_int [len]`
/// an array of `len` entries (`Option<usize>`: `None` where this rank does not read
/// it), each checked, in a copy that lives for the call. A narrowing that fails goes
/// through the error handler of `on` (a communicator or window handle).
///
/// The int form's types are written out, not derived: a declaration that disagreed
/// with `PMPI_X`'s definition would pass the compiler, so each was checked against
/// the int form's prototype when written.
macro_rules! narrowed {
    ($(
        fn $name:ident / $pname:ident => $int:ident on $on:expr;
        ( $($a:ident : $t:ty $(=> $nt:ty $([$len:expr])?)?),* $(,)? )
    )*) => {$(
        extern "C" {
            fn $int($($a: $crate::large_count::int_ty!($t $(, $nt)?)),*) -> c_int;
        }
        mpi_fn! {
            fn $name / $pname($($a: $t),*) -> c_int {
                let r = (|| -> Result<c_int, c_int> {
                    // SAFETY: the caller's arguments, counts narrowed (checked) and
                    // arrays copied for as many entries as the int form reads.
                    Ok(unsafe { $int($($crate::large_count::int_arg!($a $(, $nt $(, [$len])?)?)),*) })
                })();
                relay($on, stringify!($name), r)
            }
        }
    )*};
}
pub(crate) use narrowed;

/// The int form's type of a [`narrowed!`] argument.
macro_rules! int_ty {
    ($t:ty) => {
        $t
    };
    ($t:ty, $nt:ty) => {
        $nt
    };
}
pub(crate) use int_ty;

/// The int form's value of a [`narrowed!`] argument (inside its closure).
macro_rules! int_arg {
    ($a:ident) => {
        $a
    };
    ($a:ident, $nt:ty) => {
        int_of($a)?
    };
    ($a:ident, $nt:ty, [$len:expr]) => {
        ptr_of(&ints_of($a, $len)?)
    };
}
pub(crate) use int_arg;
