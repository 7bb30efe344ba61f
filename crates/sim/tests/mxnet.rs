//! MX engines talking over the simulated network.

use myrix_fabric::itb::{Policy, RouteTable};
use myrix_fabric::testing::irregular_routes;
use myrix_fabric::Topology;
use myrix_link::Nanos;
use myrix_mx_proto::engine::{Code, Config as MxConfig, PeerId, RecvBuf, Request};
use myrix_sim::hostnet::carrier;
use myrix_sim::mxnet::MxNet;
use myrix_sim::Config;

const KEY: u32 = 0x5eed;

fn net() -> (Topology, RouteTable) {
    irregular_routes(16, 1, Policy::Osud)
}

fn done(n: &mut MxNet, h: usize, r: Request) -> bool {
    n.engines[h].ready(r)
}

/// Connects host `a` to host `b`; returns `a`'s peer id for `b`.
fn connect(n: &mut MxNet, t: &Topology, a: usize, b: usize) -> PeerId {
    n.connect(a, b, t.hosts()[b].address, KEY, Nanos(10_000_000))
        .unwrap()
}

/// Sends `len` patterned bytes from `a` to `b`; returns the ticks from the send to the
/// receive's completion and the length of the last frame sent by then.
fn transfer(n: &mut MxNet, peer: PeerId, a: usize, b: usize, len: usize) -> (u64, usize) {
    let data: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
    let now = n.now_ns();
    let rr = n.engines[b]
        .irecv(now, RecvBuf::One(vec![0; len]), 42, u64::MAX, 0)
        .unwrap();
    let t0 = n.sim.now_ticks();
    let sr = n.engines[a]
        .isend(now, peer, &[&data], 42, 0, false)
        .unwrap();
    assert!(
        n.run_until(Nanos(200_000_000), |n| done(n, b, rr)),
        "{len} B not received"
    );
    let ticks = (n.sim.now_ticks() - t0).0;
    let frame = n.last_frame_len;
    assert!(
        n.run_until(Nanos(200_000_000), |n| done(n, a, sr)),
        "{len} B send not done"
    );
    let (st, buf) = n.engines[b].test(rr).unwrap().unwrap();
    assert_eq!(
        (st.code, st.msg_len, st.xfer_len),
        (Code::Success, len, len)
    );
    assert_eq!(buf.unwrap().to_vec(), data, "{len} B arrived changed");
    (ticks, frame)
}

fn mxnet<'a>(t: &'a Topology, routes: &'a RouteTable, load: Option<f64>) -> MxNet<'a> {
    let sim = carrier(Config::default(), t, routes, load).unwrap();
    let addrs: Vec<u64> = t.hosts().iter().map(|h| h.address).collect();
    MxNet::new(sim, &addrs, &MxConfig::default(), KEY)
}

#[test]
fn every_message_class_crosses_the_simulated_network_intact() {
    let (t, routes) = net();
    for load in [None, Some(0.012)] {
        let mut n = mxnet(&t, &routes, load);
        let peer = connect(&mut n, &t, 0, 63);
        // Tiny, small, medium (eager fragments) and large (rendezvous and pull).
        for len in [0, 8, 100, 4000, 40_000, 300_000] {
            transfer(&mut n, peer, 0, 63, len);
        }
        assert_eq!(n.frames_refused, 0);
        if load.is_some() {
            // The generated traffic ran alongside.
            assert!(n.sim.delivered_by_source().iter().sum::<u64>() > 1000);
        }
    }
}

#[test]
fn a_tiny_message_takes_the_network_s_zero_load_latency() {
    // On a quiet network an 8-byte message is one frame of n bytes: it arrives
    // (k+1) cables x 8 ticks + k switches x 24 ticks + (type + n + CRC) - 1 ticks after
    // it left (as in the model's own zero-load test), and the receive completes in the
    // tick it arrives (one more to step past it).
    let (t, routes) = net();
    let mut n = mxnet(&t, &routes, None);
    let peer = connect(&mut n, &t, 0, 63);
    // Let the connection's acknowledgements drain first.
    let idle = n.now_ns() + 5_000_000;
    n.run_until(Nanos(10_000_000), |n| {
        n.now_ns() > idle && n.in_flight() == 0
    });
    let (ticks, frame) = transfer(&mut n, peer, 0, 63, 8);
    let hosts = t.hosts();
    let links = routes
        .alternatives(hosts[0].switch, hosts[63].switch)
        .at(0)
        .len() as u64;
    let k = links + 1;
    let frame = frame as u64;
    let want = (k + 1) * 8 + k * 24 + (frame + 2) - 1 + 1;
    assert_eq!(ticks, want, "{k} switches, frame of {frame} bytes");
}
