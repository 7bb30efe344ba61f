//! Allreduce results as FNV-1a hashes of their bits, on the inputs
//! `bench/mpi/reduce_hash.c` gives the C library, so `bench/rust_same_as_c.sh` can
//! show that the Rust API combines exactly as `MPI_Allreduce` does: `f64` with sum,
//! product, minimum and maximum on inputs whose sums round (the combining order shows
//! in the bits) at 1, 70 and 4900 elements, and `i64` with sum and the bitwise and
//! logical operations at 5000. Rank 0 prints `type op count hash` per line.

use myrix_mpi::world::{Error, Op, World};

const L: usize = 5000;

fn fnv(words: impl Iterator<Item = u64>) -> u64 {
    words.fold(1469598103934665603u64, |h, b| {
        (h ^ b).wrapping_mul(1099511628211)
    })
}

fn main() -> Result<(), Error> {
    let mut w = World::init()?;
    let r = w.rank() as usize;
    let s: Vec<f64> = (0..L)
        .map(|i| 1.0 / (r + 1 + i) as f64 + 1e-3 * (i % 7) as f64)
        .collect();
    let si: Vec<i64> = (0..L)
        .map(|i| (r as i64 * 7919 + i as i64 * 104729) ^ ((i as i64) << 3))
        .collect();
    for (op, name) in [
        (Op::Sum, "sum"),
        (Op::Prod, "prod"),
        (Op::Min, "min"),
        (Op::Max, "max"),
    ] {
        let mut len = 1;
        while len <= L {
            let mut o = vec![0f64; len];
            w.allreduce(&s[..len], &mut o, op)?;
            if r == 0 {
                println!(
                    "f64 {name} {len} {:016x}",
                    fnv(o.iter().map(|x| x.to_bits()))
                );
            }
            len *= 70;
        }
    }
    let ops = [
        (Op::Sum, "sum"),
        (Op::Band, "band"),
        (Op::Bor, "bor"),
        (Op::Bxor, "bxor"),
        (Op::Land, "land"),
        (Op::Lor, "lor"),
        (Op::Lxor, "lxor"),
    ];
    for (op, name) in ops {
        let mut o = vec![0i64; L];
        w.allreduce(&si, &mut o, op)?;
        if r == 0 {
            println!("i64 {name} {L} {:016x}", fnv(o.iter().map(|&x| x as u64)));
        }
    }
    w.finalize()
}
