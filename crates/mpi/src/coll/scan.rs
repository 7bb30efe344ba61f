//! MPI_Scan and MPI_Exscan by recursive doubling: in round k a rank exchanges its
//! partial result (the reduction of its aligned block of 2^k ranks) with the rank
//! whose number differs in bit k; lower blocks always go on the left, so
//! non-commutative ops combine in rank order. Any communicator size works.

use super::{check_len, sendrecv_exact, tags, CollError, Pt2Pt, ReduceOp};

/// MPI_Scan: rank i's `recv` = send_0 op send_1 op … op send_i.
pub fn scan(
    p: &mut dyn Pt2Pt,
    send: &[u8],
    recv: &mut [u8],
    op: &mut ReduceOp,
) -> Result<(), CollError> {
    check_len("scan", recv.len(), send.len())?;
    let (me, n) = (p.rank(), p.size());
    let mut result = send.to_vec();
    let mut partial = send.to_vec();
    let mut tmp = vec![0u8; send.len()];
    let mut mask = 1;
    while mask < n {
        let partner = me ^ mask;
        if partner < n {
            sendrecv_exact(p, partner, &partial, partner, tags::SCAN, &mut tmp)?;
            if partner < me {
                op.apply(&tmp, &mut partial);
                op.apply(&tmp, &mut result);
            } else {
                op.apply_right(&mut partial, &mut tmp);
            }
        }
        mask <<= 1;
    }
    recv.copy_from_slice(&result);
    Ok(())
}

/// MPI_Exscan: rank i's `recv` = send_0 op … op send_{i-1}; rank 0's `recv` is left
/// as it was.
pub fn exscan(
    p: &mut dyn Pt2Pt,
    send: &[u8],
    recv: &mut [u8],
    op: &mut ReduceOp,
) -> Result<(), CollError> {
    check_len("exscan", recv.len(), send.len())?;
    let (me, n) = (p.rank(), p.size());
    let mut result: Option<Vec<u8>> = None;
    let mut partial = send.to_vec();
    let mut tmp = vec![0u8; send.len()];
    let mut mask = 1;
    while mask < n {
        let partner = me ^ mask;
        if partner < n {
            sendrecv_exact(p, partner, &partial, partner, tags::EXSCAN, &mut tmp)?;
            if partner < me {
                match result.as_mut() {
                    None => result = Some(tmp.clone()),
                    Some(r) => op.apply(&tmp, r),
                }
                op.apply(&tmp, &mut partial);
            } else {
                op.apply_right(&mut partial, &mut tmp);
            }
        }
        mask <<= 1;
    }
    if let Some(r) = result {
        recv.copy_from_slice(&r);
    }
    Ok(())
}
