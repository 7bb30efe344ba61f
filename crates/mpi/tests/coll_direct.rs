//! Large blocks in one copy (`coll::shm`'s direct way, `direct.rs`) on in-process
//! ranks: threads over one heap allocation, copying between each other's buffers
//! with [`SameProcess`]; 1..=7 ranks, switch points from 1 byte (every block) up,
//! random sizes, roots, counts (some 0) and block orders with gaps, against a
//! serial reference; a bad table at the root refused without hanging its peers.

use myrix_mpi::coll::shm::{heap::HeapMem, Geometry, SameProcess, ShmColl};
use myrix_mpi::coll::ReduceOp;

fn u32s(b: &[u8]) -> impl Iterator<Item = u32> + '_ {
    b.chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
}

/// inout = input + inout, elementwise (u32, wrapping).
fn add(input: &[u8], inout: &mut [u8]) {
    let v: Vec<u32> = u32s(input)
        .zip(u32s(inout))
        .map(|(a, b)| a.wrapping_add(b))
        .collect();
    for (w, x) in inout.chunks_exact_mut(4).zip(v) {
        w.copy_from_slice(&x.to_le_bytes());
    }
}

/// inout = input ∘ inout for affine maps x ↦ a·x + b (pairs of u32): not commutative.
fn compose(input: &[u8], inout: &mut [u8]) {
    for (f, g) in input.chunks_exact(8).zip(inout.chunks_exact_mut(8)) {
        let f: Vec<u32> = u32s(f).collect();
        let h: Vec<u32> = u32s(g).collect();
        let a = f[0].wrapping_mul(h[0]);
        let b = f[0].wrapping_mul(h[1]).wrapping_add(f[1]);
        g[..4].copy_from_slice(&a.to_le_bytes());
        g[4..].copy_from_slice(&b.to_le_bytes());
    }
}

type Blk<'a> = &'a dyn Fn(usize) -> (usize, usize);

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn input(seed: u64, call: u64, r: usize, len: usize) -> Vec<u8> {
    let mut g = Rng(seed ^ (call << 20) ^ (r as u64) << 40);
    (0..len).map(|_| g.next() as u8).collect()
}

fn run(n: usize, min: usize, f: impl Fn(&mut ShmColl) + Sync) {
    let g = Geometry {
        n,
        slot: 64 * 64,
        depth: 2,
    };
    let mem = HeapMem::new(g.len());
    let f = &f;
    std::thread::scope(|sc| {
        for r in 0..n {
            let m = mem.clone();
            sc.spawn(move || {
                let mut c = ShmColl::new(Box::new(m), g, r).unwrap();
                c.set_peer(Box::new(SameProcess), min);
                f(&mut c)
            });
        }
    });
}

/// Blocks of random sizes in reverse rank order with 3-byte gaps: (offset, bytes).
fn layout(counts: &[usize]) -> (Vec<(usize, usize)>, usize) {
    let mut at = vec![(0, 0); counts.len()];
    let mut end = 0;
    for q in (0..counts.len()).rev() {
        at[q] = (end, counts[q]);
        end += counts[q] + 3;
    }
    (at, end)
}

fn round(c: &mut ShmColl, seed: u64) {
    let (me, n) = (c.rank(), c.size());
    let mut g = Rng(seed);
    let len = |g: &mut Rng| match g.below(3) {
        0 => g.below(20),
        1 => g.below(5000),
        _ => 60_000 + g.below(10_000),
    };
    for k in 0..4u64 {
        let l = len(&mut g);
        let root = g.below(n);
        let want = input(seed, k, root, l);
        let mut buf = if me == root { want.clone() } else { vec![0; l] };
        c.bcast(root, &mut buf).unwrap();
        assert_eq!(buf, want, "bcast n={n} len={l}");

        let b = len(&mut g);
        let ins: Vec<Vec<u8>> = (0..n).map(|r| input(seed, k + 10, r, b)).collect();
        let all = ins.concat();
        let mut out = vec![0u8; if me == root { b * n } else { 0 }];
        c.gather(root, &ins[me], &mut out).unwrap();
        if me == root {
            assert_eq!(out, all, "gather n={n} b={b}");
        }
        let mut out = vec![0u8; b];
        c.scatter(root, if me == root { &all } else { &[] }, &mut out)
            .unwrap();
        assert_eq!(out, ins[me], "scatter n={n} b={b}");
        let mut out = vec![0u8; b * n];
        c.allgather(&ins[me], &mut out).unwrap();
        assert_eq!(out, all, "allgather n={n} b={b}");
        let send: Vec<u8> = (0..n)
            .flat_map(|q| input(seed, k + 20, me * n + q, b))
            .collect();
        let want: Vec<u8> = (0..n)
            .flat_map(|q| input(seed, k + 20, q * n + me, b))
            .collect();
        let mut out = vec![0u8; b * n];
        c.alltoall(&send, &mut out).unwrap();
        assert_eq!(out, want, "alltoall n={n} b={b}");

        // Reduce: d0 op (d1 op (… op d(n-1))), commutative and not.
        for (f, elem, commutative) in [(add as fn(&[u8], &mut [u8]), 4, true), (compose, 8, false)]
        {
            let l = len(&mut g) / elem * elem;
            let ins: Vec<Vec<u8>> = (0..n).map(|r| input(seed, k + 50, r, l)).collect();
            let mut want = ins[n - 1].clone();
            for q in (0..n - 1).rev() {
                f(&ins[q], &mut want);
            }
            let mut ff = f;
            let mut op = ReduceOp {
                op: &mut ff,
                commutative,
            };
            let mut out = vec![0u8; if me == root { l } else { 0 }];
            c.reduce(root, &ins[me], &mut out, elem, &mut op).unwrap();
            if me == root {
                assert!(out == want, "reduce n={n} root={root} len={l} elem={elem}");
            }
        }

        // The v-forms: counts known alike (as the heads make them), a quarter 0.
        let counts: Vec<usize> = (0..n)
            .map(|_| if g.below(4) == 0 { 0 } else { len(&mut g) })
            .collect();
        let (at, end) = layout(&counts);
        let ins: Vec<Vec<u8>> = (0..n).map(|r| input(seed, k + 30, r, counts[r])).collect();
        let displs: Vec<usize> = at.iter().map(|x| x.0).collect();
        let mut out = vec![0xeeu8; end];
        c.allgatherv(&ins[me], &mut out, &counts, &displs).unwrap();
        for q in 0..n {
            assert_eq!(out[at[q].0..at[q].0 + counts[q]], ins[q][..], "allgatherv");
            assert_eq!(out[at[q].0 + counts[q]..at[q].0 + counts[q] + 3], [0xee; 3]);
        }
        let mut root_out = vec![0xeeu8; end];
        let at_f = |q: usize| at[q];
        let side = (me == root).then_some((&at_f as Blk, &mut root_out[..]));
        c.gatherv_direct(root, &ins[me], side).unwrap();
        if me == root {
            for q in (0..n).filter(|&q| q != root) {
                assert_eq!(
                    root_out[at[q].0..at[q].0 + counts[q]],
                    ins[q][..],
                    "gatherv"
                );
                assert_eq!(
                    root_out[at[q].0 + counts[q]..at[q].0 + counts[q] + 3],
                    [0xee; 3]
                );
            }
        }
        let packed: Vec<u8> = {
            let mut v = vec![0u8; end];
            for q in 0..n {
                v[at[q].0..at[q].0 + counts[q]].copy_from_slice(&ins[q]);
            }
            v
        };
        let mut mine = vec![0u8; counts[me]];
        let side = (me == root).then_some((&at_f as Blk, &packed[..]));
        c.scatterv_direct(root, side, &mut mine).unwrap();
        if me != root {
            assert_eq!(mine, ins[me], "scatterv n={n}");
        }

        // Alltoallv: rank r sends q a block of size(r, q) bytes.
        let size = |r: usize, q: usize| (counts[r] + 7 * q) % 9000 * usize::from((r + q) % 3 != 0);
        let (sat, send_end) = layout(&(0..n).map(|q| size(me, q)).collect::<Vec<_>>());
        let (rat, recv_end) = layout(&(0..n).map(|q| size(q, me)).collect::<Vec<_>>());
        let mut send = vec![0u8; send_end];
        for q in 0..n {
            let blk = input(seed, k + 40, me * n + q, size(me, q));
            send[sat[q].0..sat[q].0 + sat[q].1].copy_from_slice(&blk);
        }
        let mut out = vec![0xeeu8; recv_end];
        let long = c
            .alltoallv_direct(&send, &|q| sat[q], &mut out, &|q| rat[q])
            .unwrap();
        assert!(!long);
        for q in (0..n).filter(|&q| q != me) {
            let want = input(seed, k + 40, q * n + me, size(q, me));
            assert_eq!(
                out[rat[q].0..rat[q].0 + rat[q].1],
                want[..],
                "alltoallv n={n}"
            );
        }
    }
    c.barrier();
}

#[test]
fn every_large_block_in_one_copy_on_1_to_7_threads() {
    for n in 1..=7 {
        for min in [1, 1000, 16 * 1024] {
            run(n, min, |c| {
                for seed in 0..3 {
                    round(c, seed * 131 + n as u64 + min as u64);
                }
            });
        }
    }
}

#[test]
fn a_bad_table_at_the_root_is_refused_and_the_peers_go_on() {
    for n in [2, 3, 5] {
        run(n, 1, |c| {
            let me = c.rank();
            let mut out = [0u8; 100];
            // The root's blocks run past its buffer: it fails, the peers copy nothing.
            let side = (me == 0).then_some(&(|_q: usize| (50usize, 100usize)) as Blk);
            let r = c.gatherv_direct(0, &[7u8; 100], side.map(|f| (f, &mut out[..])));
            assert_eq!(r.is_err(), me == 0, "gatherv rank {me}");
            assert!(out.iter().all(|&x| x == 0));
            // Still in step: a bcast after it works.
            let mut b = vec![if me == 0 { 9u8 } else { 0 }; 40_000];
            c.bcast(0, &mut b).unwrap();
            assert!(b.iter().all(|&x| x == 9));
        });
    }
}

/// Reduce combined by the root alone through the slots (what a job with more ranks
/// than cores does below `REDUCE_SOLO_OVER`), mixed with the other collectives: for
/// some draws (ranks × bytes ≤ 20000) or all; results as the serial reference.
#[test]
fn a_reduce_combined_by_the_root_alone_matches_on_1_to_7_threads() {
    for n in 1..=7 {
        for solo in [20_000, usize::MAX] {
            run(n, 1000, |c| {
                c.set_reduce_solo_max(solo);
                for seed in 0..3 {
                    round(c, seed * 173 + n as u64 + (solo % 97) as u64);
                }
            });
        }
    }
}
