//! Every collective on in-process ranks (threads; buffered and synchronous sends),
//! for 1..=9 ranks, random sizes and roots from fixed seeds, against a serial
//! reference computed from every rank's input; non-commutative reductions (2x2
//! matrix products) checked for rank order.

mod common;
use common::reference::{matmul, Rng};

use myrix_mpi::coll::{self, testing::Threads, CollError, Pt2Pt, ReduceOp};

/// `len` bytes of rank `r`'s input for call `call`.
fn input(seed: u64, call: u64, r: usize, len: usize) -> Vec<u8> {
    let mut g = Rng(seed ^ (call << 32) ^ (r as u64) << 16);
    (0..len).map(|_| g.next() as u8).collect()
}

/// Element-wise u32 wrapping sum (commutative).
fn add(input: &[u8], inout: &mut [u8]) {
    for (i, o) in input.chunks_exact(4).zip(inout.chunks_exact_mut(4)) {
        let v = u32::from_le_bytes(i.try_into().unwrap())
            .wrapping_add(u32::from_le_bytes((&*o).try_into().unwrap()));
        o.copy_from_slice(&v.to_le_bytes());
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Add,
    Mat,
}

impl Kind {
    fn elem(self) -> usize {
        match self {
            Kind::Add => 4,
            Kind::Mat => 16,
        }
    }
    fn f(self) -> fn(&[u8], &mut [u8]) {
        match self {
            Kind::Add => add,
            Kind::Mat => matmul,
        }
    }
}

/// Serial reference: ins[lo] op ins[lo+1] op … op ins[hi-1].
fn fold(kind: Kind, ins: &[Vec<u8>]) -> Vec<u8> {
    let f = kind.f();
    let mut acc = ins[0].clone();
    for x in &ins[1..] {
        // acc = acc op x: x is the inout, acc the input.
        let mut next = x.clone();
        f(&acc, &mut next);
        acc = next;
    }
    acc
}

fn with_op<T>(kind: Kind, g: impl FnOnce(&mut ReduceOp) -> T) -> T {
    let mut f = kind.f();
    let mut op = ReduceOp {
        op: &mut f,
        commutative: matches!(kind, Kind::Add),
    };
    g(&mut op)
}

/// Runs one round of every collective with sizes and roots drawn from `seed`.
fn round(p: &mut dyn Pt2Pt, seed: u64) {
    let (me, n) = (p.rank(), p.size());
    let mut g = Rng(seed);
    let mut call = 0u64;
    let mut next_call = || {
        call += 1;
        call
    };

    coll::barrier(p).unwrap();

    // bcast
    let len = g.below(300);
    let root = g.below(n);
    let c = next_call();
    let mut buf = if me == root {
        input(seed, c, root, len)
    } else {
        vec![0; len]
    };
    coll::bcast(p, root, &mut buf).unwrap();
    assert_eq!(buf, input(seed, c, root, len), "bcast n={n} root={root}");

    // reduce, allreduce, scan, exscan for both kinds
    for kind in [Kind::Add, Kind::Mat] {
        let big = g.below(8) == 0;
        let count = if big {
            70_000 / kind.elem()
        } else {
            g.below(40)
        };
        let len = count * kind.elem();
        let root = g.below(n);
        let c = next_call();
        let ins: Vec<Vec<u8>> = (0..n).map(|r| input(seed, c, r, len)).collect();
        let want = fold(kind, &ins);

        let mut out = vec![0u8; if me == root { len } else { 0 }];
        with_op(kind, |op| coll::reduce(p, root, &ins[me], &mut out, op)).unwrap();
        if me == root {
            assert_eq!(out, want, "reduce n={n} root={root} len={len}");
        }

        let mut out = vec![0u8; len];
        with_op(kind, |op| coll::allreduce(p, &ins[me], &mut out, op)).unwrap();
        assert_eq!(out, want, "allreduce n={n} len={len}");

        let mut out = vec![0u8; len];
        with_op(kind, |op| coll::scan(p, &ins[me], &mut out, op)).unwrap();
        assert_eq!(out, fold(kind, &ins[..=me]), "scan n={n} rank={me}");

        let mut out = vec![7u8; len];
        with_op(kind, |op| coll::exscan(p, &ins[me], &mut out, op)).unwrap();
        if me == 0 {
            assert_eq!(out, vec![7u8; len], "exscan leaves rank 0 alone");
        } else {
            assert_eq!(out, fold(kind, &ins[..me]), "exscan n={n} rank={me}");
        }

        // reduce_scatter with random element counts, and the block form.
        let counts: Vec<usize> = (0..n).map(|_| g.below(6) * kind.elem()).collect();
        let total: usize = counts.iter().sum();
        let c = next_call();
        let ins: Vec<Vec<u8>> = (0..n).map(|r| input(seed, c, r, total)).collect();
        let want = fold(kind, &ins);
        let mut out = vec![0u8; counts[me]];
        with_op(kind, |op| {
            coll::reduce_scatter(p, &ins[me], &mut out, &counts, op)
        })
        .unwrap();
        let at: usize = counts[..me].iter().sum();
        assert_eq!(out, want[at..at + counts[me]], "reduce_scatter n={n}");

        let b = g.below(5) * kind.elem();
        let c = next_call();
        let ins: Vec<Vec<u8>> = (0..n).map(|r| input(seed, c, r, b * n)).collect();
        let want = fold(kind, &ins);
        let mut out = vec![0u8; b];
        with_op(kind, |op| {
            coll::reduce_scatter_block(p, &ins[me], &mut out, op)
        })
        .unwrap();
        assert_eq!(
            out,
            want[me * b..(me + 1) * b],
            "reduce_scatter_block n={n}"
        );
    }

    // gather / scatter / allgather / alltoall (equal blocks)
    let b = g.below(50);
    let root = g.below(n);
    let c = next_call();
    let ins: Vec<Vec<u8>> = (0..n).map(|r| input(seed, c, r, b)).collect();
    let all: Vec<u8> = ins.concat();
    let mut out = vec![0u8; if me == root { b * n } else { 0 }];
    coll::gather(p, root, &ins[me], &mut out).unwrap();
    if me == root {
        assert_eq!(out, all, "gather");
    }
    let mut out = vec![0u8; b];
    let send = if me == root { all.clone() } else { Vec::new() };
    coll::scatter(p, root, &send, &mut out).unwrap();
    assert_eq!(out, all[me * b..(me + 1) * b], "scatter");
    let mut out = vec![0u8; b * n];
    coll::allgather(p, &ins[me], &mut out).unwrap();
    assert_eq!(out, all, "allgather");

    let c = next_call();
    let a2a: Vec<Vec<u8>> = (0..n).map(|r| input(seed, c, r, b * n)).collect();
    let mut out = vec![0u8; b * n];
    coll::alltoall(p, &a2a[me], &mut out).unwrap();
    let want: Vec<u8> = (0..n)
        .flat_map(|s| a2a[s][me * b..(me + 1) * b].to_vec())
        .collect();
    assert_eq!(out, want, "alltoall");

    // v-forms: random counts, blocks placed in reverse order with gaps.
    let counts: Vec<usize> = (0..n).map(|_| g.below(20)).collect();
    let mut displs = vec![0usize; n];
    let mut at = 3;
    for i in (0..n).rev() {
        displs[i] = at;
        at += counts[i] + g.below(3);
    }
    let space = at;
    let root = g.below(n);
    let c = next_call();
    let ins: Vec<Vec<u8>> = (0..n).map(|r| input(seed, c, r, counts[r])).collect();
    let mut placed = vec![0xeeu8; space];
    for i in 0..n {
        placed[displs[i]..displs[i] + counts[i]].copy_from_slice(&ins[i]);
    }
    let mut out = vec![0xeeu8; if me == root { space } else { 0 }];
    if me == root {
        coll::gatherv(p, root, &ins[me], &mut out, &counts, &displs).unwrap();
        assert_eq!(out, placed, "gatherv");
    } else {
        coll::gatherv(p, root, &ins[me], &mut out, &[], &[]).unwrap();
    }
    let mut out = vec![0u8; counts[me]];
    if me == root {
        coll::scatterv(p, root, &placed, &counts, &displs, &mut out).unwrap();
    } else {
        coll::scatterv(p, root, &[], &[], &[], &mut out).unwrap();
    }
    assert_eq!(out, ins[me], "scatterv");
    let mut out = vec![0xeeu8; space];
    coll::allgatherv(p, &ins[me], &mut out, &counts, &displs).unwrap();
    assert_eq!(out, placed, "allgatherv");

    // alltoallv: rank s sends len(s, d) bytes to d.
    let len = |s: usize, d: usize| (s * 7 + d * 3 + seed as usize) % 11;
    let c = next_call();
    let scounts: Vec<usize> = (0..n).map(|d| len(me, d)).collect();
    let rcounts: Vec<usize> = (0..n).map(|s| len(s, me)).collect();
    let (sd, stot) = coll::packed_displs(&scounts).unwrap();
    let (rd, rtot) = coll::packed_displs(&rcounts).unwrap();
    let send = input(seed, c, me, stot);
    let mut out = vec![0u8; rtot];
    coll::alltoallv(p, &send, &scounts, &sd, &mut out, &rcounts, &rd).unwrap();
    for s in 0..n {
        let theirs = input(seed, c, s, (0..n).map(|d| len(s, d)).sum());
        let off: usize = (0..me).map(|d| len(s, d)).sum();
        assert_eq!(
            &out[rd[s]..rd[s] + rcounts[s]],
            &theirs[off..off + len(s, me)],
            "alltoallv"
        );
    }
    coll::barrier(p).unwrap();
}

#[test]
fn every_collective_for_1_to_9_ranks_buffered() {
    for n in 1..=9 {
        for seed in 0..3u64 {
            Threads::run(n, false, |p| round(p, seed * 1000 + n as u64));
        }
    }
}

#[test]
fn every_collective_for_1_to_9_ranks_with_synchronous_sends() {
    for n in 1..=9 {
        Threads::run(n, true, |p| round(p, 77 + n as u64));
    }
}

#[test]
fn bad_arguments_are_refused_before_sending() {
    let r = Threads::run(3, false, |p| {
        let mut buf = [0u8; 4];
        let e1 = coll::bcast(p, 3, &mut buf);
        let mut out = [0u8; 4];
        let e2 = coll::gather(p, 5, &buf, &mut out);
        let e3 = coll::alltoall(p, &[0u8; 4], &mut [0u8; 4]);
        let e4 = coll::allgatherv(p, &[1], &mut [0u8; 2], &[1, 1, 1], &[0, 1, 2]);
        let e5 = if p.rank() == 0 {
            coll::scatterv(p, 0, &[0u8; 2], &[1, 1], &[0, 1], &mut [0u8; 1])
        } else {
            Ok(())
        };
        let e6 = with_op(Kind::Add, |op| {
            coll::allreduce(p, &[0u8; 4], &mut [0u8; 8], op)
        });
        let sent = p.sent;
        (e1, e2, e3, e4, e5, e6, sent)
    });
    for (i, (e1, e2, e3, e4, e5, e6, sent)) in r.into_iter().enumerate() {
        assert_eq!(e1, Err(CollError::Root { root: 3, size: 3 }));
        assert!(matches!(e2, Err(CollError::Root { .. })));
        assert!(matches!(e3, Err(CollError::Args(_))), "{e3:?}");
        assert!(matches!(e4, Err(CollError::Args(_))), "{e4:?}");
        if i == 0 {
            assert!(matches!(e5, Err(CollError::Args(_))), "{e5:?}");
        }
        assert!(matches!(e6, Err(CollError::Args(_))));
        assert_eq!(sent, 0, "rank {i} sent before refusing");
    }
}

#[test]
fn mismatched_lengths_are_reported_not_truncated_silently() {
    let r = Threads::run(2, false, |p| {
        let mut buf = vec![0u8; if p.rank() == 0 { 8 } else { 4 }];
        coll::bcast(p, 0, &mut buf)
    });
    assert_eq!(r[0], Ok(()));
    assert!(
        matches!(r[1], Err(CollError::Truncated { len: 8, cap: 4 })),
        "{:?}",
        r[1]
    );
}

/// A sub-communicator of a [`Threads`] job (as MPI_Comm_split makes): its ranks are
/// positions in `members`; its tags are moved out of the parent's way.
struct Sub<'a> {
    p: &'a mut Threads,
    members: Vec<usize>,
    me: usize,
}

const SUB_TAGS: i32 = 1000;

impl Pt2Pt for Sub<'_> {
    fn rank(&self) -> usize {
        self.me
    }
    fn size(&self) -> usize {
        self.members.len()
    }
    fn send(&mut self, dest: usize, tag: i32, data: &[u8]) -> Result<(), CollError> {
        self.p.send(self.members[dest], tag + SUB_TAGS, data)
    }
    fn recv(&mut self, src: usize, tag: i32, buf: &mut [u8]) -> Result<usize, CollError> {
        self.p.recv(self.members[src], tag + SUB_TAGS, buf)
    }
    fn sendrecv(
        &mut self,
        dest: usize,
        stag: i32,
        data: &[u8],
        src: usize,
        rtag: i32,
        buf: &mut [u8],
    ) -> Result<usize, CollError> {
        let (d, s) = (self.members[dest], self.members[src]);
        self.p
            .sendrecv(d, stag + SUB_TAGS, data, s, rtag + SUB_TAGS, buf)
    }
}

#[test]
fn every_collective_on_split_communicators() {
    // 9 ranks split by rank % 3, each sub-communicator ordered by descending rank;
    // the parent runs a round before and after.
    Threads::run(9, false, |p| {
        round(p, 5);
        let me = p.rank();
        let mut members: Vec<usize> = (0..9).filter(|r| r % 3 == me % 3).collect();
        members.reverse();
        let sub_rank = members.iter().position(|&r| r == me).unwrap();
        let mut sub = Sub {
            p: &mut *p,
            members,
            me: sub_rank,
        };
        round(&mut sub, 11 + (me % 3) as u64);
        round(p, 6);
    });
}
