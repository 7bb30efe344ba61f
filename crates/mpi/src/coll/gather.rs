//! MPI_Gather(v), MPI_Scatter(v) (linear: the root exchanges with each rank in
//! turn) and MPI_Allgather(v) (a ring: n - 1 steps, each rank passing on the block
//! it received last, so any size works and each link carries every block once).
//!
//! Blocks are bytes: `counts[i]` bytes at `displs[i]` of the root's buffer (or of
//! every rank's buffer for allgatherv). Arguments significant only at the root may be
//! empty elsewhere.

use super::{check_blocks, check_len, check_root, recv_exact, sendrecv_exact, tags};
use super::{CollError, Pt2Pt};

/// MPI_Gather: `recv` at the root holds `size` blocks of `send.len()` bytes.
pub fn gather(
    p: &mut dyn Pt2Pt,
    root: usize,
    send: &[u8],
    recv: &mut [u8],
) -> Result<(), CollError> {
    check_root(p, root)?;
    let n = p.size();
    if p.rank() == root {
        let want = send
            .len()
            .checked_mul(n)
            .ok_or_else(|| CollError::Args("gather: size overflow".into()))?;
        check_len("gather recv", recv.len(), want)?;
        let counts = vec![send.len(); n];
        let displs: Vec<usize> = (0..n).map(|i| i * send.len()).collect();
        gatherv(p, root, send, recv, &counts, &displs)
    } else {
        gatherv(p, root, send, recv, &[], &[])
    }
}

/// MPI_Gatherv: rank `i`'s `send` lands at `recv[displs[i]..][..counts[i]]` of the root.
pub fn gatherv(
    p: &mut dyn Pt2Pt,
    root: usize,
    send: &[u8],
    recv: &mut [u8],
    counts: &[usize],
    displs: &[usize],
) -> Result<(), CollError> {
    check_root(p, root)?;
    let (me, n) = (p.rank(), p.size());
    if me != root {
        return p.send(root, tags::GATHER, send);
    }
    check_blocks("gatherv", n, counts, displs, recv.len())?;
    check_len("gatherv own block", send.len(), counts[me])?;
    for i in 0..n {
        let block = &mut recv[displs[i]..displs[i] + counts[i]];
        if i == me {
            block.copy_from_slice(send);
        } else {
            recv_exact(p, i, tags::GATHER, block)?;
        }
    }
    Ok(())
}

/// MPI_Scatter: the root's `send` holds `size` blocks of `recv.len()` bytes.
pub fn scatter(
    p: &mut dyn Pt2Pt,
    root: usize,
    send: &[u8],
    recv: &mut [u8],
) -> Result<(), CollError> {
    check_root(p, root)?;
    let n = p.size();
    if p.rank() == root {
        let want = recv
            .len()
            .checked_mul(n)
            .ok_or_else(|| CollError::Args("scatter: size overflow".into()))?;
        check_len("scatter send", send.len(), want)?;
        let counts = vec![recv.len(); n];
        let displs: Vec<usize> = (0..n).map(|i| i * recv.len()).collect();
        scatterv(p, root, send, &counts, &displs, recv)
    } else {
        scatterv(p, root, send, &[], &[], recv)
    }
}

/// MPI_Scatterv: rank `i` receives `send[displs[i]..][..counts[i]]` of the root.
pub fn scatterv(
    p: &mut dyn Pt2Pt,
    root: usize,
    send: &[u8],
    counts: &[usize],
    displs: &[usize],
    recv: &mut [u8],
) -> Result<(), CollError> {
    check_root(p, root)?;
    scatterv_tagged(p, root, send, counts, displs, recv, tags::SCATTER)
}

pub(crate) fn scatterv_tagged(
    p: &mut dyn Pt2Pt,
    root: usize,
    send: &[u8],
    counts: &[usize],
    displs: &[usize],
    recv: &mut [u8],
    tag: i32,
) -> Result<(), CollError> {
    let (me, n) = (p.rank(), p.size());
    if me != root {
        return recv_exact(p, root, tag, recv);
    }
    check_blocks("scatterv", n, counts, displs, send.len())?;
    check_len("scatterv own block", recv.len(), counts[me])?;
    for i in 0..n {
        let block = &send[displs[i]..displs[i] + counts[i]];
        if i == me {
            recv.copy_from_slice(block);
        } else {
            p.send(i, tag, block)?;
        }
    }
    Ok(())
}

/// MPI_Allgather: every `recv` holds `size` blocks of `send.len()` bytes.
pub fn allgather(p: &mut dyn Pt2Pt, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
    let n = p.size();
    let want = send
        .len()
        .checked_mul(n)
        .ok_or_else(|| CollError::Args("allgather: size overflow".into()))?;
    check_len("allgather recv", recv.len(), want)?;
    let counts = vec![send.len(); n];
    let displs: Vec<usize> = (0..n).map(|i| i * send.len()).collect();
    allgatherv(p, send, recv, &counts, &displs)
}

/// MPI_Allgatherv: rank `i`'s `send` lands at `recv[displs[i]..][..counts[i]]` of
/// every rank.
pub fn allgatherv(
    p: &mut dyn Pt2Pt,
    send: &[u8],
    recv: &mut [u8],
    counts: &[usize],
    displs: &[usize],
) -> Result<(), CollError> {
    let (me, n) = (p.rank(), p.size());
    check_blocks("allgatherv", n, counts, displs, recv.len())?;
    check_len("allgatherv own block", send.len(), counts[me])?;
    recv[displs[me]..displs[me] + counts[me]].copy_from_slice(send);
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let mut out = Vec::with_capacity(counts.iter().copied().max().unwrap_or(0));
    for step in 0..n.saturating_sub(1) {
        let sb = (me + n - step) % n;
        let rb = (me + n - step - 1) % n;
        out.clear();
        out.extend_from_slice(&recv[displs[sb]..displs[sb] + counts[sb]]);
        let into = &mut recv[displs[rb]..displs[rb] + counts[rb]];
        sendrecv_exact(p, right, &out, left, tags::ALLGATHER, into)?;
    }
    Ok(())
}
