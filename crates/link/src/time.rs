//! Time units: [`Picos`], the simulated time of the link layer and the simulator, and
//! [`Nanos`], the clock of the MX engines and of what is reported to people.
//!
//! Both are `#[repr(transparent)]` over `u64` and every operation is `#[inline]`: they
//! compile to the bare integer arithmetic they replace. Units meet only through the
//! conversions named here; nothing converts implicitly.
//!
//! * picoseconds to nanoseconds: [`Nanos::from`] truncates (rounds toward zero), as an
//!   integer division by 1000 does; [`Picos::as_nanos_f64`] is the exact quotient as an
//!   `f64`, for reports.
//! * nanoseconds (and µs, ms) to picoseconds: [`Picos::from_nanos`] (and
//!   [`Picos::from_micros`], [`Picos::from_millis`]) are exact; like any `u64`
//!   multiplication they overflow (panic in debug builds) past about 213 days.
//! * a duration in whole periods of another (a tick, a code-group):
//!   [`Picos::div_ceil`] counts the periods that cover it.

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Rem, Sub, SubAssign};

/// Simulated time or a duration, in picoseconds: 4 ns code-groups and 6.25 ns flits are
/// exact. `u64` picoseconds last 213 days.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Picos(pub u64);

/// A time or duration in nanoseconds: the MX engines' clock.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(pub u64);

/// One nanosecond.
pub const NS: Picos = Picos(1_000);
/// One microsecond.
pub const US: Picos = Picos(1_000_000);
/// One millisecond.
pub const MS: Picos = Picos(1_000_000_000);

impl Picos {
    pub const ZERO: Picos = Picos(0);
    pub const MAX: Picos = Picos(u64::MAX);

    /// `ns` nanoseconds, exactly.
    #[inline]
    pub const fn from_nanos(ns: u64) -> Picos {
        Picos(ns * NS.0)
    }

    /// `us` microseconds, exactly.
    #[inline]
    pub const fn from_micros(us: u64) -> Picos {
        Picos(us * US.0)
    }

    /// `ms` milliseconds, exactly.
    #[inline]
    pub const fn from_millis(ms: u64) -> Picos {
        Picos(ms * MS.0)
    }

    /// Nanoseconds as an `f64`: the picoseconds divided by 1000 (correctly rounded).
    #[inline]
    pub fn as_nanos_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }

    /// Microseconds as an `f64`: the picoseconds divided by 10⁶ (correctly rounded).
    #[inline]
    pub fn as_micros_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// How many periods of `unit` cover `self`, rounding up (0 for 0). Panics when `unit`
    /// is 0.
    #[inline]
    pub const fn div_ceil(self, unit: Picos) -> u64 {
        self.0.div_ceil(unit.0)
    }

    /// `self - rhs`, or 0 when `rhs` is later.
    #[inline]
    pub const fn saturating_sub(self, rhs: Picos) -> Picos {
        Picos(self.0.saturating_sub(rhs.0))
    }
}

impl Nanos {
    /// This time in picoseconds, exactly.
    #[inline]
    pub const fn to_picos(self) -> Picos {
        Picos::from_nanos(self.0)
    }
}

/// Whole nanoseconds, truncated: 1999 ps is 1 ns.
impl From<Picos> for Nanos {
    #[inline]
    fn from(p: Picos) -> Nanos {
        Nanos(p.0 / NS.0)
    }
}

impl From<Nanos> for Picos {
    #[inline]
    fn from(n: Nanos) -> Picos {
        n.to_picos()
    }
}

macro_rules! arithmetic {
    ($t:ident) => {
        impl Add for $t {
            type Output = $t;
            #[inline]
            fn add(self, rhs: $t) -> $t {
                $t(self.0 + rhs.0)
            }
        }
        impl AddAssign for $t {
            #[inline]
            fn add_assign(&mut self, rhs: $t) {
                self.0 += rhs.0;
            }
        }
        impl Sub for $t {
            type Output = $t;
            #[inline]
            fn sub(self, rhs: $t) -> $t {
                $t(self.0 - rhs.0)
            }
        }
        impl SubAssign for $t {
            #[inline]
            fn sub_assign(&mut self, rhs: $t) {
                self.0 -= rhs.0;
            }
        }
        /// A duration `rhs` times over.
        impl Mul<u64> for $t {
            type Output = $t;
            #[inline]
            fn mul(self, rhs: u64) -> $t {
                $t(self.0 * rhs)
            }
        }
        /// A duration `self` times over: `50 * NS`.
        impl Mul<$t> for u64 {
            type Output = $t;
            #[inline]
            fn mul(self, rhs: $t) -> $t {
                $t(self * rhs.0)
            }
        }
        /// How many whole `rhs` fit in `self` (truncated).
        impl Div for $t {
            type Output = u64;
            #[inline]
            fn div(self, rhs: $t) -> u64 {
                self.0 / rhs.0
            }
        }
        /// What is left of `self` after whole periods of `rhs`.
        impl Rem for $t {
            type Output = $t;
            #[inline]
            fn rem(self, rhs: $t) -> $t {
                $t(self.0 % rhs.0)
            }
        }
    };
}

arithmetic!(Picos);
arithmetic!(Nanos);

/// The number and its unit: `6250 ps`.
impl fmt::Display for Picos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ps", self.0)
    }
}

/// The number and its unit: `150 ns`.
impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ns", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(Picos::from_nanos(150), Picos(150_000));
        assert_eq!(Picos::from_micros(100), 100 * US);
        assert_eq!(Picos::from_millis(2), Picos(2_000_000_000));
        assert_eq!(Nanos::from(Picos(1_999)), Nanos(1), "truncated");
        assert_eq!(Nanos::from(Picos(999)), Nanos(0));
        assert_eq!(Picos::from(Nanos(7)), Picos(7_000));
        assert_eq!(Picos(6_250).as_nanos_f64(), 6.25);
        assert_eq!(Picos(1_500_000).as_micros_f64(), 1.5);
        assert_eq!((150 * NS).div_ceil(Picos(6_250)), 24);
        assert_eq!(Picos(6_251).div_ceil(Picos(6_250)), 2);
        assert_eq!(Picos::ZERO.div_ceil(Picos(6_250)), 0);
    }

    #[test]
    fn arithmetic_and_display() {
        let mut t = 3 * US + NS * 2;
        t -= NS;
        assert_eq!(t, Picos(3_001_000));
        assert_eq!(t / NS, 3_001);
        assert_eq!(t % US, NS);
        assert_eq!(NS.saturating_sub(US), Picos::ZERO);
        assert!(NS < US && US < MS);
        assert_eq!(Picos(6_250).to_string(), "6250 ps");
        assert_eq!(Nanos(150).to_string(), "150 ns");
        assert_eq!(
            std::mem::size_of::<Option<Picos>>(),
            std::mem::size_of::<Option<u64>>()
        );
    }
}
