//! `op::kernel`, the per-(op, type) function the collectives keep: for every pair it
//! offers, the same bytes as `op::reduce` on data of every bit pattern class
//! (zeros, ones, small and large values, negative numbers, NaNs and infinities for
//! the reals); and it offers none where `reduce` refuses or does more than
//! element-wise arithmetic.

use myrix_mpi::datatype::{Basic, Class};
use myrix_mpi::op::{allowed, kernel, reduce, BuiltinOp};

const OPS: [BuiltinOp; 14] = {
    use BuiltinOp::*;
    [
        Max, Min, Sum, Prod, Land, Band, Lor, Bor, Lxor, Bxor, Maxloc, Minloc, Replace, NoOp,
    ]
};

/// `n` bytes drawn from `seed` (xorshift), with runs of 0x00 and 0xff and some
/// special floats mixed in so zeros, all-ones, NaNs and infinities occur.
fn data(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        match x % 8 {
            0 => v.extend_from_slice(&[0; 8]),
            1 => v.extend_from_slice(&[0xff; 8]),
            2 => v.extend_from_slice(&f64::NAN.to_ne_bytes()),
            3 => v.extend_from_slice(&f32::INFINITY.to_ne_bytes()),
            _ => v.extend_from_slice(&x.to_ne_bytes()),
        }
    }
    v.truncate(n);
    v
}

#[test]
fn kernels_compute_what_reduce_does() {
    let mut offered = 0;
    for &b in Basic::ALL.iter() {
        let size = b.size();
        for op in OPS {
            let Some(k) = kernel(op, b) else {
                continue;
            };
            offered += 1;
            assert!(allowed(op, b), "{op:?} on {b:?} offered but not allowed");
            assert!(
                !matches!(b.class(), Class::Complex | Class::Pair),
                "{op:?} on {b:?}"
            );
            for (seed, elems) in [(1u64, 1usize), (7, 3), (99, 17), (12345, 64)] {
                let input = data(seed, elems * size);
                let start = data(seed.wrapping_mul(31).wrapping_add(5), elems * size);
                let mut want = start.clone();
                reduce(op, b, &input, &mut want).unwrap();
                let mut got = start.clone();
                k(&input, &mut got);
                assert_eq!(got, want, "{op:?} on {b:?}, {elems} elements");
            }
        }
    }
    // The ops on the integer and real types at least (every C integer type has 10).
    assert!(offered >= 100, "only {offered} kernels");
}

#[test]
fn no_kernel_where_reduce_does_more_or_refuses() {
    use BuiltinOp::*;
    for &b in Basic::ALL.iter() {
        for op in [Maxloc, Minloc, Replace, NoOp] {
            assert!(kernel(op, b).is_none(), "{op:?} on {b:?}");
        }
        for op in OPS {
            if !allowed(op, b) {
                assert!(kernel(op, b).is_none(), "{op:?} on {b:?} not allowed");
            }
        }
    }
}
