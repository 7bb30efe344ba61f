//! An importer's flush or get still unanswered when the exporter's abort (its
//! unpublish) arrives ends with [`RsmError::ConnAborted`] at once, not after the retry
//! limit (issue 21, docs/rsm.md "Disconnect drains").
//!
//! The case, seen once in `c_netns.rs` over a lossy link: the importer posts its last
//! signal and disconnects (a flush, to drain); the signal arrives, the flush frame is
//! lost; the exporter's program, woken by the signal, unpublishes and exits once its
//! abort is acknowledged. Nobody is left to answer the resent flush, which used to wait
//! for the retry limit and fail with `RemoteNodeUnreachable`. The exporter answers in
//! order, so a flush (or block of a get) not answered before the abort would have been
//! answered `ConnAborted`: the abort itself is that answer.

mod common;

use common::{Net, NetConfig};
use myrix_rsm_proto::engine::{Config, Event, Import, SignalTarget};
use myrix_rsm_proto::{Acl, Credentials, NodeId, Perm, RsmError, SegmentId};

const SEG: SegmentId = SegmentId(0x8000_0002);
const USER: Credentials = Credentials {
    uid: 1000,
    gid: 100,
};

/// Node 0 exports `SEG`, node 1 imports it; no loss but what the test makes.
fn connected() -> (Net, Import) {
    let cfg = NetConfig::lossy(0.0, 3);
    let mut net = Net::new(2, Config::fast_timers(), cfg);
    net.mems[0].insert(SEG, vec![0; 4096]);
    net.engines[0]
        .publish(SEG, Acl::Open(Perm(0o666)), USER)
        .unwrap();
    let imp = net.engines[1]
        .connect(0, NodeId(0), SEG, Perm::RDWR, USER)
        .unwrap();
    let r = net.wait_for(1, |e| match e {
        Event::Connected { import, result } if *import == imp => Some(*result),
        _ => None,
    });
    r.unwrap();
    (net, imp)
}

/// Everything node 1 would send now is lost.
fn lose_what_importer_sends(net: &mut Net) {
    let mut buf = vec![0u8; net.engines[1].config().mtu];
    let now = net.now;
    let mut lost = 0;
    while net.engines[1].poll_transmit(now, &mut buf).is_some() {
        lost += 1;
    }
    assert!(lost > 0, "nothing was sent to lose");
}

/// The importer's last signal arrives; what it sends next (`then`) is lost; the
/// exporter unpublishes on the signal and is gone once its abort is acknowledged.
fn exporter_leaves_after_signal(net: &mut Net, imp: Import, then: impl FnOnce(&mut Net)) {
    net.engines[1].signal(imp, false).unwrap();
    net.wait_for(0, |e| match e {
        Event::Signal {
            target: SignalTarget::Export(s),
            ..
        } if *s == SEG => Some(()),
        _ => None,
    });
    then(net);
    lose_what_importer_sends(net);
    net.engines[0].unpublish(SEG).unwrap();
    let idle = net.run_until(1_000_000_000, |n| n.engines[0].idle());
    assert!(idle, "the exporter's abort was never acknowledged");
    // The exporter's process exits: nothing reaches it or comes from it any more.
    net.cut.insert(0);
}

#[test]
fn a_flush_lost_before_the_exporters_abort_ends_aborted_at_once() {
    let (mut net, imp) = connected();
    let start = net.now;
    let mut flush = None;
    exporter_leaves_after_signal(&mut net, imp, |n| {
        flush = Some(n.engines[1].flush(imp).unwrap());
    });
    let f = flush.unwrap();
    let r = net.wait_for(1, |e| match e {
        Event::BarrierDone { flush, result, .. } if *flush == f => Some(*result),
        _ => None,
    });
    let took = net.now - start;
    assert_eq!(r, Err(RsmError::ConnAborted), "after {took} ns");
    let limit = net.engines[1].config().timeout_ns;
    assert!(took < limit / 10, "took {took} ns, retry limit {limit} ns");
}

#[test]
fn a_get_lost_before_the_exporters_abort_ends_aborted_at_once() {
    let (mut net, imp) = connected();
    let start = net.now;
    let mut get = None;
    exporter_leaves_after_signal(&mut net, imp, |n| {
        get = Some(n.engines[1].get(imp, 0, 64).unwrap());
    });
    let g = get.unwrap();
    let r = net.wait_for(1, |e| match e {
        Event::GetDone { get, result, .. } if *get == g => Some(result.clone()),
        _ => None,
    });
    let took = net.now - start;
    assert_eq!(r, Err(RsmError::ConnAborted), "after {took} ns");
    let limit = net.engines[1].config().timeout_ns;
    assert!(took < limit / 10, "took {took} ns, retry limit {limit} ns");
}
