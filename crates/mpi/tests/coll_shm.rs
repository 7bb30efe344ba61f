//! The shared-memory collectives (`coll::shm`) on in-process ranks: threads over
//! one heap allocation ([`HeapMem`]), for 1..=9 ranks, random sizes (across slot
//! and chunk boundaries, with small slots so large messages pipeline through many
//! steps) and roots from fixed seeds, against a serial reference computed from
//! every rank's input; non-commutative reductions (2x2 matrix products) checked
//! for rank order.

mod common;
use common::reference::{matmul, Rng};

use myrix_mpi::coll::shm::{heap::HeapMem, Geometry, ShmColl, INLINE};
use myrix_mpi::coll::ReduceOp;

fn input(seed: u64, call: u64, r: usize, len: usize) -> Vec<u8> {
    let mut g = Rng(seed ^ (call << 32) ^ (r as u64) << 16);
    (0..len).map(|_| g.next() as u8).collect()
}

fn add(input: &[u8], inout: &mut [u8]) {
    for (i, o) in input.chunks_exact(4).zip(inout.chunks_exact_mut(4)) {
        let v = u32::from_le_bytes(i.try_into().unwrap())
            .wrapping_add(u32::from_le_bytes((&*o).try_into().unwrap()));
        o.copy_from_slice(&v.to_le_bytes());
    }
}

/// Serial reference, left to right.
fn fold(f: fn(&[u8], &mut [u8]), ins: &[Vec<u8>]) -> Vec<u8> {
    let mut acc = ins[0].clone();
    for x in &ins[1..] {
        let mut next = x.clone();
        f(&acc, &mut next);
        acc = next;
    }
    acc
}

fn run<T: Send>(n: usize, g: Geometry, f: impl Fn(&mut ShmColl) -> T + Sync) -> Vec<T> {
    let mem = HeapMem::new(g.len());
    let f = &f;
    std::thread::scope(|sc| {
        let hs: Vec<_> = (0..n)
            .map(|r| {
                let m = mem.clone();
                sc.spawn(move || {
                    let mut c = ShmColl::new(Box::new(m), g, r).unwrap();
                    f(&mut c)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn round(c: &mut ShmColl, seed: u64, slot: usize) {
    let (me, n) = (c.rank(), c.size());
    let mut g = Rng(seed);
    let mut call = 0u64;
    let mut next_call = || {
        call += 1;
        call
    };
    // Lengths around slot boundaries, around what a line carries, and small ones.
    let len = |g: &mut Rng, unit: usize| match g.below(5) {
        0 => g.below(3) * slot + g.below(3) * unit,
        1 => g.below(5 * slot / unit + 1) * unit,
        2 => (INLINE / unit + g.below(3)).saturating_sub(1) * unit,
        _ => g.below(40) * unit,
    };

    c.barrier();

    let l = len(&mut g, 1);
    let root = g.below(n);
    let k = next_call();
    let mut buf = if me == root {
        input(seed, k, root, l)
    } else {
        vec![0; l]
    };
    c.bcast(root, &mut buf).unwrap();
    assert_eq!(
        buf,
        input(seed, k, root, l),
        "bcast n={n} root={root} len={l}"
    );

    for (f, elem, commutative) in [(add as fn(&[u8], &mut [u8]), 4, true), (matmul, 16, false)] {
        let l = len(&mut g, elem);
        let root = g.below(n);
        let k = next_call();
        let ins: Vec<Vec<u8>> = (0..n).map(|r| input(seed, k, r, l)).collect();
        let want = fold(f, &ins);
        let mut ff = f;
        let mut op = ReduceOp {
            op: &mut ff,
            commutative,
        };
        let mut out = vec![0u8; if me == root { l } else { 0 }];
        c.reduce(root, &ins[me], &mut out, elem, &mut op).unwrap();
        if me == root {
            assert_eq!(out, want, "reduce n={n} root={root} len={l}");
        }
        let mut out = vec![0u8; l];
        c.allreduce(&ins[me], &mut out, elem, &mut op).unwrap();
        assert_eq!(out, want, "allreduce n={n} len={l} elem={elem}");
    }

    let b = len(&mut g, 1);
    let root = g.below(n);
    let k = next_call();
    let ins: Vec<Vec<u8>> = (0..n).map(|r| input(seed, k, r, b)).collect();
    let all: Vec<u8> = ins.concat();
    let mut out = vec![0u8; if me == root { b * n } else { 0 }];
    c.gather(root, &ins[me], &mut out).unwrap();
    if me == root {
        assert_eq!(out, all, "gather n={n} b={b}");
    }
    let mut out = vec![0u8; b];
    let src = if me == root { &all[..] } else { &[][..] };
    c.scatter(root, src, &mut out).unwrap();
    assert_eq!(out, ins[me], "scatter n={n} b={b}");
    let mut out = vec![0u8; b * n];
    c.allgather(&ins[me], &mut out).unwrap();
    assert_eq!(out, all, "allgather n={n} b={b}");

    // allgatherv: random counts, blocks in reverse order with gaps.
    let counts: Vec<usize> = (0..n).map(|_| len(&mut g, 1)).collect();
    let k = next_call();
    let ins: Vec<Vec<u8>> = (0..n).map(|r| input(seed, k, r, counts[r])).collect();
    let mut displs = vec![0; n];
    let mut at = 0;
    for q in (0..n).rev() {
        displs[q] = at;
        at += counts[q] + 3;
    }
    let mut out = vec![0xeeu8; at];
    c.allgatherv(&ins[me], &mut out, &counts, &displs).unwrap();
    for q in 0..n {
        assert_eq!(
            out[displs[q]..displs[q] + counts[q]],
            ins[q][..],
            "allgatherv n={n}"
        );
        assert_eq!(
            out[displs[q] + counts[q]..displs[q] + counts[q] + 3],
            [0xee; 3]
        );
    }

    // alltoall: rank r's block for q is input(k, r*n+q).
    let b = len(&mut g, 1) / n.max(1);
    let k = next_call();
    let send: Vec<u8> = (0..n).flat_map(|q| input(seed, k, me * n + q, b)).collect();
    let want: Vec<u8> = (0..n).flat_map(|q| input(seed, k, q * n + me, b)).collect();
    let mut out = vec![0u8; b * n];
    c.alltoall(&send, &mut out).unwrap();
    assert_eq!(out, want, "alltoall n={n} b={b}");
    c.barrier();
}

/// Every geometry with reductions split from the smallest chunk up, from the
/// default switch point, and never.
#[test]
fn every_collective_on_1_to_9_threads() {
    for n in 1..=9 {
        for (slot, depth) in [(64 * 9, 2), (1024, 3), (Geometry::SLOT, Geometry::DEPTH)] {
            for split in [1, myrix_mpi::coll::shm::SPLIT_MIN, usize::MAX] {
                let g = Geometry { n, slot, depth };
                run(n, g, |c| {
                    c.set_split_min(split);
                    let seeds = if split == myrix_mpi::coll::shm::SPLIT_MIN {
                        6
                    } else {
                        3
                    };
                    for seed in 0..seeds {
                        round(c, seed * 977 + n as u64 + split as u64 % 7, slot);
                    }
                });
            }
        }
    }
}

/// Many back-to-back bcasts from one root: the root may run `depth - 1` steps
/// (`LINES - 1` for small messages) ahead and must never overwrite a slot or line a
/// slow reader still copies.
#[test]
fn a_fast_root_never_overwrites_a_slow_reader() {
    for n in [2, 3, 5] {
        let g = Geometry {
            n,
            slot: 64 * 8,
            depth: 2,
        };
        run(n, g, |c| {
            // 700 bytes through the slots (2 deep), 8 bytes through the lines.
            for len in [700, 8] {
                for i in 0..2000u32 {
                    let mut buf = if c.rank() == 0 {
                        vec![(i % 251) as u8; len]
                    } else {
                        if i % 97 == 0 {
                            std::thread::yield_now();
                        }
                        vec![0; len]
                    };
                    c.bcast(0, &mut buf).unwrap();
                    assert!(buf.iter().all(|&x| x == (i % 251) as u8), "bcast {i}");
                }
            }
        });
    }
}

#[test]
fn bad_arguments_are_refused() {
    let g = Geometry::new(1);
    run(1, g, |c| {
        assert!(c.bcast(1, &mut [0u8; 4]).is_err());
        let mut f = add as fn(&[u8], &mut [u8]);
        let mut op = ReduceOp {
            op: &mut f,
            commutative: true,
        };
        assert!(c.allreduce(&[0u8; 6], &mut [0u8; 6], 4, &mut op).is_err());
        assert!(c.allreduce(&[0u8; 8], &mut [0u8; 4], 4, &mut op).is_err());
        assert!(c.alltoall(&[0u8; 8], &mut [0u8; 4]).is_err());
    });
    assert!(ShmColl::new(Box::new(HeapMem::new(64)), Geometry::new(2), 0).is_err());
}
