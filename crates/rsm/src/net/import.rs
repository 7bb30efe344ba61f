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

/// A put is queued in pieces of at most this size, so a huge put never meets the
/// engine's queue limit at once.
const PUT_PIECE: usize = 1 << 20;
/// Puts of at least this many bytes are striped across the live rails.
pub(crate) const STRIPE_MIN: usize = 64 * 1024;
/// The longest data [`ImportBackend::put_with_flag`] sends with its flag as one write
/// (a stack buffer), if the rails' frames hold it (the engine cuts writes only at its
/// MTU: `Rail::one_write`).
const FLAGGED_ONE_WRITE: usize = 504;

/// The rail rules' parameters here: [`RailsConfig`]'s defaults (64 MiB logs, 1024
/// signals kept, a failed rail looked at every 100 ms, 1 s after a refused rejoin).
fn rails_config() -> RailsConfig {
    RailsConfig {
        stripe_min: STRIPE_MIN,
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
        let me = NetImport {
            net,
            node,
            id,
            perm,
            len,
            mailbox,
            implicit: AtomicBool::new(true),
            st: Mutex::new(State {
                rails: Rails::new(rails_config(), &rails, now),
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

    /// Queues a write on rail `k` (logged by the rules), driving progress while the
    /// queue is full.
    fn queue(
        &self,
        st: &mut State,
        k: usize,
        off: u64,
        data: &[u8],
        striped: bool,
    ) -> Result<(), RsmError> {
        let (rail, imp) = (st.rail(k), st.import(k));
        for (i, piece) in data.chunks(PUT_PIECE).enumerate() {
            let o = off + (i * PUT_PIECE) as u64;
            if i > 0 {
                // Keep the pipeline moving between pieces; the last piece goes out with
                // what the caller does next (a flush, or one progress).
                self.net.progress();
            }
            loop {
                let r = lock(&self.net.rails[rail].core).engine.put(imp, o, piece);
                match r {
                    Err(RsmError::InsufficientResources) => {
                        self.net.progress();
                        std::thread::yield_now();
                    }
                    r => {
                        r?;
                        break;
                    }
                }
            }
        }
        self.net.rails[rail]
            .bytes_put
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        if st.queued(k, off, data, striped) {
            self.flush(st, |j| j == k)?;
        }
        Ok(())
    }

    /// Flushes the live rails `which` selects that hold unflushed writes, failing over
    /// those found unreachable (and flushing where their writes went). The first other
    /// error (a refused write: `BarrierFailure`; `ConnAborted`) is returned after all.
    fn flush(&self, st: &mut State, which: impl Fn(usize) -> bool) -> Result<(), RsmError> {
        // The import's reused lists, taken (a fail-over below may flush again: that
        // one starts with empty lists of its own) and given back at the end.
        let (mut want, mut flushes) = take_lists(st);
        st.rails.to_flush_into(which, &mut want);
        let r = self.flush_rails(st, &mut want, &mut flushes);
        st.want = want;
        st.flushes = flushes;
        r
    }

    /// Waits for `flushes` (started and sent already), then flushes the rails in `want`
    /// and waits for those, until no rail is left to flush (a fail-over adds the new
    /// primary). The first error that is not a rail's loss is returned after all.
    fn flush_rails(
        &self,
        st: &mut State,
        want: &mut Vec<usize>,
        flushes: &mut Vec<(usize, FlushId)>,
    ) -> Result<(), RsmError> {
        let mut first_err = None;
        loop {
            if flushes.is_empty() {
                if want.is_empty() {
                    break;
                }
                for &k in want.iter() {
                    if !st.is_live(k) {
                        continue;
                    }
                    let f = lock(&self.net.rails[st.rail(k)].core)
                        .engine
                        .flush(st.import(k));
                    match f {
                        Ok(f) => flushes.push((k, f)),
                        Err(e) => {
                            first_err.get_or_insert(e);
                        }
                    }
                }
                want.clear();
                // Out now; the wait takes the answers in.
                self.net.transmit();
            }
            for &(k, f) in flushes.iter() {
                let r = self
                    .net
                    .wait(st.rail(k), None, |c| c.flushes.remove(&f.0))
                    .unwrap_or(Err(RsmError::Timeout));
                match r {
                    Ok(()) => st.flushed(k),
                    Err(e) if self.rail_lost(st, k, e) => {
                        self.fail_over(st, k)?;
                        // Its writes went to the primary: flush that too.
                        let p = st.primary()?;
                        if !want.contains(&p) {
                            want.push(p);
                        }
                    }
                    Err(e) => {
                        st.flushed(k);
                        first_err.get_or_insert(e);
                    }
                }
            }
            flushes.clear();
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Flushes the rails the order rule names before an access to `off..off+n` on rail
    /// `k` (`None`: a striped put).
    fn order_before(
        &self,
        st: &mut State,
        k: Option<usize>,
        off: u64,
        n: usize,
    ) -> Result<(), RsmError> {
        let conflict = st.order_before(k, off, n);
        if !conflict.is_empty() {
            self.flush(st, |j| conflict.contains(&j))?;
        }
        Ok(())
    }

    fn put_bytes(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        self.put_runs(&[(offset as u64, data)])
    }

    /// Puts `runs` in their order, then sends them together: one transmit (one
    /// datagram per peer while they fit), or in implicit mode one flush for all. Runs
    /// that are not striped go to the primary rail one after the other, so the engine
    /// applies them in this order (what [`NetImport::put_with_flag`] relies on).
    fn put_runs(&self, runs: &[(u64, &[u8])]) -> Result<(), RsmError> {
        let mut st = self.lock();
        if let [(off, data)] = runs {
            if let Some(r) = self.put_one_rail(&mut st, *off, data) {
                return r;
            }
        }
        self.check_rails(&mut st)?;
        for &(off, data) in runs {
            let k = if st.stripes(data.len()) {
                None
            } else {
                Some(st.primary()?)
            };
            self.order_before(&mut st, k, off, data.len())?;
            // After the order's flushes (a fail-over there changes the live rails).
            if k.is_some() {
                // Whole on the primary (what `put_pieces` says), without a list.
                let p = st.primary()?;
                self.queue(&mut st, p, off, data, false)?;
            } else {
                let pieces = st.put_pieces(off, data.len())?;
                let striped = pieces.len() > 1;
                for pc in pieces {
                    self.queue(&mut st, pc.rail, pc.offset, &data[pc.range], striped)?;
                }
            }
        }
        if self.implicit.load(Ordering::Relaxed) {
            // Its own scope: in remote memory when it returns (a fail-over on the way
            // lost nothing, so it is not an error here). The write and the flush leave
            // together, in the flush's progress.
            self.flush(&mut st, |_| true)?;
            st.implicit_done();
        } else {
            self.net.transmit();
        }
        Ok(())
    }

    /// [`NetImport::put_runs`] of one run on an import with one rail, live: the rail's
    /// endpoint and engine are locked once, the engine's state is looked at, the write
    /// (and in implicit mode its flush) queued and the datagram sent from there
    /// ([`myrix_mx::Endpoint::send_with`], [`super::agent::Core::next_datagram`]), where
    /// the general path locks the engine four times and sends through the endpoint's
    /// loop over its protocols. With one rail the rules have no order to keep, no
    /// stripe and nothing to replay. `None` when this does not apply or the engine
    /// refused the write (nothing was queued: the general path does it again and
    /// handles the error as it does).
    fn put_one_rail(&self, st: &mut State, off: u64, data: &[u8]) -> Option<Result<(), RsmError>> {
        if st.len() != 1 || !st.is_live(0) || data.len() > PUT_PIECE {
            return None;
        }
        let (rail, imp) = (st.rail(0), st.import(0));
        let r = &self.net.rails[rail];
        let implicit = self.implicit.load(Ordering::Relaxed);
        // Lock order: the endpoint, then the core.
        let mut ep = lock(&r.ep);
        let mut c = lock(&r.core);
        // What `check_rails` looks at (a failed import takes the general path).
        if c.engine.import_len(imp).is_err() || c.engine.put(imp, off, data).is_err() {
            return None;
        }
        // Connected (just looked at): the flush is queued behind the write.
        let flush = if implicit {
            c.engine.flush(imp).ok()
        } else {
            None
        };
        let sent = ep.send_with(|now, buf| c.next_datagram(now, buf));
        let more = c.more_to_send();
        drop(c);
        if more || !matches!(sent, Ok(true)) {
            // A large write's later frames, a frame for another peer, a stalled
            // transport: the endpoint's general loop.
            let _ = ep.transmit();
        }
        drop(ep);
        r.bytes_put.fetch_add(data.len() as u64, Ordering::Relaxed);
        let full = st.queued(0, off, data, false);
        if !implicit {
            return Some(if full {
                self.flush(st, |j| j == 0)
            } else {
                Ok(())
            });
        }
        let (mut want, mut flushes) = take_lists(st);
        match flush {
            Some(f) => flushes.push((0, f)),
            None => want.push(0),
        }
        let res = self.flush_rails(st, &mut want, &mut flushes);
        st.want = want;
        st.flushes = flushes;
        Some(res.map(|()| st.implicit_done()))
    }

    fn get_bytes(&self, offset: usize, out: &mut [u8]) -> Result<(), RsmError> {
        let mut st = self.lock();
        self.check_rails(&mut st)?;
        loop {
            let p = st.primary()?;
            self.order_before(&mut st, Some(p), offset as u64, out.len())?;
            let rail = st.rail(p);
            let g = lock(&self.net.rails[rail].core).engine.get(
                st.import(p),
                offset as u64,
                out.len() as u64,
            )?;
            self.net.transmit();
            let r = self
                .net
                .wait(rail, None, |c| c.gets.remove(&g.0))
                .unwrap_or(Err(RsmError::Timeout));
            match r {
                Ok(data) if data.len() == out.len() => {
                    out.copy_from_slice(&data);
                    return Ok(());
                }
                Ok(_) => return Err(RsmError::BarrierFailure),
                Err(e) if self.rail_lost(&st, p, e) => {
                    // Ask again on the next rail.
                    self.fail_over(&mut st, p)?;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl NetImport {
    /// [`crate::Import::put_deferred`]: a small unstriped write queued on the primary
    /// rail without the transmit that ends [`NetImport::put_runs`]; the next transmit
    /// toward the node (another put's, a progress's) sends it in the same datagram as
    /// what was queued after it. Implicit mode, and writes that are striped or longer
    /// than a piece, take the ordinary path.
    fn put_queued(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        if self.implicit.load(Ordering::Relaxed) || data.len() > PUT_PIECE {
            return self.put_bytes(offset, data);
        }
        let mut st = self.lock();
        self.check_rails(&mut st)?;
        if st.stripes(data.len()) {
            drop(st);
            return self.put_bytes(offset, data);
        }
        let off = offset as u64;
        let p = st.primary()?;
        self.order_before(&mut st, Some(p), off, data.len())?;
        // After the order's flushes (a fail-over there changes the primary).
        let p = st.primary()?;
        self.queue(&mut st, p, off, data, false)
    }
}

/// The import's reused flush lists, taken from it and emptied (see [`NetImport::flush`]).
fn take_lists(st: &mut State) -> (Vec<usize>, Vec<(usize, FlushId)>) {
    let mut want = std::mem::take(&mut st.want);
    let mut flushes = std::mem::take(&mut st.flushes);
    want.clear();
    flushes.clear();
    (want, flushes)
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
        let st = self.lock();
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
        self.net.progress();
        Ok(())
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
