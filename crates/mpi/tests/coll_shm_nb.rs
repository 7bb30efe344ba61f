//! The nonblocking collectives through the shared segment (`coll::shm::nb`) on
//! in-process ranks (threads over one heap allocation): batches of random
//! operations in flight at once, mixed with blocking collectives, finished by
//! polling in an order of each rank's own, checked against a serial reference
//! (the reduction a non-commutative 2x2 matrix product, so rank order shows); and
//! a root that runs hundreds of operations ahead of slow readers (its line or slot
//! claims fail and the operations queue). Sizes up to a line (the data beside the
//! stamp) and up to a slot.

mod common;
use common::reference::{matmul, Rng};

use myrix_mpi::coll::shm::nb::{NbCombine, NbKind, NbOp};
use myrix_mpi::coll::shm::{heap::HeapMem, Geometry, ShmColl, INLINE};
use myrix_mpi::coll::ReduceOp;

fn input(call: u64, r: usize, len: usize) -> Vec<u8> {
    let mut g = Rng((call << 32) ^ ((r as u64) << 8) ^ 77);
    (0..len).map(|_| g.next() as u8).collect()
}

/// d0 × (d1 × (… × d(n-1))).
fn product(ins: &[Vec<u8>]) -> Vec<u8> {
    let mut acc = ins[ins.len() - 1].clone();
    for x in ins[..ins.len() - 1].iter().rev() {
        matmul(x, &mut acc);
    }
    acc
}

fn run<T: Send>(n: usize, f: impl Fn(&mut ShmColl) -> T + Sync) -> Vec<T> {
    let g = Geometry {
        n,
        slot: 64 * n.max(4),
        depth: 2,
    };
    let mem = HeapMem::new(g.len());
    let f = &f;
    std::thread::scope(|sc| {
        let hs: Vec<_> = (0..n)
            .map(|r| {
                let m = mem.clone();
                sc.spawn(move || f(&mut ShmColl::new(Box::new(m), g, r).unwrap()))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// One operation drawn alike on every rank: kind, root, bytes per rank.
#[derive(Clone, Copy, Debug)]
enum Draw {
    Barrier,
    Bcast(usize, usize),
    Reduce(Option<usize>, usize),
    Allgather(usize),
    Alltoall(usize),
}

/// Bytes per rank of a draw: half the time up to a line (the data rides beside the
/// stamp), else up to the slot (`max`).
fn size(g: &mut Rng, max: usize) -> usize {
    if g.below(2) == 0 {
        g.below(INLINE + 1)
    } else {
        g.below(max + 1)
    }
}

fn draw(g: &mut Rng, n: usize, slot: usize) -> Draw {
    match g.below(5) {
        0 => Draw::Barrier,
        1 => Draw::Bcast(g.below(n), size(g, slot)),
        2 => {
            let root = (g.below(2) == 0).then(|| g.below(n));
            Draw::Reduce(root, 16 * (size(g, slot) / 16))
        }
        3 => Draw::Allgather(size(g, slot)),
        _ => Draw::Alltoall(size(g, slot) / n),
    }
}

/// Starts `d` (call number `call`) on this rank; its output buffer.
fn start(c: &mut ShmColl, d: Draw, call: u64) -> (u64, Vec<u8>) {
    let (me, n) = (c.rank(), c.size());
    let (kind, data, out_len) = match d {
        Draw::Barrier => (NbKind::Barrier, vec![], 0),
        Draw::Bcast(root, len) => {
            let data = if me == root {
                input(call, me, len)
            } else {
                vec![0; len]
            };
            (
                NbKind::Bcast { root },
                data,
                if me == root { 0 } else { len },
            )
        }
        Draw::Reduce(root, len) => {
            let out = if root.is_none_or(|r| r == me) { len } else { 0 };
            let combine = NbCombine::Boxed(Box::new(matmul));
            (NbKind::Reduce { root, combine }, input(call, me, len), out)
        }
        Draw::Allgather(len) => (NbKind::Allgather, input(call, me, len), len * n),
        Draw::Alltoall(b) => (NbKind::Alltoall, input(call, me, b * n), b * n),
    };
    let mut out = vec![0xEE; out_len];
    // SAFETY: `out`'s heap buffer stays alive and untouched until the operation is
    // over (the caller keeps the vector).
    let op = unsafe { NbOp::new(kind, &data, out.as_mut_ptr(), out_len) }.unwrap();
    (c.nb_start(op).unwrap(), out)
}

/// What rank `me` must hold after `d`.
fn expect(d: Draw, call: u64, me: usize, n: usize) -> Vec<u8> {
    match d {
        Draw::Barrier => vec![],
        Draw::Bcast(root, len) if me != root => input(call, root, len),
        Draw::Bcast(..) => vec![],
        Draw::Reduce(root, len) if root.is_none_or(|r| r == me) => {
            let ins: Vec<_> = (0..n).map(|q| input(call, q, len)).collect();
            product(&ins)
        }
        Draw::Reduce(..) => vec![],
        Draw::Allgather(len) => (0..n).flat_map(|q| input(call, q, len)).collect(),
        Draw::Alltoall(b) => (0..n)
            .flat_map(|q| input(call, q, b * n)[me * b..(me + 1) * b].to_vec())
            .collect(),
    }
}

#[test]
fn batches_in_flight_match_a_serial_reference() {
    for n in 1..=5usize {
        run(n, |c| {
            let me = c.rank();
            let mut g = Rng(1000 + n as u64);
            let mut mine = Rng(7 + me as u64);
            let mut call = 0u64;
            for round in 0..60 {
                let k = 1 + g.below(5);
                let mut live = Vec::new();
                for _ in 0..k {
                    let d = draw(&mut g, n, c.nb_max());
                    let (id, out) = start(c, d, call);
                    live.push((id, out, d, call));
                    call += 1;
                }
                // Finished in an order of this rank's own, by polling.
                while !live.is_empty() {
                    c.nb_progress();
                    let i = mine.below(live.len());
                    if c.nb_done(live[i].0) {
                        let (_, out, d, at) = live.swap_remove(i);
                        assert_eq!(out, expect(d, at, me, n), "n={n} rank {me} {d:?}");
                    } else {
                        std::thread::yield_now();
                    }
                }
                // Now and then a blocking collective, after operations left in
                // flight (its steps come after theirs).
                if round % 7 == 3 {
                    let (id, out) = start(c, Draw::Allgather(8), call);
                    let mut sum = [0u8; 4];
                    let mut f = |i: &[u8], o: &mut [u8]| {
                        let v = u32::from_le_bytes(i.try_into().unwrap())
                            .wrapping_add(u32::from_le_bytes((&*o).try_into().unwrap()));
                        o.copy_from_slice(&v.to_le_bytes());
                    };
                    let mut op = ReduceOp {
                        op: &mut f,
                        commutative: true,
                    };
                    c.allreduce(&(me as u32 + 1).to_le_bytes(), &mut sum, 4, &mut op)
                        .unwrap();
                    assert_eq!(u32::from_le_bytes(sum) as usize, n * (n + 1) / 2);
                    assert!(c.nb_done(id), "a blocking collective finishes earlier ones");
                    assert_eq!(out, expect(Draw::Allgather(8), call, me, n));
                    call += 1;
                }
            }
        });
    }
}

#[test]
fn a_root_far_ahead_queues_and_never_overwrites() {
    const CALLS: u64 = 300;
    for len in [40, 200] {
        run(3, |c| {
            let me = c.rank();
            if me != 0 {
                std::thread::sleep(std::time::Duration::from_millis(30));
            }
            let mut live = Vec::new();
            for call in 0..CALLS {
                let (id, out) = start(c, Draw::Bcast(0, len), call);
                live.push((id, out, call));
            }
            if me == 0 {
                // Only 63 steps (lines) or 1 (slots 2 deep) fit ahead of the readers:
                // the rest waited in the queue.
                assert!(!c.nb_done(live[200].0));
            }
            while !c.nb_done(live.last().unwrap().0) {
                c.nb_progress();
                std::thread::yield_now();
            }
            for (id, out, call) in live {
                assert!(c.nb_done(id));
                assert_eq!(out, expect(Draw::Bcast(0, len), call, me, 3));
            }
            c.barrier();
        });
    }
}

#[test]
fn bad_lengths_are_refused_before_a_step() {
    run(2, |c| {
        let mut out = [0u8; 8];
        // SAFETY: `out` outlives the (refused) operations.
        let op = unsafe { NbOp::new(NbKind::Allgather, &[1; 8], out.as_mut_ptr(), 8) }.unwrap();
        assert!(c.nb_start(op).is_err());
        // SAFETY: as above.
        let op = unsafe { NbOp::new(NbKind::Bcast { root: 2 }, &[1; 8], out.as_mut_ptr(), 8) };
        assert!(c.nb_start(op.unwrap()).is_err());
        // More than a slot.
        let big = vec![0u8; c.nb_max() + 1];
        // SAFETY: as above.
        let op = unsafe { NbOp::new(NbKind::Allgather, &big, out.as_mut_ptr(), 0) };
        assert!(c.nb_start(op.unwrap()).is_err());
        // Nothing was started: the ranks are still in step.
        c.barrier();
        assert!(!c.nb_pending());
    });
}
