//! The nonblocking collectives through the shared segment started on the caller's
//! own bytes (`NbOp::borrowed`, session 28): the start reads the input in place
//! when its step posts at once and copies it only when the operation must wait (an
//! earlier one unfinished, a claim that fails), and an allgather's or alltoall's
//! own block goes straight to the output. Checked on in-process ranks (threads over
//! one heap allocation): batches of 1–5 random operations in flight, sizes on both
//! sides of a line and up to a slot, in-place reductions (input inside the output),
//! every input scribbled over right after its start (a later read of it would
//! show), blocking allreduces on the same segment between batches, a slow rank now
//! and then (its peers' claims fail and their operations queue), each result
//! compared with a serial reference (a non-commutative 2x2 matrix product). The
//! same with the one-copy way on ([`SameProcess`] copies, switch points 1 and 40
//! bytes): Ibcasts and Ialltoalls up to twice a slot, their inputs either kept by
//! the caller until the end (`NbOp::kept`: exposed as they are) or scribbled over
//! at once (copied at the start).

mod common;
use common::reference::{matmul, Rng};

use myrix_mpi::coll::shm::nb::{NbCombine, NbKind, NbOp};
use myrix_mpi::coll::shm::{heap::HeapMem, Geometry, SameProcess, ShmColl, INLINE};
use myrix_mpi::coll::ReduceOp;

fn input(call: u64, r: usize, len: usize) -> Vec<u8> {
    let mut g = Rng((call << 32) ^ ((r as u64) << 8) ^ 91);
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

fn run(n: usize, direct: Option<usize>, f: impl Fn(&mut ShmColl) + Sync) {
    let g = Geometry {
        n,
        slot: 64 * n.max(4),
        depth: 2,
    };
    let mem = HeapMem::new(g.len());
    let f = &f;
    std::thread::scope(|sc| {
        for r in 0..n {
            let m = mem.clone();
            sc.spawn(move || {
                let mut c = ShmColl::new(Box::new(m), g, r).unwrap();
                if let Some(min) = direct {
                    c.set_peer(Box::new(SameProcess), min);
                }
                f(&mut c)
            });
        }
    });
}

/// One operation drawn alike on every rank.
#[derive(Clone, Copy, Debug)]
enum Draw {
    Bcast(usize, usize),
    /// Root (None: all), bytes, in place at the ranks that receive.
    Reduce(Option<usize>, usize, bool),
    Allgather(usize),
    Alltoall(usize),
}

/// Bytes per rank: around a line (either side of it) a third of the time, else up
/// to the slot.
fn size(g: &mut Rng, max: usize) -> usize {
    match g.below(3) {
        0 => INLINE - 2 + g.below(5),
        _ => g.below(max + 1),
    }
}

/// `big`: the one-copy way is on (Ibcast, Iallgather and Ialltoall go beyond a
/// slot).
fn draw(g: &mut Rng, n: usize, slot: usize, big: bool) -> Draw {
    let most = if big { 2 * slot } else { slot };
    match g.below(4) {
        0 => Draw::Bcast(g.below(n), size(g, most)),
        1 => {
            let root = (g.below(2) == 0).then(|| g.below(n));
            Draw::Reduce(root, 16 * (size(g, slot) / 16), g.below(2) == 0)
        }
        2 => Draw::Allgather(size(g, most)),
        _ => Draw::Alltoall(size(g, most) / n),
    }
}

/// Starts `d` (call number `call`) on the caller's bytes, then scribbles over
/// them unless `keep` (then they are returned, to be left alone until the
/// operation is over); the output buffer.
fn start(c: &mut ShmColl, d: Draw, call: u64, keep: bool) -> (u64, Vec<u8>, Vec<u8>) {
    let (me, n) = (c.rank(), c.size());
    let (kind, mut data, out_len, in_place) = match d {
        Draw::Bcast(root, len) => {
            let (data, out) = if me == root {
                (input(call, me, len), 0)
            } else {
                (vec![0; len], len)
            };
            (NbKind::Bcast { root }, data, out, false)
        }
        Draw::Reduce(root, len, in_place) => {
            let gets = root.is_none_or(|r| r == me);
            let combine = NbCombine::Boxed(Box::new(matmul));
            let kind = NbKind::Reduce { root, combine };
            (
                kind,
                input(call, me, len),
                if gets { len } else { 0 },
                in_place && gets,
            )
        }
        Draw::Allgather(len) => (NbKind::Allgather, input(call, me, len), len * n, false),
        Draw::Alltoall(b) => (NbKind::Alltoall, input(call, me, b * n), b * n, false),
    };
    let mut out = vec![0xEE; out_len];
    let op = if in_place {
        out.copy_from_slice(&data);
        let p = out.as_mut_ptr();
        // SAFETY: `out`'s heap buffer stays alive and untouched until the operation
        // is over; the input is the output itself, as MPI_IN_PLACE.
        unsafe { NbOp::borrowed(kind, std::slice::from_raw_parts(p, out_len), p, out_len) }
    } else {
        // SAFETY: as above; `data` is left alone until the start returns, or
        // (kept) until the operation is over: the caller holds it in its list.
        unsafe {
            NbOp::borrowed(kind, &data, out.as_mut_ptr(), out_len).map(|op| {
                if keep {
                    op.kept()
                } else {
                    op
                }
            })
        }
    };
    let id = c.nb_start(op.unwrap()).unwrap();
    if !keep {
        data.fill(0x5A);
    }
    (id, out, data)
}

/// What rank `me` must hold after `d`.
fn expect(d: Draw, call: u64, me: usize, n: usize) -> Vec<u8> {
    match d {
        Draw::Bcast(root, len) if me != root => input(call, root, len),
        Draw::Bcast(..) => vec![],
        Draw::Reduce(root, len, _) if root.is_none_or(|r| r == me) => {
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

fn blocking_allreduce(c: &mut ShmColl) {
    let (me, n) = (c.rank(), c.size());
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
}

#[test]
fn borrowed_inputs_in_flight_match_a_serial_reference() {
    batches(None);
}

#[test]
fn the_one_copy_way_in_flight_matches_a_serial_reference() {
    batches(Some(1));
    batches(Some(40));
}

fn batches(direct: Option<usize>) {
    for n in 1..=4usize {
        run(n, direct, |c| {
            let me = c.rank();
            let mut g = Rng(2000 + n as u64);
            let mut mine = Rng(11 + me as u64);
            let mut call = 0u64;
            for round in 0..80 {
                // A slow rank now and then: the others' claims fail and their
                // operations wait in the queue (the copy at the start).
                if round % 5 == 1 && me == round % n {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                let k = 1 + g.below(5);
                let mut live = Vec::new();
                for _ in 0..k {
                    let d = draw(&mut g, n, c.nb_max(), direct.is_some() && n > 1);
                    let keep = mine.below(2) == 0;
                    let (id, out, input) = start(c, d, call, keep);
                    live.push((id, out, d, call, input));
                    call += 1;
                }
                if round % 4 == 2 {
                    // A blocking collective with the batch in flight finishes it.
                    blocking_allreduce(c);
                    assert!(live.iter().all(|l| c.nb_done(l.0)));
                }
                while !live.is_empty() {
                    c.nb_progress();
                    let i = mine.below(live.len());
                    if c.nb_done(live[i].0) {
                        let (_, out, d, at, _input) = live.swap_remove(i);
                        assert_eq!(out, expect(d, at, me, n), "n={n} rank {me} {d:?}");
                    } else {
                        std::thread::yield_now();
                    }
                }
            }
            blocking_allreduce(c);
        });
    }
}

/// Rank `r`'s input to sum call `call`: `elems` u64 values below 256 (no overflow).
fn sum_input(call: u64, r: usize, elems: usize) -> Vec<u8> {
    input(call, r, elems)
        .into_iter()
        .flat_map(|b| u64::from(b).to_le_bytes())
        .collect()
}

/// Ireduce and Iallreduce with a predefined op above a slot take the one-copy way
/// (session 29: each rank reduces its share straight from the others' inputs);
/// batches in flight with the slots' ones, roots drawn, in place or not, inputs
/// kept or scribbled over, a slow rank now and then; sums against a serial sum.
#[test]
fn one_copy_sums_in_flight_match_a_serial_sum() {
    use myrix_mpi::datatype::Basic;
    use myrix_mpi::op::BuiltinOp;
    for n in 2..=4usize {
        run(n, Some(1), |c| {
            let me = c.rank();
            let mut g = Rng(7000 + n as u64);
            let mut mine = Rng(300 + me as u64);
            let mut call = 0u64;
            for round in 0..40 {
                if round % 7 == 3 && me == round % n {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                let mut live = Vec::new();
                for _ in 0..1 + g.below(4) {
                    let root = (g.below(2) == 0).then(|| g.below(n));
                    // Up to twice a slot, in elements; most above it.
                    let elems = 1 + g.below(2 * c.nb_max() / 8);
                    let in_place = g.below(3) == 0;
                    let gets = root.is_none_or(|r| r == me);
                    let mut data = sum_input(call, me, elems);
                    let len = data.len();
                    let mut out = vec![0xEE; if gets { len } else { 0 }];
                    let kind = NbKind::Reduce {
                        root,
                        combine: NbCombine::Builtin(BuiltinOp::Sum, Basic::UnsignedLongLong),
                    };
                    let keep = mine.below(2) == 0;
                    let op = if in_place && gets {
                        out.copy_from_slice(&data);
                        let p = out.as_mut_ptr();
                        // SAFETY: `out` stays alive and untouched until the
                        // operation is over; the input is the output (in place).
                        unsafe { NbOp::borrowed(kind, std::slice::from_raw_parts(p, len), p, len) }
                    } else {
                        let ol = out.len();
                        // SAFETY: as above; `data` is kept alive in `live` and left
                        // alone until the end when `keep`.
                        unsafe {
                            NbOp::borrowed(kind, &data, out.as_mut_ptr(), ol).map(|op| {
                                if keep {
                                    op.kept()
                                } else {
                                    op
                                }
                            })
                        }
                    };
                    let id = c.nb_start(op.unwrap()).unwrap();
                    if !keep {
                        data.fill(0x5A);
                    }
                    live.push((id, out, data, root, elems, call));
                    call += 1;
                }
                while !live.is_empty() {
                    c.nb_progress();
                    let i = mine.below(live.len());
                    if c.nb_done(live[i].0) {
                        let (_, out, _data, root, elems, at) = live.swap_remove(i);
                        if root.is_none_or(|r| r == me) {
                            let ins: Vec<Vec<u8>> = (0..n).map(|q| input(at, q, elems)).collect();
                            let want: Vec<u8> = (0..elems)
                                .flat_map(|k| {
                                    ins.iter()
                                        .map(|v| u64::from(v[k]))
                                        .sum::<u64>()
                                        .to_le_bytes()
                                })
                                .collect();
                            assert_eq!(out, want, "n={n} rank {me} root {root:?} {elems} elements");
                        }
                    } else {
                        std::thread::yield_now();
                    }
                }
            }
            blocking_allreduce(c);
        });
    }
}
