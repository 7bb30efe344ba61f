//! MPI_Gatherv, MPI_Scatterv and MPI_Alltoallv through the communicator's shared
//! segment (`coll::shm`), whose protocol needs every rank to take the same steps:
//! so the ranks first learn every block's size in one small step (Gatherv: an
//! allgather of each rank's byte count; Scatterv: the root's counts broadcast;
//! Alltoallv: an allgather of each rank's largest block and total), then move
//! blocks padded to the largest with the regular gather, scatter or alltoall. The
//! padding costs nothing when the counts are alike (the usual case) and is refused
//! when it would more than double the bytes moved (plus [`SLACK`]): the
//! point-to-point algorithms then, chosen alike on every rank since every rank
//! knows the same sizes. A rank whose counts disagree with the others' (an
//! erroneous program) still takes every step, then returns MPI_ERR_TRUNCATE.

use super::args::run;
use super::shm::{self, Which};
use crate::abi::*;
use crate::comm::CommRef;
use std::os::raw::c_int;

/// Padding allowed beyond twice the bytes moved.
const SLACK: usize = 64 * 1024;

fn le(v: &[u8]) -> Vec<usize> {
    v.chunks_exact(8)
        .map(|x| u64::from_le_bytes(x.try_into().unwrap_or([0; 8])) as usize)
        .collect()
}

fn worth(padded: Option<usize>, moved: usize) -> bool {
    padded.is_some_and(|p| p <= moved.saturating_mul(2).saturating_add(SLACK))
}

/// Gatherv of packed `data` (this rank's block) to `root`, whose `out` holds the
/// blocks of `by` bytes at `pd` (`by` and `pd` at the root only); `None`: not
/// through the segment (the caller then runs the point-to-point algorithm).
pub(super) fn gatherv(
    c: &CommRef,
    name: &str,
    root: usize,
    data: &[u8],
    root_side: Option<(&[usize], &[usize], &mut [u8])>,
) -> Option<Result<(), c_int>> {
    let s = shm::get(c, Which::Gather, 0)?;
    let mut g = shm::lock(&s);
    let n = g.size();
    let mut cs = vec![0u8; 8 * n];
    if let Err(e) = run(
        name,
        g.allgather(&(data.len() as u64).to_le_bytes(), &mut cs),
    ) {
        return Some(Err(e));
    }
    let counts = le(&cs);
    let m = counts.iter().copied().max().unwrap_or(0);
    if !worth(m.checked_mul(n), counts.iter().sum()) {
        return None;
    }
    let mut block = data.to_vec();
    block.resize(m, 0);
    let mut all = vec![0u8; if root_side.is_some() { m * n } else { 0 }];
    if let Err(e) = run(name, g.gather(root, &block, &mut all)) {
        return Some(Err(e));
    }
    let Some((by, pd, out)) = root_side else {
        return Some(Ok(()));
    };
    let mut bad = false;
    for q in 0..n {
        bad |= by[q] != counts[q];
        let k = by[q].min(counts[q]);
        out[pd[q]..pd[q] + k].copy_from_slice(&all[q * m..q * m + k]);
    }
    Some(if bad { Err(MPI_ERR_TRUNCATE) } else { Ok(()) })
}

/// Scatterv: the root's blocks (`by` bytes at `pd` of packed `data`) to every
/// rank's `out` (its own block's bytes); see [`gatherv`].
pub(super) fn scatterv(
    c: &CommRef,
    name: &str,
    root: usize,
    root_side: Option<(&[usize], &[usize], &[u8])>,
    out: &mut [u8],
) -> Option<Result<(), c_int>> {
    let s = shm::get(c, Which::Scatter, 0)?;
    let mut g = shm::lock(&s);
    let n = g.size();
    let mut cs = vec![0u8; 8 * n];
    if let Some((by, _, _)) = &root_side {
        for (q, b) in by.iter().enumerate() {
            cs[8 * q..8 * q + 8].copy_from_slice(&(*b as u64).to_le_bytes());
        }
    }
    if let Err(e) = run(name, g.bcast(root, &mut cs)) {
        return Some(Err(e));
    }
    let counts = le(&cs);
    let m = counts.iter().copied().max().unwrap_or(0);
    if !worth(m.checked_mul(n), counts.iter().sum()) {
        return None;
    }
    let mut send = Vec::new();
    if let Some((by, pd, data)) = &root_side {
        send = vec![0u8; m * n];
        for q in 0..n {
            send[q * m..q * m + by[q]].copy_from_slice(&data[pd[q]..pd[q] + by[q]]);
        }
    }
    let mut block = vec![0u8; m];
    if let Err(e) = run(name, g.scatter(root, &send, &mut block)) {
        return Some(Err(e));
    }
    let me = g.rank();
    let k = out.len().min(counts[me]);
    out[..k].copy_from_slice(&block[..k]);
    Some(if out.len() != counts[me] {
        Err(MPI_ERR_TRUNCATE)
    } else {
        Ok(())
    })
}

/// Alltoallv of packed blocks: this rank's `sby` bytes at `spd` of `data` to each
/// rank, whose `rby` bytes at `rpd` of `out` receive them; see [`gatherv`].
pub(super) fn alltoallv(
    c: &CommRef,
    name: &str,
    data: &[u8],
    (sby, spd): (&[usize], &[usize]),
    out: &mut [u8],
    (rby, rpd): (&[usize], &[usize]),
) -> Option<Result<(), c_int>> {
    let s = shm::get(c, Which::Alltoall, 0)?;
    let mut g = shm::lock(&s);
    let n = g.size();
    let mine = [
        sby.iter().copied().max().unwrap_or(0) as u64,
        sby.iter().sum::<usize>() as u64,
    ];
    let mut cs = vec![0u8; 16 * n];
    let mut me16 = [0u8; 16];
    me16[..8].copy_from_slice(&mine[0].to_le_bytes());
    me16[8..].copy_from_slice(&mine[1].to_le_bytes());
    if let Err(e) = run(name, g.allgather(&me16, &mut cs)) {
        return Some(Err(e));
    }
    let v = le(&cs);
    let m = v.iter().step_by(2).copied().max().unwrap_or(0);
    let moved: usize = v.iter().skip(1).step_by(2).sum();
    if !worth(m.checked_mul(n).and_then(|x| x.checked_mul(n)), moved) {
        return None;
    }
    let mut send = vec![0u8; m * n];
    for q in 0..n {
        send[q * m..q * m + sby[q]].copy_from_slice(&data[spd[q]..spd[q] + sby[q]]);
    }
    let mut all = vec![0u8; m * n];
    if let Err(e) = run(name, g.alltoall(&send, &mut all)) {
        return Some(Err(e));
    }
    // A block longer than any sent: the ranks' counts disagree.
    let mut bad = false;
    for q in 0..n {
        bad |= rby[q] > m;
        let k = rby[q].min(m);
        out[rpd[q]..rpd[q] + k].copy_from_slice(&all[q * m..q * m + k]);
    }
    Some(if bad { Err(MPI_ERR_TRUNCATE) } else { Ok(()) })
}
