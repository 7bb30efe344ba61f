//! The simulator's clock: [`Ticks`], whole flit times since the start of a run.
//!
//! A tick lasts [`Config::flit`](crate::Config::flit) picoseconds ([`Sim::tick`]).
//! Durations of the [`Config`](crate::Config) become ticks rounding up
//! ([`Ticks::covering`]); ticks become picoseconds exactly (`Ticks * Picos`,
//! [`Sim::now`]). Inside the engine every time is a bare `u64` count of ticks: the
//! hot loop keeps its plain arrays, and `Ticks` marks where it meets the other units.
//!
//! [`Sim::tick`]: crate::Sim::tick
//! [`Sim::now`]: crate::Sim::now

use myrix_link::Picos;
use std::ops::{Add, AddAssign, Mul, Sub};

/// A tick count: a time since the start of the run, or a duration, in flit times.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticks(pub u64);

impl Ticks {
    /// The ticks of length `tick` that cover `d`: rounded up, so that nothing modelled
    /// takes less time than configured (150 ns at 6.25 ns a tick: 24).
    #[inline]
    pub const fn covering(d: Picos, tick: Picos) -> Ticks {
        Ticks(d.div_ceil(tick))
    }

    /// Nanoseconds as an `f64`, for reports: ticks × `tick` ÷ 1000, each an `f64`.
    #[inline]
    pub fn as_nanos_f64(self, tick: Picos) -> f64 {
        self.0 as f64 * tick.0 as f64 / 1e3
    }
}

/// Ticks of length `tick` in picoseconds, exactly.
impl Mul<Picos> for Ticks {
    type Output = Picos;
    #[inline]
    fn mul(self, tick: Picos) -> Picos {
        Picos(self.0 * tick.0)
    }
}

impl Add for Ticks {
    type Output = Ticks;
    #[inline]
    fn add(self, rhs: Ticks) -> Ticks {
        Ticks(self.0 + rhs.0)
    }
}

impl AddAssign for Ticks {
    #[inline]
    fn add_assign(&mut self, rhs: Ticks) {
        self.0 += rhs.0;
    }
}

impl Sub for Ticks {
    type Output = Ticks;
    #[inline]
    fn sub(self, rhs: Ticks) -> Ticks {
        Ticks(self.0 - rhs.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use myrix_link::{NS, US};

    #[test]
    fn conversions() {
        let tick = Picos(6_250);
        assert_eq!(Ticks::covering(150 * NS, tick), Ticks(24));
        assert_eq!(Ticks::covering(Picos(6_251), tick), Ticks(2));
        assert_eq!(Ticks::covering(Picos::ZERO, tick), Ticks(0));
        assert_eq!(Ticks(160) * tick, US);
        assert_eq!(Ticks(160).as_nanos_f64(tick), 1000.0);
        assert_eq!(Ticks(3) + Ticks(4) - Ticks(2), Ticks(5));
    }
}
