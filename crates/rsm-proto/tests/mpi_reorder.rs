//! MPI's traffic over a network that reorders as `.ci/netns.sh`'s slow class does
//! (issue 21: MPI across two namespaces failed one run in two or three with it).
//!
//! Two engines with the network controllers' timers (`myrix_rsm::net::default_config`:
//! resend 5 ms, ack delay 200 µs, unreachable after 5 s) each export a segment and
//! import the other's, as the MPI channel does (postboxes and pool blocks in the
//! receiver's segment, one-byte acknowledgements back in the sender's). Both sides run
//! at once: bursts of puts of a postbox's, a pool block's or a long message's size at
//! offsets that go round rings, barriers (flushes) several deep, signals, gets. The
//! link loses 2 %, duplicates 1 % and steers 10 % of frames into a 20 Mbit/s FIFO of
//! 1000 frames ([`common::Htb::NETNS`]). Every get is checked against the model as it
//! was when it was asked, each side's segment against its model whenever its importer
//! has no put unflushed, and no peer may be declared unreachable.

mod common;

use common::{Cpu, Htb, Net, NetConfig};
use myrix_rsm_proto::engine::{Config, Event, FlushId, GetId, Import, SignalTarget};
use myrix_rsm_proto::{Acl, Credentials, NodeId, Perm, SegmentId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

const USER: Credentials = Credentials { uid: 1, gid: 1 };
const SEG: SegmentId = SegmentId(0x8000_0021);
/// Postbox ring, pool and long-message area, as the channel lays out a sender's area.
const RING: usize = 64 * 64;
const POOL: usize = 64 * 4096;
const LONG: usize = 1 << 20;
const LEN: usize = RING + POOL + LONG;

/// The network controllers' timers (`crates/rsm/src/net/mod.rs`).
fn net_config() -> Config {
    Config {
        ack_delay_ns: 200_000,
        resend_ns: 5_000_000,
        timeout_ns: 5_000_000_000,
        ..Config::default()
    }
}

/// One side's application: what it asked and has not seen answered.
#[derive(Default)]
struct Side {
    /// Barriers in flight, with when they were asked.
    flushes: Vec<(FlushId, u64)>,
    /// The longest a barrier took.
    slowest: u64,
    gets: HashMap<GetId, (usize, Vec<u8>)>,
    /// Puts queued since the last flush.
    unflushed: bool,
    /// Waits for its barriers before it goes on (then checks the far memory).
    draining: bool,
    ring_at: usize,
    pool_at: usize,
    signals_sent: u64,
    signals_got: u64,
    puts: u64,
    checks: u64,
}

/// Runs `secs` simulated seconds of MPI-like traffic with `seed`; panics on the first
/// failure, naming the seed. Returns (frames sent, resends).
fn run(seed: u64, secs: u64) -> (u64, u64) {
    let net_cfg = NetConfig {
        latency_ns: 30_000,
        jitter_ns: 20_000,
        loss: 0.02,
        duplicate: 0.01,
        slow: 0.10,
        slow_ns: 0,
        seed,
    };
    let mut net = Net::new(2, net_config(), net_cfg);
    net.htb = Some(Htb::NETNS);
    // A debug build on a shared 2-core machine, as the namespace tests run it.
    net.cpu = Some(Cpu {
        tx_ns: 20_000,
        rx_ns: 50_000,
        queue: 3500,
    });
    let mut model = [vec![0u8; LEN], vec![0u8; LEN]];
    for i in 0..2 {
        net.mems[i].insert(SEG, vec![0; LEN]);
        net.engines[i]
            .publish(SEG, Acl::Open(Perm(0o666)), USER)
            .unwrap();
    }
    let imps: Vec<Import> = (0..2)
        .map(|from| {
            let to = 1 - from;
            let imp = net.engines[from]
                .connect(to, NodeId(to as u32), SEG, Perm::RDWR, USER)
                .unwrap();
            let r = net.wait_for(from, |e| match e {
                Event::Connected { import, result } if *import == imp => Some(*result),
                _ => None,
            });
            assert_eq!(r, Ok(LEN as u64), "seed {seed}: connect");
            imp
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut sides = [Side::default(), Side::default()];
    let end = net.now + secs * 1_000_000_000;
    // The applications act every `tick` of simulated time (they compute in between).
    let mut next_act = [net.now, net.now];
    while net.now < end {
        for from in 0..2 {
            if net.now < next_act[from] {
                continue;
            }
            next_act[from] = net.now + rng.gen_range(0..200_000);
            let s = &mut sides[from];
            // At most four barriers deep, as a sender with a few messages in flight;
            // now and then it waits for all of them (a blocking call).
            if s.flushes.len() >= 4 || s.draining {
                continue;
            }
            let to = 1 - from;
            let imp = imps[from];
            let e = &mut net.engines[from];
            for _ in 0..rng.gen_range(1..6) {
                let (off, len) = match rng.gen_range(0..10) {
                    // A long message's piece.
                    0 => {
                        let len = rng.gen_range(1..=LONG / 4);
                        (RING + POOL + rng.gen_range(0..=LONG - len), len)
                    }
                    // Pool blocks, going round the pool.
                    1..=4 => {
                        let off = RING + s.pool_at;
                        s.pool_at = (s.pool_at + 4096) % POOL;
                        (off, rng.gen_range(1..=4096))
                    }
                    // Postboxes (and one-byte acks), going round the ring.
                    _ => {
                        let off = s.ring_at;
                        s.ring_at = (s.ring_at + 64) % RING;
                        (off, if rng.gen_bool(0.3) { 1 } else { 64 })
                    }
                };
                let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                e.put(imp, off as u64, &data).unwrap();
                model[to][off..off + len].copy_from_slice(&data);
                s.unflushed = true;
                s.puts += 1;
            }
            if rng.gen_bool(0.7) {
                s.flushes.push((e.flush(imp).unwrap(), net.now));
                s.unflushed = false;
                s.draining = rng.gen_bool(0.05);
            }
            if rng.gen_bool(0.2) {
                e.signal(imp, false).unwrap();
                s.signals_sent += 1;
            }
            if rng.gen_bool(0.05) {
                let len = rng.gen_range(1..=96 * 1024);
                let off = rng.gen_range(0..=LEN - len);
                let g = e.get(imp, off as u64, len as u64).unwrap();
                s.gets.insert(g, (off, model[to][off..off + len].to_vec()));
            }
        }
        if !net.step() {
            // The network is quiet: nothing may be waiting for an answer, and time
            // goes to the applications' next move.
            assert!(
                sides.iter().all(|s| s.flushes.is_empty() && s.gets.is_empty()),
                "seed {seed}: wedged at {} ms: flushes {:?} / {:?}, gets {:?} / {:?}, idle {} {}, {:?}",
                net.now / 1_000_000,
                sides[0].flushes,
                sides[1].flushes,
                sides[0].gets.keys().collect::<Vec<_>>(),
                sides[1].gets.keys().collect::<Vec<_>>(),
                net.engines[0].idle(),
                net.engines[1].idle(),
                net.engines.iter().map(|e| e.stats()).collect::<Vec<_>>()
            );
            net.now = net.now.max(next_act[0].min(next_act[1]));
        }
        for i in 0..2 {
            for ev in net.take_events(i) {
                let s = &mut sides[i];
                match ev {
                    Event::BarrierDone { flush, result, .. } => {
                        assert_eq!(
                            result,
                            Ok(()),
                            "seed {seed}: engine {i}'s barrier at {} ms",
                            net.now / 1_000_000
                        );
                        let k = s.flushes.iter().position(|f| f.0 == flush).unwrap();
                        let took = net.now - s.flushes.remove(k).1;
                        s.slowest = s.slowest.max(took);
                        // On a link with a 0.1 ms round trip, whose slow lane holds a
                        // frame 0.6 s at most, and a resend after 5 ms.
                        assert!(
                            took < 500_000_000,
                            "seed {seed}: engine {i}'s barrier took {} ms (at {} ms)",
                            took / 1_000_000,
                            net.now / 1_000_000
                        );
                        if s.flushes.is_empty() {
                            s.draining = false;
                        }
                        if s.flushes.is_empty() && !s.unflushed {
                            let to = 1 - i;
                            assert!(
                                net.mems[to][&SEG] == model[to],
                                "seed {seed}: engine {to}'s memory differs from the model"
                            );
                            s.checks += 1;
                        }
                    }
                    Event::GetDone { get, result, .. } => {
                        let (off, want) = s.gets.remove(&get).unwrap();
                        let got = result.unwrap_or_else(|e| panic!("seed {seed}: get: {e}"));
                        assert!(got == want, "seed {seed}: get at {off} differs");
                    }
                    Event::Signal {
                        target: SignalTarget::Export(_),
                        ..
                    } => sides[1 - i].signals_got += 1,
                    other => panic!(
                        "seed {seed}: engine {i} at {} ms: {other:?}; {:?}",
                        net.now / 1_000_000,
                        net.engines[i].stats()
                    ),
                }
            }
        }
    }
    // Everything asked is answered and every signal arrives.
    for (from, s) in sides.iter_mut().enumerate() {
        if s.unflushed {
            s.flushes
                .push((net.engines[from].flush(imps[from]).unwrap(), net.now));
            s.unflushed = false;
        }
    }
    let ok = net.run_until(30_000_000_000, |n| {
        for i in 0..2 {
            for ev in std::mem::take(&mut n.events[i]) {
                match ev {
                    Event::BarrierDone { flush, result, .. } => {
                        assert_eq!(result, Ok(()), "seed {seed}: last barrier");
                        sides[i].flushes.retain(|f| f.0 != flush);
                    }
                    Event::GetDone { get, result, .. } => {
                        let (_, want) = sides[i].gets.remove(&get).unwrap();
                        assert!(result.unwrap() == want, "seed {seed}: get differs");
                    }
                    Event::Signal { .. } => sides[1 - i].signals_got += 1,
                    other => panic!("seed {seed}: engine {i}: {other:?}"),
                }
            }
        }
        sides
            .iter()
            .all(|s| s.flushes.is_empty() && s.gets.is_empty())
            && sides.iter().all(|s| s.signals_got == s.signals_sent)
    });
    assert!(
        ok,
        "seed {seed}: the last barriers, gets or signals never came"
    );
    let st: Vec<_> = net.engines.iter().map(|e| e.stats()).collect();
    eprintln!(
        "seed {seed}: {}+{} puts, {}+{} checks, slowest barrier {} ms, slow lane dropped {}, receive buffers dropped {}, {:?}",
        sides[0].puts,
        sides[1].puts,
        sides[0].checks,
        sides[1].checks,
        sides[0].slowest.max(sides[1].slowest) / 1_000_000,
        net.slow_dropped,
        net.rx_dropped,
        st
    );
    for i in 0..2 {
        assert!(net.mems[i][&SEG] == model[i], "seed {seed}: final memory");
        assert!(sides[i].checks > 0 && sides[i].puts > 100);
    }
    (net.sent, st.iter().map(|s| s.resends).sum())
}

#[test]
fn mpi_traffic_over_the_reordering_class() {
    let seeds: u64 = std::env::var("MYRIX_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let first: u64 = std::env::var("MYRIX_SEED0")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    for seed in first..first + seeds {
        let (sent, resends) = run(seed, 10);
        eprintln!("seed {seed}: {sent} frames, {resends} resends");
    }
}

/// Two nodes getting large ranges from each other at once (MPI_Get both ways, as
/// `rma_random.c` does), on a perfect network. Each get waits for the read window,
/// which opens when the peer answers; the answers used to wait in the same queue
/// behind the peer's own get: both waited for ever, with nothing in flight.
#[test]
fn gets_both_ways_at_once_do_not_wait_for_each_other() {
    let mut net = Net::new(2, net_config(), NetConfig::lossy(0.0, 1));
    for i in 0..2 {
        let mem: Vec<u8> = (0..LEN).map(|b| (b * (i + 3)) as u8).collect();
        net.mems[i].insert(SEG, mem);
        net.engines[i]
            .publish(SEG, Acl::Open(Perm(0o666)), USER)
            .unwrap();
    }
    let mut imps = Vec::new();
    for from in 0..2 {
        let to = 1 - from;
        let imp = net.engines[from]
            .connect(to, NodeId(to as u32), SEG, Perm::RDWR, USER)
            .unwrap();
        net.wait_for(from, |e| matches!(e, Event::Connected { .. }).then_some(()));
        imps.push(imp);
    }
    let gets: Vec<GetId> = (0..2)
        .map(|i| net.engines[i].get(imps[i], 0, LEN as u64).unwrap())
        .collect();
    for (i, &want) in gets.iter().enumerate() {
        let got = net.wait_for(i, |e| match e {
            Event::GetDone { get, result, .. } if *get == want => Some(result.clone()),
            _ => None,
        });
        assert!(got.unwrap() == net.mems[1 - i][&SEG], "engine {i}'s get");
    }
}
