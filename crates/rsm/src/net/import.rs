//! The importing end over the network: one engine import per rail to the exporter
//! (rail `r` is the node's `r`-th board), driven by the rail rules of
//! [`myrix_rsm_proto::rails`] (striping above [`STRIPE_MIN`] bytes, the order of writes
//! across rails, fail-over with a replay of what the failed rail carried, the barrier
//! that reports it, rejoin; docs/rsm-net.md, "Rails"). This file does the IO those
//! rules ask for: it calls the rails' engines, waits for their answers ([`Net::wait`])
//! and tells the rules what happened; the rules themselves are sans-IO and tested
//! deterministically (`crates/rsm-proto/tests/rails.rs`).
//!
//! * A failed rail is also recorded in the controller ([`super::Rail::failed`]): later
//!   connects leave it out for that node until its engine has resynchronised.
//! * A live import looks for rejoins from its own calls (puts, gets, `check`, which
//!   MPI's liveness watch makes), never waiting for the connect; when it is answered
//!   every live rail is flushed first, then the rail is used again.
//! * Signals go to and come from the primary rail (the first live one). A signal
//!   posted on a rail that fails before its next successful flush is posted again on
//!   the new primary (at least once: the exporter may see it twice, never not at all).
//! * Gets are not striped (pulled in blocks on the primary rail); a get whose rail
//!   fails is asked again on the next.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use myrix_rsm_proto::engine::{FlushId, SignalTarget};
use myrix_rsm_proto::rails::{Rails, RailsConfig};
use myrix_rsm_proto::{BarrierMode, NodeId, Perm, RsmError, SegmentId};

use super::agent::{lock, take_signal};
use super::signal::Mailbox;
use super::Net;
use crate::backend::ImportBackend;
use crate::export::SignalSender;
use crate::import::{Scalars, ScalarsMut};
use crate::SignalFlags;

#[path = "import/transfer.rs"]
mod transfer;

/// A put is queued in pieces of at most this size, so a huge put never meets the
/// engine's queue limit at once.
const PUT_PIECE: usize = 1 << 20;
/// Puts of at least this many bytes are striped across the live rails. 32 KiB, not
/// RSM's 64 KiB of before, so MPI's long messages stripe with the channel's default
/// geometry: it puts a postbox's blocks as one run, 40 KiB for the first postbox of a
/// message and 56 KiB for each further one (4 KiB blocks, 10 and 14 references), all
/// below 64 KiB (docs/mpi-net.md, "Rails and fail-over").
pub(crate) const STRIPE_MIN: usize = 32 * 1024;
/// The longest data [`ImportBackend::put_with_flag`] sends with its flag as one write
/// (a stack buffer), if the rails' frames hold it (the engine cuts writes only at its
/// MTU: `Rail::one_write`).
const FLAGGED_ONE_WRITE: usize = 504;

/// The rail rules' parameters here: [`RailsConfig`]'s defaults (64 MiB logs, 1024
/// signals kept, a failed rail looked at every 100 ms, 1 s after a refused rejoin).
fn rails_config(timeout_ns: u64) -> RailsConfig {
    RailsConfig {
        stripe_min: STRIPE_MIN,
        // A rail silent as long as the engine's timeout, with frames unanswered, while
        // another hears the node, is dead (`check_silence`).
        silent_ns: timeout_ns,
        ..RailsConfig::default()
    }
}

pub(crate) struct NetImport {
    net: Arc<Net>,
    node: NodeId,
    /// What was connected to, for a rejoin.
    id: SegmentId,
    perm: Perm,
    len: usize,
    mailbox: Arc<Mailbox>,
    implicit: AtomicBool,
    st: Mutex<State>,
}

/// The rail rules of an import, and the lists its flushes reuse (an implicit-mode put
/// flushes every time: no allocation per put).
struct State {
    rails: Rails,
    /// Rails to flush, and the flushes under way ([`NetImport::flush`]).
    want: Vec<usize>,
    flushes: Vec<(usize, FlushId)>,
}

impl std::ops::Deref for State {
    type Target = Rails;
    fn deref(&self) -> &Rails {
        &self.rails
    }
}

impl std::ops::DerefMut for State {
    fn deref_mut(&mut self) -> &mut Rails {
        &mut self.rails
    }
}

impl NetImport {
    pub(crate) fn connect(
        net: Arc<Net>,
        node: NodeId,
        id: SegmentId,
        perm: Perm,
    ) -> Result<NetImport, RsmError> {
        let mailbox = Arc::new(Mailbox::new()?);
        // Connect on every rail that reaches the node, at once, but those an import
        // failed over from (unless none is left).
        let reach: Vec<usize> = (0..net.rails.len())
            .filter(|&r| net.addr_of(r, node).is_some())
            .collect();
        // A rail failed over from is used again once its engine has heard the node
        // since (it probes a peer it declared unreachable: rsm-proto's resync).
        let healthy: Vec<usize> = reach
            .iter()
            .copied()
            .filter(|&r| {
                if !lock(&net.rails[r].failed).contains(&node) {
                    return true;
                }
                let back = net
                    .addr_of(r, node)
                    .is_some_and(|a| !lock(&net.rails[r].core).engine.peer_unreachable(&a));
                if back {
                    lock(&net.rails[r].failed).remove(&node);
                }
                back
            })
            .collect();
        let use_rails = if healthy.is_empty() { reach } else { healthy };
        let mut pending = Vec::new();
        for r in use_rails {
            let Some(addr) = net.addr_of(r, node) else {
                continue;
            };
            let mut c = lock(&net.rails[r].core);
            // (The engine's own state: after a resync the peer is reachable again, and
            // starting afresh once more would abort what it holds on this rail.)
            c.unreachable.remove(&addr);
            if c.engine.peer_unreachable(&addr) {
                // Declared unreachable before: try afresh (it may have started since).
                c.engine.peer_gone(&addr);
            }
            let who = net.who;
            pending.push((r, c.engine.connect(addr, node, id, perm, who)?));
        }
        if pending.is_empty() {
            return Err(RsmError::RemoteNodeUnreachable);
        }
        net.progress();
        let mut rails = Vec::new();
        let mut first_err = None;
        let mut len = 0u64;
        for (r, imp) in pending {
            // The engine answers within its timeout; past twice that, the rail is
            // taken as unreachable (a peer that acknowledges but never replies).
            let limit = Duration::from_nanos(
                lock(&net.rails[r].core)
                    .engine
                    .config()
                    .timeout_ns
                    .saturating_mul(2),
            );
            let res = net
                .wait(r, Some(limit), |c| c.connects.remove(&imp.0))
                .unwrap_or_else(|| {
                    let _ = lock(&net.rails[r].core).engine.disconnect(imp);
                    Err(RsmError::RemoteNodeUnreachable)
                });
            match res {
                Ok(l) => {
                    len = l;
                    rails.push((r, imp));
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        // A refusal (not published, permission) is the exporter's answer on every rail;
        // an unreachable rail beside a connected one is only a missing rail.
        match first_err {
            Some(e) if rails.is_empty() || e != RsmError::RemoteNodeUnreachable => {
                for &(r, imp) in &rails {
                    let _ = lock(&net.rails[r].core).engine.disconnect(imp);
                }
                return Err(e);
            }
            _ => {}
        }
        let len = usize::try_from(len).map_err(|_| RsmError::BadLength)?;
        let now = now_ns(&net);
        let timeout_ns = rails
            .iter()
            .map(|&(r, _)| lock(&net.rails[r].core).engine.config().timeout_ns)
            .max()
            .unwrap_or(0);
        let me = NetImport {
            net,
            node,
            id,
            perm,
            len,
            mailbox,
            implicit: AtomicBool::new(true),
            st: Mutex::new(State {
                rails: Rails::new(rails_config(timeout_ns), &rails, now),
                want: Vec::new(),
                flushes: Vec::new(),
            }),
        };
        let st = me.lock();
        me.register_mailbox(&st);
        drop(st);
        Ok(me)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.st)
    }

    /// Signals are taken on the primary rail only.
    fn register_mailbox(&self, st: &Rails) {
        let primary = st.primary().ok();
        for k in 0..st.len() {
            let mut c = lock(&self.net.rails[st.rail(k)].core);
            let t = SignalTarget::Import(st.import(k));
            if st.is_live(k) && primary == Some(k) {
                c.mailboxes.insert(t, self.mailbox.clone());
            } else {
                c.mailboxes.remove(&t);
            }
        }
    }

    /// The engine's state of rail `k`'s import.
    fn rail_state(&self, st: &Rails, k: usize) -> Result<(), RsmError> {
        lock(&self.net.rails[st.rail(k)].core)
            .engine
            .import_len(st.import(k))
            .map(|_| ())
    }

    /// Whether `e`, from rail `k`, means the rail failed (rather than the import).
    fn rail_lost(&self, st: &Rails, k: usize, e: RsmError) -> bool {
        st.is_lost(k, e, |j| self.rail_state(st, j).is_ok())
    }

    /// Rail `k` failed: it is dropped, and its unflushed writes and signals are
    /// replayed on the new primary rail.
    fn fail_over(&self, st: &mut State, k: usize) -> Result<(), RsmError> {
        lock(&self.net.rails[st.rail(k)].failed).insert(self.node);
        let replay = st.fail(k, now_ns(&self.net))?;
        self.register_mailbox(st);
        for (off, data) in replay.writes {
            self.queue(st, replay.to, off, &data, false)?;
        }
        for no_accumulate in replay.signals {
            self.post_signal(st, replay.to, no_accumulate)?;
        }
        Ok(())
    }

    /// Takes failed rails up again where their engine resynchronised with the node:
    /// starts a connect on each the rules say is due and, once one is answered, flushes
    /// every live rail (what they carry goes first) and makes the rail live again.
    /// Never waits for a connect.
    fn rejoin(&self, st: &mut State) -> Result<(), RsmError> {
        let now = now_ns(&self.net);
        for (k, imp) in st.rejoins() {
            let rail = st.rail(k);
            let r = lock(&self.net.rails[rail].core).connects.remove(&imp.0);
            match r {
                None => {}
                Some(Ok(_)) => {
                    self.flush(st, |_| true)?;
                    if let Some(old) = st.rejoined(k) {
                        let mut c = lock(&self.net.rails[rail].core);
                        let _ = c.engine.disconnect(old);
                        c.mailboxes.remove(&SignalTarget::Import(old));
                    }
                    lock(&self.net.rails[rail].failed).remove(&self.node);
                    self.register_mailbox(st);
                }
                Some(Err(_)) => st.rejoin_refused(k, now),
            }
        }
        for k in st.rejoin_due(now) {
            let rail = st.rail(k);
            let Some(addr) = self.net.addr_of(rail, self.node) else {
                continue;
            };
            let mut c = lock(&self.net.rails[rail].core);
            if c.engine.peer_unreachable(&addr) {
                continue; // not resynchronised yet (the engine probes it)
            }
            c.unreachable.remove(&addr);
            if let Ok(imp) = c
                .engine
                .connect(addr, self.node, self.id, self.perm, self.net.who)
            {
                st.rejoin_started(k, imp);
            }
        }
        Ok(())
    }

    /// Posts a signal on rail `k`, kept for a replay until the rail's next flush.
    fn post_signal(&self, st: &mut State, k: usize, no_accumulate: bool) -> Result<(), RsmError> {
        lock(&self.net.rails[st.rail(k)].core)
            .engine
            .signal(st.import(k), no_accumulate)?;
        if st.signal_posted(k, no_accumulate) {
            self.flush(st, |j| j == k)?;
        }
        Ok(())
    }

    /// Finds rails the engine gave up on and fails them over, and takes up again those
    /// that came back ([`NetImport::rejoin`]); `ConnAborted` on every live rail (the
    /// segment was unpublished) is returned as is.
    fn check_rails(&self, st: &mut State) -> Result<(), RsmError> {
        self.check_silence(st)?;
        for k in 0..st.len() {
            if !st.is_live(k) {
                continue;
            }
            match self.rail_state(st, k) {
                Ok(()) => {}
                Err(e) if self.rail_lost(st, k, e) => self.fail_over(st, k)?,
                Err(e) => return Err(e),
            }
        }
        st.primary()?;
        if !st.all_live() {
            self.rejoin(st)?;
        }
        Ok(())
    }
}

impl NetImport {
    /// Fails over the live rails on which the node has been silent too long while
    /// another rail hears it ([`Rails::silent_rails`]): a rail whose link went down
    /// while it carried nothing is then left within the hold of its next write, not
    /// the engine's whole timeout after it (docs/rsm-net.md, "Rails under MPI").
    fn check_silence(&self, st: &mut State) -> Result<(), RsmError> {
        for k in self.declare_silent(st) {
            self.fail_over(st, k)?;
        }
        Ok(())
    }

    /// The engine half of [`NetImport::check_silence`]: declares the node unreachable
    /// on the rails found silent (if due) and returns them, to be failed over. A
    /// flush waiting on such a rail then ends with the rail's loss.
    fn declare_silent(&self, st: &mut State) -> Vec<usize> {
        if !st.silence_due(now_ns(&self.net)) {
            return Vec::new();
        }
        let (net, node) = (&self.net, self.node);
        let dead = st.silent_rails(now_ns(net), |rail| {
            let addr = net.addr_of(rail, node)?;
            let c = lock(&net.rails[rail].core);
            // The engine's clock: the `now` its endpoint last gave it (a little
            // behind: the silence is never overstated).
            c.engine.peer_silence(&addr, c.last_now)
        });
        for &k in &dead {
            let rail = st.rail(k);
            if let Some(addr) = net.addr_of(rail, node) {
                let mut c = lock(&net.rails[rail].core);
                let now = c.last_now;
                c.engine.declare_unreachable(&addr, now);
                c.drain();
            }
        }
        dead
    }
}

/// The controller's clock for the rail rules: nanoseconds since its epoch.
fn now_ns(net: &Net) -> u64 {
    net.epoch.elapsed().as_nanos() as u64
}

impl ImportBackend for NetImport {
    fn len(&self) -> usize {
        self.len
    }

    fn put(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        self.put_bytes(offset, data)
    }

    fn get(&self, offset: usize, out: &mut [u8]) -> Result<(), RsmError> {
        self.get_bytes(offset, out)
    }

    fn put_deferred(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        self.put_queued(offset, data)
    }

    fn one_write(&self) -> Option<usize> {
        // The smallest rail's: a fail-over may move any write to any rail.
        self.net.rails.iter().map(|r| r.one_write).min()
    }

    fn put_scalars(&self, offset: usize, data: Scalars<'_>) -> Result<(), RsmError> {
        // Write frames are cut at multiples of 8 bytes of the put, so an aligned
        // element never straddles two frames. A few scalars (a flag) go through the
        // stack, not a new buffer.
        if let Scalars::U64(&[v]) = data {
            return self.put_bytes(offset, &v.to_ne_bytes());
        }
        self.put_bytes(offset, &to_bytes(&data))
    }

    fn put_with_flag(&self, offset: usize, flag: u64, data: &[u8]) -> Result<(), RsmError> {
        let off = offset as u64;
        // On every rail, since a fail-over may move the write (a board of a small MTU
        // would cut it in frames, and the flag, first, would be stored first).
        let one_write = self.net.rails.iter().map(|r| r.one_write).min();
        if data.len() <= FLAGGED_ONE_WRITE && one_write.is_some_and(|w| 8 + data.len() <= w) {
            // Flag and data as one write: it fits one frame, which the exporter stores
            // first word last (`memory.rs`), so the flag is seen after the data. One
            // frame, not two, and no copy to the heap.
            let mut buf = [0u8; 8 + FLAGGED_ONE_WRITE];
            buf[..8].copy_from_slice(&flag.to_ne_bytes());
            buf[8..8 + data.len()].copy_from_slice(data);
            return self.put_runs(&[(off, &buf[..8 + data.len()])]);
        }
        if data.len() >= STRIPE_MIN {
            // Striped data reaches the exporter on several rails: the flag after an
            // order (the rules flush the stripes first).
            self.put_bytes(offset + 8, data)?;
            self.order()?;
            return self.put_bytes(offset, &flag.to_ne_bytes());
        }
        // Data then flag on the primary rail, applied in that order, sent together.
        self.put_runs(&[(off + 8, data), (off, &flag.to_ne_bytes())])
    }

    fn get_scalars(&self, offset: usize, mut out: ScalarsMut<'_>) -> Result<(), RsmError> {
        let mut bytes = vec![0u8; byte_len(&out)];
        self.get_bytes(offset, &mut bytes)?;
        from_bytes(&mut out, &bytes);
        Ok(())
    }

    fn set_mode(&self, mode: BarrierMode) {
        self.implicit
            .store(mode == BarrierMode::Implicit, Ordering::Relaxed);
    }

    fn open_scope(&self) -> Result<u64, RsmError> {
        self.net.progress();
        let mut st = self.lock();
        self.check_rails(&mut st)?;
        st.open_scope();
        Ok(0)
    }

    fn order(&self) -> Result<(), RsmError> {
        // Unstriped accesses keep their order across rails (the rules' "Order");
        // striped writes are put in remote memory now.
        let mut st = self.lock();
        if st.order_wants_flush() {
            self.flush(&mut st, |_| true)?;
        }
        Ok(())
    }

    fn close_scope(&self, _token: u64) -> Result<(), RsmError> {
        let mut st = self.lock();
        self.check_rails(&mut st)?;
        self.flush(&mut st, |_| true)?;
        st.close_scope()
    }

    fn check(&self) -> Result<(), RsmError> {
        self.net.progress();
        let mut st = self.lock();
        self.check_rails(&mut st)
    }

    fn signal_post(&self, flags: SignalFlags) -> Result<(), RsmError> {
        let mut st = self.lock();
        self.check_rails(&mut st)?;
        let p = st.primary()?;
        self.post_signal(&mut st, p, flags.no_accumulate)?;
        self.net.progress();
        Ok(())
    }

    fn signal_wait(&self, timeout: Option<Duration>) -> Result<SignalSender, RsmError> {
        let r = self.net.wait_with(timeout, || {
            if let Some(n) = take_signal(&self.net, &self.mailbox) {
                return Some(Ok(n));
            }
            let mut st = self.lock();
            self.check_rails(&mut st).err().map(Err)
        });
        match r {
            Some(Ok(node)) => Ok(SignalSender { node, pid: 0 }),
            Some(Err(e)) => Err(e),
            None => Err(RsmError::Timeout),
        }
    }

    fn pollfd(&self) -> Result<RawFd, RsmError> {
        Ok(self.mailbox.fd())
    }

    fn release_pollfd(&self) -> Result<(), RsmError> {
        Ok(())
    }

    fn disconnect(&self) -> Result<(), RsmError> {
        self.end(true)
    }

    fn disconnect_now(&self) -> Result<(), RsmError> {
        self.end(false)
    }
}

impl NetImport {
    /// The disconnect; `drain`: an explicit one (below), which waits for the flush.
    fn end(&self, drain: bool) -> Result<(), RsmError> {
        let mut st = self.lock();
        // Drained first: what a user of RSMAPI expects is that once disconnect returns
        // the segment's owner has every write and signal posted before it, even if the
        // process exits at once (a signal whose frame was lost had nothing left to
        // resend it: issue 21, docs/rsm.md "Disconnect drains"). A flush answered on
        // every rail that carries unflushed writes or signals says so; a rail lost on
        // the way is failed over as in any flush. Bounded by the engine's retry limit: a
        // node silent for `timeout_ns` is unreachable and the flush fails with that.
        // `ConnAborted` is no error here: the owner ended the connection first (it
        // unpublished, typically on the very signal just posted, before the flush came
        // in), and what reaches it after that is refused by design.
        // A dropped handle does not wait: the controller's release still drains what
        // is unacknowledged, once for all its imports.
        let drained = match drain.then(|| self.flush(&mut st, |_| true)) {
            None | Some(Err(RsmError::ConnAborted)) => Ok(()),
            Some(r) => r,
        };
        let rejoins = st.rejoins();
        for k in 0..st.len() {
            let mut c = lock(&self.net.rails[st.rail(k)].core);
            c.mailboxes.remove(&SignalTarget::Import(st.import(k)));
            let _ = c.engine.disconnect(st.import(k));
            // A rejoin connect under way on the rail.
            if let Some(&(_, imp)) = rejoins.iter().find(|(j, _)| *j == k) {
                let _ = c.engine.disconnect(imp);
            }
        }
        drop(st);
        // The disconnect itself leaves now; what is still unacknowledged when the
        // controller goes is drained by its release ([`super::Net`]'s `Drop`).
        self.net.progress();
        drained
    }
}

fn to_bytes(s: &Scalars<'_>) -> Vec<u8> {
    match s {
        Scalars::U8(d) => d.to_vec(),
        Scalars::U16(d) => d.iter().flat_map(|v| v.to_ne_bytes()).collect(),
        Scalars::U32(d) => d.iter().flat_map(|v| v.to_ne_bytes()).collect(),
        Scalars::U64(d) => d.iter().flat_map(|v| v.to_ne_bytes()).collect(),
    }
}

fn byte_len(s: &ScalarsMut<'_>) -> usize {
    match s {
        ScalarsMut::U8(d) => d.len(),
        ScalarsMut::U16(d) => d.len() * 2,
        ScalarsMut::U32(d) => d.len() * 4,
        ScalarsMut::U64(d) => d.len() * 8,
    }
}

fn from_bytes(s: &mut ScalarsMut<'_>, b: &[u8]) {
    match s {
        ScalarsMut::U8(d) => d.copy_from_slice(b),
        ScalarsMut::U16(d) => {
            for (v, c) in d.iter_mut().zip(b.chunks_exact(2)) {
                *v = u16::from_ne_bytes([c[0], c[1]]);
            }
        }
        ScalarsMut::U32(d) => {
            for (v, c) in d.iter_mut().zip(b.chunks_exact(4)) {
                *v = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        ScalarsMut::U64(d) => {
            for (v, c) in d.iter_mut().zip(b.chunks_exact(8)) {
                let mut a = [0u8; 8];
                a.copy_from_slice(c);
                *v = u64::from_ne_bytes(a);
            }
        }
    }
}
