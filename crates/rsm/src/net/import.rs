//! The importing end over the network: one engine import per rail to the exporter
//! (rail `r` is the node's `r`-th board), puts striped across the live rails above
//! [`STRIPE_MIN`] bytes, and fail-over.
//!
//! * **Order.** One rail's writes are applied in order. Writes on different rails are
//!   not, so before anything (a write, a read) is queued on a rail, every *other* rail
//!   holding unflushed writes that overlap its range is flushed first, and so is every
//!   other rail holding pieces of a striped put (whatever their range): an unstriped
//!   write after a striped one (a flag after the data it announces, as MPI's postbox
//!   after its pool blocks) is applied after all of it, at the price of a round trip.
//!   Successive striped puts to disjoint ranges may be applied in either order;
//!   [`ImportBackend::order`] flushes the rails holding striped writes.
//! * **Nothing lost.** Each rail keeps a copy of the writes it carried since its last
//!   successful flush (its log). When a rail fails (its peer unreachable: every frame
//!   lost until the engine's timeout, or the link down), its log is replayed on the
//!   first live rail, so every write still arrives; the failed rail's pending reads
//!   are asked again.
//! * **Reported.** The barrier scope in which a fail-over happened closes with
//!   `BarrierFailure` (its data is nevertheless all in remote memory); the next scope
//!   is clean. An implicit-mode put spanning a fail-over returns success: its data
//!   arrived.
//! * **Rejoined.** A rail failed over from is taken up again once its engine has
//!   resynchronised with the node (rsm-proto answers a probe: `peer_unreachable` is
//!   false again): the import connects on it anew, in the background of its next calls
//!   ([`NetImport::rejoin`], looked at every [`REJOIN_EVERY`]), and when that connect
//!   is answered every live rail is flushed first, so nothing written before can be
//!   overtaken by what the rejoined rail (the primary again if it comes first) carries.
//! * Signals go to and come from the primary rail (the first live one). A signal
//!   posted on a rail that fails before its next successful flush is posted again on
//!   the new primary (at least once: the exporter may see it twice, never not at all).
//! * Gets are not striped (pulled in blocks on the primary rail); a get whose rail
//!   fails is asked again on the next.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use myrix_rsm_proto::engine::{Import as EngImport, SignalTarget};
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
/// A rail whose log of unflushed writes grows past this is flushed.
const LOG_MAX: usize = 64 << 20;
/// Signals a rail keeps for a replay before it is flushed.
const SIGNALS_MAX: usize = 1024;
/// How often a failed rail is looked at for a rejoin, and how long after a rejoin
/// connect failed the next is tried.
const REJOIN_EVERY: Duration = Duration::from_millis(100);
const REJOIN_RETRY: Duration = Duration::from_secs(1);

struct RailConn {
    rail: usize,
    imp: EngImport,
    live: bool,
    /// Writes since the last successful flush: (offset, data).
    log: Vec<(usize, Vec<u8>)>,
    log_bytes: usize,
    /// Signals posted since the last successful flush (their no-accumulate flags).
    signals: Vec<bool>,
    /// The log holds a piece of a striped put (see the module docs, "Order").
    striped: bool,
    /// While failed: the connect that takes the rail up again, and when to look next.
    rejoin: Option<EngImport>,
    retry_at: Instant,
}

impl RailConn {
    fn new(rail: usize, imp: EngImport) -> RailConn {
        RailConn {
            rail,
            imp,
            live: true,
            log: Vec::new(),
            log_bytes: 0,
            signals: Vec::new(),
            striped: false,
            rejoin: None,
            retry_at: Instant::now(),
        }
    }

    /// A successful flush: everything the rail carried is in remote memory.
    fn flushed(&mut self) {
        self.log.clear();
        self.log_bytes = 0;
        self.signals.clear();
        self.striped = false;
    }
}

impl RailConn {
    fn overlaps(&self, off: usize, n: usize) -> bool {
        self.log
            .iter()
            .any(|(o, d)| *o < off + n && off < *o + d.len())
    }
}

struct State {
    rails: Vec<RailConn>,
    /// A rail failed since the scope opened.
    failed_over: bool,
}

impl State {
    fn primary(&self) -> Result<usize, RsmError> {
        self.rails
            .iter()
            .position(|r| r.live)
            .ok_or(RsmError::RemoteNodeUnreachable)
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
                    rails.push(RailConn::new(r, imp));
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
                for rc in &rails {
                    let _ = lock(&net.rails[rc.rail].core).engine.disconnect(rc.imp);
                }
                return Err(e);
            }
            _ => {}
        }
        let len = usize::try_from(len).map_err(|_| RsmError::BadLength)?;
        let me = NetImport {
            net,
            node,
            id,
            perm,
            len,
            mailbox,
            implicit: AtomicBool::new(true),
            st: Mutex::new(State {
                rails,
                failed_over: false,
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
    fn register_mailbox(&self, st: &State) {
        for (k, rc) in st.rails.iter().enumerate() {
            let mut c = lock(&self.net.rails[rc.rail].core);
            let t = SignalTarget::Import(rc.imp);
            if rc.live && st.primary().ok() == Some(k) {
                c.mailboxes.insert(t, self.mailbox.clone());
            } else {
                c.mailboxes.remove(&t);
            }
        }
    }

    /// The engine's state of rail `k`'s import.
    fn rail_state(&self, st: &State, k: usize) -> Result<(), RsmError> {
        let rc = &st.rails[k];
        lock(&self.net.rails[rc.rail].core)
            .engine
            .import_len(rc.imp)
            .map(|_| ())
    }

    /// Rail `k` failed: it is dropped, and its unflushed writes are replayed on the new
    /// primary rail.
    fn fail_over(&self, st: &mut State, k: usize) -> Result<(), RsmError> {
        let rc = &mut st.rails[k];
        rc.live = false;
        lock(&self.net.rails[rc.rail].failed).insert(self.node);
        let log = std::mem::take(&mut rc.log);
        let signals = std::mem::take(&mut rc.signals);
        rc.log_bytes = 0;
        rc.retry_at = Instant::now() + REJOIN_EVERY;
        st.failed_over = true;
        let p = st.primary()?;
        self.register_mailbox(st);
        for (off, data) in log {
            self.queue(st, p, off, &data)?;
        }
        for no_accumulate in signals {
            self.post_signal(st, p, no_accumulate)?;
        }
        Ok(())
    }

    /// Whether `e`, from rail `k`, means the rail failed (rather than the import).
    fn rail_lost(&self, st: &State, k: usize, e: RsmError) -> bool {
        match e {
            RsmError::RemoteNodeUnreachable => true,
            // Aborted on this rail alone: the node restarted its numbering on it (a
            // rail that came back, rsm-proto's resync), not an unpublish (which
            // aborts every rail).
            RsmError::ConnAborted => (0..st.rails.len())
                .any(|j| j != k && st.rails[j].live && self.rail_state(st, j).is_ok()),
            _ => false,
        }
    }

    /// Takes failed rails up again where their engine resynchronised with the node:
    /// starts a connect on each (at most every [`REJOIN_EVERY`]) and, once one is
    /// answered, flushes every live rail (what they carry goes first) and makes the
    /// rail live again. Never waits for a connect.
    fn rejoin(&self, st: &mut State) -> Result<(), RsmError> {
        let now = Instant::now();
        for k in 0..st.rails.len() {
            if st.rails[k].live {
                continue;
            }
            let rail = st.rails[k].rail;
            let Some(addr) = self.net.addr_of(rail, self.node) else {
                continue;
            };
            if let Some(imp) = st.rails[k].rejoin {
                let r = lock(&self.net.rails[rail].core).connects.remove(&imp.0);
                match r {
                    None => {}
                    Some(Ok(_)) => {
                        st.rails[k].rejoin = None;
                        self.flush(st, |_| true)?;
                        let old = std::mem::replace(&mut st.rails[k].imp, imp);
                        let mut c = lock(&self.net.rails[rail].core);
                        let _ = c.engine.disconnect(old);
                        c.mailboxes.remove(&SignalTarget::Import(old));
                        drop(c);
                        lock(&self.net.rails[rail].failed).remove(&self.node);
                        st.rails[k].flushed();
                        st.rails[k].live = true;
                        self.register_mailbox(st);
                    }
                    Some(Err(_)) => {
                        st.rails[k].rejoin = None;
                        st.rails[k].retry_at = now + REJOIN_RETRY;
                    }
                }
                continue;
            }
            if now < st.rails[k].retry_at {
                continue;
            }
            st.rails[k].retry_at = now + REJOIN_EVERY;
            let mut c = lock(&self.net.rails[rail].core);
            if c.engine.peer_unreachable(&addr) {
                continue; // not resynchronised yet (the engine probes it)
            }
            c.unreachable.remove(&addr);
            if let Ok(imp) = c
                .engine
                .connect(addr, self.node, self.id, self.perm, self.net.who)
            {
                st.rails[k].rejoin = Some(imp);
            }
        }
        Ok(())
    }

    /// Posts a signal on rail `k`, kept for a replay until the rail's next flush.
    fn post_signal(&self, st: &mut State, k: usize, no_accumulate: bool) -> Result<(), RsmError> {
        let rc = &st.rails[k];
        lock(&self.net.rails[rc.rail].core)
            .engine
            .signal(rc.imp, no_accumulate)?;
        st.rails[k].signals.push(no_accumulate);
        if st.rails[k].signals.len() > SIGNALS_MAX {
            self.flush_signals(st, k)?;
        }
        Ok(())
    }

    /// Flushes rail `k` (its signals are then delivered).
    fn flush_signals(&self, st: &mut State, k: usize) -> Result<(), RsmError> {
        self.flush(st, |j| j == k)
    }

    /// Finds rails the engine gave up on and fails them over, and takes up again those
    /// that came back ([`NetImport::rejoin`]); `ConnAborted` on every live rail (the
    /// segment was unpublished) is returned as is.
    fn check_rails(&self, st: &mut State) -> Result<(), RsmError> {
        let mut all_live = true;
        for k in 0..st.rails.len() {
            if !st.rails[k].live {
                all_live = false;
                continue;
            }
            match self.rail_state(st, k) {
                Ok(()) => {}
                Err(e) if self.rail_lost(st, k, e) => {
                    all_live = false;
                    self.fail_over(st, k)?
                }
                Err(e) => return Err(e),
            }
        }
        st.primary()?;
        if !all_live {
            self.rejoin(st)?;
        }
        Ok(())
    }

    /// Queues a write on rail `k` (logging it), driving progress while the queue is
    /// full.
    fn queue(&self, st: &mut State, k: usize, off: usize, data: &[u8]) -> Result<(), RsmError> {
        let (rail, imp) = (st.rails[k].rail, st.rails[k].imp);
        for (i, piece) in data.chunks(PUT_PIECE).enumerate() {
            let o = off + i * PUT_PIECE;
            if i > 0 {
                // Keep the pipeline moving between pieces; the last piece goes out with
                // what the caller does next (a flush, or one progress).
                self.net.progress();
            }
            loop {
                let r = lock(&self.net.rails[rail].core)
                    .engine
                    .put(imp, o as u64, piece);
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
        let single = st.rails.len() == 1;
        let rc = &mut st.rails[k];
        // The copy is for a replay on another rail and for ordering against other
        // rails: an import with one rail keeps only the range.
        rc.log
            .push((off, if single { Vec::new() } else { data.to_vec() }));
        rc.log_bytes += data.len();
        if rc.log_bytes > LOG_MAX {
            self.flush(st, |j| j == k)?;
        }
        Ok(())
    }

    /// Flushes the live rails `which` selects that hold unflushed writes, failing over
    /// those found unreachable (and flushing where their writes went). The first other
    /// error (a refused write: `BarrierFailure`; `ConnAborted`) is returned after all.
    fn flush(&self, st: &mut State, which: impl Fn(usize) -> bool) -> Result<(), RsmError> {
        let mut first_err = None;
        let mut want: Vec<bool> = (0..st.rails.len())
            .map(|k| {
                let rc = &st.rails[k];
                which(k) && rc.live && !(rc.log.is_empty() && rc.signals.is_empty())
            })
            .collect();
        while want.iter().any(|w| *w) {
            let mut flushes = Vec::new();
            for (k, w) in want.iter_mut().enumerate() {
                if !std::mem::take(w) || !st.rails[k].live {
                    continue;
                }
                let rc = &st.rails[k];
                let f = lock(&self.net.rails[rc.rail].core).engine.flush(rc.imp);
                match f {
                    Ok(f) => flushes.push((k, f)),
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
            self.net.progress();
            for (k, f) in flushes {
                let rail = st.rails[k].rail;
                let r = self
                    .net
                    .wait(rail, None, |c| c.flushes.remove(&f.0))
                    .unwrap_or(Err(RsmError::Timeout));
                match r {
                    Ok(()) => st.rails[k].flushed(),
                    Err(e) if self.rail_lost(st, k, e) => {
                        self.fail_over(st, k)?;
                        // Its writes went to the primary: flush that too.
                        let p = st.primary()?;
                        want[p] = true;
                    }
                    Err(e) => {
                        st.rails[k].flushed();
                        first_err.get_or_insert(e);
                    }
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Flushes every rail but `k` that holds unflushed writes overlapping `off..off+n`,
    /// or (`k` given: an unstriped access) pieces of a striped put.
    fn order_before(
        &self,
        st: &mut State,
        k: Option<usize>,
        off: usize,
        n: usize,
    ) -> Result<(), RsmError> {
        let conflict: Vec<bool> = st
            .rails
            .iter()
            .enumerate()
            .map(|(j, rc)| {
                Some(j) != k && rc.live && ((k.is_some() && rc.striped) || rc.overlaps(off, n))
            })
            .collect();
        if conflict.iter().any(|c| *c) {
            self.flush(st, |j| conflict[j])?;
        }
        Ok(())
    }

    fn put_bytes(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        let mut st = self.lock();
        self.check_rails(&mut st)?;
        let live: Vec<usize> = (0..st.rails.len()).filter(|&k| st.rails[k].live).collect();
        if data.len() >= STRIPE_MIN && live.len() > 1 {
            // Striped: one piece per live rail, cut at multiples of 8 bytes (an aligned
            // scalar never straddles two rails).
            self.order_before(&mut st, None, offset, data.len())?;
            let per = (data.len() / live.len()).div_ceil(8) * 8;
            for (i, piece) in data.chunks(per).enumerate() {
                let k = live[i % live.len()];
                self.queue(&mut st, k, offset + i * per, piece)?;
                st.rails[k].striped = true;
            }
        } else {
            let p = st.primary()?;
            self.order_before(&mut st, Some(p), offset, data.len())?;
            self.queue(&mut st, p, offset, data)?;
        }
        if self.implicit.load(Ordering::Relaxed) {
            // Its own scope: in remote memory when it returns (a fail-over on the way
            // lost nothing, so it is not an error here). The write and the flush leave
            // together, in the flush's progress.
            self.flush(&mut st, |_| true)?;
            st.failed_over = false;
        } else {
            self.net.progress();
        }
        Ok(())
    }

    fn get_bytes(&self, offset: usize, out: &mut [u8]) -> Result<(), RsmError> {
        let mut st = self.lock();
        self.check_rails(&mut st)?;
        loop {
            let p = st.primary()?;
            self.order_before(&mut st, Some(p), offset, out.len())?;
            let rc = &st.rails[p];
            let rail = rc.rail;
            let g = lock(&self.net.rails[rail].core).engine.get(
                rc.imp,
                offset as u64,
                out.len() as u64,
            )?;
            self.net.progress();
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

    fn put_scalars(&self, offset: usize, data: Scalars<'_>) -> Result<(), RsmError> {
        // Write frames are cut at multiples of 8 bytes of the put, so an aligned
        // element never straddles two frames.
        self.put_bytes(offset, &to_bytes(&data))
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
        st.failed_over = false;
        Ok(0)
    }

    fn order(&self) -> Result<(), RsmError> {
        // Unstriped accesses keep their order across rails (see the module docs);
        // striped writes are put in remote memory now.
        let mut st = self.lock();
        if st.rails.iter().any(|rc| rc.live && rc.striped) {
            self.flush(&mut st, |_| true)?;
        }
        Ok(())
    }

    fn close_scope(&self, _token: u64) -> Result<(), RsmError> {
        let mut st = self.lock();
        self.check_rails(&mut st)?;
        self.flush(&mut st, |_| true)?;
        if std::mem::take(&mut st.failed_over) {
            return Err(RsmError::BarrierFailure);
        }
        Ok(())
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
        for rc in &st.rails {
            let mut c = lock(&self.net.rails[rc.rail].core);
            c.mailboxes.remove(&SignalTarget::Import(rc.imp));
            let _ = c.engine.disconnect(rc.imp);
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
