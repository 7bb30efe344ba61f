//! The last calls of a process reach the other side though their frames are lost
//! (issue 21, docs/rsm.md "Disconnect drains"): an importer's last put and signal
//! before `disconnect`, an exporter's last signal before it unpublishes and releases
//! its controller. The loss is made deterministic with the rails' fault injection
//! (`set_rail_down`): the receiving side drops every frame for [`LOSS`] from the
//! moment the last call is made, then hears again. A library that lets the sender
//! return and release its controller within that window, with nothing left to resend
//! the lost frames, fails these tests; one that drains what is unacknowledged passes.
//! And a drain towards a node that is gone ends with an error within the engine's
//! retry limit, not a hang.

mod net_common;

use std::thread;
use std::time::{Duration, Instant};

use myrix_rsm::net::node_table::NodeTable;
use myrix_rsm::{BarrierMode, Controller, ExportFlags, NodeId, Perm, RsmError, SignalFlags};

/// How long the receiving side drops every frame: several of the engine's resend
/// periods (5 ms), so the first sends and resends are all lost.
const LOSS: Duration = Duration::from_millis(40);
/// How long the receiving side waits for the signal: well past [`LOSS`].
const WAIT: Duration = Duration::from_secs(3);

/// Makes `ctl`'s rail deaf (and mute) now, and hears again after [`LOSS`] in a thread
/// of its own (so the other side's release timing does not decide it).
fn lose_for_a_while(ctl: &Controller) -> thread::JoinHandle<()> {
    ctl.set_rail_down(0, true).unwrap();
    let ctl = ctl.clone();
    thread::spawn(move || {
        thread::sleep(LOSS);
        ctl.set_rail_down(0, false).unwrap();
    })
}

#[test]
fn an_importers_last_put_and_signal_reach_the_exporter_though_lost() {
    let mut c = net_common::controllers(&[91, 92]);
    let ictl = c.pop().unwrap();
    let ectl = c.pop().unwrap();
    let e = ectl.export_create(4096, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let i = ictl.import_connect(NodeId(91), id, Perm::RDWR).unwrap();
    // Explicit mode: the put is queued, not flushed, as a program's last writes
    // before it disconnects without closing a barrier.
    i.set_mode(BarrierMode::Explicit).unwrap();

    let deaf = lose_for_a_while(&ectl);
    i.put(64, &[0x5a; 100]).unwrap();
    i.signal_post(SignalFlags::default()).unwrap();
    let t = Instant::now();
    i.disconnect().unwrap();
    let took = t.elapsed();
    // The process's exit: its controller goes (the last handle).
    drop(ictl);

    let from = e.signal_wait_from(Some(WAIT));
    deaf.join().unwrap();
    assert_eq!(
        from.map(|s| s.node),
        Ok(NodeId(92)),
        "the importer's last signal was lost (disconnect took {took:?})"
    );
    let mut got = [0u8; 100];
    e.read(64, &mut got).unwrap();
    assert_eq!(got, [0x5a; 100], "the importer's last put was lost");
    // It returned once the exporter had them: after the loss, not before.
    assert!(
        took >= LOSS / 2,
        "disconnect returned after {took:?}, during the loss"
    );
}

#[test]
fn an_exporters_last_signal_reaches_the_importer_though_lost() {
    let mut c = net_common::controllers(&[93, 94]);
    let ictl = c.pop().unwrap();
    let ectl = c.pop().unwrap();
    let e = ectl.export_create(4096, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let i = ictl.import_connect(NodeId(93), id, Perm::RDWR).unwrap();

    let deaf = lose_for_a_while(&ictl);
    e.signal_post(SignalFlags::default()).unwrap();
    // The exporter's exit: unpublish and destroy, then its controller's release.
    e.unpublish().unwrap();
    drop(e);
    let t = Instant::now();
    drop(ectl);
    let took = t.elapsed();

    let r = i.signal_wait(Some(WAIT));
    deaf.join().unwrap();
    assert_eq!(
        r,
        Ok(()),
        "the exporter's last signal was lost (release took {took:?})"
    );
    // The unpublish (sent after the signal) arrives too, though maybe a moment after
    // the signal's wait returned: the import is aborted.
    let until = Instant::now() + WAIT;
    let mut seen = i.check();
    while seen.is_ok() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
        seen = i.check();
    }
    assert_eq!(seen, Err(RsmError::ConnAborted));
}

#[test]
fn a_disconnect_towards_a_gone_node_fails_within_the_retry_limit() {
    let timeout = Duration::from_millis(500);
    let t = NodeTable::parse(&net_common::table_text(&[95, 96])).unwrap();
    let cfg = myrix_rsm_proto::engine::Config {
        timeout_ns: timeout.as_nanos() as u64,
        ..myrix_rsm::net::default_config()
    };
    // (The exporter's too: its release gives up on the importer within that.)
    let ectl = Controller::net("udp", NodeId(95), t.clone(), cfg.clone()).unwrap();
    let ictl = Controller::net("udp", NodeId(96), t, cfg).unwrap();
    let e = ectl.export_create(4096, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let i = ictl.import_connect(NodeId(95), id, Perm::RDWR).unwrap();
    i.set_mode(BarrierMode::Explicit).unwrap();

    // The exporter's node stops answering for good.
    ectl.set_rail_down(0, true).unwrap();
    i.put(0, &[1; 8]).unwrap();
    let t = Instant::now();
    let r = i.disconnect();
    let took = t.elapsed();
    assert_eq!(r, Err(RsmError::RemoteNodeUnreachable));
    assert!(
        took < timeout * 4,
        "disconnect took {took:?} for a retry limit of {timeout:?}"
    );
    // The release has nothing left to drain (the node's work was dropped).
    let t = Instant::now();
    drop(ictl);
    assert!(t.elapsed() < timeout, "release took {:?}", t.elapsed());
}
