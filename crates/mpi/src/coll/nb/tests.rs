//! Schedules against a serial reference over `loopnet`: several ranks in one
//! process (one thread driving all, in a random order), random sizes, roots, ops and
//! counts, several collectives outstanding at once and completed in random orders;
//! and the progress rule: a blocking receive keeps a nonblocking barrier moving.

use super::build::{self, Block};
use super::levels::{self, Layout};
use super::{tag, Builder};
use crate::p2p::loopnet::{LoopConfig, LoopNet};
use crate::p2p::{Engine, ReqId};

/// splitmix64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

const ELEM: usize = 16;

/// u32 wrapping sums (commutative).
fn add(input: &[u8], inout: &mut [u8]) {
    for (i, o) in input.chunks_exact(4).zip(inout.chunks_exact_mut(4)) {
        let v = u32::from_le_bytes(i.try_into().unwrap())
            .wrapping_add(u32::from_le_bytes((&*o).try_into().unwrap()));
        o.copy_from_slice(&v.to_le_bytes());
    }
}

/// 2x2 u32 matrices: inout = input × inout (associative, not commutative).
fn matmul(input: &[u8], inout: &mut [u8]) {
    for (a, b) in input.chunks_exact(16).zip(inout.chunks_exact_mut(16)) {
        let m = |s: &[u8], k: usize| u32::from_le_bytes(s[4 * k..4 * k + 4].try_into().unwrap());
        let (a0, a1, a2, a3) = (m(a, 0), m(a, 1), m(a, 2), m(a, 3));
        let (b0, b1, b2, b3) = (m(b, 0), m(b, 1), m(b, 2), m(b, 3));
        let c = [
            a0.wrapping_mul(b0).wrapping_add(a1.wrapping_mul(b2)),
            a0.wrapping_mul(b1).wrapping_add(a1.wrapping_mul(b3)),
            a2.wrapping_mul(b0).wrapping_add(a3.wrapping_mul(b2)),
            a2.wrapping_mul(b1).wrapping_add(a3.wrapping_mul(b3)),
        ];
        for (k, v) in c.iter().enumerate() {
            b[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
}

fn op_of(comm: bool) -> fn(&[u8], &mut [u8]) {
    if comm {
        add
    } else {
        matmul
    }
}

/// x_lo op … op x_hi-1.
fn fold(xs: &[Vec<u8>], comm: bool) -> Vec<u8> {
    let op = op_of(comm);
    let mut acc = xs.last().unwrap().clone();
    for x in xs[..xs.len() - 1].iter().rev() {
        op(x, &mut acc);
    }
    acc
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Gatherv,
    Scatterv,
    Allgatherv,
    Alltoallv,
    ReduceScatter,
    Scan,
    Exscan,
}
const KINDS: [Kind; 11] = [
    Kind::Barrier,
    Kind::Bcast,
    Kind::Reduce,
    Kind::Allreduce,
    Kind::Gatherv,
    Kind::Scatterv,
    Kind::Allgatherv,
    Kind::Alltoallv,
    Kind::ReduceScatter,
    Kind::Scan,
    Kind::Exscan,
];

/// One collective on every rank: inputs, outputs (kept alive until completion) and
/// the expected outputs.
struct Case {
    kind: Kind,
    ins: Vec<Vec<u8>>,
    outs: Vec<Vec<u8>>,
    want: Vec<Vec<u8>>,
}

/// Builds the case and starts its schedule on every rank.
#[allow(clippy::needless_range_loop)]
fn start(
    g: &mut Rng,
    engs: &mut [Engine<crate::p2p::loopnet::LoopFabric>],
    seq: u32,
    kind: Kind,
    nodes: Option<&[u32]>,
) -> (Case, Vec<ReqId>) {
    let n = engs.len();
    let ranks: Vec<u32> = (0..n as u32).collect();
    let root = g.below(n);
    let comm = g.below(2) == 0;
    let in_place = g.below(3) == 0;
    let elems = g.below(5) * (1 + g.below(3) * g.below(40));
    let len = elems * ELEM;
    // Per-rank block sizes (v-forms), in elements.
    let cnt: Vec<usize> = (0..n).map(|_| g.below(4) * ELEM).collect();
    let gap = |g: &mut Rng| g.below(3) * ELEM;
    let mut displs = Vec::new();
    let mut at = 0;
    for &c in &cnt {
        at += gap(g);
        displs.push(at);
        at += c;
    }
    let vlen = at + gap(g);
    let fill = 0xEE;
    let mut ins: Vec<Vec<u8>> = (0..n).map(|_| g.bytes(len)).collect();
    let mut outs: Vec<Vec<u8>> = vec![vec![fill; len]; n];
    let mut want = outs.clone();
    let mut a2a: Vec<Vec<usize>> = Vec::new();
    match kind {
        Kind::Barrier => {}
        Kind::Bcast => {
            outs = ins.clone();
            want = vec![ins[root].clone(); n];
        }
        Kind::Reduce => want[root] = fold(&ins, comm),
        Kind::Allreduce => want = vec![fold(&ins, comm); n],
        Kind::Scan | Kind::Exscan => {
            let ex = matches!(kind, Kind::Exscan);
            for i in 0..n {
                if ex && i == 0 {
                    if in_place {
                        want[0] = ins[0].clone();
                    }
                    continue;
                }
                want[i] = fold(&ins[..if ex { i } else { i + 1 }], comm);
            }
        }
        Kind::Gatherv | Kind::Allgatherv => {
            ins = (0..n).map(|i| g.bytes(cnt[i])).collect();
            outs = vec![vec![fill; vlen]; n];
            let mut full = vec![fill; vlen];
            for i in 0..n {
                full[displs[i]..displs[i] + cnt[i]].copy_from_slice(&ins[i]);
            }
            want = outs.clone();
            if matches!(kind, Kind::Gatherv) {
                want[root] = full;
            } else {
                want = vec![full; n];
            }
        }
        Kind::Scatterv => {
            ins = vec![Vec::new(); n];
            ins[root] = g.bytes(vlen);
            outs = (0..n).map(|i| vec![fill; cnt[i]]).collect();
            want = (0..n)
                .map(|i| ins[root][displs[i]..displs[i] + cnt[i]].to_vec())
                .collect();
        }
        Kind::Alltoallv => {
            // By levels, alltoall's equal blocks now and then.
            let eq = (nodes.is_some() && g.below(2) == 0).then(|| g.below(3) * 8);
            a2a = (0..n)
                .map(|_| {
                    (0..n)
                        .map(|_| eq.unwrap_or_else(|| g.below(3) * 8))
                        .collect()
                })
                .collect();
            ins = (0..n)
                .map(|i| g.bytes(a2a[i].iter().sum::<usize>()))
                .collect();
            outs = (0..n)
                .map(|j| vec![fill; (0..n).map(|i| a2a[i][j]).sum::<usize>()])
                .collect();
            want = (0..n)
                .map(|j| {
                    let mut w = Vec::new();
                    for i in 0..n {
                        let off: usize = a2a[i][..j].iter().sum();
                        w.extend_from_slice(&ins[i][off..off + a2a[i][j]]);
                    }
                    w
                })
                .collect();
        }
        Kind::ReduceScatter => {
            let total: usize = cnt.iter().sum();
            ins = (0..n).map(|_| g.bytes(total)).collect();
            let f = fold(&ins, comm);
            let mut o = 0;
            outs = Vec::new();
            want = Vec::new();
            for &c in &cnt {
                outs.push(vec![fill; c]);
                want.push(f[o..o + c].to_vec());
                o += c;
            }
        }
    }
    if in_place && matches!(kind, Kind::Allreduce | Kind::Scan | Kind::Exscan) {
        outs = ins.clone();
    }
    if in_place && matches!(kind, Kind::Reduce) {
        outs[root] = ins[root].clone();
    }
    let mut ids = Vec::new();
    let a2a_eq = !a2a.is_empty() && a2a.iter().flatten().all(|&x| x == a2a[0][0]);
    for (r, eng) in engs.iter_mut().enumerate() {
        let lay = nodes.and_then(|nd| Layout::new(&ranks, r, nd));
        let mut b = Builder::new(&ranks, r, 1, tag(seq));
        b.set_combine(Box::new(op_of(comm)));
        // SAFETY: `ins`/`outs` live in the case until every request completes and
        // are not touched meanwhile.
        let (i, o) = unsafe {
            (
                b.user(ins[r].as_mut_ptr(), ins[r].len()),
                b.user(outs[r].as_mut_ptr(), outs[r].len()),
            )
        };
        let ip = if in_place { o } else { i };
        let res = match (kind, &lay) {
            (Kind::Barrier, Some(l)) => {
                levels::barrier(&mut b, l);
                Ok(())
            }
            (Kind::Bcast, Some(l)) => levels::bcast(&mut b, l, root, o),
            (Kind::Reduce, Some(l)) if comm => {
                let s = if in_place && r == root { o } else { i };
                levels::reduce(&mut b, l, root, s, o, len)
            }
            (Kind::Allreduce, Some(l)) if comm => levels::allreduce(&mut b, l, ip, o, len),
            (Kind::Allgatherv, Some(l)) => {
                let blocks = blocks_at(o, &cnt, &displs);
                levels::allgatherv(&mut b, l, Some(whole(i, cnt[r])), &blocks)
            }
            (Kind::Alltoallv, Some(l)) if a2a_eq => {
                let bl = a2a[0][0];
                let sb: Vec<Block> = (0..n)
                    .map(|j| Block {
                        buf: i,
                        off: j * bl,
                        len: bl,
                    })
                    .collect();
                let rb: Vec<Block> = (0..n)
                    .map(|j| Block {
                        buf: o,
                        off: j * bl,
                        len: bl,
                    })
                    .collect();
                levels::alltoall(&mut b, l, &sb, &rb, bl)
            }
            _ => match kind {
                Kind::Barrier => {
                    build::barrier(&mut b);
                    Ok(())
                }
                Kind::Bcast => build::bcast(&mut b, root, o),
                Kind::Reduce => {
                    let s = if in_place && r == root { o } else { i };
                    build::reduce(&mut b, root, s, o, len, comm)
                }
                Kind::Allreduce => {
                    build::allreduce(&mut b, ip, o, len);
                    Ok(())
                }
                Kind::Scan | Kind::Exscan => {
                    build::scan(&mut b, ip, o, len, matches!(kind, Kind::Exscan));
                    Ok(())
                }
                Kind::Gatherv => {
                    let blocks = blocks_at(o, &cnt, &displs);
                    build::gatherv(&mut b, root, Some(whole(i, cnt[r])), &blocks)
                }
                Kind::Allgatherv => {
                    let blocks = blocks_at(o, &cnt, &displs);
                    build::allgatherv(&mut b, Some(whole(i, cnt[r])), &blocks)
                }
                Kind::Scatterv => {
                    let blocks = blocks_at(i, &cnt, &displs);
                    build::scatterv(&mut b, root, &blocks, Some(whole(o, cnt[r])))
                }
                Kind::Alltoallv => {
                    let mut sb = Vec::new();
                    let mut so = 0;
                    for j in 0..n {
                        sb.push(Block {
                            buf: i,
                            off: so,
                            len: a2a[r][j],
                        });
                        so += a2a[r][j];
                    }
                    let mut rb = Vec::new();
                    let mut ro = 0;
                    for j in 0..n {
                        rb.push(Block {
                            buf: o,
                            off: ro,
                            len: a2a[j][r],
                        });
                        ro += a2a[j][r];
                    }
                    build::alltoallv(&mut b, &sb, &rb)
                }
                Kind::ReduceScatter => build::reduce_scatter(&mut b, i, o, &cnt, comm),
            },
        };
        res.unwrap();
        let s = b.build().unwrap();
        ids.push(eng.start_schedule(s).unwrap());
    }
    (
        Case {
            kind,
            ins,
            outs,
            want,
        },
        ids,
    )
}

fn blocks_at(buf: super::Buf, cnt: &[usize], displs: &[usize]) -> Vec<Block> {
    cnt.iter()
        .zip(displs)
        .map(|(&len, &off)| Block { buf, off, len })
        .collect()
}

fn whole(buf: super::Buf, len: usize) -> Block {
    Block { buf, off: 0, len }
}

/// Runs `rounds` batches of 1..=5 collectives outstanding at once on `n` ranks
/// (rank `r` on node `nodes[r]`: the collectives with a form by levels take it).
fn random_batches(n: u32, seed: u64, rounds: usize) {
    random_batches_on(n, seed, rounds, None)
}

fn random_batches_on(n: u32, seed: u64, rounds: usize, nodes: Option<&[u32]>) {
    let cfg = LoopConfig {
        seed,
        eager_limit: 64,
        ..LoopConfig::default()
    };
    let (_net, mut engs) = LoopNet::engines(n, cfg);
    let mut g = Rng(seed);
    let mut seq = 0;
    for _ in 0..rounds {
        let k = 1 + g.below(5);
        let mut cases = Vec::new();
        let mut live: Vec<(usize, usize, ReqId)> = Vec::new();
        for c in 0..k {
            let kind = KINDS[g.below(KINDS.len())];
            let (case, ids) = start(&mut g, &mut engs, seq, kind, nodes);
            seq += 1;
            for (r, id) in ids.into_iter().enumerate() {
                live.push((c, r, id));
            }
            cases.push(case);
        }
        let mut spins = 0;
        while !live.is_empty() {
            spins += 1;
            assert!(spins < 200_000, "stuck: {} requests left", live.len());
            let r = g.below(n as usize);
            engs[r].progress().unwrap();
            // Test one live request at random (completion in any order).
            let j = g.below(live.len());
            let (_, rk, id) = live[j];
            if let Some(st) = engs[rk].test(id).unwrap() {
                assert!(st.error.is_none(), "{:?}", st.error);
                live.swap_remove(j);
            }
        }
        for case in &cases {
            for r in 0..n as usize {
                assert_eq!(
                    case.outs[r], case.want[r],
                    "{:?} on rank {r} of {n} (seed {seed})",
                    case.kind
                );
            }
            let _ = &case.ins;
        }
        for e in &engs {
            assert_eq!(e.live_schedules(), 0);
        }
    }
}

#[test]
fn schedules_match_the_serial_reference() {
    for n in 1..=7 {
        for seed in 0..6 {
            random_batches(n, seed * 31 + u64::from(n), 12);
        }
    }
}

/// The forms by levels on node maps of 2 to 7 ranks: nodes of unequal sizes, in
/// an order that is not the ranks' (world rank w on node `w % k` or blocks), one
/// rank alone on a node.
#[test]
fn schedules_by_levels_match_the_serial_reference() {
    let mut tried = 0;
    for n in 2..=7u32 {
        for k in 2..n {
            let maps: [Vec<u32>; 2] = [
                (0..n).map(|w| w % k).collect(),
                (0..n).map(|w| (w * k / n).min(k - 1)).collect(),
            ];
            for (m, map) in maps.iter().enumerate() {
                let ranks: Vec<u32> = (0..n).collect();
                assert!(Layout::new(&ranks, 0, map).is_some(), "{map:?}");
                for seed in 0..3 {
                    random_batches_on(
                        n,
                        seed * 97 + u64::from(n * 10 + k) + m as u64,
                        10,
                        Some(map),
                    );
                    tried += 1;
                }
            }
        }
    }
    assert!(tried > 0);
    // One node, or a node per rank: no levels.
    let r: Vec<u32> = (0..4).collect();
    assert!(Layout::new(&r, 0, &[3, 3, 3, 3]).is_none());
    assert!(Layout::new(&r, 0, &[0, 1, 2, 3]).is_none());
}

#[test]
fn a_blocking_receive_drives_a_nonblocking_barrier() {
    // Rank 0 blocks in a receive from rank 1 while rank 1 waits for a barrier of 3
    // ranks before sending: only progress made inside rank 0's receive lets the
    // barrier finish.
    for seed in 0..4 {
        let cfg = LoopConfig {
            seed,
            ..LoopConfig::default()
        };
        let (_net, engs) = LoopNet::engines(3, cfg);
        let ranks: Vec<u32> = (0..3).collect();
        let hs: Vec<_> = engs
            .into_iter()
            .enumerate()
            .map(|(r, mut e)| {
                let ranks = ranks.clone();
                std::thread::spawn(move || {
                    let mut b = Builder::new(&ranks, r, 1, tag(0));
                    build::barrier(&mut b);
                    let id = e.start_schedule(b.build().unwrap()).unwrap();
                    match r {
                        0 => {
                            let mut buf = [0u8; 4];
                            let st = e.recv(Some(1), 0, Some(7), &mut buf).unwrap();
                            assert_eq!((st.len, buf), (4, [1, 2, 3, 4]));
                            assert!(e.wait(id).unwrap().error.is_none());
                        }
                        1 => {
                            assert!(e.wait(id).unwrap().error.is_none());
                            e.send(0, 0, 7, &[1, 2, 3, 4], crate::p2p::SendMode::Standard)
                                .unwrap();
                        }
                        _ => assert!(e.wait(id).unwrap().error.is_none()),
                    }
                    // Keep serving until every rank is done.
                    e
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    }
}

#[test]
fn a_lost_peer_fails_the_schedule() {
    let (net, mut engs) = LoopNet::engines(3, LoopConfig::default());
    let ranks: Vec<u32> = (0..3).collect();
    let mut b = Builder::new(&ranks, 0, 1, tag(0));
    build::barrier(&mut b);
    let id = engs[0].start_schedule(b.build().unwrap()).unwrap();
    net.kill(2, "test");
    let st = engs[0].wait(id).unwrap();
    assert!(st.error.is_some());
    assert_eq!(engs[0].live_schedules(), 0);
}

#[test]
fn bad_arguments_are_refused_before_anything_starts() {
    let ranks: Vec<u32> = (0..3).collect();
    let mut b = Builder::new(&ranks, 0, 1, tag(0));
    let x = b.scratch(8);
    assert!(build::bcast(&mut b, 3, x).is_err());
    let mut b = Builder::new(&ranks, 0, 1, tag(0));
    let x = b.scratch(8);
    b.send(1, x, 4, 8);
    assert!(b.build().is_err());
    let mut b = Builder::new(&ranks, 0, 1, tag(0));
    let x = b.scratch(8);
    assert!(build::gatherv(&mut b, 0, Some(whole(x, 8)), &[whole(x, 8)]).is_err());
}
