//! The one-copy way for an Ireduce or Iallreduce above a slot with a predefined op
//! (session 29): through point-to-point schedules a 1 MiB reduction was 1.4–2.2×
//! Open MPI's, every message copied twice through the channel and the whole buffer
//! reduced at every step. Three steps of the step sequence, as the blocking
//! one-copy reduce: in `s` every rank posts its input's address; each then reduces
//! its own share of the elements (`share`) straight from every rank's input, in
//! rank order (`d0 op (d1 op (… op d(n-1)))`, as the slots' way), into the
//! operation's scratch, whose address it posts with `s + 1` (and a status word);
//! the ranks that receive (the root; every rank of an allreduce) copy every share
//! into their output and post `s + 2` with a status word, the others post it at
//! once. A rank's operation is over once every rank posted `s + 2`: its input and
//! its share are read until then.

use super::{Area, NbCombine, NbKind, NbOp, ShmColl};

/// The bytes `[lo, hi)` of rank `q`'s share of `len` bytes of `esz`-byte elements
/// among `n` ranks (whole elements; alike on every rank).
pub(super) fn share(len: usize, esz: usize, n: usize, q: usize) -> (usize, usize) {
    let el = len / esz.max(1);
    (el * q / n * esz, el * (q + 1) / n * esz)
}

/// The element size of a reduction that may go this way: a predefined op on a
/// predefined type (the share's bounds need whole elements).
pub(super) fn elem(kind: &NbKind) -> Option<usize> {
    match kind {
        NbKind::Reduce {
            combine: NbCombine::Builtin(_, b),
            ..
        } => Some(b.size().max(1)),
        _ => None,
    }
}

impl ShmColl {
    /// Runs a one-copy reduction as far as it goes; true when it is over.
    pub(super) fn nb_try_reduce_direct(&mut self, op: &mut NbOp) -> bool {
        let (s, me, n, len) = (op.step, self.me, self.g.n, op.len);
        let Some(esz) = elem(&op.kind) else {
            return true;
        };
        let receives = match &op.kind {
            NbKind::Reduce { root, .. } => root.is_none_or(|r| r == me),
            _ => false,
        };
        if !op.posted {
            if !self.try_claim(s, Area::Line) {
                return false;
            }
            let at = op.data.get(len).as_ptr() as u64;
            self.write(s, Area::Line, 0, &at.to_le_bytes());
            self.post(s);
            op.posted = true;
        }
        let (lo, hi) = share(len, esz, n, me);
        let m = hi - lo;
        if !op.reduced {
            if !self.all_posted(s) || !self.try_claim(s + 1, Area::Line) {
                return false;
            }
            let mut ok = true;
            let own = op.data.get(len);
            // `chunk`: this rank's share (first m bytes), then room for a peer's.
            let (acc, tmp) = op.chunk.split_at_mut(m);
            let NbKind::Reduce { combine, .. } = &mut op.kind else {
                return true;
            };
            let last = n - 1;
            if last == me {
                acc.copy_from_slice(&own[lo..hi]);
            } else {
                ok &= self.peer_read(last, self.exposed_at(last, s).wrapping_add(lo), acc);
            }
            for q in (0..last).rev() {
                if q == me {
                    combine.apply(&own[lo..hi], acc);
                } else {
                    // The address came from shared memory: a bad one fails the
                    // read, never the arithmetic.
                    ok &= self.peer_read(q, self.exposed_at(q, s).wrapping_add(lo), tmp);
                    combine.apply(tmp, acc);
                }
            }
            let at = op.chunk.as_ptr() as u64;
            self.write(s + 1, Area::Line, 0, &at.to_le_bytes());
            self.write(s + 1, Area::Line, 8, &u64::from(!ok).to_le_bytes());
            self.post(s + 1);
            op.reduced = true;
            if !ok {
                op.fail();
            }
        }
        let d = s + 2;
        if !op.copied {
            if receives && !self.all_posted(s + 1) {
                return false;
            }
            if !self.try_claim(d, Area::Line) {
                return false;
            }
            let mut ok = true;
            if receives {
                // SAFETY: `out` holds `len` bytes (checked at the start); neither
                // the input (exposed, a copy when in place) nor the scratch is part
                // of it.
                let out = unsafe { std::slice::from_raw_parts_mut(op.out, len) };
                for q in (0..n).filter(|&q| q != me) {
                    let (ql, qh) = share(len, esz, n, q);
                    ok &= self.peer_read(q, self.exposed_at(q, s + 1), &mut out[ql..qh]);
                    ok &= self.read(q, s + 1, Area::Line, 8, 8) == [0u8; 8];
                }
                out[lo..hi].copy_from_slice(&op.chunk[..m]);
            }
            self.write(d, Area::Line, 0, &u64::from(!ok).to_le_bytes());
            self.post(d);
            op.copied = true;
            if !ok {
                op.fail();
            }
        }
        if !self.all_posted(d) {
            return false;
        }
        let failed = (0..n)
            .filter(|&q| q != me)
            .any(|q| self.read(q, d, Area::Line, 0, 8) != [0u8; 8]);
        if failed {
            op.fail();
        }
        true
    }
}
