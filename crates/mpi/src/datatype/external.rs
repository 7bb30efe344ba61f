//! MPI's `external32` data representation (MPI-4.0 §19.3.5 and its table), for
//! MPI_Pack_external and MPI_Unpack_external: every basic element big-endian,
//! floating point IEEE, `long double` as IEEE binary128, complex numbers as two of
//! their parts, and C `long` / `unsigned long` in 4 bytes (the table's sizes; a
//! value that does not fit is a conversion error). Conversion goes between packed
//! native data (what MPI_Pack makes) and external32, element by element in the
//! type signature's order.
//!
//! This module only rewrites bytes it is given; it never touches user memory.

use super::{Basic, Class, Datatype};

/// How one basic element's bytes change.
#[derive(Clone, Copy)]
enum Unit {
    /// One byte: as it is.
    Byte,
    /// An integer or IEEE number: reversed.
    Swap,
    /// Two halves (a complex number), each reversed.
    Halves(usize),
    /// C `long` (8 bytes here, 4 in external32), signed or not.
    Long { signed: bool },
    /// `long double`: x87 extended on x86-64, binary128 elsewhere.
    LongDouble,
    /// Two `long double`s (a complex number).
    LongDoubles,
}

impl Unit {
    /// (native, external32) bytes.
    fn sizes(self, native: usize) -> (usize, usize) {
        match self {
            Unit::Long { .. } => (native, 4),
            _ => (native, native),
        }
    }
}

fn unit(b: Basic) -> Unit {
    use Basic::*;
    match b {
        LongDouble => Unit::LongDouble,
        LongDoubleComplex | CxxLongDoubleComplex => Unit::LongDoubles,
        Long if b.size() == 8 => Unit::Long { signed: true },
        UnsignedLong if b.size() == 8 => Unit::Long { signed: false },
        _ if b.size() == 1 => Unit::Byte,
        _ if b.class() == Class::Complex => Unit::Halves(b.size() / 2),
        _ => Unit::Swap,
    }
}

/// Calls `f(unit, native size, n)` for the basic elements of `count` elements of
/// `t`, in signature order, `n` of the same unit at a time; stops at the first
/// error `f` returns.
fn walk<E>(
    t: &Datatype,
    count: usize,
    f: &mut impl FnMut(Unit, usize, usize) -> Result<(), E>,
) -> Result<(), E> {
    match t.0.basic {
        Some(b) if !b.is_pair() => f(unit(b), b.size(), count),
        _ => {
            for _ in 0..count {
                for (part, n) in t.0.parts.iter() {
                    walk(part, *n, f)?;
                }
            }
            Ok(())
        }
    }
}

/// A value that external32 cannot hold (a C `long` beyond 32 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a value does not fit its external32 size")]
pub struct Unrepresentable;

/// Bytes `count` elements of `t` take in external32; `None` on overflow.
pub fn size(t: &Datatype, count: usize) -> Option<usize> {
    let mut total = 0usize;
    let per = walk::<()>(t, 1, &mut |u, s, n| {
        total = total
            .checked_add(u.sizes(s).1.checked_mul(n).ok_or(())?)
            .ok_or(())?;
        Ok(())
    });
    per.ok()?;
    total.checked_mul(count)
}

/// `count` elements of `t` packed natively in `native` written to `ext` in
/// external32 (`ext` holds [`size`] bytes, `native` `count * t.size()`).
pub fn to_external(
    t: &Datatype,
    count: usize,
    native: &[u8],
    ext: &mut [u8],
) -> Result<(), Unrepresentable> {
    convert(t, count, native, ext, true)
}

/// The inverse of [`to_external`]: `count` elements of `t` from external32 `ext`
/// into native packed `native`.
pub fn from_external(t: &Datatype, count: usize, ext: &[u8], native: &mut [u8]) {
    // Every external32 value has a native one: nothing can fail this way.
    let _ = convert(t, count, ext, native, false);
}

/// Both directions: `out` is external32 when `outward`, native otherwise.
fn convert(
    t: &Datatype,
    count: usize,
    src: &[u8],
    dst: &mut [u8],
    outward: bool,
) -> Result<(), Unrepresentable> {
    let (mut i, mut o) = (0usize, 0usize);
    walk(t, count, &mut |u, s, n| {
        let (ns, es) = u.sizes(s);
        let (from, to) = if outward { (ns, es) } else { (es, ns) };
        for _ in 0..n {
            let (a, b) = (&src[i..i + from], &mut dst[o..o + to]);
            match u {
                Unit::Byte => b.copy_from_slice(a),
                Unit::Swap => {
                    b.copy_from_slice(a);
                    b.reverse();
                }
                Unit::Halves(h) => {
                    b.copy_from_slice(a);
                    b.chunks_exact_mut(h).for_each(|c| c.reverse());
                }
                Unit::Long { signed } if outward => {
                    let v = i64::from_le_bytes(a.try_into().expect("8 bytes"));
                    let w = if signed {
                        i32::try_from(v).map(|x| x.to_be_bytes())
                    } else {
                        u32::try_from(v as u64).map(|x| x.to_be_bytes())
                    };
                    b.copy_from_slice(&w.map_err(|_| Unrepresentable)?);
                }
                Unit::Long { signed } => {
                    let w: [u8; 4] = a.try_into().expect("4 bytes");
                    let v = if signed {
                        i64::from(i32::from_be_bytes(w))
                    } else {
                        i64::from(u32::from_be_bytes(w))
                    };
                    b.copy_from_slice(&v.to_le_bytes());
                }
                Unit::LongDouble | Unit::LongDoubles => {
                    for (d, c) in b.chunks_exact_mut(16).zip(a.chunks_exact(16)) {
                        let c: &[u8; 16] = c.try_into().expect("16 bytes");
                        d.copy_from_slice(&if outward {
                            long_double_out(c)
                        } else {
                            long_double_in(c)
                        });
                    }
                }
            }
            i += from;
            o += to;
        }
        Ok(())
    })
}

/// A native `long double` as big-endian binary128.
fn long_double_out(c: &[u8; 16]) -> [u8; 16] {
    if cfg!(target_arch = "x86_64") {
        x87_to_quad(c).to_be_bytes()
    } else {
        // binary128 already, little-endian.
        let mut b = *c;
        b.reverse();
        b
    }
}

fn long_double_in(c: &[u8; 16]) -> [u8; 16] {
    if cfg!(target_arch = "x86_64") {
        quad_to_x87(u128::from_be_bytes(*c))
    } else {
        let mut b = *c;
        b.reverse();
        b
    }
}

/// x87 extended (64-bit significand with its integer bit, 15-bit exponent, sign; in
/// the low 10 of 16 little-endian bytes) as binary128 bits. Both formats have the
/// same exponent bias and range: the fraction moves, the integer bit is dropped.
fn x87_to_quad(c: &[u8; 16]) -> u128 {
    let mant = u64::from_le_bytes(c[0..8].try_into().expect("8 bytes"));
    let se = u16::from_le_bytes([c[8], c[9]]);
    let frac = u128::from(mant & !(1 << 63)) << 49;
    (u128::from(se) << 112) | frac
}

fn quad_to_x87(q: u128) -> [u8; 16] {
    let se = (q >> 112) as u16;
    let exp = se & 0x7fff;
    // binary128's 112 fraction bits to x87's 63, rounded toward zero.
    let frac = ((q >> 49) as u64) & !(1 << 63);
    let int_bit = if exp == 0 { 0 } else { 1 << 63 };
    let mut out = [0u8; 16];
    out[0..8].copy_from_slice(&(frac | int_bit).to_le_bytes());
    out[8..10].copy_from_slice(&se.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(t: &Datatype, count: usize, native: &[u8]) -> Vec<u8> {
        let mut ext = vec![0u8; size(t, count).unwrap()];
        to_external(t, count, native, &mut ext).unwrap();
        let mut back = vec![0u8; native.len()];
        from_external(t, count, &ext, &mut back);
        assert_eq!(back, native);
        ext
    }

    #[test]
    fn ints_and_doubles_become_big_endian_and_back() {
        let t = Datatype::basic(Basic::Int);
        let d: Vec<u8> = [1i32, -2].iter().flat_map(|v| v.to_le_bytes()).collect();
        let e = roundtrip(&t, 2, &d);
        assert_eq!(e, [1i32.to_be_bytes(), (-2i32).to_be_bytes()].concat());
    }

    #[test]
    fn longs_take_four_bytes_and_refuse_what_does_not_fit() {
        let t = Datatype::basic(Basic::Long);
        let d: Vec<u8> = [1i64, -2].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(size(&t, 2), Some(8));
        let e = roundtrip(&t, 2, &d);
        assert_eq!(e, [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe]);
        let big = (1i64 << 40).to_le_bytes();
        assert_eq!(
            to_external(&t, 1, &big, &mut [0u8; 4]),
            Err(Unrepresentable)
        );
    }

    #[test]
    fn pairs_and_complex_convert_part_by_part() {
        // MPI_SHORT_INT packs as a short then an int.
        let t = Datatype::basic(Basic::ShortInt);
        let d = [3i16.to_le_bytes().to_vec(), 7i32.to_le_bytes().to_vec()].concat();
        let e = roundtrip(&t, 1, &d);
        assert_eq!(
            e,
            [3i16.to_be_bytes().to_vec(), 7i32.to_be_bytes().to_vec()].concat()
        );
        let c = Datatype::basic(Basic::DoubleComplex);
        let z = [1.5f64.to_le_bytes(), (-2.0f64).to_le_bytes()].concat();
        let e = roundtrip(&c, 1, &z);
        assert_eq!(e, [1.5f64.to_be_bytes(), (-2.0f64).to_be_bytes()].concat());
    }

    proptest::proptest! {
        /// Any ints, longs that fit 32 bits, doubles and shorts survive the way out
        /// and back, and the external bytes are their big-endian forms.
        #[test]
        fn values_round_trip(v in proptest::collection::vec(
            (proptest::prelude::any::<i32>(), proptest::prelude::any::<i32>(),
             proptest::prelude::any::<f64>(), proptest::prelude::any::<i16>()), 0..20)) {
            let t = Datatype::create_struct(
                &[1, 1, 1, 1],
                &[0, 8, 16, 24],
                &[
                    Datatype::basic(Basic::Int),
                    Datatype::basic(Basic::Long),
                    Datatype::basic(Basic::Double),
                    Datatype::basic(Basic::Short),
                ],
            ).unwrap();
            let mut native = Vec::new();
            let mut want = Vec::new();
            for &(a, l, d, s) in &v {
                native.extend(a.to_le_bytes());
                native.extend(i64::from(l).to_le_bytes());
                native.extend(d.to_le_bytes());
                native.extend(s.to_le_bytes());
                want.extend(a.to_be_bytes());
                want.extend(l.to_be_bytes());
                want.extend(d.to_be_bytes());
                want.extend(s.to_be_bytes());
            }
            let ext = roundtrip(&t, v.len(), &native);
            proptest::prop_assert_eq!(ext, want);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn long_double_is_binary128() {
        // 1.0 as x87: significand 1 << 63, exponent 16383.
        let mut c = [0u8; 16];
        c[0..8].copy_from_slice(&(1u64 << 63).to_le_bytes());
        c[8..10].copy_from_slice(&16383u16.to_le_bytes());
        let out = long_double_out(&c);
        // binary128 1.0: exponent 0x3fff, fraction 0.
        assert_eq!(u128::from_be_bytes(out), 0x3fffu128 << 112);
        assert_eq!(long_double_in(&out)[..10], c[..10]);
    }
}
