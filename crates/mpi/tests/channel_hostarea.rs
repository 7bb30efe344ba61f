//! A sender's one area for the ranks of a host (seed 004 §3.1): one queue per
//! receiver and one pool the sender alone allocates from, shared by its links to all
//! of them. Over test memory in one thread (the state machines, seeded random
//! interleavings, every byte checked) and over the `shm` controller with fabrics on
//! threads (one area and one pool written by a sender however many receivers it
//! talks to; nothing made for a receiver it never talks to).

use std::collections::HashMap;
use std::sync::Arc;

use myrix_mpi::channel::layout::ack;
use myrix_mpi::channel::pool::Pool;
use myrix_mpi::channel::recv::{Rx, Taken};
use myrix_mpi::channel::send::{Geometry, Link, Place, Tx};
use myrix_mpi::channel::window::{DstBuf, Mem, SrcBuf};
use myrix_mpi::channel::{ChannelConfig, ChannelFabric, MemDirectory};
use myrix_mpi::p2p::fabric::{Envelope, Event, Fabric, Rank, SendId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A sender's links to `n` receivers of one host over one area and one pool, and the
/// receivers' ends.
fn host(g: Geometry, n: u32, short: usize, eager: usize) -> (Vec<Tx>, Vec<Rx>, Arc<Pool>) {
    let all = Place {
        index: 0,
        queues: n,
    };
    let (area_s, area_r) = Mem::heap(all.area_len(&g));
    let pool = Arc::new(Pool::new(g.pool_units));
    let (mut txs, mut rxs) = (Vec::new(), Vec::new());
    for index in 0..n {
        let place = Place { index, queues: n };
        let (ack_s, ack_r) = Mem::heap(ack::len(g.queue));
        let mut tx = Tx::new(short, eager);
        let link = Link::new_in(g, area_s.share().unwrap(), ack_s, place, pool.clone());
        tx.connect(link.unwrap());
        txs.push(tx);
        rxs.push(Rx::new_in(0, g, area_r.share().unwrap(), ack_r, place).unwrap());
    }
    (txs, rxs, pool)
}

fn data(seed: u64, len: usize) -> Vec<u8> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..len).map(|_| r.gen()).collect()
}

struct Msg {
    data: Vec<u8>,
    env: Envelope,
}

/// Drives `txs` and `rxs` to the end of `msgs[k]` (receiver k's messages), in random
/// order: a receiver polls and takes only now and then (`take_p`), so blocks of the
/// pool wait in use by several receivers at once and the pool runs out. Checks every
/// byte and the order per receiver; returns how often an allocation found the pool
/// full and the most units held at once.
fn drive(
    seed: u64,
    txs: &mut [Tx],
    rxs: &mut [Rx],
    pool: &Pool,
    msgs: &[Vec<Msg>],
    take_p: f64,
) -> (usize, u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = txs.len();
    let mut pushed = vec![0usize; n];
    let mut done = vec![0usize; n];
    let mut got: Vec<Vec<(u64, Vec<u8>)>> = vec![Vec::new(); n];
    let mut bufs: Vec<HashMap<u64, Vec<u8>>> = vec![HashMap::new(); n];
    let mut arrived: Vec<Vec<u64>> = vec![Vec::new(); n];
    let mut arrived_n = vec![0u64; n];
    let (mut starved, mut most) = (0, 0);
    let mut ev = Vec::new();
    for step in 0.. {
        assert!(step < 1_000_000, "seed {seed}: no progress");
        if (0..n).all(|k| got[k].len() == msgs[k].len() && done[k] == msgs[k].len()) {
            break;
        }
        let k = rng.gen_range(0..n);
        if pushed[k] < msgs[k].len() && rng.gen_bool(0.5) {
            let m = &msgs[k][pushed[k]];
            // SAFETY: (test) the message's data lives in `msgs` until the end.
            let src = unsafe { SrcBuf::new(m.data.as_ptr(), m.data.len()) };
            txs[k].push(SendId((k * 1_000_000 + pushed[k]) as u64), m.env, src);
            pushed[k] += 1;
        }
        txs[k].pump(&mut ev).unwrap();
        if pool.take_starved() {
            // As the fabric does: every link sharing the pool reads its acks.
            starved += 1;
            for t in txs.iter_mut() {
                t.reclaim();
            }
        }
        most = most.max(pool.held());
        for e in ev.drain(..) {
            match e {
                Event::SendDone { send } => done[send.0 as usize / 1_000_000] += 1,
                Event::SyncMatched { .. } => {}
                e => panic!("sender: {e:?}"),
            }
        }
        let r = rng.gen_range(0..n);
        if !rng.gen_bool(take_p) {
            continue;
        }
        rxs[r].poll(&mut ev).unwrap();
        for e in ev.drain(..) {
            match e {
                Event::Arrived { token, env } => {
                    let next = arrived_n[r];
                    assert_eq!(token.seq, next, "seed {seed}: per-receiver order");
                    arrived_n[r] += 1;
                    assert_eq!(env.len, msgs[r][token.seq as usize].data.len());
                    assert_eq!(env.tag, token.seq as i32);
                    arrived[r].push(token.seq);
                }
                Event::Received { token } => {
                    let b = bufs[r].remove(&token.seq).unwrap();
                    got[r].push((token.seq, b));
                }
                e => panic!("receiver: {e:?}"),
            }
        }
        // Takes in order (the order per receiver is checked on the bytes).
        while let Some(&seq) = arrived[r].first() {
            arrived[r].remove(0);
            let mut buf = vec![0u8; msgs[r][seq as usize].data.len()];
            // SAFETY: (test) the buffer moves into `bufs` (its heap memory stays put)
            // until `Received`.
            let dst = unsafe { DstBuf::new(buf.as_mut_ptr(), buf.len()) };
            match rxs[r].take(seq, dst).unwrap() {
                Taken::Done => got[r].push((seq, buf)),
                Taken::Later => {
                    bufs[r].insert(seq, buf);
                }
                Taken::Unknown => panic!("unknown {seq}"),
            }
        }
    }
    for k in 0..n {
        // Arrivals were checked in order; rendezvous data may complete after later
        // messages.
        got[k].sort_by_key(|x| x.0);
        for (j, (seq, b)) in got[k].iter().enumerate() {
            assert_eq!(
                *seq, j as u64,
                "seed {seed}: receiver {k}: each message once"
            );
            assert!(
                *b == msgs[k][j].data,
                "seed {seed}: receiver {k}, message {j}: bytes differ"
            );
        }
        assert!(!txs[k].busy(), "seed {seed}: sender still busy toward {k}");
        let u = txs[k].usage().unwrap();
        assert_eq!((u.postboxes_held, u.units_held), (0, 0), "seed {seed}");
    }
    assert_eq!(pool.held(), 0, "seed {seed}: the pool is empty again");
    (starved, most)
}

fn messages(seed: u64, n: usize, count: usize, max: usize) -> Vec<Vec<Msg>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xa5);
    (0..n)
        .map(|k| {
            (0..count)
                .map(|j| {
                    let len = rng.gen_range(0..=max);
                    Msg {
                        data: data(seed * 1000 + (k * count + j) as u64, len),
                        env: Envelope {
                            ctx: 1,
                            tag: j as i32,
                            len,
                            sync: rng.gen_bool(0.05),
                        },
                    }
                })
                .collect()
        })
        .collect()
}

#[test]
fn blocks_of_one_pool_in_use_by_two_receivers_at_once() {
    let g = Geometry {
        queue: 16,
        pool_units: 64,
        small: 256,
        large: 512,
    };
    let (mut txs, mut rxs, pool) = host(g, 2, 40, 4000);
    // Two long messages to each receiver, nothing taken yet: both hold blocks.
    let msgs: Vec<Vec<Msg>> = (0..2)
        .map(|k| {
            (0..2)
                .map(|j| {
                    let len = 1500 + 700 * k + 100 * j;
                    Msg {
                        data: data((k * 2 + j) as u64, len),
                        env: Envelope {
                            ctx: 0,
                            tag: j as i32,
                            len,
                            sync: false,
                        },
                    }
                })
                .collect()
        })
        .collect();
    let mut ev = Vec::new();
    // Alternately to each receiver, so their blocks interleave in the pool.
    for j in 0..2 {
        for (k, (tx, m)) in txs.iter_mut().zip(&msgs).enumerate() {
            let m = &m[j];
            // SAFETY: (test) `msgs` outlives the sends.
            let src = unsafe { SrcBuf::new(m.data.as_ptr(), m.data.len()) };
            tx.push(SendId((k * 1_000_000 + j) as u64), m.env, src);
            tx.pump(&mut ev).unwrap();
        }
    }
    assert_eq!(ev.len(), 4, "all four written: {ev:?}");
    let (a, b) = (txs[0].usage().unwrap(), txs[1].usage().unwrap());
    assert!(a.units_held > 0 && b.units_held > 0, "{a:?} {b:?}");
    assert_eq!(
        pool.held(),
        a.units_held + b.units_held,
        "one pool for both"
    );
    assert!(Arc::ptr_eq(
        &txs[0].pool().unwrap(),
        &txs[1].pool().unwrap()
    ));
    // Receiver 1 takes first: its blocks, interleaved with 0's, are freed out of the
    // pool's order; then 0.
    let mut order = Vec::new();
    for r in [1usize, 0] {
        for _ in 0..4 {
            rxs[r].poll(&mut ev).unwrap();
            for e in std::mem::take(&mut ev) {
                if let Event::Arrived { token, env } = e {
                    let mut buf = vec![0u8; env.len];
                    // SAFETY: (test) `buf` outlives the take, which copies at once.
                    let dst = unsafe { DstBuf::new(buf.as_mut_ptr(), buf.len()) };
                    assert_eq!(rxs[r].take(token.seq, dst), Ok(Taken::Done));
                    assert!(buf == msgs[r][token.seq as usize].data, "every byte");
                    order.push((r, token.seq));
                }
            }
        }
        let _ = txs[r].busy();
        if r == 1 {
            assert_eq!(txs[1].usage().unwrap().units_held, 0);
            assert!(pool.held() > 0, "0's blocks still held");
        }
    }
    assert_eq!(order, [(1, 0), (1, 1), (0, 0), (0, 1)]);
    let _ = txs[0].busy();
    assert_eq!(pool.held(), 0);
}

#[test]
fn pool_exhaustion_with_several_receivers_is_backpressure() {
    // A pool of eight 64-byte blocks for three receivers, messages up to 2 KiB
    // (rendezvous above 700 bytes), receivers that take only now and then.
    let g = Geometry {
        queue: 8,
        pool_units: 8,
        small: 64,
        large: 128,
    };
    let mut starved = 0;
    for seed in 0..20 {
        let (mut txs, mut rxs, pool) = host(g, 3, 100, 700);
        let msgs = messages(seed, 3, 60, 2100);
        let (s, most) = drive(seed, &mut txs, &mut rxs, &pool, &msgs, 0.3);
        assert!(most <= 8);
        starved += s;
    }
    assert!(
        starved > 0,
        "the pool never ran out: the test proves nothing"
    );
}

#[test]
fn random_interleavings_over_one_area_for_four_receivers() {
    let g = Geometry {
        queue: 16,
        pool_units: 32,
        small: 128,
        large: 512,
    };
    for seed in 100..130 {
        let (mut txs, mut rxs, pool) = host(g, 4, 200, 3000);
        let msgs = messages(seed, 4, 50, 5000);
        drive(seed, &mut txs, &mut rxs, &pool, &msgs, 0.6);
    }
}

#[test]
fn a_lost_receivers_blocks_go_back_to_the_pool() {
    let g = Geometry {
        queue: 8,
        pool_units: 8,
        small: 64,
        large: 128,
    };
    let (mut txs, _rxs, pool) = host(g, 2, 40, 1000);
    let d = data(1, 300);
    // SAFETY: (test) `d` outlives the sends.
    let src = unsafe { SrcBuf::new(d.as_ptr(), d.len()) };
    let env = Envelope {
        ctx: 0,
        tag: 0,
        len: d.len(),
        sync: false,
    };
    let mut ev = Vec::new();
    txs[0].push(SendId(0), env, src);
    txs[0].pump(&mut ev).unwrap();
    assert!(pool.held() > 0);
    // Receiver 0 never acknowledges; its link goes (the fabric drops a lost peer's).
    drop(txs.remove(0));
    assert_eq!(pool.held(), 0, "nobody reads those blocks any more");
    txs[0].push(SendId(1), env, src);
    txs[0].pump(&mut ev).unwrap();
    assert_eq!(ev.len(), 2, "the other receiver still gets blocks: {ev:?}");
}

/// Fabrics on threads over the `shm` controller, all on one host: rank 0 talks to
/// ranks 1 and 2 (every protocol), 1 talks to 0, 3 is silent.
#[test]
fn one_area_and_one_pool_per_sender_for_its_host() {
    let dir = MemDirectory::new();
    let n = 4u32;
    let cfg = ChannelConfig {
        queue: 16,
        pool: 16 << 10,
        short: 40,
        eager: 4096,
        ..ChannelConfig::default()
    };
    let sizes = [0usize, 8, 40, 41, 1000, 5000, 100_000];
    let talks = |r: Rank| -> Vec<Rank> {
        match r {
            0 => vec![1, 2],
            1 => vec![0],
            _ => vec![],
        }
    };
    let handles: Vec<_> = (0..n)
        .map(|r| {
            let (dir, cfg) = (dir.clone(), cfg.clone());
            std::thread::spawn(move || {
                let mut f =
                    ChannelFabric::with_directory(r, n, vec![0; n as usize], dir, &cfg).unwrap();
                let payloads: Vec<Vec<u8>> = sizes
                    .iter()
                    .enumerate()
                    .map(|(i, &l)| data(r as u64 * 100 + i as u64, l))
                    .collect();
                let mut sends = 0;
                for &d in &talks(r) {
                    for (i, p) in payloads.iter().enumerate() {
                        let env = Envelope {
                            ctx: 0,
                            tag: i as i32,
                            len: p.len(),
                            sync: i == 2,
                        };
                        // SAFETY: (test) `payloads` lives until the end of the thread.
                        unsafe { f.send(d, env, p.as_ptr()) }.unwrap();
                        sends += 1;
                    }
                }
                let expect: usize = (0..n).filter(|&s| talks(s).contains(&r)).count();
                let mut want = expect * sizes.len();
                let (mut done, mut ev) = (0, Vec::new());
                let mut inflight: HashMap<(Rank, u64), Vec<u8>> = HashMap::new();
                let mut got = Vec::new();
                let t0 = std::time::Instant::now();
                while done < sends || want > 0 {
                    assert!(t0.elapsed().as_secs() < 60, "rank {r} stuck");
                    f.progress(&mut ev).unwrap();
                    for e in std::mem::take(&mut ev) {
                        match e {
                            Event::Arrived { token, env } => {
                                let mut b = vec![0u8; env.len];
                                let p = b.as_mut_ptr();
                                inflight.insert((token.src, token.seq), b);
                                // SAFETY: (test) the buffer stays in `inflight`.
                                if unsafe { f.take(token, p, env.len) }.unwrap() {
                                    let b = inflight.remove(&(token.src, token.seq)).unwrap();
                                    got.push((token.src, env.tag, b));
                                    want -= 1;
                                }
                            }
                            Event::Received { token } => {
                                let b = inflight.remove(&(token.src, token.seq)).unwrap();
                                got.push((
                                    token.src,
                                    sizes.iter().position(|&l| l == b.len()).unwrap() as i32,
                                    b,
                                ));
                                want -= 1;
                            }
                            Event::SendDone { .. } => done += 1,
                            Event::SyncMatched { .. } => {}
                            Event::PeerLost { rank, why } => panic!("{rank} lost: {why}"),
                        }
                    }
                }
                for (src, tag, b) in &got {
                    assert!(
                        *b == data(*src as u64 * 100 + *tag as u64, b.len()),
                        "bytes"
                    );
                }
                (r, f.areas_written(), f.connections(), f.host_pool_held(), f)
            })
        })
        .collect();
    let mut res: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    res.sort_by_key(|x| x.0);
    // Rank 0 writes into one area through one pool for its two receivers.
    assert_eq!(res[0].1, (1, 1));
    assert_eq!(res[0].2, (1, 2));
    // Rank 1 sends to 0 only: its own area, one pool.
    assert_eq!(res[1].1, (1, 1));
    // Rank 2 only receives, rank 3 neither: no area, no pool, no channel.
    assert_eq!(res[2].1, (0, 0));
    assert_eq!((res[2].2, res[2].3), ((1, 0), None));
    assert_eq!(res[3].1, (0, 0));
    assert_eq!((res[3].2, res[3].3), ((0, 0), None));
}
