//! MPI_Alltoall(v) by pairwise exchange: in step `i` every rank sends to
//! `rank + i` and receives from `rank - i` in one sendrecv, so no step can deadlock
//! whatever the point-to-point layer buffers.

use super::{check_blocks, check_len, sendrecv_exact, tags, CollError, Pt2Pt};

/// MPI_Alltoall: `send` and `recv` each hold `size` equal blocks.
pub fn alltoall(p: &mut dyn Pt2Pt, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
    let n = p.size();
    check_len("alltoall recv", recv.len(), send.len())?;
    if send.len() % n != 0 {
        return Err(CollError::Args(format!(
            "alltoall: {} bytes do not split into {n} blocks",
            send.len()
        )));
    }
    let b = send.len() / n;
    let counts = vec![b; n];
    let displs: Vec<usize> = (0..n).map(|i| i * b).collect();
    alltoallv(p, send, &counts, &displs, recv, &counts, &displs)
}

/// MPI_Alltoallv: block `send[sdispls[j]..][..scounts[j]]` goes to rank `j`, which
/// stores it at `recv[rdispls[i]..][..rcounts[i]]` (`i` the sender).
pub fn alltoallv(
    p: &mut dyn Pt2Pt,
    send: &[u8],
    scounts: &[usize],
    sdispls: &[usize],
    recv: &mut [u8],
    rcounts: &[usize],
    rdispls: &[usize],
) -> Result<(), CollError> {
    let (me, n) = (p.rank(), p.size());
    check_blocks("alltoallv send", n, scounts, sdispls, send.len())?;
    check_blocks("alltoallv recv", n, rcounts, rdispls, recv.len())?;
    check_len("alltoallv own block", rcounts[me], scounts[me])?;
    for i in 0..n {
        let dst = (me + i) % n;
        let src = (me + n - i) % n;
        let out = &send[sdispls[dst]..sdispls[dst] + scounts[dst]];
        let into = &mut recv[rdispls[src]..rdispls[src] + rcounts[src]];
        if i == 0 {
            into.copy_from_slice(out);
        } else {
            sendrecv_exact(p, dst, out, src, tags::ALLTOALL, into)?;
        }
    }
    Ok(())
}
