//! The hot path of MPI_Allgather and MPI_Allgatherv through the communicator's
//! shared segment: predefined types, the caller's own buffers (no packed copy of
//! the contribution, no zeroed staging buffer of the whole result, no unpacking),
//! so that large blocks move once (`coll::shm`'s one-copy way) and small ones skip
//! two copies. Returns None when it does not apply, before any step; the general
//! path in `coll.rs` then runs and reports any argument error.

use super::args::*;
use super::shm::{self, Which};
use crate::abi::{MPI_Datatype, MPI_ERR_BUFFER};
use crate::comm::CommRef;
use crate::datatype;
use std::os::raw::{c_int, c_void};

/// MPI_Allgather (`rcounts` None: `rc` elements from each rank) or MPI_Allgatherv
/// (`rcounts`: the receive counts and displacements), not in place.
///
/// # Safety
/// The C contract for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn allgather_predefined(
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rcounts: Option<(*const c_int, *const c_int)>,
    rt: MPI_Datatype,
    c: &CommRef,
) -> Option<Result<(), c_int>> {
    if in_place(send) {
        return None;
    }
    let n = c.ranks.len();
    let me = c.rank as usize;
    let (s, r) = (datatype::predefined_ref(st)?, datatype::predefined_ref(rt)?);
    let sn = count(sc).ok()?;
    let b = bytes(sn, s).ok()?;
    let unit = bytes(1, r).ok()?;
    // SAFETY: sendbuf holds sendcount elements.
    let data = unsafe { contig(send, sn, s) }.ok()??;
    match rcounts {
        None => {
            if bytes(count(rc).ok()?, r).ok()? != b {
                return None;
            }
            let sh = shm::get(c, Which::Allgather, b.checked_mul(n)?)?;
            if overlap(data, recv, b.checked_mul(n)?) {
                return Some(Err(MPI_ERR_BUFFER));
            }
            // SAFETY: recvbuf holds size × recvcount elements, apart from sendbuf
            // (checked just above).
            let out = unsafe { contig(recv, count(rc).ok()?.checked_mul(n)?, r) }.ok()??;
            let r = shm::lock(&sh).allgather(data, out);
            Some(run("MPI_Allgather", r))
        }
        Some((cs, ds)) => {
            // SAFETY: recvcounts and displs hold one int per rank.
            let (cs, ds) = unsafe { (ints(cs, n).ok()?, ints(ds, n).ok()?) };
            let mut by = Vec::with_capacity(n);
            let mut at = Vec::with_capacity(n);
            let mut end = 0usize;
            for (&k, &d) in cs.iter().zip(ds) {
                let (k, d) = (usize::try_from(k).ok()?, usize::try_from(d).ok()?);
                end = end.max(d.checked_add(k)?);
                by.push(k.checked_mul(unit)?);
                at.push(d.checked_mul(unit)?);
            }
            if by[me] != b {
                return None;
            }
            let total = by.iter().try_fold(0usize, |a, &x| a.checked_add(x))?;
            let sh = shm::get(c, Which::Allgatherv, total)?;
            if overlap(data, recv, end.checked_mul(unit)?) {
                return Some(Err(MPI_ERR_BUFFER));
            }
            // SAFETY: recvbuf holds the blocks the counts and displacements name,
            // apart from sendbuf (checked just above).
            let out = unsafe { contig(recv, end, r) }.ok()??;
            let r = shm::lock(&sh).allgatherv(data, out, &by, &at);
            Some(run("MPI_Allgatherv", r))
        }
    }
}

/// Whether a send block lies in the receive buffer (`&recvbuf[rank]` passed as
/// sendbuf rather than MPI_IN_PLACE: erroneous, and the copies assume two buffers;
/// MPICH's errors/coll/noalias2).
fn overlap(a: &[u8], b: *const c_void, b_len: usize) -> bool {
    let (a0, b0) = (a.as_ptr() as usize, b as usize);
    !a.is_empty() && b_len > 0 && a0 < b0.saturating_add(b_len) && b0 < a0 + a.len()
}
