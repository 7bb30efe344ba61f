//! A node that leaves (its controller released, its process exiting) says so with a
//! bye ([`Engine::leave`]), so that neither side of a connection waits out the retry
//! limit because the network lost a frame at the end (issue 21, docs/rsm.md
//! "Leaving: the bye").
//!
//! The cases, over the deterministic test network:
//! * the side that leaves first has everything acknowledged, but its ack of the
//!   peer's last frame is lost: the peer resent that frame to nobody and its own drain
//!   waited the whole retry limit;
//! * an exporter that exits without unpublishing while the importer's last flush is
//!   lost: the flush used to end `RemoteNodeUnreachable` after the retry limit; the
//!   segment's owner went away, so it ends `ConnAborted`, at once;
//! * both sides leave at once over a lossy network: both finish, well within the limit.

mod common;

use common::{Net, NetConfig};
use myrix_rsm_proto::engine::{Config, Engine, Event, Import};
use myrix_rsm_proto::{Acl, Credentials, NodeId, Perm, RsmError, SegmentId};

const SEG: SegmentId = SegmentId(0x8000_0003);
const USER: Credentials = Credentials {
    uid: 1000,
    gid: 100,
};

/// Node `exp` exports `SEG` (4 KiB), node `imp` imports it.
fn connect(net: &mut Net, exp: usize, imp: usize) -> Import {
    net.mems[exp].insert(SEG, vec![0; 4096]);
    net.engines[exp]
        .publish(SEG, Acl::Open(Perm(0o666)), USER)
        .unwrap();
    let i = net.engines[imp]
        .connect(exp, NodeId(exp as u32), SEG, Perm::RDWR, USER)
        .unwrap();
    let r = net.wait_for(imp, |e| match e {
        Event::Connected { import, result } if *import == i => Some(*result),
        _ => None,
    });
    r.unwrap();
    i
}

fn two_nodes(loss: f64, seed: u64) -> Net {
    Net::new(2, Config::fast_timers(), NetConfig::lossy(loss, seed))
}

/// Node `i`'s process ends: it leaves, drains until idle (its byes acknowledged), and
/// is gone: nothing reaches it or comes from it any more.
fn exit(net: &mut Net, i: usize) {
    net.engines[i].leave();
    let limit = net.engines[i].config().timeout_ns;
    let idle = net.run_until(limit, |n| n.engines[i].idle());
    assert!(idle, "node {i} never drained its bye");
    net.cut.insert(i);
}

fn unreachable_reported(net: &mut Net, i: usize) -> bool {
    net.take_events(i)
        .iter()
        .any(|e| matches!(e, Event::PeerUnreachable { .. }))
}

#[test]
fn a_lost_last_ack_of_the_side_that_left_does_not_hold_the_peer() {
    let mut net = two_nodes(0.0, 5);
    let imp = connect(&mut net, 0, 1);
    net.engines[1].put(imp, 8, b"last").unwrap();
    net.engines[1].disconnect(imp).unwrap();
    // The exporter's signal crosses the disconnect: the importer gets it after its own
    // last frame went, and its ack of it is lost.
    net.engines[0].signal_importers(SEG, false).unwrap();
    net.drop_acks_from.insert(1);
    let idle = net.run_until(1_000_000_000, |n| n.engines[1].idle());
    assert!(idle, "the importer's disconnect was never acknowledged");
    assert_eq!(
        &net.mems[0][&SEG][8..12],
        b"last",
        "the last put was not applied"
    );
    exit(&mut net, 1);
    let start = net.now;
    let limit = net.engines[0].config().timeout_ns;
    let idle = net.run_until(limit * 2, |n| n.engines[0].idle());
    let took = net.now - start;
    assert!(
        idle && took < limit / 10,
        "the exporter drained in {took} ns, limit {limit} ns"
    );
    assert!(
        !unreachable_reported(&mut net, 0),
        "the importer was declared unreachable"
    );
}

#[test]
fn an_exporter_that_exits_aborts_the_importers_lost_flush() {
    let mut net = two_nodes(0.0, 6);
    let imp = connect(&mut net, 0, 1);
    net.engines[1].put(imp, 0, b"lost").unwrap();
    let f = net.engines[1].flush(imp).unwrap();
    // The put and the flush are lost; the exporter, idle, exits without unpublishing.
    let mut buf = vec![0u8; net.engines[1].config().mtu];
    let mut lost = 0;
    while net.engines[1].poll_transmit(net.now, &mut buf).is_some() {
        lost += 1;
    }
    assert!(lost >= 2, "the put and the flush were not both sent");
    let start = net.now;
    exit(&mut net, 0);
    let r = net.wait_for(1, |e| match e {
        Event::BarrierDone { flush, result, .. } if *flush == f => Some(*result),
        _ => None,
    });
    let took = net.now - start;
    assert_eq!(r, Err(RsmError::ConnAborted), "after {took} ns");
    let limit = net.engines[1].config().timeout_ns;
    assert!(took < limit / 10, "took {took} ns, retry limit {limit} ns");
    // Later calls on the import say why too.
    assert_eq!(net.engines[1].put(imp, 0, b"x"), Err(RsmError::ConnAborted));
}

#[test]
fn both_sides_leaving_at_once_over_a_lossy_network_end_quickly() {
    for seed in 0..40 {
        let mut net = two_nodes(0.2, 100 + seed);
        let a = connect(&mut net, 0, 1);
        let b = connect(&mut net, 1, 0);
        net.engines[1].put(a, 0, b"to node 0").unwrap();
        net.engines[0].put(b, 0, b"to node 1").unwrap();
        net.engines[0].signal_importers(SEG, false).unwrap();
        net.engines[1].signal_importers(SEG, false).unwrap();
        net.engines[0].disconnect(b).unwrap();
        net.engines[1].disconnect(a).unwrap();
        let limit = net.engines[0].config().timeout_ns;
        let start = net.now;
        let drained = net.run_until(limit, |n| n.engines.iter().all(Engine::idle));
        assert!(drained, "seed {seed}: no drain");
        assert_eq!(&net.mems[0][&SEG][..9], b"to node 0", "seed {seed}");
        assert_eq!(&net.mems[1][&SEG][..9], b"to node 1", "seed {seed}");
        net.engines[0].leave();
        net.engines[1].leave();
        let left = net.run_until(limit, |n| n.engines.iter().all(Engine::idle));
        let took = net.now - start;
        assert!(
            left && took < limit / 10,
            "seed {seed}: {took} ns, limit {limit} ns"
        );
        assert!(!unreachable_reported(&mut net, 0), "seed {seed}");
        assert!(!unreachable_reported(&mut net, 1), "seed {seed}");
    }
}

#[test]
fn a_node_that_left_is_a_peer_again_in_its_next_session() {
    let mut net = two_nodes(0.0, 7);
    let imp = connect(&mut net, 0, 1);
    exit(&mut net, 1);
    assert_eq!(
        net.engines[0].connections(SEG),
        0,
        "the left node's connection stays"
    );
    // Node 1's process starts again (a newer session) and connects again.
    net.cut.remove(&1);
    net.engines[1] = Engine::new(Config::fast_timers(), NodeId(1), 2);
    net.engines[1].add_node(0, NodeId(0));
    let _ = imp;
    let i = net.engines[1]
        .connect(0, NodeId(0), SEG, Perm::RDWR, USER)
        .unwrap();
    let r = net.wait_for(1, |e| match e {
        Event::Connected { import, result } if *import == i => Some(*result),
        _ => None,
    });
    assert!(r.is_ok(), "{r:?}");
    net.engines[1].put(i, 0, b"again").unwrap();
    let f = net.engines[1].flush(i).unwrap();
    let r = net.wait_for(1, |e| match e {
        Event::BarrierDone { flush, result, .. } if *flush == f => Some(*result),
        _ => None,
    });
    assert_eq!(r, Ok(()));
    assert_eq!(&net.mems[0][&SEG][..5], b"again");
}
