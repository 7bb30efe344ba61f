//! A link that fails and comes back (a rail whose veth went down, then up): the side
//! that declared its peer unreachable starts its numbering afresh and presents a newer
//! session; the peer, seeing it, starts afresh too (failing what it had with the old
//! numbering); a new connect then works both ways and every byte arrives. Before, each
//! side kept its numbering: the peer dropped the fresh frames as duplicates while
//! acknowledging them, and the link could never be used again.

mod common;

use common::{Net, NetConfig};
use myrix_rsm_proto::engine::{Config, Event, Import};
use myrix_rsm_proto::{Acl, Credentials, NodeId, Perm, RsmError, SegmentId};

const USER: Credentials = Credentials { uid: 1, gid: 1 };
const SEG: SegmentId = SegmentId(0x8000_0077);
const LEN: usize = 16 * 1024;

fn cfg() -> Config {
    Config {
        timeout_ns: 20_000_000,
        ..Config::fast_timers()
    }
}

fn net(seed: u64) -> Net {
    let mut net = Net::new(2, cfg(), NetConfig::lossy(0.02, seed));
    for i in 0..2 {
        net.mems[i].insert(SEG, vec![0; LEN]);
        net.engines[i]
            .publish(SEG, Acl::Open(Perm(0o666)), USER)
            .unwrap();
    }
    net
}

fn connect(net: &mut Net, from: usize) -> Result<Import, RsmError> {
    let to = 1 - from;
    let imp = net.engines[from].connect(to, NodeId(to as u32), SEG, Perm::RDWR, USER)?;
    net.wait_for(from, |e| match e {
        Event::Connected { import, result } if *import == imp => Some(*result),
        _ => None,
    })
    .map(|_| imp)
}

/// Puts `fill` over the whole segment and waits for the barrier.
fn put_all(net: &mut Net, from: usize, imp: Import, fill: u8) -> Result<(), RsmError> {
    net.engines[from].put(imp, 0, &vec![fill; LEN])?;
    let f = net.engines[from].flush(imp)?;
    net.wait_for(from, |e| match e {
        Event::BarrierDone { flush, result, .. } if *flush == f => Some(*result),
        _ => None,
    })
}

fn wait_unreachable(net: &mut Net, i: usize) {
    net.wait_for(i, |e| {
        matches!(e, Event::PeerUnreachable { .. }).then_some(())
    });
}

/// Only the importer notices (the exporter had nothing to send): after the link comes
/// back, a new connect reaches the exporter, which drops the old connection.
#[test]
fn a_link_that_comes_back_is_used_again_after_one_side_timed_out() {
    let mut net = net(1);
    let imp = connect(&mut net, 1).unwrap();
    put_all(&mut net, 1, imp, 1).unwrap();
    assert_eq!(net.mems[0][&SEG], vec![1; LEN]);

    net.cut.insert(0);
    net.engines[1].put(imp, 0, &[2; 64]).unwrap();
    let f = net.engines[1].flush(imp).unwrap();
    let r = net.wait_for(1, |e| match e {
        Event::BarrierDone { flush, result, .. } if *flush == f => Some(*result),
        _ => None,
    });
    assert_eq!(r, Err(RsmError::RemoteNodeUnreachable));
    assert!(net.engines[1].peer_unreachable(&0));
    net.cut.clear();

    let imp2 = connect(&mut net, 1).expect("the link is back");
    put_all(&mut net, 1, imp2, 3).unwrap();
    assert_eq!(net.mems[0][&SEG], vec![3; LEN]);
    assert!(!net.engines[1].peer_unreachable(&0));
    assert_eq!(
        net.engines[0].connections(SEG),
        1,
        "the old connection is gone"
    );
    // The old import stays failed.
    assert!(net.engines[1].put(imp, 0, &[4]).is_err());
    net.settle();
}

/// Both sides time out (both had writes in flight), then each connects again: each
/// waits for the other's newer session and accepts it without failing the new work.
#[test]
fn both_sides_timed_out_and_both_connect_again() {
    let mut net = net(2);
    let imps = [connect(&mut net, 0).unwrap(), connect(&mut net, 1).unwrap()];
    net.cut.insert(0);
    for (i, imp) in imps.into_iter().enumerate() {
        net.engines[i].put(imp, 0, &[9; 256]).unwrap();
        net.engines[i].flush(imp).unwrap();
    }
    wait_unreachable(&mut net, 0);
    wait_unreachable(&mut net, 1);
    net.cut.clear();
    for round in 0..3u8 {
        let a = connect(&mut net, 0).unwrap();
        let b = connect(&mut net, 1).unwrap();
        put_all(&mut net, 0, a, 10 + round).unwrap();
        put_all(&mut net, 1, b, 20 + round).unwrap();
        assert_eq!(net.mems[1][&SEG], vec![10 + round; LEN]);
        assert_eq!(net.mems[0][&SEG], vec![20 + round; LEN]);
        if round < 2 {
            // Down again, long enough for both to notice.
            net.cut.insert(1);
            net.engines[0].put(a, 0, &[0; 8]).unwrap();
            net.engines[1].put(b, 0, &[0; 8]).unwrap();
            wait_unreachable(&mut net, 0);
            wait_unreachable(&mut net, 1);
            net.cut.clear();
            // What was written before the cut is still there: nothing of the old
            // numbering is applied after.
            net.run_until(50_000_000, |_| false);
            assert_eq!(net.mems[1][&SEG][8..], vec![10 + round; LEN - 8][..]);
        }
    }
    net.settle();
}

/// One side timed out while the other's import was idle: that import fails with
/// "connection aborted" when the peer comes back (its numbering is gone), and a new
/// connect works.
#[test]
fn the_idle_side_learns_the_peer_started_afresh() {
    let mut net = net(3);
    let idle = connect(&mut net, 0).unwrap();
    let busy = connect(&mut net, 1).unwrap();
    net.settle(); // everything of engine 0 acknowledged: it has nothing to time out on
    net.cut.insert(1);
    net.engines[1].put(busy, 0, &[5; 100]).unwrap();
    wait_unreachable(&mut net, 1);
    net.cut.clear();
    let again = connect(&mut net, 1).unwrap();
    put_all(&mut net, 1, again, 6).unwrap();
    let r = put_all(&mut net, 0, idle, 7);
    assert_eq!(r, Err(RsmError::ConnAborted));
    let fresh = connect(&mut net, 0).unwrap();
    put_all(&mut net, 0, fresh, 8).unwrap();
    assert_eq!(net.mems[1][&SEG], vec![8; LEN]);
    assert_eq!(net.mems[0][&SEG], vec![6; LEN]);
    net.settle();
}

/// Nobody has anything to send when the link comes back: the side that declared its
/// peer unreachable probes it, the peer answers with its newer session, and the link
/// is known to be back before any connect (what a rail layer checks to use a rail
/// again).
#[test]
fn a_probe_notices_a_link_that_came_back() {
    let mut net = net(4);
    let imp = connect(&mut net, 1).unwrap();
    net.settle();
    net.cut.insert(0);
    net.engines[1].put(imp, 0, &[1; 10]).unwrap();
    wait_unreachable(&mut net, 1);
    net.run_until(3 * cfg().timeout_ns, |_| false);
    assert!(net.engines[1].peer_unreachable(&0), "still cut");
    net.cut.clear();
    let back = net.run_until(3 * cfg().timeout_ns, |n| !n.engines[1].peer_unreachable(&0));
    assert!(back, "the probe did not find the peer");
    assert!(net.engines[1].stats().probes >= 2);
    let imp2 = connect(&mut net, 1).unwrap();
    put_all(&mut net, 1, imp2, 2).unwrap();
    assert_eq!(net.mems[0][&SEG], vec![2; LEN]);
}
