//! MPI_Reduce of large buffers the one-copy way (`direct.rs`): every rank exposes
//! its send buffer (the root its receive buffer too); rank `p` combines part `p`
//! of everyone's data (`1/n` of the elements), reading the others' parts straight
//! from their buffers, in rank order `d0 op (d1 op (… op d(n-1)))` so
//! non-commutative ops stay right; the root combines its part in its receive
//! buffer, the others write theirs there. Each rank reads `(n-1)/n` of a buffer and
//! combines `1/n` of the data, all ranks at once, instead of two copies through the
//! slots.

use super::{Area, ShmColl};
use crate::coll::{CollError, ReduceOp};

impl ShmColl {
    /// The one-copy reduce (call only when [`ShmColl::one_copy`] said so for
    /// `send.len()`, alike on every rank; `send.len()` whole elements of `elem`).
    pub(super) fn reduce_direct(
        &mut self,
        root: usize,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
        op: &mut ReduceOp,
    ) -> Result<(), CollError> {
        let (n, me) = (self.g.n, self.me);
        let e = send.len() / elem;
        let part = |p: usize| (e * p / n * elem, e * (p + 1) / n * elem);
        let s = self.next();
        self.claim(s, Area::Line);
        let mut words = [0u8; 16];
        words[..8].copy_from_slice(&(send.as_ptr() as u64).to_le_bytes());
        if me == root {
            words[8..].copy_from_slice(&(recv.as_mut_ptr() as u64).to_le_bytes());
        }
        self.write(s, Area::Line, 0, &words);
        self.post(s);
        let mut addr = vec![0usize; n];
        let mut root_recv = 0;
        for q in (0..n).filter(|&q| q != me) {
            self.wait(q, s);
            let w = self.read(q, s, Area::Line, 0, 16);
            addr[q] = u64::from_le_bytes(w[..8].try_into().expect("8 bytes")) as usize;
            if q == root {
                root_recv = u64::from_le_bytes(w[8..].try_into().expect("8 bytes")) as usize;
            }
        }
        let (lo, hi) = part(me);
        let len = hi - lo;
        // Scratch kept between calls: fresh large allocations fault in every page.
        let mut scratch = std::mem::take(&mut self.scratch);
        let need = if me == root { len } else { 2 * len };
        if scratch.len() < need {
            scratch.resize(need, 0);
        }
        let (other, acc_own) = scratch.split_at_mut(len);
        let acc: &mut [u8] = if me == root {
            &mut recv[lo..hi]
        } else {
            &mut acc_own[..len]
        };
        let mut ok = true;
        if n - 1 == me {
            acc.copy_from_slice(&send[lo..hi]);
        } else {
            ok &= self.peer_read(n - 1, addr[n - 1] + lo, acc);
        }
        for q in (0..n - 1).rev() {
            if q == me {
                op.apply(&send[lo..hi], acc);
            } else {
                ok &= self.peer_read(q, addr[q] + lo, other);
                op.apply(other, acc);
            }
        }
        if me != root {
            ok &= self.peer_write(root, root_recv + lo, acc);
        }
        self.scratch = scratch;
        self.done(s, ok, true)
    }
}
