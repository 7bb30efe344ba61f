//! RSM engines over the simulated network: the zero-load latency of a put worked out by
//! hand, random puts and gets against a model of the memory, signals, and RSM beside the
//! simulator's own traffic.

use super::*;
use crate::{wire_bytes, Config};
use myrix_fabric::itb::{Policy, RouteTable};
use myrix_fabric::testing::irregular_routes;
use myrix_fabric::Topology;
use myrix_wire::rsm::{HEADER_LEN, READ_REPLY_HEAD, WRITE_HEAD};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const LIMIT: Nanos = Nanos(50_000_000);
const SEG: SegmentId = SegmentId(0x8000_0001);

fn net() -> (Topology, RouteTable) {
    irregular_routes(16, 1, Policy::Osud)
}

fn rsmnet<'a>(t: &'a Topology, routes: &'a RouteTable, load: Option<f64>) -> RsmNet<'a> {
    let sim = crate::hostnet::carrier(Config::default(), t, routes, load).unwrap();
    RsmNet::new(sim, t.num_hosts(), &RsmConfig::fast_timers())
}

fn open() -> Acl {
    Acl::Open(Perm(0o666))
}

/// Switches a packet from host `a` to host `b` crosses.
fn switches(t: &Topology, routes: &RouteTable, a: usize, b: usize) -> u64 {
    let h = t.hosts();
    routes.alternatives(h[a].switch, h[b].switch).at(0).len() as u64 + 1
}

#[test]
fn a_put_takes_the_zero_load_latency_worked_out_by_hand() {
    let (t, routes) = net();
    let (a, b) = (0, 63);
    let mut n = rsmnet(&t, &routes, None);
    n.publish(b, SEG, 4096, open()).unwrap();
    let imp = n.connect(a, b, SEG, Perm::RDWR, LIMIT).unwrap();
    // Let the connection's delayed acknowledgements drain first.
    assert!(n.settle(LIMIT));

    // The simulator's figures (Config::default(), the study's): a tick is one flit time,
    // 6.25 ns (a byte at 160 MB/s). Every cable of this topology is 10 m at 1.5 ns/ft
    // = 49.2 ns, ceil(49.2 / 6.25) = 8 ticks. A switch forwards the first byte after the
    // route byte 150 ns = 24 ticks after the header arrived.
    let sc = Config::default();
    assert!(t.hosts().iter().all(|h| h.length_m == 10.0));
    assert!(t.links().iter().all(|l| l.length_m == 10.0));
    let tick_ps = sc.flit.0;
    assert_eq!(tick_ps, 6_250);
    let c = (10.0 * sc.ns_per_m * 1000.0 / tick_ps as f64).ceil() as u64;
    assert_eq!(c, 8);
    let r = sc.switch_latency.0 / tick_ps;
    assert_eq!(r, 24);
    // This route: k switches each way (up*/down* may differ by direction).
    let (kf, kb) = (switches(&t, &routes, a, b), switches(&t, &routes, b, a));
    // A frame of n bytes, sent in the tick a step starts at T, is handed to its engine
    // by the step that ends at T + d(n): its header crosses k+1 cables and k switches
    // (the route byte is stripped at each), then type + n + CRC bytes follow one a tick,
    // the last arriving n + 1 ticks after the first; the step ending then is one more.
    let d = |n: u64, k: u64| (k + 1) * c + k * r + (1 + n + 1 - 1) + 1;

    // 1. A put of 8 bytes: one Write frame (24-byte head + data), in the exporter's
    //    memory when it arrives.
    let write = (WRITE_HEAD + 8) as u64;
    assert_eq!(write, 32);
    let t0 = n.sim.now_ticks().0;
    n.put(a, imp, 0, &[7; 8]).unwrap();
    assert!(n.run_until(LIMIT, |n| n.memory(b, SEG)[..8] == [7; 8]));
    let one_way = n.sim.now_ticks().0 - t0;
    assert_eq!(n.last_frame_len as u64, write);
    let want = d(write, kf);
    assert_eq!(
        one_way, want,
        "{kf} switches: put visible after {one_way} ticks"
    );

    // 2. Put + barrier close (the benchmark's put latency): the Write frame and the Flush
    //    frame leave in the same tick T0, the Flush behind the Write. Under the default
    //    channel release (drain) the host may start the Flush only when the Write's tail
    //    has left the first switch's input buffer: its header arrives at T0 + c, the byte
    //    after the route byte leaves at T0 + c + r, and the other W - 2 wire bytes
    //    follow, one a tick, where W = wire_bytes(Write) = k route bytes + type + 32 +
    //    CRC. So the Flush starts at S = T0 + c + r + W - 2 (then it runs one switch
    //    turn behind the Write and never waits for it), and the exporter answers with a
    //    FlushReply in the tick after the Flush is delivered.
    assert!(n.settle(LIMIT));
    // Flush: 12-byte header + exporter's conn + token; FlushReply: header + token +
    // status (docs/rsm.md).
    let flush = (HEADER_LEN + 4 + 4) as u64;
    let reply = (HEADER_LEN + 4 + 4) as u64;
    assert_eq!((flush, reply), (20, 20));
    let wire = wire_bytes(write as usize, kf as usize - 1, 1) as u64;
    assert_eq!(wire, kf + 2 + write);
    let t0 = n.sim.now_ticks().0;
    n.engines[a].engine.open_barrier(imp).unwrap();
    n.put(a, imp, 8, &[9; 8]).unwrap();
    n.close_barrier(a, imp, LIMIT).unwrap();
    let closed = n.sim.now_ticks().0 - t0;
    let start_flush = c + r + wire - 2;
    let want = start_flush + d(flush, kf) + d(reply, kb);
    assert_eq!(
        closed, want,
        "{kf}/{kb} switches: put + barrier close took {closed} ticks"
    );
    // 3. A get of 8 bytes: a ReadReq (header + conn + request + offset + length = 32
    //    bytes) there, answered in the tick after it is delivered by a ReadReply
    //    (28-byte head + the data) back.
    assert!(n.settle(LIMIT));
    let (req, rep) = (HEADER_LEN as u64 + 20, READ_REPLY_HEAD as u64 + 8);
    assert_eq!((req, rep), (32, 36));
    let t0 = n.sim.now_ticks().0;
    assert_eq!(n.get(a, imp, 0, 8, LIMIT).unwrap(), [7; 8]);
    let got = n.sim.now_ticks().0 - t0;
    assert_eq!(got, d(req, kf) + d(rep, kb), "a get took {got} ticks");
    // In nanoseconds (ticks of 6.25 ns), for the docs.
    eprintln!(
        "zero-load: {kf} switches there, {kb} back; put visible {one_way} ticks = {} ns, put + close {closed} ticks = {} ns, get {got} ticks = {} ns",
        one_way as f64 * 6.25,
        closed as f64 * 6.25,
        got as f64 * 6.25
    );
}

/// The segment length of every exporter in the random test.
const LEN: usize = 6000;

/// Random puts and gets by several importers into the segments of several exporters,
/// in rounds: each importer writes only its own stripe of a segment (so importers never
/// race each other) and reads its stripe back in the same round (its reads follow its own
/// writes); at the end of a round every import is flushed and whole segments are read
/// by anyone. Every get and, at the end, every byte of memory is checked against the
/// model.
fn random_traffic(n: &mut RsmNet, hosts: &[usize], rounds: usize, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut model: Vec<Vec<u8>> = vec![vec![0; LEN]; hosts.len()];
    for &h in hosts {
        n.publish(h, SEG, LEN, open()).unwrap();
    }
    // imps[i][j]: importer i's import of exporter j's segment.
    let mut imps = vec![vec![None; hosts.len()]; hosts.len()];
    for (i, &a) in hosts.iter().enumerate() {
        for (j, &b) in hosts.iter().enumerate() {
            if i != j {
                imps[i][j] = Some(n.connect(a, b, SEG, Perm::RDWR, LIMIT).unwrap());
            }
        }
    }
    let stripe = LEN / hosts.len();
    let mut gets = Vec::new();
    for _ in 0..rounds {
        for _ in 0..12 {
            let i = rng.gen_range(0..hosts.len());
            let j = (i + rng.gen_range(1..hosts.len())) % hosts.len();
            let imp = imps[i][j].unwrap();
            let off = i * stripe + rng.gen_range(0..stripe);
            let len = rng.gen_range(1..=(i + 1) * stripe - off);
            if rng.gen_bool(0.7) {
                let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                n.put(hosts[i], imp, off as u64, &data).unwrap();
                model[j][off..off + len].copy_from_slice(&data);
            } else {
                let id = n.engines[hosts[i]]
                    .engine
                    .get(imp, off as u64, len as u64)
                    .unwrap();
                gets.push((hosts[i], id, model[j][off..off + len].to_vec()));
            }
        }
        for (a, id, want) in gets.drain(..) {
            assert_eq!(
                n.wait_get(a, id, LIMIT).unwrap(),
                want,
                "a get in the round"
            );
        }
        for (i, &a) in hosts.iter().enumerate() {
            for imp in imps[i].iter().flatten() {
                n.flush(a, *imp, LIMIT).unwrap();
            }
        }
        let i = rng.gen_range(0..hosts.len());
        let j = (i + 1) % hosts.len();
        let got = n.get(hosts[i], imps[i][j].unwrap(), 0, LEN as u64, LIMIT);
        assert_eq!(got.unwrap(), model[j], "a whole segment after the flushes");
    }
    for (j, &b) in hosts.iter().enumerate() {
        assert_eq!(n.memory(b, SEG), &model[j][..], "host {b}'s memory");
    }
    assert_eq!(n.frames_refused, 0);
}

#[test]
fn random_puts_and_gets_match_a_model_of_the_memory() {
    let (t, routes) = net();
    let mut n = rsmnet(&t, &routes, None);
    random_traffic(&mut n, &[0, 21, 63], 40, 7);
    let applied: u64 = n
        .engines
        .iter()
        .map(|h| h.engine.stats().writes_applied)
        .sum();
    assert!(applied > 50, "{applied} write frames applied");
}

#[test]
fn signals_name_their_sender_both_ways() {
    let (t, routes) = net();
    let mut n = rsmnet(&t, &routes, None);
    let (x, a, b) = (5, 0, 63);
    n.publish(x, SEG, 64, open()).unwrap();
    let ia = n.connect(a, x, SEG, Perm::RDWR, LIMIT).unwrap();
    let ib = n.connect(b, x, SEG, Perm::READ, LIMIT).unwrap();
    // An importer signals the exporter, behind its put: the put is in memory by then.
    n.put(a, ia, 0, b"ready").unwrap();
    n.engines[a].engine.signal(ia, false).unwrap();
    let (target, from) = n.wait_signal(x, LIMIT).unwrap();
    assert_eq!((target, from), (SignalTarget::Export(SEG), RsmNet::node(a)));
    assert_eq!(&n.memory(x, SEG)[..5], b"ready");
    // The exporter signals all its importers.
    assert_eq!(n.engines[x].engine.signal_importers(SEG, false), Ok(2));
    for (h, imp) in [(a, ia), (b, ib)] {
        let got = n.wait_signal(h, LIMIT).unwrap();
        assert_eq!(got, (SignalTarget::Import(imp), RsmNet::node(x)));
    }
    // Not accumulated: three signals while one is pending make one event.
    for _ in 0..3 {
        n.engines[b].engine.signal(ib, true).unwrap();
    }
    assert!(n.settle(LIMIT));
    assert!(n.wait_signal(x, LIMIT).is_ok());
    assert_eq!(n.wait_signal(x, Nanos(100_000)), Err(RsmError::Timeout));
    assert_eq!(n.engines[x].engine.stats().signals_dropped, 2);
}

#[test]
fn rsm_runs_alongside_the_simulator_s_own_traffic() {
    let (t, routes) = net();
    let mut n = rsmnet(&t, &routes, Some(0.012));
    random_traffic(&mut n, &[3, 40], 6, 11);
    // The generated traffic ran alongside (more packets delivered than RSM sent).
    let delivered: u64 = n.sim.delivered_by_source().iter().sum();
    assert!(delivered > n.frames_sent + 1000, "{delivered} delivered");
}
