//! A root whose own side of MPI_Gather, MPI_Scatter or MPI_Reduce is bad (a type,
//! count or buffer only the root passes: the receive side of a gather, the send
//! side of a scatter, the receive buffer of a reduce) still takes the collective's
//! steps before it returns the error, with scratch memory sized from the side it
//! shares with the other ranks. Their calls then end (a gather's blocks and a
//! reduce's result are dropped, a scatter's ranks receive zeros) where under
//! MPI_ERRORS_RETURN they would wait for the root forever. Not when the shared side
//! is bad too or MPI_IN_PLACE (nothing then says how many steps to take), nor for
//! the v-forms (only the root knows the counts) or on the by-levels path.

use super::shm::{self, Which};
use crate::coll_glue::pt2pt;
use crate::comm::CommRef;
use myrix_mpi::coll;

/// A gather's steps at `root` for the other ranks' blocks of `data.len()` bytes.
pub(super) fn gather(c: &CommRef, root: usize, data: &[u8]) {
    let (n, b) = (c.ranks.len(), data.len());
    let mut out = vec![0u8; b * n];
    match shm::get(c, Which::Gather, b) {
        Some(s) => {
            let _ = shm::lock(&s).gather(root, data, &mut out);
        }
        None => {
            let (by, pd): (Vec<usize>, Vec<usize>) = (0..n).map(|q| (b, q * b)).unzip();
            let _ = coll::gatherv(&mut pt2pt(c), root, data, &mut out, &by, &pd);
        }
    }
}

/// A scatter's steps at `root`: zeros for the other ranks' blocks of `b` bytes.
pub(super) fn scatter(c: &CommRef, root: usize, b: usize) {
    let n = c.ranks.len();
    let (send, mut out) = (vec![0u8; b * n], vec![0u8; b]);
    match shm::get(c, Which::Scatter, b) {
        Some(s) => {
            let _ = shm::lock(&s).scatter(root, &send, &mut out);
        }
        None => {
            let (by, pd): (Vec<usize>, Vec<usize>) = (0..n).map(|q| (b, q * b)).unzip();
            let _ = coll::scatterv(&mut pt2pt(c), root, &send, &by, &pd, &mut out);
        }
    }
}
