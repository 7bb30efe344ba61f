//! MPI groups in C: a handle table of `myrix_mpi::group::Group`s (MPI_GROUP_EMPTY
//! predefined), and the group functions: size, rank, incl/excl and their range
//! forms, union, intersection, difference, translate_ranks, compare, free.
//!
//! Ranks and ranges from the program are checked by the core (MPI_ERR_RANK,
//! MPI_ERR_ARG); an invalid or stale handle is MPI_ERR_GROUP. Errors go through
//! MPI_COMM_WORLD's handler. An empty result is MPI_GROUP_EMPTY.

use crate::abi::*;
use crate::ffi::{finish, mpi_fn, put};
use crate::handles::{base, Table};
use crate::runtime;
use myrix_mpi::group::{Compare, Group, GroupError};
use std::os::raw::c_int;
use std::sync::{Arc, Mutex, MutexGuard};

static GROUPS: Mutex<Table<Arc<Group>>> = Mutex::new(Table::new(base::GROUP));

fn groups() -> MutexGuard<'static, Table<Arc<Group>>> {
    GROUPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The group behind a handle.
pub fn get(h: MPI_Group) -> Result<Arc<Group>, c_int> {
    if h == MPI_GROUP_EMPTY {
        return Ok(Arc::new(Group::empty()));
    }
    groups().get(h).cloned().ok_or(MPI_ERR_GROUP)
}

/// A handle for `g` (MPI_GROUP_EMPTY when empty).
pub fn insert(g: Group) -> Result<MPI_Group, c_int> {
    if g.is_empty() {
        return Ok(MPI_GROUP_EMPTY);
    }
    groups().insert(Arc::new(g)).ok_or(MPI_ERR_OTHER)
}

fn code(e: GroupError) -> c_int {
    match e {
        GroupError::ZeroStride | GroupError::BadRange { .. } | GroupError::TooMany(_) => {
            MPI_ERR_ARG
        }
        GroupError::RankOutOfRange { .. } | GroupError::Duplicate(_) => MPI_ERR_RANK,
    }
}

/// `n` ints at `p` (NULL is fine when `n` is 0).
///
/// # Safety
/// `p` is NULL or valid for `n` ints.
unsafe fn ints<'a>(p: *const c_int, n: c_int) -> Result<&'a [c_int], c_int> {
    let n = usize::try_from(n).map_err(|_| MPI_ERR_ARG)?;
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL and valid for n ints by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Initialization is checked for every group call.
fn live(name: &str) -> Result<u32, c_int> {
    runtime::with(name, |rt| Ok(rt.job.rank))
}

/// The body of the calls that make a group from one group and produce a handle.
///
/// # Safety
/// `out` is NULL or valid for an MPI_Group.
unsafe fn derive(
    name: &str,
    out: *mut MPI_Group,
    f: impl FnOnce() -> Result<Group, c_int>,
) -> c_int {
    let r = live(name).and_then(|_| {
        if out.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let h = insert(f()?)?;
        // SAFETY: the caller's contract.
        unsafe { put(out, h) }
    });
    finish(MPI_COMM_WORLD, name, r)
}

mpi_fn! {
    fn MPI_Group_size / PMPI_Group_size(group: MPI_Group, size: *mut c_int) -> c_int {
        let name = "MPI_Group_size";
        let r = live(name).and_then(|_| get(group)).and_then(|g| {
            // SAFETY: size is NULL or an int.
            unsafe { put(size, g.size() as c_int) }
        });
        finish(MPI_COMM_WORLD, name, r)
    }
}

mpi_fn! {
    /// This process's rank in the group, or MPI_UNDEFINED.
    fn MPI_Group_rank / PMPI_Group_rank(group: MPI_Group, rank: *mut c_int) -> c_int {
        let name = "MPI_Group_rank";
        let r = live(name).and_then(|me| {
            let g = get(group)?;
            let v = g.rank_of(me).map_or(MPI_UNDEFINED, |r| r as c_int);
            // SAFETY: rank is NULL or an int.
            unsafe { put(rank, v) }
        });
        finish(MPI_COMM_WORLD, name, r)
    }
}

mpi_fn! {
    fn MPI_Group_incl / PMPI_Group_incl(group: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group) -> c_int {
        // SAFETY: ranks holds n ints; newgroup is an MPI_Group (C contract).
        unsafe {
            derive("MPI_Group_incl", newgroup, || get(group)?.incl(ints(ranks, n)?).map_err(code))
        }
    }
}

mpi_fn! {
    fn MPI_Group_excl / PMPI_Group_excl(group: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group) -> c_int {
        // SAFETY: ranks holds n ints; newgroup is an MPI_Group (C contract).
        unsafe {
            derive("MPI_Group_excl", newgroup, || get(group)?.excl(ints(ranks, n)?).map_err(code))
        }
    }
}

/// `n` `(first, last, stride)` triples at `p`.
///
/// # Safety
/// `p` is NULL or valid for `n` triples of ints.
unsafe fn triples(p: *const [c_int; 3], n: c_int) -> Result<Vec<(i32, i32, i32)>, c_int> {
    // SAFETY: n triples are 3n ints (the caller's contract).
    let flat = unsafe { ints(p.cast::<c_int>(), n.checked_mul(3).ok_or(MPI_ERR_ARG)?) }?;
    Ok(flat.chunks_exact(3).map(|t| (t[0], t[1], t[2])).collect())
}

mpi_fn! {
    fn MPI_Group_range_incl / PMPI_Group_range_incl(group: MPI_Group, n: c_int, ranges: *mut [c_int; 3], newgroup: *mut MPI_Group) -> c_int {
        // SAFETY: ranges holds n triples; newgroup is an MPI_Group (C contract).
        unsafe {
            derive("MPI_Group_range_incl", newgroup, || {
                get(group)?.range_incl(&triples(ranges, n)?).map_err(code)
            })
        }
    }
}

mpi_fn! {
    fn MPI_Group_range_excl / PMPI_Group_range_excl(group: MPI_Group, n: c_int, ranges: *mut [c_int; 3], newgroup: *mut MPI_Group) -> c_int {
        // SAFETY: ranges holds n triples; newgroup is an MPI_Group (C contract).
        unsafe {
            derive("MPI_Group_range_excl", newgroup, || {
                get(group)?.range_excl(&triples(ranges, n)?).map_err(code)
            })
        }
    }
}

mpi_fn! {
    fn MPI_Group_union / PMPI_Group_union(group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) -> c_int {
        // SAFETY: newgroup is an MPI_Group (C contract).
        unsafe { derive("MPI_Group_union", newgroup, || Ok(get(group1)?.union(&*get(group2)?))) }
    }
}

mpi_fn! {
    fn MPI_Group_intersection / PMPI_Group_intersection(group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) -> c_int {
        // SAFETY: newgroup is an MPI_Group (C contract).
        unsafe {
            derive("MPI_Group_intersection", newgroup, || Ok(get(group1)?.intersection(&*get(group2)?)))
        }
    }
}

mpi_fn! {
    fn MPI_Group_difference / PMPI_Group_difference(group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) -> c_int {
        // SAFETY: newgroup is an MPI_Group (C contract).
        unsafe {
            derive("MPI_Group_difference", newgroup, || Ok(get(group1)?.difference(&*get(group2)?)))
        }
    }
}

mpi_fn! {
    /// Each rank of `group1` in `group2` (MPI_UNDEFINED if absent; MPI_PROC_NULL
    /// stays MPI_PROC_NULL).
    fn MPI_Group_translate_ranks / PMPI_Group_translate_ranks(group1: MPI_Group, n: c_int, ranks1: *const c_int, group2: MPI_Group, ranks2: *mut c_int) -> c_int {
        let name = "MPI_Group_translate_ranks";
        let r = live(name).and_then(|_| {
            let (a, b) = (get(group1)?, get(group2)?);
            // SAFETY: ranks1 holds n ints (C contract).
            let which = unsafe { ints(ranks1, n) }?;
            let mut out = Vec::with_capacity(which.len());
            for &r in which {
                out.push(if r == MPI_PROC_NULL {
                    MPI_PROC_NULL
                } else {
                    match a.translate_ranks(&[r], &b).map_err(code)?[0] {
                        Some(t) => t as c_int,
                        None => MPI_UNDEFINED,
                    }
                });
            }
            if out.is_empty() {
                return Ok(());
            }
            if ranks2.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: ranks2 holds n ints (C contract); out has n entries.
            unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), ranks2, out.len()) };
            Ok(())
        });
        finish(MPI_COMM_WORLD, name, r)
    }
}

mpi_fn! {
    fn MPI_Group_compare / PMPI_Group_compare(group1: MPI_Group, group2: MPI_Group, result: *mut c_int) -> c_int {
        let name = "MPI_Group_compare";
        let r = live(name).and_then(|_| {
            let v = match get(group1)?.compare(&*get(group2)?) {
                Compare::Ident => MPI_IDENT,
                Compare::Similar => MPI_SIMILAR,
                Compare::Unequal => MPI_UNEQUAL,
            };
            // SAFETY: result is NULL or an int.
            unsafe { put(result, v) }
        });
        finish(MPI_COMM_WORLD, name, r)
    }
}

mpi_fn! {
    /// Frees a group and sets the handle to MPI_GROUP_NULL (MPI_GROUP_EMPTY may be
    /// "freed": it stays).
    fn MPI_Group_free / PMPI_Group_free(group: *mut MPI_Group) -> c_int {
        let name = "MPI_Group_free";
        let r = live(name).and_then(|_| {
            if group.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: non-NULL, an MPI_Group by the C contract.
            let h = unsafe { group.read() };
            if h != MPI_GROUP_EMPTY {
                groups().remove(h).ok_or(MPI_ERR_GROUP)?;
            }
            // SAFETY: as above.
            unsafe { put(group, MPI_GROUP_NULL) }
        });
        finish(MPI_COMM_WORLD, name, r)
    }
}
