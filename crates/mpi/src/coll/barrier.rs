//! MPI_Barrier by dissemination: in round k every rank signals rank + 2^k and waits
//! for rank - 2^k; after ⌈log2 n⌉ rounds every rank has heard, indirectly, from all.

use super::{sendrecv_exact, tags, CollError, Pt2Pt};

pub fn barrier(p: &mut dyn Pt2Pt) -> Result<(), CollError> {
    let (me, n) = (p.rank(), p.size());
    let mut k = 1;
    while k < n {
        let to = (me + k) % n;
        let from = (me + n - k) % n;
        sendrecv_exact(p, to, &[], from, tags::BARRIER, &mut [])?;
        k <<= 1;
    }
    Ok(())
}
