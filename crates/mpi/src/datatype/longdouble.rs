//! Arithmetic on C `long double` values held as 16 bytes, for reductions. Rust has
//! no such type: on x86-64 it is the x87 80-bit extended format (the first 10 of
//! the 16 bytes), computed here with x87 instructions; on AArch64 it is IEEE
//! binary128, compared here bit by bit, with no arithmetic yet (`None`). Public for
//! tests and for the C layer; not a general-purpose numeric type.

use std::cmp::Ordering;

pub type Ld = [u8; 16];

#[cfg(target_arch = "x86_64")]
mod imp {
    use super::Ld;
    use std::arch::asm;
    use std::cmp::Ordering;

    fn binary(a: &Ld, b: &Ld, mul: bool) -> Ld {
        let mut r = [0u8; 16];
        // SAFETY: the three pointers are valid for 10 bytes (of 16); the x87 stack is
        // empty on entry (the ABI) and left empty: two loads, one popping operation,
        // one popping store.
        unsafe {
            if mul {
                asm!(
                    "fld tbyte ptr [{a}]",
                    "fld tbyte ptr [{b}]",
                    "fmulp st(1), st",
                    "fstp tbyte ptr [{r}]",
                    a = in(reg) a.as_ptr(), b = in(reg) b.as_ptr(), r = in(reg) r.as_mut_ptr(),
                    out("st(0)") _, out("st(1)") _, options(nostack),
                );
            } else {
                asm!(
                    "fld tbyte ptr [{a}]",
                    "fld tbyte ptr [{b}]",
                    "faddp st(1), st",
                    "fstp tbyte ptr [{r}]",
                    a = in(reg) a.as_ptr(), b = in(reg) b.as_ptr(), r = in(reg) r.as_mut_ptr(),
                    out("st(0)") _, out("st(1)") _, options(nostack),
                );
            }
        }
        r
    }

    pub fn add(a: &Ld, b: &Ld) -> Option<Ld> {
        Some(binary(a, b, false))
    }
    pub fn mul(a: &Ld, b: &Ld) -> Option<Ld> {
        Some(binary(a, b, true))
    }

    pub fn cmp(a: &Ld, b: &Ld) -> Option<Ordering> {
        let (gt, lt, un): (u8, u8, u8);
        // SAFETY: both pointers are valid for 10 bytes; the x87 stack is left as found
        // (fucomip pops one, fstp st(0) the other).
        unsafe {
            asm!(
                "fld tbyte ptr [{b}]",
                "fld tbyte ptr [{a}]",
                "fucomip st, st(1)",
                "fstp st(0)",
                "seta {gt}",
                "setb {lt}",
                "setp {un}",
                a = in(reg) a.as_ptr(), b = in(reg) b.as_ptr(),
                gt = out(reg_byte) gt, lt = out(reg_byte) lt, un = out(reg_byte) un,
                out("st(0)") _, out("st(1)") _, options(nostack),
            );
        }
        if un != 0 {
            None
        } else if gt != 0 {
            Some(Ordering::Greater)
        } else if lt != 0 {
            Some(Ordering::Less)
        } else {
            Some(Ordering::Equal)
        }
    }

    pub fn from_f64(v: f64) -> Ld {
        let mut r = [0u8; 16];
        // SAFETY: reads 8 bytes of v, writes 10 of r; the x87 stack is left empty.
        unsafe {
            asm!(
                "fld qword ptr [{v}]",
                "fstp tbyte ptr [{r}]",
                v = in(reg) &v, r = in(reg) r.as_mut_ptr(),
                out("st(0)") _, options(nostack),
            );
        }
        r
    }

    pub fn to_f64(a: &Ld) -> f64 {
        let mut v = 0f64;
        // SAFETY: reads 10 bytes of a, writes the 8 of v; the x87 stack is left empty.
        unsafe {
            asm!(
                "fld tbyte ptr [{a}]",
                "fstp qword ptr [{v}]",
                a = in(reg) a.as_ptr(), v = in(reg) &mut v,
                out("st(0)") _, options(nostack),
            );
        }
        v
    }

    /// The sign bit: byte 9, bit 7.
    pub const SIGN: (usize, u8) = (9, 0x80);
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    use super::Ld;
    use std::cmp::Ordering;

    pub fn add(_: &Ld, _: &Ld) -> Option<Ld> {
        None
    }
    pub fn mul(_: &Ld, _: &Ld) -> Option<Ld> {
        None
    }

    /// IEEE binary128 ordering from the bits (little-endian).
    pub fn cmp(a: &Ld, b: &Ld) -> Option<Ordering> {
        let (x, y) = (u128::from_le_bytes(*a), u128::from_le_bytes(*b));
        let mag = |v: u128| v & !(1u128 << 127);
        let nan = |v: u128| mag(v) > (0x7fffu128 << 112);
        if nan(x) || nan(y) {
            return None;
        }
        let key = |v: u128| -> i128 {
            if v >> 127 == 1 {
                -(mag(v) as i128)
            } else {
                mag(v) as i128
            }
        };
        Some(key(x).cmp(&key(y)))
    }

    pub const SIGN: (usize, u8) = (15, 0x80);
}

pub use imp::{add, cmp, mul};
#[cfg(target_arch = "x86_64")]
pub use imp::{from_f64, to_f64};

/// `a - b` (exact negation of b, then an addition).
pub fn sub(a: &Ld, b: &Ld) -> Option<Ld> {
    let mut nb = *b;
    nb[imp::SIGN.0] ^= imp::SIGN.1;
    add(a, &nb)
}

/// The larger (`max`) or smaller of two values; on a tie or NaN, `b`.
pub fn pick(a: &Ld, b: &Ld, max: bool) -> Ld {
    match cmp(a, b) {
        Some(Ordering::Greater) if max => *a,
        Some(Ordering::Less) if !max => *a,
        _ => *b,
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn x87_arithmetic() {
        let (a, b) = (from_f64(1.5), from_f64(-4.25));
        assert_eq!(to_f64(&add(&a, &b).unwrap()), -2.75);
        assert_eq!(to_f64(&sub(&a, &b).unwrap()), 5.75);
        assert_eq!(to_f64(&mul(&a, &b).unwrap()), -6.375);
        assert_eq!(cmp(&a, &b), Some(Ordering::Greater));
        assert_eq!(cmp(&b, &a), Some(Ordering::Less));
        assert_eq!(cmp(&a, &a), Some(Ordering::Equal));
        assert_eq!(cmp(&a, &from_f64(f64::NAN)), None);
        // More precision than a double: 1 + 2^-60 - 1 survives.
        let tiny = from_f64(2f64.powi(-60));
        let one = from_f64(1.0);
        let s = sub(&add(&one, &tiny).unwrap(), &one).unwrap();
        assert_eq!(to_f64(&s), 2f64.powi(-60));
    }
}
