//! MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter(_block).
//!
//! * reduce, commutative op: a binomial tree rooted at `root`.
//! * reduce, non-commutative op: a binomial tree rooted at rank 0 in rank order, so
//!   every node combines the contiguous rank ranges `[lo, mid) op [mid, hi)`; rank 0
//!   then hands the result to `root`.
//! * allreduce, commutative op of at most [`ALLREDUCE_DOUBLING_MAX`] bytes: recursive
//!   doubling (the ranks beyond the largest power of two first fold into a
//!   neighbour); partners always combine lower range op upper range, so every rank
//!   computes bit-identical results. Otherwise reduce to rank 0, then bcast.
//! * reduce_scatter: reduce to rank 0, then scatterv.

use super::bcast::bcast_tagged;
use super::gather::scatterv_tagged;
use super::{check_len, check_root, packed_displs, recv_exact, sendrecv_exact, tags};
use super::{CollError, Pt2Pt, ReduceOp};

/// The largest allreduce (bytes) done by recursive doubling; larger ones reduce then
/// broadcast.
pub const ALLREDUCE_DOUBLING_MAX: usize = 64 * 1024;

/// Reduces every rank's `send` into `recv` at `root` (`recv` is only used there and
/// must be as long as `send`).
pub fn reduce(
    p: &mut dyn Pt2Pt,
    root: usize,
    send: &[u8],
    recv: &mut [u8],
    op: &mut ReduceOp,
) -> Result<(), CollError> {
    check_root(p, root)?;
    if p.rank() == root {
        check_len("reduce", recv.len(), send.len())?;
    }
    let mut acc = send.to_vec();
    reduce_in_place(p, root, &mut acc, op)?;
    if p.rank() == root {
        recv.copy_from_slice(&acc);
    }
    Ok(())
}

/// Reduces `acc` of every rank into `acc` at `root`; elsewhere `acc` ends
/// unspecified.
pub(crate) fn reduce_in_place(
    p: &mut dyn Pt2Pt,
    root: usize,
    acc: &mut Vec<u8>,
    op: &mut ReduceOp,
) -> Result<(), CollError> {
    let (me, n) = (p.rank(), p.size());
    let tag = tags::REDUCE;
    let mut tmp = vec![0u8; acc.len()];
    // The tree's root: `root` for a commutative op, else rank 0 (rank order).
    let tree_root = if op.commutative { root } else { 0 };
    let vr = (me + n - tree_root) % n;
    let mut mask = 1;
    while mask < n {
        if vr & mask == 0 {
            let child = vr | mask;
            if child < n {
                recv_exact(p, (child + tree_root) % n, tag, &mut tmp)?;
                // The child's range follows ours: acc = acc op child.
                op.apply_right(acc, &mut tmp);
            }
        } else {
            p.send((vr - mask + tree_root) % n, tag, acc)?;
            break;
        }
        mask <<= 1;
    }
    if tree_root != root {
        if me == tree_root {
            p.send(root, tag, acc)?;
        } else if me == root {
            recv_exact(p, tree_root, tag, acc)?;
        }
    }
    Ok(())
}

/// Reduces every rank's `send` into every rank's `recv` (same lengths everywhere).
pub fn allreduce(
    p: &mut dyn Pt2Pt,
    send: &[u8],
    recv: &mut [u8],
    op: &mut ReduceOp,
) -> Result<(), CollError> {
    check_len("allreduce", recv.len(), send.len())?;
    let mut acc = send.to_vec();
    if op.commutative && send.len() <= ALLREDUCE_DOUBLING_MAX {
        recursive_doubling(p, &mut acc, op)?;
    } else {
        reduce_in_place(p, 0, &mut acc, op)?;
        bcast_tagged(p, 0, &mut acc, tags::ALLREDUCE)?;
    }
    recv.copy_from_slice(&acc);
    Ok(())
}

fn recursive_doubling(
    p: &mut dyn Pt2Pt,
    acc: &mut Vec<u8>,
    op: &mut ReduceOp,
) -> Result<(), CollError> {
    let (me, n) = (p.rank(), p.size());
    let tag = tags::ALLREDUCE;
    let mut tmp = vec![0u8; acc.len()];
    let mut p2 = 1;
    while p2 * 2 <= n {
        p2 *= 2;
    }
    let rem = n - p2;
    // Fold: of the first 2*rem ranks, each even one hands its data to the next.
    let newrank = if me < 2 * rem {
        if me % 2 == 0 {
            p.send(me + 1, tag, acc)?;
            None
        } else {
            recv_exact(p, me - 1, tag, &mut tmp)?;
            op.apply(&tmp, acc);
            Some(me / 2)
        }
    } else {
        Some(me - rem)
    };
    if let Some(nr) = newrank {
        let mut mask = 1;
        while mask < p2 {
            let pnr = nr ^ mask;
            let partner = if pnr < rem { pnr * 2 + 1 } else { pnr + rem };
            sendrecv_exact(p, partner, acc, partner, tag, &mut tmp)?;
            if pnr < nr {
                op.apply(&tmp, acc);
            } else {
                op.apply_right(acc, &mut tmp);
            }
            mask <<= 1;
        }
    }
    if me < 2 * rem {
        if me % 2 == 1 {
            p.send(me - 1, tag, acc)?;
        } else {
            recv_exact(p, me + 1, tag, acc)?;
        }
    }
    Ok(())
}

/// Reduces every rank's `send` (the concatenation of `counts[i]` bytes per rank)
/// and leaves block `i` of the result in rank `i`'s `recv` (`counts[i]` bytes).
pub fn reduce_scatter(
    p: &mut dyn Pt2Pt,
    send: &[u8],
    recv: &mut [u8],
    counts: &[usize],
    op: &mut ReduceOp,
) -> Result<(), CollError> {
    if counts.len() != p.size() {
        return Err(CollError::Args(format!(
            "reduce_scatter: {} counts for {} ranks",
            counts.len(),
            p.size()
        )));
    }
    let (displs, total) = packed_displs(counts)?;
    check_len("reduce_scatter send", send.len(), total)?;
    check_len("reduce_scatter recv", recv.len(), counts[p.rank()])?;
    let mut acc = send.to_vec();
    reduce_in_place(p, 0, &mut acc, op)?;
    scatterv_tagged(p, 0, &acc, counts, &displs, recv, tags::SCATTER)
}

/// MPI_Reduce_scatter_block: every rank receives `recv.len()` bytes; `send` holds
/// `size` such blocks.
pub fn reduce_scatter_block(
    p: &mut dyn Pt2Pt,
    send: &[u8],
    recv: &mut [u8],
    op: &mut ReduceOp,
) -> Result<(), CollError> {
    let counts = vec![recv.len(); p.size()];
    reduce_scatter(p, send, recv, &counts, op)
}
