//! The predefined reduction operations (MPI_MAX … MPI_MINLOC, and MPI_REPLACE /
//! MPI_NO_OP for one-sided accumulates) on packed arrays of one basic type, with the
//! standard's table of which operation applies to which type (MPI-4.1 §6.9.2):
//!
//! | op                    | types                                                  |
//! |-----------------------|--------------------------------------------------------|
//! | MAX, MIN              | C and Fortran integers, floating point, AINT/OFFSET/COUNT |
//! | SUM, PROD             | the same and complex                                   |
//! | LAND, LOR, LXOR       | C integers, logical, AINT/OFFSET/COUNT (as MPICH)      |
//! | BAND, BOR, BXOR       | C and Fortran integers, BYTE, AINT/OFFSET/COUNT        |
//! | MAXLOC, MINLOC        | the value-index pairs (on equal values: the lower index) |
//! | REPLACE, NO_OP        | every type                                             |
//!
//! Data is packed (as [`crate::datatype::Datatype::pack`] writes it; for a pair, the
//! value then the index, no padding) and need not be aligned. Integer arithmetic
//! wraps. This module never allocates.

use crate::datatype::longdouble::{self, Ld};
use crate::datatype::{Basic, Class, Num};
use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinOp {
    Max,
    Min,
    Sum,
    Prod,
    Land,
    Band,
    Lor,
    Bor,
    Lxor,
    Bxor,
    Maxloc,
    Minloc,
    Replace,
    NoOp,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpError {
    #[error("{op:?} is not defined on {basic:?}")]
    NotDefined { op: BuiltinOp, basic: Basic },
    #[error("{op:?} on {basic:?} is not implemented on this architecture")]
    Unsupported { op: BuiltinOp, basic: Basic },
    #[error("buffers of {input} and {inout} bytes for elements of {size}")]
    Length {
        input: usize,
        inout: usize,
        size: usize,
    },
}

/// Whether the standard defines `op` on `basic`.
pub fn allowed(op: BuiltinOp, basic: Basic) -> bool {
    allowed_in(op, basic, basic.class())
}

/// [`allowed`] for `basic` of class `class` (its own: read once by the caller).
fn allowed_in(op: BuiltinOp, basic: Basic, class: Class) -> bool {
    use BuiltinOp::*;
    use Class::*;
    // The standard leaves MPI_CHAR (printable characters) out of the integer
    // classes, but MPICH and Open MPI reduce it as a signed char and programs rely
    // on it (the OSU benchmarks accumulate MPI_CHAR with MPI_SUM); so does myrix.
    // MPI_WCHAR stays out.
    let c = match basic {
        Basic::Char => CInteger,
        _ => class,
    };
    match op {
        Max | Min => matches!(c, CInteger | FortranInteger | Floating | MultiLanguage),
        Sum | Prod => matches!(
            c,
            CInteger | FortranInteger | Floating | Complex | MultiLanguage
        ),
        // The standard names only C integers and logicals; MPICH also takes the
        // multi-language integers (its own suite reduces MPI_COUNT with MPI_LAND).
        Land | Lor | Lxor => matches!(c, CInteger | Logical | MultiLanguage),
        Band | Bor | Bxor => matches!(c, CInteger | FortranInteger | Byte | MultiLanguage),
        Maxloc | Minloc => c == Pair,
        Replace | NoOp => true,
    }
}

/// All predefined operations are commutative except REPLACE and NO_OP (which are
/// not reductions).
pub fn is_commutative(op: BuiltinOp) -> bool {
    !matches!(op, BuiltinOp::Replace | BuiltinOp::NoOp)
}

/// A number as bytes in native order.
trait Elem: Copy + PartialOrd {
    const SIZE: usize;
    fn get(b: &[u8]) -> Self;
    fn put(self, b: &mut [u8]);
}

trait Arith: Elem {
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
}

trait Bits: Arith {
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn truth(self) -> bool;
    fn of_bool(b: bool) -> Self;
}

macro_rules! elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn get(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_ne_bytes(a)
            }
            #[inline]
            fn put(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_ne_bytes())
            }
        }
    )*};
}
elem!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline] fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline] fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
        }
        impl Bits for $t {
            #[inline] fn and(self, o: Self) -> Self { self & o }
            #[inline] fn or(self, o: Self) -> Self { self | o }
            #[inline] fn xor(self, o: Self) -> Self { self ^ o }
            #[inline] fn truth(self) -> bool { self != 0 }
            #[inline] fn of_bool(b: bool) -> Self { b as $t }
        }
    )*};
}
ints!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! floats {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline] fn add(self, o: Self) -> Self { self + o }
            #[inline] fn mul(self, o: Self) -> Self { self * o }
        }
    )*};
}
floats!(f32, f64);

/// `inout[i] = f(input[i], inout[i])` over elements of `T`.
#[inline]
fn each<T: Elem>(input: &[u8], inout: &mut [u8], f: impl Fn(T, T) -> T) {
    for (a, b) in input
        .chunks_exact(T::SIZE)
        .zip(inout.chunks_exact_mut(T::SIZE))
    {
        f(T::get(a), T::get(b)).put(b);
    }
}

fn max<T: PartialOrd>(a: T, b: T) -> T {
    if a > b {
        a
    } else {
        b
    }
}
fn min<T: PartialOrd>(a: T, b: T) -> T {
    if a < b {
        a
    } else {
        b
    }
}

fn arith<T: Arith>(op: BuiltinOp, input: &[u8], inout: &mut [u8]) -> bool {
    match op {
        BuiltinOp::Max => each::<T>(input, inout, max),
        BuiltinOp::Min => each::<T>(input, inout, min),
        BuiltinOp::Sum => each::<T>(input, inout, T::add),
        BuiltinOp::Prod => each::<T>(input, inout, T::mul),
        _ => return false,
    }
    true
}

fn int<T: Bits>(op: BuiltinOp, input: &[u8], inout: &mut [u8]) -> bool {
    match op {
        BuiltinOp::Band => each::<T>(input, inout, T::and),
        BuiltinOp::Bor => each::<T>(input, inout, T::or),
        BuiltinOp::Bxor => each::<T>(input, inout, T::xor),
        BuiltinOp::Land => each::<T>(input, inout, |a, b| T::of_bool(a.truth() && b.truth())),
        BuiltinOp::Lor => each::<T>(input, inout, |a, b| T::of_bool(a.truth() || b.truth())),
        BuiltinOp::Lxor => each::<T>(input, inout, |a, b| T::of_bool(a.truth() != b.truth())),
        _ => return arith::<T>(op, input, inout),
    }
    true
}

fn long_double(op: BuiltinOp, input: &[u8], inout: &mut [u8]) -> bool {
    for (a, b) in input.chunks_exact(16).zip(inout.chunks_exact_mut(16)) {
        let (x, y) = (ld(a), ld(b));
        let r = match op {
            BuiltinOp::Max => longdouble::pick(&x, &y, true),
            BuiltinOp::Min => longdouble::pick(&x, &y, false),
            BuiltinOp::Sum => match longdouble::add(&x, &y) {
                Some(r) => r,
                None => return false,
            },
            BuiltinOp::Prod => match longdouble::mul(&x, &y) {
                Some(r) => r,
                None => return false,
            },
            _ => return false,
        };
        b.copy_from_slice(&r);
    }
    true
}

fn ld(b: &[u8]) -> Ld {
    let mut a = [0u8; 16];
    a.copy_from_slice(b);
    a
}

/// Complex SUM and PROD (each element two parts of `T`).
fn complex<T: Arith + std::ops::Sub<Output = T>>(
    op: BuiltinOp,
    input: &[u8],
    inout: &mut [u8],
) -> bool {
    let n = T::SIZE;
    for (a, b) in input.chunks_exact(2 * n).zip(inout.chunks_exact_mut(2 * n)) {
        let (ar, ai) = (T::get(&a[..n]), T::get(&a[n..]));
        let (br, bi) = (T::get(&b[..n]), T::get(&b[n..]));
        let (r, i) = match op {
            BuiltinOp::Sum => (ar.add(br), ai.add(bi)),
            BuiltinOp::Prod => (ar.mul(br) - ai.mul(bi), ar.mul(bi).add(ai.mul(br))),
            _ => return false,
        };
        r.put(&mut b[..n]);
        i.put(&mut b[n..]);
    }
    true
}

fn complex_ld(op: BuiltinOp, input: &[u8], inout: &mut [u8]) -> Option<()> {
    use longdouble::{add, mul, sub};
    for (a, b) in input.chunks_exact(32).zip(inout.chunks_exact_mut(32)) {
        let (ar, ai, br, bi) = (ld(&a[..16]), ld(&a[16..]), ld(&b[..16]), ld(&b[16..]));
        let (r, i) = match op {
            BuiltinOp::Sum => (add(&ar, &br)?, add(&ai, &bi)?),
            BuiltinOp::Prod => (
                sub(&mul(&ar, &br)?, &mul(&ai, &bi)?)?,
                add(&mul(&ar, &bi)?, &mul(&ai, &br)?)?,
            ),
            _ => return None,
        };
        b[..16].copy_from_slice(&r);
        b[16..].copy_from_slice(&i);
    }
    Some(())
}

/// Compares two numbers of kind `n` held as bytes.
fn cmp_num(n: Num, a: &[u8], b: &[u8]) -> Option<Ordering> {
    fn c<T: Elem>(a: &[u8], b: &[u8]) -> Option<Ordering> {
        T::get(a).partial_cmp(&T::get(b))
    }
    match n {
        Num::I8 => c::<i8>(a, b),
        Num::I16 => c::<i16>(a, b),
        Num::I32 => c::<i32>(a, b),
        Num::I64 => c::<i64>(a, b),
        Num::U8 => c::<u8>(a, b),
        Num::U16 => c::<u16>(a, b),
        Num::U32 => c::<u32>(a, b),
        Num::U64 => c::<u64>(a, b),
        Num::F32 => c::<f32>(a, b),
        Num::F64 => c::<f64>(a, b),
        Num::LongDouble => longdouble::cmp(&ld(a), &ld(b)),
    }
}

/// MAXLOC / MINLOC on packed (value, index) pairs: the larger (smaller) value wins;
/// on equal values, the lower index.
fn loc(basic: Basic, max: bool, input: &[u8], inout: &mut [u8]) {
    let info = basic.info();
    let (vn, vs) = (info.num, info.num.size());
    let Some((inum, _)) = info.index else {
        return;
    };
    for (a, b) in input
        .chunks_exact(info.size)
        .zip(inout.chunks_exact_mut(info.size))
    {
        let take_a = match cmp_num(vn, &a[..vs], &b[..vs]) {
            Some(Ordering::Greater) => max,
            Some(Ordering::Less) => !max,
            Some(Ordering::Equal) => {
                if cmp_num(inum, &a[vs..], &b[vs..]) == Some(Ordering::Less) {
                    b[vs..].copy_from_slice(&a[vs..]);
                }
                false
            }
            None => false,
        };
        if take_a {
            b.copy_from_slice(a);
        }
    }
}

/// A reduction with nothing left to decide per call: `inout[i] = input[i] op
/// inout[i]` over the whole elements of two arrays of the same length.
pub type Kernel = fn(&[u8], &mut [u8]);

/// The [`Kernel`] of `op` on `basic` when it is one of the arithmetic, bitwise or
/// logical ops on an integer or real type (what [`reduce`] does for them, its
/// checks and dispatch made once), for a caller that keeps it per (op, type);
/// None for the others (complex types, MAXLOC/MINLOC, long double, REPLACE,
/// NO_OP, an op the type does not allow), which go through [`reduce`].
pub fn kernel(op: BuiltinOp, basic: Basic) -> Option<Kernel> {
    let info = basic.info();
    if !allowed_in(op, basic, info.class) || matches!(info.class, Class::Complex | Class::Pair) {
        return None;
    }
    match info.num {
        Num::I8 => int_kernel::<i8>(op),
        Num::I16 => int_kernel::<i16>(op),
        Num::I32 => int_kernel::<i32>(op),
        Num::I64 => int_kernel::<i64>(op),
        Num::U8 => int_kernel::<u8>(op),
        Num::U16 => int_kernel::<u16>(op),
        Num::U32 => int_kernel::<u32>(op),
        Num::U64 => int_kernel::<u64>(op),
        Num::F32 => arith_kernel::<f32>(op),
        Num::F64 => arith_kernel::<f64>(op),
        Num::LongDouble => None,
    }
}

fn arith_kernel<T: Arith>(op: BuiltinOp) -> Option<Kernel> {
    let k: Kernel = match op {
        BuiltinOp::Max => |a, b| each::<T>(a, b, max),
        BuiltinOp::Min => |a, b| each::<T>(a, b, min),
        BuiltinOp::Sum => |a, b| each::<T>(a, b, T::add),
        BuiltinOp::Prod => |a, b| each::<T>(a, b, T::mul),
        _ => return None,
    };
    Some(k)
}

fn int_kernel<T: Bits>(op: BuiltinOp) -> Option<Kernel> {
    let k: Kernel = match op {
        BuiltinOp::Band => |a, b| each::<T>(a, b, T::and),
        BuiltinOp::Bor => |a, b| each::<T>(a, b, T::or),
        BuiltinOp::Bxor => |a, b| each::<T>(a, b, T::xor),
        BuiltinOp::Land => |a, b| each::<T>(a, b, |x, y| T::of_bool(x.truth() && y.truth())),
        BuiltinOp::Lor => |a, b| each::<T>(a, b, |x, y| T::of_bool(x.truth() || y.truth())),
        BuiltinOp::Lxor => |a, b| each::<T>(a, b, |x, y| T::of_bool(x.truth() != y.truth())),
        _ => return arith_kernel::<T>(op),
    };
    Some(k)
}

/// `inout[i] = input[i] op inout[i]` for every element of the packed arrays.
pub fn reduce(op: BuiltinOp, basic: Basic, input: &[u8], inout: &mut [u8]) -> Result<(), OpError> {
    // The type's facts once: each `Basic` query builds its whole `Info` (about 36
    // instructions); four of them per call were most of an 8-byte reduction and,
    // with this function, 8 % of an 8-rank MPI_Iallreduce of one double (session 30).
    let info = basic.info();
    let size = info.size;
    if input.len() != inout.len() || inout.len() % size != 0 {
        return Err(OpError::Length {
            input: input.len(),
            inout: inout.len(),
            size,
        });
    }
    if !allowed_in(op, basic, info.class) {
        return Err(OpError::NotDefined { op, basic });
    }
    let done = match (op, info.class) {
        (BuiltinOp::Replace, _) => {
            inout.copy_from_slice(input);
            true
        }
        (BuiltinOp::NoOp, _) => true,
        (BuiltinOp::Maxloc | BuiltinOp::Minloc, _) => {
            loc(basic, op == BuiltinOp::Maxloc, input, inout);
            true
        }
        (_, Class::Complex) => match info.num {
            Num::F32 => complex::<f32>(op, input, inout),
            Num::F64 => complex::<f64>(op, input, inout),
            _ => complex_ld(op, input, inout).is_some(),
        },
        (_, _) => match info.num {
            Num::I8 => int::<i8>(op, input, inout),
            Num::I16 => int::<i16>(op, input, inout),
            Num::I32 => int::<i32>(op, input, inout),
            Num::I64 => int::<i64>(op, input, inout),
            Num::U8 => int::<u8>(op, input, inout),
            Num::U16 => int::<u16>(op, input, inout),
            Num::U32 => int::<u32>(op, input, inout),
            Num::U64 => int::<u64>(op, input, inout),
            Num::F32 => arith::<f32>(op, input, inout),
            Num::F64 => arith::<f64>(op, input, inout),
            Num::LongDouble => long_double(op, input, inout),
        },
    };
    if done {
        Ok(())
    } else {
        Err(OpError::Unsupported { op, basic })
    }
}
