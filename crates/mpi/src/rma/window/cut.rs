//! Puts and gets to a region attached at another rank of this node whose bytes lie
//! in two (or more) of its pieces: the region shared a page with memory exposed
//! before it, so the attach cut it where the segments meet ([`super::memory`]), and
//! here the segments are mapped apart. Each contiguous run of the target type is
//! copied piece by piece. An accumulate across such a cut is applied stretch by
//! stretch under the target's accumulate lock, so it still looks like one to every
//! other accumulate; one whose element itself straddles the cut is refused (its
//! atomicity would have to span two mappings). Nothing here is on a hot path.

use super::ops::{not_attached, pieces};
use super::Window;
use crate::datatype::{Basic, Datatype};
use crate::op::BuiltinOp;
use crate::rma::{acc, RmaError};

impl Window {
    /// Calls `f(target, at, k)` for each stretch of `len` bytes at address `addr` of
    /// rank `r` lying in one piece: `target` is where the stretch is mapped here,
    /// `at` its offset from `addr`.
    fn each_stretch(
        &self,
        r: usize,
        addr: u64,
        len: usize,
        mut f: impl FnMut(*mut u8, usize, usize),
    ) -> Result<(), RmaError> {
        let ctrl = self.targets[r].ctrl();
        let mut at = 0usize;
        while at < len {
            let here = addr + at as u64;
            let a = ctrl
                .find_attachment(here, 1)
                .ok_or_else(|| not_attached(r, here, (len - at) as u64))?;
            let k = ((a.addr + a.len - here) as usize).min(len - at);
            let p = self.dynamic_addr(r, here, k as u64)?;
            f(p, at, k);
            at += k;
        }
        Ok(())
    }

    /// Puts `data` (packed) into `tcount` elements of `tdt` at address `off` of rank
    /// `r` of this node, across the pieces they lie in.
    pub(super) fn cut_put(
        &self,
        r: usize,
        off: usize,
        data: &[u8],
        tcount: usize,
        tdt: &Datatype,
    ) -> Result<(), RmaError> {
        let mut from = 0usize;
        for (o, len) in pieces(off, tcount, tdt) {
            let run = &data[from..from + len];
            self.each_stretch(r, o as u64, len, |p, at, k| {
                // SAFETY: `p` maps `k` attached bytes of rank `r` (each_stretch);
                // `run[at..at + k]` is in bounds. Another process's memory: copy.
                unsafe { std::ptr::copy(run[at..].as_ptr(), p, k) }
            })?;
            from += len;
        }
        Ok(())
    }

    /// Gets `tcount` elements of `tdt` at address `off` of rank `r` of this node into
    /// `out` (packed), across the pieces they lie in.
    pub(super) fn cut_get(
        &self,
        r: usize,
        off: usize,
        out: &mut [u8],
        tcount: usize,
        tdt: &Datatype,
    ) -> Result<(), RmaError> {
        let mut to = 0usize;
        for (o, len) in pieces(off, tcount, tdt) {
            let run = &mut out[to..to + len];
            self.each_stretch(r, o as u64, len, |p, at, k| {
                // SAFETY: as in cut_put, the other way.
                unsafe { std::ptr::copy(p, run[at..].as_mut_ptr(), k) }
            })?;
            to += len;
        }
        Ok(())
    }
}

impl Window {
    /// MPI_Accumulate / Get_accumulate of `origin` (packed elements of `basic`) into
    /// `tcount` elements of `tdt` at address `off` of rank `r` of this node, across
    /// the pieces they lie in; the old values go to `old` (packed) when given.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cut_acc(
        &self,
        r: usize,
        off: usize,
        op: BuiltinOp,
        basic: Basic,
        origin: &[u8],
        mut old: Option<&mut [u8]>,
        tcount: usize,
        tdt: &Datatype,
    ) -> Result<(), RmaError> {
        // Where each stretch is mapped here, and its place in the packed data.
        let mut stretches = Vec::new();
        let mut from = 0usize;
        for (o, len) in pieces(off, tcount, tdt) {
            self.each_stretch(r, o as u64, len, |p, at, k| {
                stretches.push((p, from + at, k))
            })?;
            from += len;
        }
        let w = basic.size().max(1);
        if stretches.iter().any(|&(_, _, k)| k % w != 0) {
            return Err(refused(r, "an accumulate whose element lies"));
        }
        self.targets[r].ctrl().with_acc_lock(|| {
            for &(p, at, k) in &stretches {
                let res = old.as_deref_mut().map(|o| &mut o[at..at + k]);
                // SAFETY: `p` maps `k` attached bytes of rank `r` (each_stretch);
                // the lock is held.
                unsafe { acc::accumulate_held(op, basic, &origin[at..at + k], p, res) }
                    .map_err(|_| RmaError::Op)?;
            }
            Ok(())
        })
    }
}

/// The error of an accumulate or compare-and-swap across the cut of a region.
pub(super) fn refused(r: usize, what: &str) -> RmaError {
    RmaError::Unsupported(format!(
        "{what} across two pieces of a region attached at rank {r} (its pages meet memory \
         exposed before it, so they are in two segments) is not implemented: access each \
         piece separately"
    ))
}
