//! The rail rules of one import over several rails, sans-IO: which rail carries a
//! put, striping above a threshold, the order of writes across rails, fail-over when a
//! rail is lost, rejoin when it comes back, and the barrier that reports a fail-over.
//!
//! A node with several boards reaches another over several *rails*, each with its own
//! [`crate::engine::Engine`]; an import connects on each rail (one engine
//! [`Import`] per rail). [`Rails`] holds what the rules need about them and decides;
//! the driver (`myrix-rsm`'s `net/import.rs`, the deterministic test
//! `tests/rails.rs`) calls the engines, waits for their answers and tells [`Rails`]
//! what happened. Time is passed in (nanoseconds, the driver's clock); nothing here
//! reads a clock, touches a socket or waits.
//!
//! * **Striping.** A put of at least [`RailsConfig::stripe_min`] bytes is cut in one
//!   piece per live rail, at multiples of 8 bytes (an aligned scalar never straddles two
//!   rails); smaller puts, gets and signals use the *primary* rail (the first live one).
//! * **Order.** One rail's writes are applied in order; writes on different rails are
//!   not. So before anything (a write, a read) is queued on a rail, every *other* rail
//!   holding unflushed writes that overlap its range is flushed first, and before an
//!   unstriped access so is every other rail holding pieces of a striped put, whatever
//!   their range: a flag after the striped data it announces (MPI's postbox after its
//!   pool blocks) is applied after all of it, at the price of a round trip. Successive
//!   striped puts to disjoint ranges may be applied in either order;
//!   [`Rails::order_wants_flush`] says when `order()` must flush.
//! * **Nothing lost.** Each rail keeps a copy of the writes it carried since its last
//!   successful flush (its log). When a rail fails (its peer unreachable: every frame
//!   lost until the engine's timeout, or the link down), [`Rails::fail`] hands its log
//!   and unflushed signals to the driver for a replay on the new primary, so every write
//!   still arrives; a get waiting on the failed rail is asked again there.
//! * **Reported.** The barrier scope in which a fail-over happened closes with
//!   [`RsmError::BarrierFailure`] (its data is nevertheless all in remote memory); the
//!   next scope is clean. An implicit-mode put spanning a fail-over succeeds: its data
//!   arrived ([`Rails::implicit_done`]).
//! * **Rejoin.** A failed rail is looked at every [`RailsConfig::rejoin_every_ns`]
//!   ([`Rails::rejoin_due`]); once its engine has resynchronised with the node (a probe
//!   answered), the driver connects on it anew, and when that connect is answered it
//!   flushes every live rail first (nothing written before may be overtaken by what
//!   the rejoined rail carries) and the rail is live again ([`Rails::rejoined`]), the
//!   primary if it comes first. A refused rejoin is tried again after
//!   [`RailsConfig::rejoin_retry_ns`].
//! * **A silent rail.** The engine declares a node unreachable `timeout_ns` after its
//!   oldest unacknowledged frame, so a rail that carried nothing when its link went
//!   down (this side idle, or waiting for the other side) is found dead only
//!   `timeout_ns` after its *next* write, though the node has been silent on it for
//!   that long already: an MPI rank that answers on it a message that came by the
//!   other rail stalls a second timeout. [`Rails::silent_rails`] names a live rail
//!   whose node has been silent for [`RailsConfig::silent_ns`] while frames wait for
//!   its acknowledgement, for [`RailsConfig::silent_hold_ns`] in a row, while another
//!   live rail heard the node within `silent_ns`: the driver declares the node
//!   unreachable on it (`Engine::declare_unreachable`) and fails it over. So a rail
//!   is failed over at most `silent_ns` after the node's last frame on it, plus the
//!   hold, whenever it is next written to; never the last rail that hears the node.

use std::ops::Range;

use crate::engine::{Import, Silence};
use crate::error::RsmError;

/// Thresholds and periods of the rail rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RailsConfig {
    /// Puts of at least this many bytes are striped across the live rails.
    pub stripe_min: usize,
    /// A rail whose log of unflushed writes grows past this is flushed.
    pub log_max: usize,
    /// Signals a rail keeps for a replay before it is flushed.
    pub signals_max: usize,
    /// How often a failed rail is looked at for a rejoin.
    pub rejoin_every_ns: u64,
    /// How long after a refused rejoin connect the next is tried.
    pub rejoin_retry_ns: u64,
    /// A rail whose node has been silent this long, with frames unacknowledged, while
    /// another rail hears it, is suspect ([`Rails::silent_rails`]); the driver sets the
    /// engine's `timeout_ns`.
    pub silent_ns: u64,
    /// How long a rail stays suspect before it is named dead: many round trips, so an
    /// idle rail's first write has its answer first.
    pub silent_hold_ns: u64,
    /// How often the driver looks at the rails' silence ([`Rails::silence_due`]).
    pub silent_every_ns: u64,
}

impl Default for RailsConfig {
    fn default() -> RailsConfig {
        RailsConfig {
            stripe_min: 64 * 1024,
            log_max: 64 << 20,
            signals_max: 1024,
            rejoin_every_ns: 100_000_000,
            rejoin_retry_ns: 1_000_000_000,
            silent_ns: 5_000_000_000,
            silent_hold_ns: 250_000_000,
            silent_every_ns: 10_000_000,
        }
    }
}

/// One rail of the import.
#[derive(Debug)]
struct Rail {
    /// The driver's rail number (its board).
    rail: usize,
    imp: Import,
    live: bool,
    /// Writes since the last successful flush, (offset, data), for a replay and the
    /// order rule: kept only when the import has more than one rail.
    log: Vec<(u64, Vec<u8>)>,
    /// Writes were queued since the last successful flush (logged or not).
    unflushed: bool,
    log_bytes: usize,
    /// Signals posted since the last successful flush (their no-accumulate flags).
    signals: Vec<bool>,
    /// The log holds a piece of a striped put (see the module docs, "Order").
    striped: bool,
    /// While failed: the connect that takes the rail up again, and when to look next.
    rejoin: Option<Import>,
    retry_at: u64,
    /// Put bytes queued on the rail, replays included.
    bytes_put: u64,
    /// Since when the rail has been suspect, and what its engine last said of the
    /// node's silence ([`Rails::silent_rails`]).
    suspect_since: Option<u64>,
    silence: Option<Silence>,
}

impl Rail {
    fn overlaps(&self, off: u64, n: usize) -> bool {
        let end = off + n as u64;
        self.log
            .iter()
            .any(|(o, d)| *o < end && off < *o + d.len() as u64)
    }

    fn clean(&mut self) {
        self.unflushed = false;
        self.log.clear();
        self.log_bytes = 0;
        self.signals.clear();
        self.striped = false;
    }
}

/// A piece of a put: on rail index `rail` (an index into [`Rails`], not the driver's
/// number), at remote `offset`, the bytes `range` of the put's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub rail: usize,
    pub offset: u64,
    pub range: Range<usize>,
}

/// What a failed rail leaves to do: its unflushed writes and signals, to be queued
/// again, in this order, on rail index `to` (the new primary).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    pub to: usize,
    pub writes: Vec<(u64, Vec<u8>)>,
    pub signals: Vec<bool>,
}

/// One import's rails and the rules over them; see the module docs. Rails are named
/// by their index here (0..[`Rails::len`]); [`Rails::rail`] gives the driver's number.
#[derive(Debug)]
pub struct Rails {
    cfg: RailsConfig,
    rails: Vec<Rail>,
    /// A rail failed since the scope opened.
    failed_over: bool,
    /// When [`Rails::silence_due`] says yes next.
    silence_at: u64,
}

impl Rails {
    /// An import connected on `conns`: (the driver's rail number, the engine's import
    /// on it), all live; `now` is the driver's clock.
    pub fn new(cfg: RailsConfig, conns: &[(usize, Import)], now: u64) -> Rails {
        let rails = conns
            .iter()
            .map(|&(rail, imp)| Rail {
                rail,
                imp,
                live: true,
                log: Vec::new(),
                unflushed: false,
                log_bytes: 0,
                signals: Vec::new(),
                striped: false,
                rejoin: None,
                retry_at: now,
                bytes_put: 0,
                suspect_since: None,
                silence: None,
            })
            .collect();
        Rails {
            cfg,
            rails,
            failed_over: false,
            silence_at: now,
        }
    }

    pub fn config(&self) -> &RailsConfig {
        &self.cfg
    }

    pub fn len(&self) -> usize {
        self.rails.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rails.is_empty()
    }

    /// The driver's rail number of rail index `k`.
    pub fn rail(&self, k: usize) -> usize {
        self.rails[k].rail
    }

    /// The engine's import on rail index `k` (the failed one while it is down).
    pub fn import(&self, k: usize) -> Import {
        self.rails[k].imp
    }

    pub fn is_live(&self, k: usize) -> bool {
        self.rails[k].live
    }

    /// Whether every rail is live (no rejoin to look after).
    pub fn all_live(&self) -> bool {
        self.rails.iter().all(|r| r.live)
    }

    /// Put bytes queued on rail index `k` (replays included).
    pub fn bytes_put(&self, k: usize) -> u64 {
        self.rails[k].bytes_put
    }

    /// The rail small puts, gets and signals use: the first live one.
    pub fn primary(&self) -> Result<usize, RsmError> {
        self.rails
            .iter()
            .position(|r| r.live)
            .ok_or(RsmError::RemoteNodeUnreachable)
    }

    /// The rails to flush before an access to `off..off+n` is queued on rail index `k`
    /// (`None`: a striped put, on every live rail): the other live rails holding
    /// unflushed writes that overlap it and, before an unstriped access, those holding
    /// pieces of a striped put. Flush them and ask again until none is left.
    pub fn order_before(&self, k: Option<usize>, off: u64, n: usize) -> Vec<usize> {
        (0..self.rails.len())
            .filter(|&j| {
                let r = &self.rails[j];
                Some(j) != k && r.live && ((k.is_some() && r.striped) || r.overlaps(off, n))
            })
            .collect()
    }

    /// Where a put of `len` bytes at `off` goes: striped over every live rail at or
    /// above the threshold (pieces cut at multiples of 8 bytes), else whole on the
    /// primary. Ask once [`Rails::order_before`] of the same access is empty (with
    /// `None` if [`Rails::stripes`], else the primary).
    pub fn put_pieces(&self, off: u64, len: usize) -> Result<Vec<Piece>, RsmError> {
        let live: Vec<usize> = (0..self.rails.len())
            .filter(|&k| self.rails[k].live)
            .collect();
        if !self.stripes(len) {
            return Ok(vec![Piece {
                rail: self.primary()?,
                offset: off,
                range: 0..len,
            }]);
        }
        let per = len.div_ceil(live.len()).div_ceil(8) * 8;
        Ok((0..len)
            .step_by(per)
            .enumerate()
            .map(|(i, start)| Piece {
                rail: live[i % live.len()],
                offset: off + start as u64,
                range: start..(start + per).min(len),
            })
            .collect())
    }

    /// Whether a put of `len` bytes is striped (at or above the threshold, more than
    /// one live rail): its [`Rails::order_before`] takes `None`, else the primary.
    pub fn stripes(&self, len: usize) -> bool {
        len >= self.cfg.stripe_min && self.rails.iter().filter(|r| r.live).count() > 1
    }

    /// `data` was queued at `off` on rail index `k` (a piece of a striped put if
    /// `striped`): logged until the rail's next successful flush. True when the log
    /// outgrew [`RailsConfig::log_max`]: flush the rail.
    pub fn queued(&mut self, k: usize, off: u64, data: &[u8], striped: bool) -> bool {
        // The log is for a replay on another rail and for the order rule across rails:
        // an import with one rail has neither, and keeps nothing per write (a list
        // growing by one entry per put of a long scope cost every put).
        let keep = self.rails.len() > 1;
        let r = &mut self.rails[k];
        if keep {
            r.log.push((off, data.to_vec()));
        }
        r.unflushed = true;
        r.log_bytes += data.len();
        r.bytes_put += data.len() as u64;
        r.striped |= striped;
        r.log_bytes > self.cfg.log_max
    }

    /// A signal was posted on rail index `k`: kept for a replay until the rail's next
    /// flush. True when too many are kept: flush the rail.
    pub fn signal_posted(&mut self, k: usize, no_accumulate: bool) -> bool {
        let r = &mut self.rails[k];
        r.signals.push(no_accumulate);
        r.signals.len() > self.cfg.signals_max
    }

    /// The live rails `which` selects that hold unflushed writes or signals.
    pub fn to_flush(&self, which: impl Fn(usize) -> bool) -> Vec<usize> {
        let mut out = Vec::new();
        self.to_flush_into(which, &mut out);
        out
    }

    /// [`Rails::to_flush`], appended to `out` (a list the caller reuses).
    pub fn to_flush_into(&self, which: impl Fn(usize) -> bool, out: &mut Vec<usize>) {
        out.extend((0..self.rails.len()).filter(|&k| {
            let r = &self.rails[k];
            which(k) && r.live && (r.unflushed || !r.signals.is_empty())
        }));
    }

    /// A flush of rail index `k` completed: successfully, or with an error that is not
    /// the rail's loss (a refused write: reported by the driver). Either way what the
    /// rail carried is settled.
    pub fn flushed(&mut self, k: usize) {
        self.rails[k].clean();
    }

    /// Whether `e`, from rail index `k`'s import, means the rail failed (rather than the
    /// import). `others_ok(j)`: rail index `j`'s import is fine in its engine.
    pub fn is_lost(&self, k: usize, e: RsmError, others_ok: impl Fn(usize) -> bool) -> bool {
        match e {
            RsmError::RemoteNodeUnreachable => true,
            // Aborted on this rail alone: the node restarted its numbering on it (a rail
            // that came back: the engine's resync), not an unpublish (which aborts every
            // rail).
            RsmError::ConnAborted => {
                (0..self.rails.len()).any(|j| j != k && self.rails[j].live && others_ok(j))
            }
            _ => false,
        }
    }

    /// Whether to look at the rails' silence now ([`Rails::silent_rails`]): with more
    /// than one live rail, at most every [`RailsConfig::silent_every_ns`], so a put
    /// does not ask every engine each time.
    pub fn silence_due(&mut self, now: u64) -> bool {
        if now < self.silence_at || self.rails.iter().filter(|r| r.live).count() < 2 {
            return false;
        }
        self.silence_at = now.saturating_add(self.cfg.silent_every_ns);
        true
    }

    /// The live rails found dead at `now` by their silence (see the module docs, "A
    /// silent rail"): `silence(rail)` is what the engine of the driver's rail `rail`
    /// says of the node (`Engine::peer_silence`; `None`: not known). The driver declares
    /// the node unreachable on each rail index named and fails it over
    /// ([`Rails::fail`]). Never names every live rail: another must have heard the node
    /// within [`RailsConfig::silent_ns`].
    pub fn silent_rails(
        &mut self,
        now: u64,
        mut silence: impl FnMut(usize) -> Option<Silence>,
    ) -> Vec<usize> {
        let (quiet, hold) = (self.cfg.silent_ns, self.cfg.silent_hold_ns);
        for r in &mut self.rails {
            r.silence = if r.live { silence(r.rail) } else { None };
        }
        let mut dead = Vec::new();
        for k in 0..self.rails.len() {
            let suspect = self.rails[k]
                .silence
                .is_some_and(|x| x.waiting && x.heard_ago >= quiet)
                && self
                    .rails
                    .iter()
                    .enumerate()
                    .any(|(j, o)| j != k && o.silence.is_some_and(|x| x.heard_ago < quiet));
            let r = &mut self.rails[k];
            if !suspect {
                r.suspect_since = None;
                continue;
            }
            let since = *r.suspect_since.get_or_insert(now);
            if now.saturating_sub(since) >= hold {
                dead.push(k);
            }
        }
        dead
    }

    /// Rail index `k` failed at `now`: it is dropped and its unflushed writes and
    /// signals are returned, to be queued again on the new primary (flush it after).
    /// The scope records the fail-over. `RemoteNodeUnreachable` when no rail is left.
    pub fn fail(&mut self, k: usize, now: u64) -> Result<Replay, RsmError> {
        let every = self.cfg.rejoin_every_ns;
        let r = &mut self.rails[k];
        r.live = false;
        let writes = std::mem::take(&mut r.log);
        let signals = std::mem::take(&mut r.signals);
        r.clean();
        r.rejoin = None;
        r.suspect_since = None;
        r.retry_at = now.saturating_add(every);
        self.failed_over = true;
        Ok(Replay {
            to: self.primary()?,
            writes,
            signals,
        })
    }

    /// The failed rails to look at for a rejoin at `now` (none with a connect under
    /// way, each at most every [`RailsConfig::rejoin_every_ns`]): connect on those whose
    /// engine is in touch with the node again and tell [`Rails::rejoin_started`].
    pub fn rejoin_due(&mut self, now: u64) -> Vec<usize> {
        let every = self.cfg.rejoin_every_ns;
        (0..self.rails.len())
            .filter(|&k| {
                let r = &mut self.rails[k];
                if r.live || r.rejoin.is_some() || now < r.retry_at {
                    return false;
                }
                r.retry_at = now.saturating_add(every);
                true
            })
            .collect()
    }

    /// A rejoin connect `imp` was started on failed rail index `k`.
    pub fn rejoin_started(&mut self, k: usize, imp: Import) {
        if !self.rails[k].live {
            self.rails[k].rejoin = Some(imp);
        }
    }

    /// The rejoin connects under way: (rail index, the connect's import).
    pub fn rejoins(&self) -> Vec<(usize, Import)> {
        (0..self.rails.len())
            .filter_map(|k| self.rails[k].rejoin.map(|i| (k, i)))
            .collect()
    }

    /// The rejoin connect of rail index `k` was refused at `now`: tried again after
    /// [`RailsConfig::rejoin_retry_ns`].
    pub fn rejoin_refused(&mut self, k: usize, now: u64) {
        let r = &mut self.rails[k];
        r.rejoin = None;
        r.retry_at = now.saturating_add(self.cfg.rejoin_retry_ns);
    }

    /// The rejoin connect of rail index `k` was answered *and* every live rail was
    /// flushed since (the driver's part: see the module docs): the rail is live again
    /// on the new import. Returns the old import, for the driver to disconnect.
    pub fn rejoined(&mut self, k: usize) -> Option<Import> {
        let r = &mut self.rails[k];
        let new = r.rejoin.take()?;
        r.clean();
        r.live = true;
        Some(std::mem::replace(&mut r.imp, new))
    }

    /// A barrier scope opens: fail-overs before it are not its own.
    pub fn open_scope(&mut self) {
        self.failed_over = false;
    }

    /// A barrier scope closes (after its flush): `BarrierFailure` if a rail failed over
    /// within it. The next scope starts clean.
    pub fn close_scope(&mut self) -> Result<(), RsmError> {
        if std::mem::take(&mut self.failed_over) {
            return Err(RsmError::BarrierFailure);
        }
        Ok(())
    }

    /// An implicit-mode put completed (flushed): a fail-over on its way lost nothing,
    /// so it is not an error and does not leak into a later scope.
    pub fn implicit_done(&mut self) {
        self.failed_over = false;
    }

    /// Whether `order()` must flush: a live rail holds pieces of a striped put
    /// (unstriped accesses keep their order across rails anyway).
    pub fn order_wants_flush(&self) -> bool {
        self.rails.iter().any(|r| r.live && r.striped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two() -> Rails {
        Rails::new(RailsConfig::default(), &[(0, Import(1)), (1, Import(2))], 0)
    }

    #[test]
    fn striped_pieces_cover_the_put_at_multiples_of_8() {
        let r = two();
        let p = r.put_pieces(100, 65_537).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].range, 0..32_776);
        assert_eq!(p[1].range, 32_776..65_537);
        assert_eq!(p[1].offset, 100 + 32_776);
        assert_eq!((p[0].rail, p[1].rail), (0, 1));
        let small = r.put_pieces(0, 65_535).unwrap();
        assert_eq!(
            small,
            [Piece {
                rail: 0,
                offset: 0,
                range: 0..65_535
            }]
        );
    }

    #[test]
    fn an_unstriped_access_waits_for_striped_pieces_elsewhere() {
        let mut r = two();
        r.queued(1, 1000, &[1; 8], true);
        // Disjoint, but after a striped piece on rail 1: flush rail 1 first.
        assert_eq!(r.order_before(Some(0), 0, 8), [1]);
        // A striped put to a disjoint range need not wait.
        assert!(r.order_before(None, 0, 8).is_empty());
        // Overlap always orders.
        assert_eq!(r.order_before(None, 1004, 2), [1]);
        r.flushed(1);
        assert!(r.order_before(Some(0), 0, 8).is_empty());
    }

    #[test]
    fn a_failed_rail_is_replayed_reported_once_and_rejoined() {
        let mut r = two();
        r.open_scope();
        r.queued(0, 0, &[7; 16], false);
        r.signal_posted(0, true);
        let rp = r.fail(0, 5).unwrap();
        assert_eq!(rp.to, 1);
        assert_eq!(rp.writes, [(0, vec![7; 16])]);
        assert_eq!(rp.signals, [true]);
        assert_eq!(r.primary(), Ok(1));
        assert_eq!(r.close_scope(), Err(RsmError::BarrierFailure));
        assert_eq!(r.close_scope(), Ok(()));
        assert!(r.rejoin_due(5).is_empty(), "too early");
        let due = 5 + RailsConfig::default().rejoin_every_ns;
        assert_eq!(r.rejoin_due(due), [0]);
        r.rejoin_started(0, Import(9));
        assert!(r.rejoin_due(due * 10).is_empty(), "one connect at a time");
        assert_eq!(r.rejoined(0), Some(Import(1)));
        assert_eq!((r.primary(), r.import(0)), (Ok(0), Import(9)));
        assert_eq!(r.fail(1, 0).unwrap().to, 0);
        assert_eq!(r.fail(0, 0), Err(RsmError::RemoteNodeUnreachable));
    }
}
