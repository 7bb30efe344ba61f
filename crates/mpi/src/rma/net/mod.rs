//! Windows whose ranks span nodes: what an origin holds for a target on another node
//! ([`Remote`]) and this rank's own network side ([`NetSide`]), over RSM's network
//! controller (the one the channel opened: [`crate::channel::net::controller`]).
//!
//! * **Put, get**: RSM puts and gets on the target's window memory, exported on the
//!   network controller beside its `shm` export (same pages). A put returns once
//!   queued; the target's RSM agent applies it. Each epoch to a target opens an RSM
//!   barrier at its first put and closes it at flush, unlock, complete or fence: the
//!   close returns once every put is in the target's memory and reports what went
//!   wrong (the segment unpublished, the node unreachable), as the synchronization's
//!   error. A get's error is kept for the same synchronization.
//! * **Accumulates, compare-and-swap, locks**: records ([`wire`]) put into the
//!   target's request segment, then a signal; the target's service thread
//!   ([`service`]) applies them with the atomics origins on its node use, so they
//!   are element-wise atomic with every other accumulate, and puts the counters (and
//!   old values) back into this rank's reply segment. A fetching operation waits for
//!   its results; the others are waited for at the synchronization, with the
//!   barrier.
//! * **PSCW**: the post and complete counters of the control block have one writer
//!   each; a remote writer puts its count there.
//!
//! Waits here poll this rank's own reply segment (`Export::load_u64` takes in the
//! frames that arrived) and check the target's connection now and then, so a target
//! that went away ends the wait with an error rather than a hang.

pub mod service;
pub mod wire;

use super::RmaError;
use crate::datatype::Basic;
use crate::op::BuiltinOp;
use myrix_rsm::spin::SpinWait;
use myrix_rsm::{Barrier, BarrierType, Export, Import, RsmError, SignalFlags};
use std::sync::{Arc, Mutex, MutexGuard};
use wire::Kind;

/// Polls between two checks of a target's connection in a wait.
const CHECK_EVERY: u32 = 1 << 12;

/// What this rank holds of the window of a rank on another node.
pub struct Remote {
    /// The target's window rank.
    pub rank: usize,
    /// Its window memory (None when empty) and where the window starts in it.
    pub data: Option<Import>,
    pub data_off: usize,
    /// Its control block (PSCW counters are put there).
    pub ctrl: Import,
    /// Its request segment (this rank's ring in it).
    pub req: Import,
    st: Mutex<State>,
}

#[derive(Default)]
struct State {
    barrier: Option<Barrier>,
    /// Records sent so far.
    sent: u64,
    /// Lock grants and refused records seen so far.
    granted: u64,
    errors: u64,
    /// The first error since the last synchronization.
    err: Option<RmaError>,
    /// Times this rank posted to the target, and completed towards it.
    posts: u64,
    completes: u64,
    slot: Vec<u8>,
}

/// This rank's side: its reply segment (one area per target).
pub struct NetSide {
    pub me: usize,
    pub reply: Arc<Export>,
}

fn gone(rank: usize) -> impl Fn(RsmError) -> RmaError {
    move |e| match e {
        RsmError::ConnAborted | RsmError::RemoteNodeUnreachable | RsmError::SegNotPublished => {
            RmaError::Gone(rank)
        }
        e => RmaError::Rsm(format!("rank {rank}'s window"), e),
    }
}

/// One record of an operation to send.
pub struct Rec<'a> {
    pub kind: Kind,
    pub op: BuiltinOp,
    pub basic: Basic,
    pub off: u64,
    pub data: &'a [u8],
}

impl Remote {
    pub fn new(
        rank: usize,
        data: Option<Import>,
        data_off: usize,
        ctrl: Import,
        req: Import,
    ) -> Remote {
        Remote {
            rank,
            data,
            data_off,
            ctrl,
            req,
            st: Mutex::new(State {
                slot: vec![0u8; wire::SLOT],
                ..State::default()
            }),
        }
    }

    /// Keeps `e` for the next synchronization (unless an earlier error is there).
    pub fn defer(&self, e: RmaError) {
        self.st().err.get_or_insert(e);
    }

    fn st(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn data(&self) -> Result<&Import, RmaError> {
        self.data
            .as_ref()
            .ok_or(RmaError::Internal("a remote window without memory"))
    }

    /// Puts `bytes` at byte `off` of the target's window (checked by the caller).
    pub fn put(&self, off: usize, bytes: &[u8]) {
        let mut st = self.st();
        let r = self.put_locked(&mut st, off, bytes);
        if let Err(e) = r {
            st.err.get_or_insert(e);
        }
    }

    fn put_locked(&self, st: &mut State, off: usize, bytes: &[u8]) -> Result<(), RmaError> {
        if bytes.is_empty() {
            return Ok(());
        }
        let d = self.data()?;
        if st.barrier.is_none() {
            let mut b = d
                .init_barrier(BarrierType::Segment)
                .map_err(gone(self.rank))?;
            b.open().map_err(gone(self.rank))?;
            st.barrier = Some(b);
        }
        d.put(self.data_off + off, bytes).map_err(gone(self.rank))
    }

    /// Several pieces `(offset, bytes)` under one lock of the state.
    pub fn put_pieces<'a>(&self, pieces: impl Iterator<Item = (usize, &'a [u8])>) {
        let mut st = self.st();
        for (off, b) in pieces {
            if let Err(e) = self.put_locked(&mut st, off, b) {
                st.err.get_or_insert(e);
                return;
            }
        }
    }

    /// Gets `out.len()` bytes from byte `off` of the target's window; an error is
    /// kept for the synchronization (the bytes are then zeros).
    pub fn get(&self, off: usize, out: &mut [u8]) {
        if out.is_empty() {
            return;
        }
        let r = self
            .data()
            .and_then(|d| d.get(self.data_off + off, out).map_err(gone(self.rank)));
        if let Err(e) = r {
            out.fill(0);
            self.st().err.get_or_insert(e);
        }
    }

    /// Sends the records of one operation and signals the target. With `results`,
    /// waits for the old values of the fetching records and writes them there in
    /// order.
    pub fn send(
        &self,
        side: &NetSide,
        recs: &mut dyn Iterator<Item = Rec<'_>>,
        mut results: Option<&mut [u8]>,
    ) -> Result<(), RmaError> {
        let mut st = self.st();
        if let Some(e) = st.err.clone() {
            return Err(e);
        }
        // Fetching records not read back yet: (record, where its result goes, length).
        let mut fetching: std::collections::VecDeque<(u64, usize, usize)> = Default::default();
        let mut at = 0usize;
        for r in recs {
            let k = st.sent;
            // Room in the ring (and in the result slots): record k - SLOTS applied.
            if k >= wire::SLOTS as u64 {
                let want = k - wire::SLOTS as u64 + 1;
                if self.counter(side, 0) < want {
                    // The target sleeps until signalled: wake it for what is there.
                    self.req
                        .signal_post(SignalFlags {
                            no_accumulate: true,
                        })
                        .map_err(gone(self.rank))?;
                    self.wait_applied(side, &mut st, want)?;
                }
            }
            while let Some(&(fk, to, len)) = fetching.front() {
                if fk + wire::SLOTS as u64 > k {
                    break;
                }
                self.read_result(side, fk, results.as_deref_mut(), to, len);
                fetching.pop_front();
            }
            let slot = std::mem::take(&mut st.slot);
            let mut slot = slot;
            let n = wire::encode(&mut slot, k, r.kind, r.op, r.basic, r.off, r.data);
            let put = self
                .req
                .put(wire::ring_at(side.me) + wire::slot_at(k), &slot[..n]);
            st.slot = slot;
            put.map_err(gone(self.rank))?;
            st.sent += 1;
            if r.kind.fetches() {
                let len = if r.kind == Kind::Cas {
                    r.basic.size()
                } else {
                    r.data.len()
                };
                fetching.push_back((k, at, len));
                at += len;
            }
        }
        self.req
            .signal_post(SignalFlags {
                no_accumulate: true,
            })
            .map_err(gone(self.rank))?;
        if let Some(&(last, _, _)) = fetching.back() {
            self.wait_applied(side, &mut st, last + 1)?;
            for (fk, to, len) in fetching {
                self.read_result(side, fk, results.as_deref_mut(), to, len);
            }
            self.take_errors(side, &mut st)?;
        }
        Ok(())
    }

    fn read_result(&self, side: &NetSide, k: u64, out: Option<&mut [u8]>, to: usize, len: usize) {
        if let Some(out) = out {
            let at = wire::area_at(self.rank) + wire::result_at(k);
            let _ = side.reply.read(at, &mut out[to..to + len]);
        }
    }

    fn counter(&self, side: &NetSide, word: usize) -> u64 {
        side.reply
            .load_u64(wire::area_at(self.rank) + 8 * word)
            .unwrap_or(0)
    }

    /// Waits until the target's counter `word` (0 applied, 1 granted) reaches `want`.
    fn wait_counter(&self, side: &NetSide, word: usize, want: u64) -> Result<(), RmaError> {
        let mut s = SpinWait::new();
        let mut polls = 0u32;
        while self.counter(side, word) < want {
            polls = polls.wrapping_add(1);
            if polls % CHECK_EVERY == 0 {
                self.req.check().map_err(gone(self.rank))?;
            }
            s.spin();
        }
        Ok(())
    }

    fn wait_applied(&self, side: &NetSide, _st: &mut State, want: u64) -> Result<(), RmaError> {
        self.wait_counter(side, 0, want)
    }

    /// Records the target refused since the last look, as an error.
    fn take_errors(&self, side: &NetSide, st: &mut State) -> Result<(), RmaError> {
        let e = self.counter(side, 2);
        if e > st.errors {
            let n = e - st.errors;
            st.errors = e;
            return Err(RmaError::Arg(format!(
                "rank {} refused {n} record(s) (memory outside its window or not \
                 attached there, or a bad type)",
                self.rank
            )));
        }
        Ok(())
    }

    /// Completes every operation towards the target: the barrier of the puts closes,
    /// the records are applied; returns the first error since the last call.
    pub fn flush(&self, side: &NetSide) -> Result<(), RmaError> {
        let mut st = self.st();
        let mut first = st.err.take();
        if let Some(mut b) = st.barrier.take() {
            if let Err(e) = b.close() {
                first.get_or_insert(gone(self.rank)(e));
            }
        }
        if st.sent > 0 {
            let want = st.sent;
            if let Err(e) = self.wait_applied(side, &mut st, want) {
                first.get_or_insert(e);
            } else if let Err(e) = self.take_errors(side, &mut st) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Takes a lock at the target (its service thread takes it for this rank).
    pub fn lock(&self, side: &NetSide, exclusive: bool) -> Result<(), RmaError> {
        let kind = if exclusive {
            Kind::LockExclusive
        } else {
            Kind::LockShared
        };
        self.control(side, kind)?;
        let want = {
            let mut st = self.st();
            st.granted += 1;
            st.granted
        };
        self.wait_counter(side, 1, want)
    }

    /// Releases a lock: after [`Remote::flush`], so everything of the epoch is done.
    pub fn unlock(&self, side: &NetSide, exclusive: bool) -> Result<(), RmaError> {
        let kind = if exclusive {
            Kind::UnlockExclusive
        } else {
            Kind::UnlockShared
        };
        self.control(side, kind)
    }

    fn control(&self, side: &NetSide, kind: Kind) -> Result<(), RmaError> {
        let rec = Rec {
            kind,
            op: BuiltinOp::NoOp,
            basic: Basic::Byte,
            off: 0,
            data: &[],
        };
        self.send(side, &mut std::iter::once(rec), None)
    }

    /// Tells the target that this rank (`me`) posted to it once more.
    pub fn post(&self, me: usize) -> Result<(), RmaError> {
        let n = {
            let mut st = self.st();
            st.posts += 1;
            st.posts
        };
        self.ctrl
            .put_scalars(super::ctrl::Ctrl::posts_offset(me), &[n])
            .map_err(gone(self.rank))
    }

    /// Tells the target that this rank completed an access epoch towards it.
    pub fn complete(&self, me: usize, size: usize) -> Result<(), RmaError> {
        let n = {
            let mut st = self.st();
            st.completes += 1;
            st.completes
        };
        self.ctrl
            .put_scalars(super::ctrl::Ctrl::completes_offset(size, me), &[n])
            .map_err(gone(self.rank))
    }
}
