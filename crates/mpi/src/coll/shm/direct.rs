//! Large blocks in one copy: instead of through the segment's slots (a copy in and a
//! copy out, a slot at a time), the rank that owns a buffer *exposes* it — its
//! address in its line, and for the v-forms a table of (offset, bytes) per rank in
//! its slot — and the ranks that need it copy straight from or into it with
//! [`PeerMem`] (on Linux, `process_vm_readv`/`process_vm_writev`: one kernel copy,
//! what Open MPI's vader does with CMA; between threads, a plain copy).
//!
//! Two steps per call: in step `s` every rank posts (the exposing ranks with their
//! descriptors), the copying ranks wait for the exposers' `s`, copy, and post
//! `s + 1` with a status word in the line (1: a copy failed); an exposing rank
//! waits for every rank's `s + 1` before it returns, since its buffer is being read
//! or written until then, and returns an error when any copy failed. The choice of
//! this path depends only on what every rank knows alike (the block size against
//! `direct_min`, and whether the communicator has a [`PeerMem`], which
//! the set-up decides alike).

use super::{Area, ShmColl};
use crate::coll::CollError;

/// Copies between this rank's memory and another rank's, by address in the other
/// rank's address space.
pub trait PeerMem: Send {
    /// Copies `to.len()` bytes at address `from` of rank `q` into `to`.
    fn read(&self, q: usize, from: usize, to: &mut [u8]) -> bool;
    /// Copies `from` to address `to` of rank `q`.
    fn write(&self, q: usize, to: usize, from: &[u8]) -> bool;
}

/// Ranks that are threads of one process (tests): addresses are this process's.
pub struct SameProcess;

impl PeerMem for SameProcess {
    fn read(&self, _q: usize, from: usize, to: &mut [u8]) -> bool {
        // SAFETY: the exposing rank keeps `from..from + len` alive and unwritten
        // until this rank posts its done step (the protocol above).
        unsafe { std::ptr::copy_nonoverlapping(from as *const u8, to.as_mut_ptr(), to.len()) };
        true
    }
    fn write(&self, _q: usize, to: usize, from: &[u8]) -> bool {
        // SAFETY: the exposing rank gave this range to this rank alone and does not
        // touch it until this rank posts its done step.
        unsafe { std::ptr::copy_nonoverlapping(from.as_ptr(), to as *mut u8, from.len()) };
        true
    }
}

/// The smallest block (bytes) that goes the direct way by default.
pub const DIRECT_MIN: usize = 16 * 1024;

/// Where rank `q`'s block lies in a buffer: (offset, bytes).
pub type Blocks<'a> = &'a dyn Fn(usize) -> (usize, usize);

fn word(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[8 * i..8 * i + 8]);
    u64::from_le_bytes(w)
}

impl ShmColl {
    /// Whether blocks of `bytes` go the direct way (alike on every rank).
    pub fn one_copy(&self, bytes: usize) -> bool {
        self.peer.is_some() && self.g.n > 1 && bytes >= self.direct_min && bytes > 0
    }

    /// Step one: posts this rank's step, with `addr` in its line when it exposes a
    /// buffer, and `table(q)` for every rank in its slot when given.
    fn expose(&mut self, addr: Option<usize>, table: Option<Blocks>) -> u64 {
        let s = self.next();
        if let Some(a) = addr {
            self.claim(s, Area::Line);
            self.write(s, Area::Line, 0, &(a as u64).to_le_bytes());
        }
        if let Some(t) = table {
            self.claim(s, Area::Slot);
            let n = self.g.n;
            let out = self.area_mut(s, Area::Slot, 0, 16 * n);
            for q in 0..n {
                let (o, b) = t(q);
                out[16 * q..16 * q + 8].copy_from_slice(&(o as u64).to_le_bytes());
                out[16 * q + 8..16 * q + 16].copy_from_slice(&(b as u64).to_le_bytes());
            }
        }
        self.post(s);
        s
    }

    /// Rank `q`'s exposed address for step `s` (waits for it).
    fn exposed(&self, q: usize, s: u64) -> usize {
        self.wait(q, s);
        word(self.read(q, s, Area::Line, 0, 8), 0) as usize
    }

    /// Rank `q`'s table entry for this rank in step `s` (after [`Self::exposed`]).
    fn exposed_entry(&self, q: usize, s: u64) -> (usize, usize) {
        let e = self.read(q, s, Area::Slot, 16 * self.me, 16);
        (word(e, 0) as usize, word(e, 1) as usize)
    }

    /// Step two: posts `s + 1` with this rank's status; with `wait`, waits for every
    /// rank's and fails when any copy failed.
    pub(super) fn done(&mut self, s: u64, ok: bool, wait: bool) -> Result<(), CollError> {
        let d = s + 1;
        self.seq = d;
        self.claim(d, Area::Line);
        self.write(d, Area::Line, 0, &u64::from(!ok).to_le_bytes());
        self.post(d);
        let mut all_ok = ok;
        if wait {
            self.wait_all(d);
            for q in (0..self.g.n).filter(|&q| q != self.me) {
                all_ok &= word(self.read(q, d, Area::Line, 0, 8), 0) == 0;
            }
        }
        if all_ok {
            Ok(())
        } else {
            Err(CollError::Transport(
                "a copy between ranks' memories failed".into(),
            ))
        }
    }

    /// Takes both steps exposing nothing (every block empty), so that the peers,
    /// which cannot know this rank's arguments are bad, copy nothing and go on;
    /// then fails with `e`.
    fn refuse(&mut self, e: CollError) -> Result<(), CollError> {
        let s = self.expose(Some(0), Some(&|_| (0, 0)));
        let _ = self.done(s, false, true);
        Err(e)
    }

    pub(super) fn peer_read(&self, q: usize, from: usize, to: &mut [u8]) -> bool {
        to.is_empty() || self.peer.as_ref().is_some_and(|p| p.read(q, from, to))
    }

    pub(super) fn peer_write(&self, q: usize, to: usize, from: &[u8]) -> bool {
        from.is_empty() || self.peer.as_ref().is_some_and(|p| p.write(q, to, from))
    }

    /// MPI_Bcast, the direct way: every rank reads the root's buffer.
    pub(super) fn bcast_direct(&mut self, root: usize, buf: &mut [u8]) -> Result<(), CollError> {
        if self.me == root {
            let s = self.expose(Some(buf.as_ptr() as usize), None);
            return self.done(s, true, true);
        }
        let s = self.expose(None, None);
        let a = self.exposed(root, s);
        let ok = self.peer_read(root, a, buf);
        self.done(s, ok, false)
    }

    /// MPI_Gather, the direct way: every rank writes its block into the root's
    /// buffer (the root's own block is the caller's).
    pub(super) fn gather_direct(
        &mut self,
        root: usize,
        send: &[u8],
        recv: &mut [u8],
    ) -> Result<(), CollError> {
        if self.me == root {
            let s = self.expose(Some(recv.as_mut_ptr() as usize), None);
            return self.done(s, true, true);
        }
        let s = self.expose(None, None);
        let a = self.exposed(root, s);
        let ok = self.peer_write(root, a + self.me * send.len(), send);
        self.done(s, ok, false)
    }

    /// MPI_Scatter, the direct way: every rank reads its block of the root's buffer.
    pub(super) fn scatter_direct(
        &mut self,
        root: usize,
        send: &[u8],
        recv: &mut [u8],
    ) -> Result<(), CollError> {
        if self.me == root {
            let s = self.expose(Some(send.as_ptr() as usize), None);
            return self.done(s, true, true);
        }
        let s = self.expose(None, None);
        let a = self.exposed(root, s);
        let ok = self.peer_read(root, a + self.me * recv.len(), recv);
        self.done(s, ok, false)
    }

    /// MPI_Allgather(v), the direct way: every rank reads every other's block.
    pub(super) fn allgatherv_direct(
        &mut self,
        send: &[u8],
        recv: &mut [u8],
        at: Blocks,
    ) -> Result<(), CollError> {
        let s = self.expose(Some(send.as_ptr() as usize), None);
        let mut ok = true;
        for q in (0..self.g.n).filter(|&q| q != self.me) {
            let a = self.exposed(q, s);
            let (o, b) = at(q);
            ok &= self.peer_read(q, a, &mut recv[o..o + b]);
        }
        self.done(s, ok, true)
    }

    /// MPI_Alltoall, the direct way: every rank reads its block of every other's
    /// send buffer.
    pub(super) fn alltoall_direct(
        &mut self,
        send: &[u8],
        recv: &mut [u8],
    ) -> Result<(), CollError> {
        let b = send.len() / self.g.n;
        let s = self.expose(Some(send.as_ptr() as usize), None);
        let mut ok = true;
        for q in (0..self.g.n).filter(|&q| q != self.me) {
            let a = self.exposed(q, s);
            ok &= self.peer_read(q, a + self.me * b, &mut recv[q * b..(q + 1) * b]);
        }
        self.done(s, ok, true)
    }

    /// Gatherv the direct way (call only when [`Self::one_copy`] said so alike on every
    /// rank): the root exposes `out` and where each rank's block goes (`at`); every
    /// other rank writes `data`, cut to the root's count for it. The root's own
    /// block is the caller's to copy. Returns, at the root, nothing about counts:
    /// the caller compares them.
    pub fn gatherv_direct(
        &mut self,
        root: usize,
        data: &[u8],
        root_side: Option<(Blocks, &mut [u8])>,
    ) -> Result<(), CollError> {
        self.check_root(root)?;
        if self.me == root {
            let Some((at, out)) = root_side else {
                return Err(CollError::Args(
                    "gatherv: no receive side at the root".into(),
                ));
            };
            if let Err(e) = check_blocks(self.g.n, at, out.len()) {
                return self.refuse(e);
            }
            let s = self.expose(Some(out.as_mut_ptr() as usize), Some(at));
            return self.done(s, true, true);
        }
        let s = self.expose(None, None);
        let a = self.exposed(root, s);
        let (o, b) = self.exposed_entry(root, s);
        let k = b.min(data.len());
        let ok = self.peer_write(root, a + o, &data[..k]);
        self.done(s, ok, false)
    }

    /// Scatterv the direct way: the root exposes `data` and its blocks `at`; every
    /// other rank reads its own, cut to `out`'s length.
    pub fn scatterv_direct(
        &mut self,
        root: usize,
        root_side: Option<(Blocks, &[u8])>,
        out: &mut [u8],
    ) -> Result<(), CollError> {
        self.check_root(root)?;
        if self.me == root {
            let Some((at, data)) = root_side else {
                return Err(CollError::Args("scatterv: no send side at the root".into()));
            };
            if let Err(e) = check_blocks(self.g.n, at, data.len()) {
                return self.refuse(e);
            }
            let s = self.expose(Some(data.as_ptr() as usize), Some(at));
            return self.done(s, true, true);
        }
        let s = self.expose(None, None);
        let a = self.exposed(root, s);
        let (o, b) = self.exposed_entry(root, s);
        let k = b.min(out.len());
        let ok = self.peer_read(root, a + o, &mut out[..k]);
        self.done(s, ok, false)
    }

    /// Alltoallv the direct way: every rank exposes `data` and its blocks `sat`;
    /// each reads its block of every other's into `out` at `rat(q)`, cut to the
    /// shorter. Returns whether a peer's block was longer than this rank's room for
    /// it (the ranks' counts disagree). The caller copies this rank's own block.
    pub fn alltoallv_direct(
        &mut self,
        data: &[u8],
        sat: Blocks,
        out: &mut [u8],
        rat: Blocks,
    ) -> Result<bool, CollError> {
        let n = self.g.n;
        if let Err(e) = check_blocks(n, sat, data.len()).and(check_blocks(n, rat, out.len())) {
            return self.refuse(e).map(|()| false);
        }
        let s = self.expose(Some(data.as_ptr() as usize), Some(sat));
        let (mut ok, mut long) = (true, false);
        for q in (0..n).filter(|&q| q != self.me) {
            let a = self.exposed(q, s);
            let (so, sb) = self.exposed_entry(q, s);
            let (o, b) = rat(q);
            long |= sb > b;
            let k = b.min(sb);
            ok &= self.peer_read(q, a + so, &mut out[o..o + k]);
        }
        self.done(s, ok, true).map(|()| long)
    }
}

/// Every block `at(q)` inside a buffer of `len` bytes.
fn check_blocks(n: usize, at: Blocks, len: usize) -> Result<(), CollError> {
    for q in 0..n {
        let (o, b) = at(q);
        if o.checked_add(b).is_none_or(|e| e > len) {
            return Err(CollError::Args(format!(
                "block {q} ({b} bytes at {o}) outside {len} bytes"
            )));
        }
    }
    Ok(())
}
