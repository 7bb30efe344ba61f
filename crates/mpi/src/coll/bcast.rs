//! MPI_Bcast over a binomial tree rooted at `root`: a rank receives once from its
//! parent, then forwards to its children, largest subtree first.

use super::{check_root, recv_exact, tags, CollError, Pt2Pt};

/// Broadcasts `buf` from `root`; every rank passes a buffer of the same length.
pub fn bcast(p: &mut dyn Pt2Pt, root: usize, buf: &mut [u8]) -> Result<(), CollError> {
    check_root(p, root)?;
    bcast_tagged(p, root, buf, tags::BCAST)
}

pub(crate) fn bcast_tagged(
    p: &mut dyn Pt2Pt,
    root: usize,
    buf: &mut [u8],
    tag: i32,
) -> Result<(), CollError> {
    let n = p.size();
    let vr = (p.rank() + n - root) % n;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            recv_exact(p, (vr - mask + root) % n, tag, buf)?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if vr + mask < n {
            p.send((vr + mask + root) % n, tag, buf)?;
        }
        mask >>= 1;
    }
    Ok(())
}
