//! The predefined operations: the standard's table of allowed (op, type) pairs and
//! the values they compute.

use myrix_mpi::datatype::{Basic, Class};
use myrix_mpi::op::{allowed, is_commutative, reduce, BuiltinOp, OpError};

const OPS: [BuiltinOp; 14] = {
    use BuiltinOp::*;
    [
        Max, Min, Sum, Prod, Land, Band, Lor, Bor, Lxor, Bxor, Maxloc, Minloc, Replace, NoOp,
    ]
};

fn bytes<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: plain numbers, read as bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
        .to_vec()
}

fn run<T: Copy>(op: BuiltinOp, b: Basic, input: &[T], inout: &[T]) -> Vec<u8> {
    let mut io = bytes(inout);
    reduce(op, b, &bytes(input), &mut io).unwrap();
    io
}

#[test]
fn the_table_of_allowed_combinations() {
    use BuiltinOp::*;
    let ex = |op: BuiltinOp, c: Class| -> bool {
        use Class::*;
        match op {
            Max | Min => matches!(c, CInteger | FortranInteger | Floating | MultiLanguage),
            Sum | Prod => matches!(
                c,
                CInteger | FortranInteger | Floating | Complex | MultiLanguage
            ),
            Land | Lor | Lxor => matches!(c, CInteger | Logical | MultiLanguage),
            Band | Bor | Bxor => matches!(c, CInteger | FortranInteger | Byte | MultiLanguage),
            Maxloc | Minloc => c == Pair,
            Replace | NoOp => true,
        }
    };
    for b in Basic::ALL {
        for op in OPS {
            // MPI_CHAR reduces as a signed char, as in MPICH and Open MPI.
            let class = if b == Basic::Char {
                Class::CInteger
            } else {
                b.class()
            };
            assert_eq!(allowed(op, b), ex(op, class), "{op:?} {b:?}");
            let s = b.size();
            let r = reduce(op, b, &vec![1u8; 2 * s], &mut vec![1u8; 2 * s]);
            if ex(op, class) {
                if cfg!(target_arch = "x86_64") {
                    assert_eq!(r, Ok(()), "{op:?} {b:?}");
                }
            } else {
                assert_eq!(r, Err(OpError::NotDefined { op, basic: b }));
            }
        }
    }
    // Spot checks of the classes.
    assert!(allowed(Sum, Basic::Char));
    assert!(!allowed(Sum, Basic::WChar));
    assert!(!allowed(Land, Basic::Double));
    assert!(allowed(Land, Basic::CBool));
    assert!(!allowed(Band, Basic::CBool));
    assert!(allowed(Bxor, Basic::Byte));
    assert!(!allowed(Sum, Basic::Byte));
    assert!(allowed(Sum, Basic::DoubleComplex));
    assert!(!allowed(Max, Basic::DoubleComplex));
    assert!(allowed(Band, Basic::Aint) && allowed(Lor, Basic::Count));
    assert!(!allowed(Lor, Basic::FInteger));
    assert!(allowed(Maxloc, Basic::DoubleInt) && !allowed(Sum, Basic::TwoInt));
    assert!(is_commutative(Sum) && !is_commutative(Replace));
}

#[test]
fn lengths_are_checked() {
    assert!(matches!(
        reduce(BuiltinOp::Sum, Basic::Int, &[0; 8], &mut [0; 4]),
        Err(OpError::Length { .. })
    ));
    assert!(matches!(
        reduce(BuiltinOp::Sum, Basic::Int, &[0; 6], &mut [0; 6]),
        Err(OpError::Length { .. })
    ));
}

#[test]
fn arithmetic_and_bits() {
    use BuiltinOp::*;
    assert_eq!(
        run(Sum, Basic::Int, &[1i32, -5], &[2, 7]),
        bytes(&[3i32, 2])
    );
    assert_eq!(run(Sum, Basic::Uint8, &[200u8], &[100]), bytes(&[44u8]));
    assert_eq!(
        run(Prod, Basic::Double, &[1.5f64, -2.0], &[4.0, 0.25]),
        bytes(&[6.0f64, -0.5])
    );
    assert_eq!(
        run(Max, Basic::Float, &[1.0f32, 5.0], &[3.0, -1.0]),
        bytes(&[3.0f32, 5.0])
    );
    assert_eq!(
        run(Min, Basic::Long, &[i64::MIN, 9], &[0i64, 8]),
        bytes(&[i64::MIN, 8])
    );
    assert_eq!(
        run(Min, Basic::Unsigned, &[u32::MAX], &[7u32]),
        bytes(&[7u32])
    );
    assert_eq!(
        run(Band, Basic::Byte, &[0b1100u8], &[0b1010]),
        bytes(&[0b1000u8])
    );
    assert_eq!(
        run(Bor, Basic::Short, &[0b1100i16], &[0b1010]),
        bytes(&[0b1110i16])
    );
    assert_eq!(
        run(Bxor, Basic::Uint64, &[0b1100u64], &[0b1010]),
        bytes(&[0b0110u64])
    );
    assert_eq!(
        run(Land, Basic::Int, &[5i32, 0, 3], &[2, 4, 0]),
        bytes(&[1i32, 0, 0])
    );
    assert_eq!(
        run(Lor, Basic::CBool, &[1u8, 0, 0], &[0, 1, 0]),
        bytes(&[1u8, 1, 0])
    );
    assert_eq!(
        run(Lxor, Basic::CBool, &[1u8, 1, 0], &[0, 1, 0]),
        bytes(&[1u8, 0, 0])
    );
    assert_eq!(
        run(Replace, Basic::Char, &[1u8, 2], &[3, 4]),
        bytes(&[1u8, 2])
    );
    assert_eq!(run(NoOp, Basic::Char, &[1u8, 2], &[3, 4]), bytes(&[3u8, 4]));
}

#[test]
fn complex_products() {
    // (1 + 2i)(3 - i) = 5 + 5i
    assert_eq!(
        run(
            BuiltinOp::Prod,
            Basic::DoubleComplex,
            &[1.0f64, 2.0],
            &[3.0, -1.0]
        ),
        bytes(&[5.0f64, 5.0])
    );
    assert_eq!(
        run(
            BuiltinOp::Sum,
            Basic::FloatComplex,
            &[1.0f32, 2.0],
            &[3.0, -1.0]
        ),
        bytes(&[4.0f32, 1.0])
    );
}

#[cfg(target_arch = "x86_64")]
#[test]
fn long_double_sums() {
    use myrix_mpi::datatype::longdouble::{from_f64, to_f64};
    let a = [from_f64(1.0), from_f64(2.5)].concat();
    let mut b = [from_f64(2.0), from_f64(-0.5)].concat();
    reduce(BuiltinOp::Sum, Basic::LongDouble, &a, &mut b).unwrap();
    assert_eq!(to_f64(b[..16].try_into().unwrap()), 3.0);
    assert_eq!(to_f64(b[16..].try_into().unwrap()), 2.0);
    reduce(
        BuiltinOp::Max,
        Basic::LongDouble,
        &[from_f64(9.0), from_f64(0.0)].concat(),
        &mut b,
    )
    .unwrap();
    assert_eq!(to_f64(b[..16].try_into().unwrap()), 9.0);
    assert_eq!(to_f64(b[16..].try_into().unwrap()), 2.0);
    // (1 + 2i)(3 - i) = 5 + 5i
    let x = [from_f64(1.0), from_f64(2.0)].concat();
    let mut y = [from_f64(3.0), from_f64(-1.0)].concat();
    reduce(BuiltinOp::Prod, Basic::LongDoubleComplex, &x, &mut y).unwrap();
    assert_eq!(to_f64(y[..16].try_into().unwrap()), 5.0);
    assert_eq!(to_f64(y[16..].try_into().unwrap()), 5.0);
}

/// Packed pairs: value then index.
fn pairs_f64(v: &[(f64, i32)]) -> Vec<u8> {
    v.iter()
        .flat_map(|(x, i)| [x.to_ne_bytes().to_vec(), i.to_ne_bytes().to_vec()].concat())
        .collect()
}

#[test]
fn maxloc_and_minloc_take_the_lower_index_on_ties() {
    let input = pairs_f64(&[(3.0, 7), (1.0, 2), (5.0, 9), (2.0, 1)]);
    let mut io = pairs_f64(&[(3.0, 4), (1.0, 8), (4.0, 0), (2.0, 3)]);
    reduce(BuiltinOp::Maxloc, Basic::DoubleInt, &input, &mut io).unwrap();
    assert_eq!(io, pairs_f64(&[(3.0, 4), (1.0, 2), (5.0, 9), (2.0, 1)]));
    let mut io = pairs_f64(&[(3.0, 4), (0.5, 8), (4.0, 0), (2.0, 3)]);
    reduce(BuiltinOp::Minloc, Basic::DoubleInt, &input, &mut io).unwrap();
    assert_eq!(io, pairs_f64(&[(3.0, 4), (0.5, 8), (4.0, 0), (2.0, 1)]));
    // 2INT: both ints.
    let mut io = bytes(&[5i32, 3, 6, 1]);
    reduce(
        BuiltinOp::Minloc,
        Basic::TwoInt,
        &bytes(&[5i32, 2, 7, 0]),
        &mut io,
    )
    .unwrap();
    assert_eq!(io, bytes(&[5i32, 2, 6, 1]));
    // SHORT_INT packs to 6 bytes.
    let p = |v: i16, i: i32| [v.to_ne_bytes().to_vec(), i.to_ne_bytes().to_vec()].concat();
    let mut io = p(-4, 10);
    reduce(BuiltinOp::Maxloc, Basic::ShortInt, &p(3, 11), &mut io).unwrap();
    assert_eq!(io, p(3, 11));
}
