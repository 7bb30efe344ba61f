//! Flow control of large messages, per peer: how many pull blocks may be in flight from
//! one sender, and how long a block may take before its missing bytes are asked again.
//!
//! Pulls are receiver-driven, so the receiver is where the rate is set. Each peer has a
//! window of blocks (TCP's congestion window, counted in blocks): a block answered in
//! full without being asked twice opens it (by one block per block while below the
//! threshold, by one block per window above it); a block asked again, the sign of a
//! lost frame, halves it, at most once per round trip. Every receive pulling from the
//! peer shares the window, oldest first, so many large receives posted at once cannot
//! flood the receiver's socket. The re-request timeout follows the measured block round
//! trip (srtt + 4 rttvar, Jacobson/Karels) and doubles for each try of a block.
//!
//! This module holds numbers only: it never queues a frame or touches a request.

use std::collections::VecDeque;

/// The most blocks in flight from one peer: 64 × 32 KiB, 2 MiB, within the 8 MiB socket
/// buffers the UDP transport asks for.
pub(super) const MAX_WINDOW: u32 = 64;
/// The shortest re-request timeout, however short the round trip: a host that was
/// descheduled for a moment must not be taken for loss.
const MIN_RTO_NS: u64 = 10_000_000;

#[derive(Debug)]
pub(super) struct Flow {
    /// Blocks that may be in flight.
    window: u32,
    /// Below it the window grows by one per block (slow start), above it by one per
    /// window of blocks.
    threshold: u32,
    /// Blocks answered since the window last grew above the threshold.
    grown: u32,
    /// Blocks requested and not yet complete, over every receive from this peer.
    in_flight: u32,
    /// Smoothed block round trip and its variation, ns; 0 until measured.
    srtt: u64,
    rttvar: u64,
    /// When the window was last halved.
    last_cut: u64,
    /// When a block was last answered in full: the re-request clock of a block restarts
    /// there (as TCP restarts its timer on new data), so a block waiting behind others
    /// in the sender's queue is not taken for lost.
    pub(super) last_answer: u64,
    /// The latest time a block answered in full had been asked. A block asked before it
    /// is not waiting behind others in the sender's queue any more (the sender answers
    /// in order): its bytes were lost or are held back, and its clock no longer restarts
    /// at [`Flow::last_answer`]. Without this, the answers to other receives from the
    /// same peer put a block's re-request off for ever and the receive timed out (the
    /// netns test's flake, session 24).
    newest_answered_ask: u64,
    /// Receives with blocks still to request, waiting for room in the window, oldest
    /// first.
    pub(super) waiting: VecDeque<u32>,
}

impl Flow {
    pub(super) fn new(initial: u32) -> Flow {
        Flow {
            window: initial.clamp(1, MAX_WINDOW),
            threshold: MAX_WINDOW,
            grown: 0,
            in_flight: 0,
            srtt: 0,
            rttvar: 0,
            last_cut: 0,
            last_answer: 0,
            newest_answered_ask: 0,
            waiting: VecDeque::new(),
        }
    }

    /// Room for one more block now.
    #[inline]
    pub(super) fn has_room(&self) -> bool {
        self.in_flight < self.window
    }

    pub(super) fn sent(&mut self) {
        self.in_flight += 1;
    }

    /// A block left flight: answered, or its receive ended.
    pub(super) fn done(&mut self, blocks: u32) {
        self.in_flight = self.in_flight.saturating_sub(blocks);
    }

    /// A block last asked at `asked` was answered in full at `now`; `rtt` is its round
    /// trip when it was asked once.
    pub(super) fn answered(&mut self, now: u64, asked: u64, rtt: Option<u64>) {
        self.done(1);
        self.last_answer = self.last_answer.max(now);
        self.newest_answered_ask = self.newest_answered_ask.max(asked);
        let Some(rtt) = rtt else { return };
        if self.srtt == 0 {
            self.srtt = rtt;
            self.rttvar = rtt / 2;
        } else {
            let err = self.srtt.abs_diff(rtt);
            self.rttvar = (3 * self.rttvar + err) / 4;
            self.srtt = (7 * self.srtt + rtt) / 8;
        }
        if self.window < self.threshold {
            self.window += 1;
        } else {
            self.grown += 1;
            if self.grown >= self.window {
                self.grown = 0;
                self.window = (self.window + 1).min(MAX_WINDOW);
            }
        }
        self.window = self.window.min(MAX_WINDOW);
    }

    /// A block had to be asked again at `now`: halve the window, once per round trip.
    pub(super) fn lost(&mut self, now: u64) {
        if self.last_cut != 0 && now < self.last_cut + self.srtt.max(MIN_RTO_NS) {
            return;
        }
        self.last_cut = now;
        self.window = (self.window / 2).max(1);
        self.threshold = self.window;
        self.grown = 0;
    }

    /// When a block last asked at `sent` (`tries` times before) is due to be asked again.
    pub(super) fn due(&self, sent: u64, tries: u8, max_ns: u64) -> u64 {
        let from = if self.newest_answered_ask > sent {
            sent // passed by a block asked after it
        } else {
            sent.max(self.last_answer)
        };
        from + self.rto(tries, max_ns)
    }

    /// How long a block asked `tries` times before may wait for its bytes: the
    /// round-trip estimate, doubled per earlier try, within `[2 ms, max_ns]`.
    pub(super) fn rto(&self, tries: u8, max_ns: u64) -> u64 {
        let base = if self.srtt == 0 {
            max_ns
        } else {
            (self.srtt + 4 * self.rttvar).max(MIN_RTO_NS)
        };
        base.saturating_mul(1 << tries.min(10))
            .min(max_ns.max(MIN_RTO_NS))
    }

    /// The peer failed or restarted: nothing is in flight any more.
    pub(super) fn reset(&mut self, initial: u32) {
        *self = Flow::new(initial);
    }

    #[cfg(test)]
    pub(super) fn window(&self) -> u32 {
        self.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_opens_on_answers_and_halves_once_per_round_trip_on_loss() {
        let mut f = Flow::new(4);
        for _ in 0..4 {
            assert!(f.has_room());
            f.sent();
        }
        assert!(!f.has_room(), "four blocks fill a window of four");
        for _ in 0..4 {
            f.answered(1, 0, Some(100_000));
        }
        assert_eq!(
            f.window(),
            8,
            "slow start: one more block per block answered"
        );
        f.lost(10_000_000);
        assert_eq!(f.window(), 4);
        f.lost(10_000_001);
        assert_eq!(f.window(), 4, "one cut per round trip");
        // Above the threshold: one block more per window of blocks.
        for _ in 0..4 {
            f.answered(1, 0, Some(100_000));
        }
        assert_eq!(f.window(), 5);
        // From 5 to 64 takes 5 + 6 + ... + 63 blocks.
        for _ in 0..(5..MAX_WINDOW).sum::<u32>() {
            f.answered(1, 0, Some(100_000));
        }
        assert_eq!(f.window(), MAX_WINDOW);
        f.lost(1_000_000_000);
        assert_eq!(f.window(), MAX_WINDOW / 2);
    }

    #[test]
    fn the_timeout_follows_the_round_trip_and_backs_off() {
        let max = 100_000_000;
        let mut f = Flow::new(4);
        assert_eq!(f.rto(0, max), max, "unmeasured: the configured one");
        f.answered(1, 0, Some(4_000_000));
        assert_eq!(f.rto(0, max), 12_000_000, "srtt + 4 rttvar");
        assert_eq!(f.rto(1, max), 24_000_000, "doubled per try");
        assert_eq!(f.rto(5, max), max, "never past the configured one");
        // Restarted by an answer: a block behind others is not due at its own time.
        assert_eq!(f.due(0, 0, max), 1 + 12_000_000);
        f.answered(50_000_000, 0, Some(10_000));
        assert!(f.rto(0, max) >= MIN_RTO_NS);
        assert!(f.due(0, 0, max) >= 50_000_000 + MIN_RTO_NS);
        // Passed by a block asked after it (at 55 ms, answered at 60 ms): a block asked
        // at 40 ms is due a timeout after its ask, however late the answers run.
        f.answered(60_000_000, 55_000_000, None);
        assert_eq!(f.due(40_000_000, 0, max), 40_000_000 + f.rto(0, max));
        assert_eq!(f.due(55_000_000, 0, max), 60_000_000 + f.rto(0, max));
    }
}
