//! STOP/GO flow control: the slack buffer and how big it must be for a cable.
//!
//! A receiver that cannot pass data on lets its **slack buffer** fill. At the STOP
//! watermark it sends STOP on the reverse channel; the data already in flight (a cable
//! round trip's worth, plus the time to generate and decode the symbol) still arrives, so
//! the room above STOP must hold it. When the buffer drains to the GO watermark it sends
//! GO; the first new byte arrives a round trip later, so the data below GO must last that
//! long or the output starves. The distance between the two watermarks (hysteresis) bounds
//! how often STOP and GO are sent, and so their share of the reverse channel.
//!
//! This module holds the buffer's bookkeeping and the sizing rule; it never stores bytes
//! (the port and the simulator keep their own data where their hot loops want it).

use crate::symbol::Control;

/// Occupancy bookkeeping of a slack buffer with STOP/GO watermarks (in bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlackBuffer {
    capacity: usize,
    stop: usize,
    go: usize,
    level: usize,
    /// The last flow-control symbol requested was STOP.
    stopped: bool,
    /// Requested but not yet handed to the sender.
    pending: Option<Control>,
    overflows: u64,
    symbols: u64,
}

/// Watermarks that cannot work: GO must lie below STOP, STOP at or below the capacity.
#[derive(Clone, Copy, PartialEq, Eq, Debug, thiserror::Error)]
#[error("slack buffer needs go < stop <= capacity (got go {go}, stop {stop}, capacity {capacity})")]
pub struct BadWatermarks {
    pub capacity: usize,
    pub stop: usize,
    pub go: usize,
}

impl SlackBuffer {
    pub fn new(capacity: usize, stop: usize, go: usize) -> Result<Self, BadWatermarks> {
        if go >= stop || stop > capacity {
            return Err(BadWatermarks { capacity, stop, go });
        }
        Ok(SlackBuffer {
            capacity,
            stop,
            go,
            level: 0,
            stopped: false,
            pending: None,
            overflows: 0,
            symbols: 0,
        })
    }

    /// The classic Myrinet values used by the minimal-routing study: 80 B, STOP 56, GO 40.
    pub fn classic() -> Self {
        SlackBuffer::new(80, 56, 40).expect("valid")
    }

    pub fn from_plan(p: &SlackPlan) -> Self {
        SlackBuffer::new(p.capacity, p.stop, p.go).expect("plans are valid")
    }

    pub fn level(&self) -> usize {
        self.level
    }
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    pub fn stop_mark(&self) -> usize {
        self.stop
    }
    pub fn go_mark(&self) -> usize {
        self.go
    }
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }
    /// Bytes that arrived to a full buffer.
    pub fn overflows(&self) -> u64 {
        self.overflows
    }
    /// STOP and GO symbols requested so far.
    pub fn symbols_requested(&self) -> u64 {
        self.symbols
    }

    /// One byte arrived. Returns false (and counts an overflow) if there was no room.
    pub fn arrive(&mut self) -> bool {
        if self.level == self.capacity {
            self.overflows += 1;
            return false;
        }
        self.level += 1;
        if self.level >= self.stop && !self.stopped {
            self.stopped = true;
            self.request(Control::Stop);
        }
        true
    }

    /// One byte left downstream.
    pub fn depart(&mut self) {
        debug_assert!(self.level > 0, "departure from an empty slack buffer");
        self.level = self.level.saturating_sub(1);
        if self.level <= self.go && self.stopped {
            self.stopped = false;
            self.request(Control::Go);
        }
    }

    fn request(&mut self, c: Control) {
        self.symbols += 1;
        // A STOP not yet sent and then cancelled by GO needs no symbol at all, but the
        // sender may already be committed; sending the latest state is always correct.
        self.pending = Some(c);
    }

    /// Asks for the current state (STOP or GO) to be sent again, e.g. after the link
    /// resynchronized and the remote forgot it.
    pub fn reannounce(&mut self) {
        self.request(if self.stopped {
            Control::Stop
        } else {
            Control::Go
        });
    }

    /// The flow-control symbol the reverse channel should carry next, if any.
    pub fn take_request(&mut self) -> Option<Control> {
        self.pending.take()
    }

    pub fn clear(&mut self) {
        self.level = 0;
        self.stopped = false;
        self.pending = None;
    }
}

/// A cable and the rate it runs at: what [`SlackPlan::for_cable`] sizes a buffer for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cable {
    /// Length in metres.
    pub length_m: f64,
    /// Propagation delay in ns per metre (5.0 for fibre, ~5.6 for copper at 0.6 c).
    pub ns_per_m: f64,
    /// Data rate in bytes per ns (0.25 for Myrinet-2000, 0.08 for classic Myrinet).
    pub bytes_per_ns: f64,
    /// Fixed delay per round trip besides the cable: generating, serializing, decoding
    /// and acting on a STOP, at both ends, in ns.
    pub turnaround_ns: f64,
}

impl Cable {
    /// A Myrinet-2000 fibre. The 600 ns turnaround is chosen so that a 200 m cable gives the
    /// specification's ≈ 2.6 µs round trip (2 µs of it propagation at 5 ns/m).
    pub fn myrinet2000_fibre(length_m: f64) -> Cable {
        Cable {
            length_m,
            ns_per_m: 5.0,
            bytes_per_ns: 0.25,
            turnaround_ns: 600.0,
        }
    }

    pub fn round_trip_ns(&self) -> f64 {
        2.0 * self.length_m * self.ns_per_m + self.turnaround_ns
    }

    /// Bytes the sender emits in one round trip: what arrives after STOP is sent.
    pub fn bytes_in_flight(&self) -> f64 {
        self.round_trip_ns() * self.bytes_per_ns
    }
}

/// The largest slack buffer [`SlackPlan::for_cable`] plans: 1 TiB, far beyond any cable,
/// and small enough that every level fits a `usize` with room to add.
pub const MAX_PLAN_BYTES: f64 = (1u64 << 40) as f64;

/// Inputs [`SlackPlan::for_cable`] cannot plan for.
#[derive(Clone, Copy, PartialEq, Debug, thiserror::Error)]
pub enum PlanError {
    #[error("margin must be a finite number >= 0 (got {0})")]
    Margin(f64),
    #[error("the STOP/GO share must be in (0, 1] (got {0})")]
    Share(f64),
    #[error("the cable must have a finite round trip >= 0 and a rate > 0")]
    Cable,
    #[error("the plan needs a {0:.3e}-byte buffer, over the 1 TiB limit")]
    TooLarge(f64),
}

/// A slack-buffer size and watermarks for a cable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlackPlan {
    /// Bytes in flight over one round trip, rounded up.
    pub in_flight: usize,
    pub capacity: usize,
    /// Level at which STOP is sent: `capacity - headroom`.
    pub stop: usize,
    /// Level at which GO is sent.
    pub go: usize,
}

impl SlackPlan {
    /// Sizes a buffer for `cable`.
    ///
    /// * headroom above STOP = in-flight bytes × (1 + `margin`), rounded up to 64 B;
    /// * GO = the same amount, so a round trip's worth remains when GO is sent;
    /// * hysteresis (STOP − GO) = enough that STOP and GO, two code-group pairs per
    ///   cycle, take at most `max_symbol_share` of the reverse channel: each cycle needs
    ///   the receiver to drain at least the hysteresis, i.e. that many forward code-groups,
    ///   so the share is at most 4 / hysteresis.
    ///
    /// Sizes are worked out in floating point and refused past [`MAX_PLAN_BYTES`], so no
    /// input wraps a watermark around.
    pub fn for_cable(
        cable: &Cable,
        margin: f64,
        max_symbol_share: f64,
    ) -> Result<SlackPlan, PlanError> {
        if !(margin >= 0.0 && margin.is_finite()) {
            return Err(PlanError::Margin(margin));
        }
        if !(max_symbol_share > 0.0 && max_symbol_share <= 1.0) {
            return Err(PlanError::Share(max_symbol_share));
        }
        let flight = cable.bytes_in_flight();
        if !(flight >= 0.0 && flight.is_finite() && cable.bytes_per_ns > 0.0) {
            return Err(PlanError::Cable);
        }
        let in_flight = flight.ceil().max(1.0);
        let guard = ((in_flight * (1.0 + margin)) / 64.0).ceil() * 64.0;
        let hysteresis = (4.0 / max_symbol_share).ceil().max(2.0);
        let capacity = 2.0 * guard + hysteresis;
        if capacity > MAX_PLAN_BYTES {
            return Err(PlanError::TooLarge(capacity));
        }
        // Every value is an integer below 2^41 here: the casts are exact.
        let (in_flight, guard, hysteresis) =
            (in_flight as usize, guard as usize, hysteresis as usize);
        Ok(SlackPlan {
            in_flight,
            capacity: 2 * guard + hysteresis,
            stop: guard + hysteresis,
            go: guard,
        })
    }

    pub fn headroom(&self) -> usize {
        self.capacity - self.stop
    }
    pub fn hysteresis(&self) -> usize {
        self.stop - self.go
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_200m_fibre_case() {
        let c = Cable::myrinet2000_fibre(200.0);
        assert!((c.round_trip_ns() - 2600.0).abs() < 1.0);
        assert_eq!(c.bytes_in_flight().round() as usize, 650);
        let p = SlackPlan::for_cable(&c, 0.5, 0.01).unwrap();
        // The seed: ~650 B in flight, ~1 KB of room for it.
        assert_eq!(p.in_flight, 650);
        assert_eq!(p.headroom(), 1024);
        assert!(p.go >= p.in_flight);
        assert_eq!(p.hysteresis(), 400);
    }

    #[test]
    fn plans_never_wrap() {
        let c = Cable::myrinet2000_fibre(200.0);
        // Once: STOP below GO and a hysteresis of 2^64 - 1 (1e-300); GO at 0 (1e17).
        assert!(matches!(
            SlackPlan::for_cable(&c, 0.5, 1e-300),
            Err(PlanError::TooLarge(_))
        ));
        assert!(matches!(
            SlackPlan::for_cable(&c, 1e17, 0.01),
            Err(PlanError::TooLarge(_))
        ));
        assert!(matches!(
            SlackPlan::for_cable(&c, f64::NAN, 0.01),
            Err(PlanError::Margin(_))
        ));
        assert!(matches!(
            SlackPlan::for_cable(&c, 0.5, 0.0),
            Err(PlanError::Share(_))
        ));
        // Small shares and large margins that fit still give ordered watermarks.
        for (margin, share) in [(0.0, 1.0), (1e6, 1e-6), (0.5, 4e-12)] {
            let p = SlackPlan::for_cable(&c, margin, share).unwrap();
            assert!(p.go < p.stop && p.stop < p.capacity, "{p:?}");
            assert!(p.go >= p.in_flight);
        }
    }

    #[test]
    fn watermarks_are_checked() {
        assert!(SlackBuffer::new(80, 40, 56).is_err());
        assert!(SlackBuffer::new(50, 56, 40).is_err());
        assert!(SlackBuffer::new(80, 56, 40).is_ok());
    }

    #[test]
    fn stop_and_go_with_hysteresis() {
        let mut b = SlackBuffer::classic();
        for _ in 0..55 {
            assert!(b.arrive());
        }
        assert_eq!(b.take_request(), None);
        b.arrive();
        assert_eq!(b.take_request(), Some(Control::Stop));
        for _ in 0..15 {
            b.depart();
        }
        assert_eq!(b.take_request(), None);
        b.depart();
        assert_eq!(b.take_request(), Some(Control::Go));
        for _ in 0..40 {
            b.depart();
        }
        for _ in 0..80 {
            b.arrive();
        }
        assert!(!b.arrive());
        assert_eq!(b.overflows(), 1);
    }
}
