//! `Import::put_deferred`: on shm a put; over loopback UDP in explicit mode a write
//! queued without a send of its own, which leaves with the next put toward the node
//! (of another import) or at a later progress, and lands whole either way. Bounds and
//! permissions are checked as for a put, before anything is queued.

mod net_common;

use std::time::{Duration, Instant};

use myrix_rsm::{BarrierMode, Controller, Export, ExportFlags, NodeId, Perm, RsmError};
use net_common::controllers;

const LEN: usize = 4096;

fn wait_for(e: &Export, off: usize, want: &[u8]) {
    let start = Instant::now();
    let mut got = vec![0u8; want.len()];
    loop {
        // Polling drives the exporter's endpoint, so frames that came are taken in.
        let _ = e.load_u64(0).unwrap();
        e.read(off, &mut got).unwrap();
        if got == want {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "bytes at {off} never came: {got:?}"
        );
        std::thread::yield_now();
    }
}

#[test]
fn on_shm_it_is_a_put() {
    let c = Controller::get("shm").unwrap();
    let e = c.export_create(LEN, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let i = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    i.put_deferred(16, b"deferred").unwrap();
    let mut got = [0u8; 8];
    e.read(16, &mut got).unwrap();
    assert_eq!(&got, b"deferred");
    assert_eq!(
        i.put_deferred(LEN - 4, b"too long").unwrap_err(),
        RsmError::BadLength
    );
}

#[test]
fn over_udp_it_leaves_with_the_next_put_or_alone() {
    let c = controllers(&[65, 66]);
    let (exp_c, imp_c) = (&c[0], &c[1]);
    let acks = exp_c.export_create(LEN, ExportFlags::default()).unwrap();
    let area = exp_c.export_create(LEN, ExportFlags::default()).unwrap();
    let acks_id = acks.publish(None, &[]).unwrap();
    let ia = imp_c
        .import_connect(NodeId(65), acks_id, Perm::RDWR)
        .unwrap();
    let ib = imp_c
        .import_connect(NodeId(65), area.publish(None, &[]).unwrap(), Perm::RDWR)
        .unwrap();
    for i in [&ia, &ib] {
        i.set_mode(BarrierMode::Explicit).unwrap();
    }
    // The MPI pattern: acks queued, then the reply's put to another segment of the node.
    for round in 1..=50u8 {
        let ack = [round; 3];
        let reply = [round.wrapping_mul(3); 40];
        ia.put_deferred(8 * usize::from(round), &ack).unwrap();
        ib.put(64, &reply).unwrap();
        wait_for(&area, 64, &reply);
        wait_for(&acks, 8 * usize::from(round), &ack);
    }
    // Alone: it leaves at a later progress (the importer's agent, a poll).
    ia.put_deferred(1000, b"alone").unwrap();
    wait_for(&acks, 1000, b"alone");
    // Refused before anything is queued.
    assert_eq!(ia.put_deferred(LEN, b"x").unwrap_err(), RsmError::BadOffset);
    let ro = imp_c
        .import_connect(NodeId(65), acks_id, Perm::READ)
        .unwrap();
    assert_eq!(ro.put_deferred(0, b"z").unwrap_err(), RsmError::PermDenied);
}
