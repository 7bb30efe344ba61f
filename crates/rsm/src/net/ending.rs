//! How a network controller ends: the drain of what is still unacknowledged and, with
//! `MYRIX_RSM_BYE=1`, the bye to every peer ([`Net::leave`]), run when the controller
//! is released (`Drop for Net`) or the C library's exit handler leaves. Split out of
//! `net/mod.rs`; it must never close an endpoint (the release does, after it).

use super::Net;
use crate::net::agent::lock;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

impl Net {
    /// Drives the endpoints until no rail's engine has anything left to send, to have
    /// acknowledged or answered ([`Engine::idle`]): the frames of the last calls (a
    /// disconnect, an exporter's last signal or unpublish, puts not yet flushed) are
    /// resent until acknowledged, as the process may exit right after. Bounded by the
    /// engine's retry limit: a node silent for `timeout_ns` is declared unreachable and
    /// what was queued for it is dropped (the wait stops at that limit in any case).
    /// Returns whether every rail went idle.
    pub(crate) fn drain(&self) -> bool {
        let limit = self
            .rails
            .iter()
            .map(|r| lock(&r.core).engine.config().timeout_ns)
            .max()
            .unwrap_or(0);
        let idle = || self.rails.iter().all(|r| lock(&r.core).engine.idle());
        self.wait_with(Some(Duration::from_nanos(limit)), || idle().then_some(()))
            .is_some()
    }

    /// This node leaves (the controller's release, the process's exit): [`Net::drain`],
    /// then (with `MYRIX_RSM_BYE=1`: `bye_enabled`) a bye to every peer
    /// ([`Engine::leave`]) drained the same way, so no peer
    /// waits for this node any more (it would resend what we took but whose ack it
    /// lost, up to its retry limit; its gets and flushes towards our segments end
    /// `RSMERR_CONN_ABORTED` at once). When a peer's bye crossed ours, the peer may
    /// not have our ack of it: we keep answering (a linger, as TCP's TIME_WAIT) until
    /// no frame has come for [`LINGER_QUIET`] resend intervals, at most
    /// [`LINGER_MAX`]. The byes are waited for at most [`BYE_WAIT_RESENDS`] resend
    /// intervals, everything within the retry limit (the linger aside).
    /// Returns whether every rail went idle.
    pub(crate) fn leave(&self) -> bool {
        if !bye_enabled() {
            return self.drain();
        }
        let start = Instant::now();
        let (limit, resend) = self
            .rails
            .iter()
            .map(|r| {
                let c = lock(&r.core);
                (c.engine.config().timeout_ns, c.engine.config().resend_ns)
            })
            .fold((0, 0), |(t, r), (t2, r2)| (t.max(t2), r.max(r2)));
        let limit = Duration::from_nanos(limit);
        let drained = self.drain();
        for r in &self.rails {
            let mut c = lock(&r.core);
            // A rail taken down drops what it would send: no bye there.
            if !c.down {
                c.engine.leave();
            }
        }
        // The bye is a courtesy: a peer that died without one (or a link that died
        // silently) must not hold the release for the whole retry limit.
        let bye_wait = Duration::from_nanos(resend.saturating_mul(BYE_WAIT_RESENDS));
        let idle = || self.rails.iter().all(|r| lock(&r.core).engine.idle());
        let left = self
            .wait_with(
                Some(limit.saturating_sub(start.elapsed()).min(bye_wait)),
                || idle().then_some(()),
            )
            .is_some();
        if self.rails.iter().any(|r| lock(&r.core).engine.lingering()) {
            let frames_in = || {
                self.rails
                    .iter()
                    .map(|r| lock(&r.core).engine.stats().frames_in)
                    .sum::<u64>()
            };
            let quiet = Duration::from_nanos(resend.saturating_mul(LINGER_QUIET));
            let (mut seen, mut since) = (frames_in(), Instant::now());
            let _ = self.wait_with(Some(LINGER_MAX), || {
                let n = frames_in();
                if n != seen {
                    (seen, since) = (n, Instant::now());
                }
                (since.elapsed() >= quiet).then_some(())
            });
        }
        drained && left
    }
}

/// How long [`Net::leave`] waits for its byes to be acknowledged, in resend intervals
/// (500 ms at the default 5 ms): a lost bye or ack costs one interval.
const BYE_WAIT_RESENDS: u64 = 100;
/// A linger ([`Net::leave`]) ends once no frame came for this many resend intervals
/// (a peer that missed our ack of its bye resends it every interval, backing off).
const LINGER_QUIET: u64 = 3;
/// The longest linger (frames the network held back, its reordering, reset the quiet
/// time; they must not hold every MPI job's end).
const LINGER_MAX: Duration = Duration::from_millis(60);

/// `MYRIX_RSM_BYE=1` leaves with a bye; without it, only the drain, as before session
/// 28. Off by default: 2-rank MPI one-sided jobs across lossy namespaces ended 0.5-0.7 s
/// later (median) with it, cause not found yet (docs/rsm.md "Leaving: the bye").
fn bye_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("MYRIX_RSM_BYE").is_some_and(|v| v == "1"))
}

/// The controller's release (its last handle gone: `rsm_release_controller` after
/// the last disconnect and export destroy): unacknowledged frames are drained and the
/// peers told that this node leaves ([`Net::leave`]) before the endpoints close. The
/// agents hold the controller only weakly and stop; the releasing thread drives the
/// endpoints itself.
impl Drop for Net {
    fn drop(&mut self) {
        self.leave();
    }
}
