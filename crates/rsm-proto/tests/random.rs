//! Randomized: several importers on different nodes do thousands of puts, gets,
//! barriers and signals on two exported segments over the lossy test network (0 %, 1 %
//! and 20 % loss, with duplication and reordering), checked against a model of the
//! memory. Each importer owns a region of each segment, so what it reads back is
//! determined by what it wrote before (an importer's accesses are applied in order);
//! at the end the exporter's memory must equal the model byte for byte. Half the puts
//! go through `Engine::put_now` (the frame built at once when nothing waits ahead of
//! it, else queued as by `put`), sent into the network as `poll_transmit`'s frames are.

#![allow(clippy::needless_range_loop)] // importers are numbered: k indexes several tables

mod common;

use std::collections::HashMap;

use common::{Net, NetConfig};
use myrix_rsm_proto::engine::{Config, Event, FlushId, GetId, Import, SignalTarget};
use myrix_rsm_proto::{Acl, Credentials, NodeId, Perm, SegmentId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const USER: Credentials = Credentials {
    uid: 1000,
    gid: 100,
};
const IMPORTERS: usize = 3;
/// Segments and the region each importer owns in them.
const SEGS: [(SegmentId, usize); 2] = [
    (SegmentId(0x8000_00a0), 16 * 1024),
    (SegmentId(0x8000_00b0), 8 * 1024),
];

struct Totals {
    puts: usize,
    gets: usize,
    barriers: usize,
    signals: usize,
    bytes: usize,
    /// Puts whose frame `put_now` built at once.
    direct: usize,
}

fn run(loss: f64, seed: u64, rounds: usize) -> Totals {
    run_on(NetConfig::lossy(loss, seed), false, rounds)
}

/// `reliable`: the engines are told the transport never loses nor reorders (shared
/// memory): no acks, no timers.
fn run_on(netcfg: NetConfig, reliable: bool, rounds: usize) -> Totals {
    let (loss, seed) = (netcfg.loss, netcfg.seed);
    // Small blocks and windows, so gets are pulled in many blocks and puts wait for the
    // window.
    let cfg = Config {
        read_block: 4096,
        read_window: 8192,
        write_window: 32 * 1024,
        reliable_transport: reliable,
        ..Config::fast_timers()
    };
    let mut frame = vec![0u8; cfg.mtu];
    let mut net = Net::new(1 + IMPORTERS, cfg, netcfg);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut model: HashMap<SegmentId, Vec<u8>> = HashMap::new();
    for (seg, region) in SEGS {
        let init: Vec<u8> = (0..region * IMPORTERS).map(|i| (i * 7) as u8).collect();
        net.mems[0].insert(seg, init.clone());
        model.insert(seg, init);
        net.engines[0]
            .publish(seg, Acl::Open(Perm(0o666)), USER)
            .unwrap();
    }
    // imports[k][s]: importer k's import of segment s.
    let mut imports: Vec<Vec<Import>> = vec![Vec::new(); IMPORTERS];
    for k in 0..IMPORTERS {
        for (seg, _) in SEGS {
            let node = k + 1;
            let imp = net.engines[node]
                .connect(0, NodeId(0), seg, Perm::RDWR, USER)
                .unwrap();
            let len = net.wait_for(node, |e| match e {
                Event::Connected { import, result } if *import == imp => Some(*result),
                _ => None,
            });
            assert_eq!(len, Ok(seg_len(seg) as u64));
            imports[k].push(imp);
        }
    }
    let mut t = Totals {
        puts: 0,
        gets: 0,
        barriers: 0,
        signals: 0,
        bytes: 0,
        direct: 0,
    };
    let mut signals_to_exporter = [0usize; IMPORTERS];
    let mut signals_to_importers = 0usize;
    for _round in 0..rounds {
        // What each importer waits for this round.
        let mut want_gets: Vec<HashMap<GetId, Vec<u8>>> = vec![HashMap::new(); IMPORTERS];
        let mut want_flushes: Vec<Vec<FlushId>> = vec![Vec::new(); IMPORTERS];
        for k in 0..IMPORTERS {
            let node = k + 1;
            let s = rng.gen_range(0..SEGS.len());
            let (seg, region) = SEGS[s];
            let imp = imports[k][s];
            let base = k * region;
            let explicit = rng.gen_bool(0.7);
            if explicit {
                net.engines[node].open_barrier(imp).unwrap();
            }
            for _ in 0..rng.gen_range(10..40) {
                let len = if rng.gen_bool(0.05) {
                    rng.gen_range(1..=region)
                } else {
                    rng.gen_range(1..=96)
                };
                let off = base + rng.gen_range(0..=region - len);
                match rng.gen_range(0..100) {
                    0..=64 => {
                        let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                        if rng.gen_bool(0.5) {
                            net.engines[node].put(imp, off as u64, &data).unwrap();
                        } else if let Some((dst, n)) = net.engines[node]
                            .put_now(net.now, imp, off as u64, &data, &mut frame)
                            .unwrap()
                        {
                            net.send_frame(node, dst, &frame[..n]);
                            t.direct += 1;
                        }
                        model.get_mut(&seg).unwrap()[off..off + len].copy_from_slice(&data);
                        t.puts += 1;
                        t.bytes += len;
                        if !explicit && rng.gen_bool(0.3) {
                            // Implicit mode: the put is its own scope.
                            want_flushes[k].push(net.engines[node].flush(imp).unwrap());
                            t.barriers += 1;
                        }
                    }
                    65..=89 => {
                        let g = net.engines[node].get(imp, off as u64, len as u64).unwrap();
                        want_gets[k].insert(g, model[&seg][off..off + len].to_vec());
                        t.gets += 1;
                    }
                    _ => {
                        net.engines[node].signal(imp, false).unwrap();
                        signals_to_exporter[k] += 1;
                        t.signals += 1;
                    }
                }
            }
            if explicit {
                want_flushes[k].push(net.engines[node].close_barrier(imp).unwrap());
                t.barriers += 1;
            }
        }
        if rng.gen_bool(0.3) {
            let (seg, _) = SEGS[rng.gen_range(0..SEGS.len())];
            assert_eq!(net.engines[0].signal_importers(seg, false), Ok(IMPORTERS));
            signals_to_importers += 1;
            t.signals += 1;
        }
        // Wait for the round's gets and barriers, checking each.
        let ok = net.run_until(60_000_000_000, |n| {
            for k in 0..IMPORTERS {
                let evs = std::mem::take(&mut n.events[k + 1]);
                for e in evs {
                    match e {
                        Event::GetDone { get, result, .. } => {
                            let want = want_gets[k].remove(&get).expect("a get of this round");
                            assert_eq!(result.expect("get succeeds"), want, "get {get:?}");
                        }
                        Event::BarrierDone { flush, result, .. } => {
                            assert_eq!(result, Ok(()), "barrier {flush:?}");
                            let i = want_flushes[k].iter().position(|f| *f == flush);
                            want_flushes[k].remove(i.expect("a flush of this round"));
                        }
                        other => n.events[k + 1].push(other),
                    }
                }
            }
            want_gets.iter().all(|g| g.is_empty()) && want_flushes.iter().all(|f| f.is_empty())
        });
        assert!(ok, "round did not finish (loss {loss})");
    }
    net.settle();
    for (seg, _) in SEGS {
        assert!(
            net.mems[0][&seg] == model[&seg],
            "memory differs from the model"
        );
    }
    // Signals: every one arrived once, from the right node.
    let mut got = [0usize; IMPORTERS];
    for e in net.take_events(0) {
        match e {
            Event::Signal {
                target: SignalTarget::Export(_),
                from,
            } => got[from.0 as usize - 1] += 1,
            other => panic!("exporter event {other:?}"),
        }
    }
    assert_eq!(got, signals_to_exporter);
    for k in 0..IMPORTERS {
        let n = net
            .take_events(k + 1)
            .into_iter()
            .filter(|e| {
                matches!(e, Event::Signal { target: SignalTarget::Import(i), from: NodeId(0) }
                    if imports[k].contains(i))
            })
            .count();
        assert_eq!(n, signals_to_importers);
    }
    for e in &net.engines {
        assert_eq!(e.buffers_held(), 0);
        assert!(e.idle());
    }
    let s = net.engines[0].stats();
    if loss > 0.0 {
        assert!(net.lost > 0 && net.duplicated > 0);
        assert!(s.duplicates > 0 || net.engines[1].stats().duplicates > 0);
    }
    assert_eq!(s.writes_refused, 0);
    // Without acks (a lossless transport) nothing is sent at once; else some puts are
    // (those with nothing queued ahead: 2-3 % here, where puts come in bursts).
    if reliable {
        assert_eq!(t.direct, 0);
    } else {
        assert!(
            t.direct >= t.puts / 100,
            "{} of {} puts direct",
            t.direct,
            t.puts
        );
    }
    eprintln!(
        "loss {loss}: {} puts ({} B, {} built at once), {} gets, {} barriers, {} signals; {} frames sent, {} lost, {} duplicated, simulated {} ms",
        t.puts, t.bytes, t.direct, t.gets, t.barriers, t.signals, net.sent, net.lost, net.duplicated, net.now / 1_000_000
    );
    t
}

fn seg_len(seg: SegmentId) -> usize {
    SEGS.iter().find(|(s, _)| *s == seg).unwrap().1 * IMPORTERS
}

fn enough(t: &Totals) {
    assert!(t.puts + t.gets + t.barriers + t.signals >= 2000);
    assert!(t.gets >= 400 && t.barriers >= 100 && t.signals >= 100);
}

#[test]
fn random_ops_match_the_model_without_loss() {
    enough(&run(0.0, 1, 40));
}

#[test]
fn random_ops_match_the_model_at_1_percent_loss() {
    enough(&run(0.01, 2, 40));
}

#[test]
fn random_ops_match_the_model_at_20_percent_loss() {
    enough(&run(0.20, 3, 40));
}

#[test]
fn random_ops_match_the_model_on_a_lossless_transport_without_acks() {
    let cfg = NetConfig {
        latency_ns: 300,
        jitter_ns: 0,
        loss: 0.0,
        duplicate: 0.0,
        slow: 0.0,
        slow_ns: 0,
        seed: 4,
    };
    enough(&run_on(cfg, true, 40));
}
