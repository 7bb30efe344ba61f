//! The `udp` controller between two controllers of this process on loopback UDP
//! (different ports): refusals, put/get/barrier/signal, unpublish, unreachable nodes,
//! bad tables. Each test uses its own node ids (a process has one controller per node).

mod net_common;

use std::time::{Duration, Instant};

use myrix_rsm::net::node_table::NodeTable;
use myrix_rsm::{
    AccessEntry, BarrierMode, BarrierType, Controller, ExportFlags, NodeId, Perm, RsmError,
    SegmentId,
};
use net_common::{controllers, table_text};

const LEN: usize = 64 * 1024;

fn readable(fd: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one live pollfd.
    #[allow(unsafe_code)]
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    r == 1
}

#[test]
fn connect_refusals() {
    let c = controllers(&[11, 12]);
    let (exp_c, imp_c) = (&c[0], &c[1]);
    assert_eq!(imp_c.topology(), vec![NodeId(11), NodeId(12)]);
    assert_eq!(imp_c.attr().kind, "udp");
    assert!(!imp_c.attr().map_supported);
    let e = exp_c.export_create(LEN, ExportFlags::default()).unwrap();
    let id = SegmentId(0x9000_0001);
    assert_eq!(
        imp_c
            .import_connect(NodeId(11), id, Perm::RDWR)
            .unwrap_err(),
        RsmError::SegNotPublished
    );
    e.publish(
        Some(id),
        &[AccessEntry {
            node: NodeId(13),
            perm: Perm::RDWR,
        }],
    )
    .unwrap();
    assert_eq!(
        imp_c
            .import_connect(NodeId(11), id, Perm::RDWR)
            .unwrap_err(),
        RsmError::SegNotPublishedToNode
    );
    e.republish(&[AccessEntry {
        node: NodeId(12),
        perm: Perm::READ,
    }])
    .unwrap();
    assert_eq!(
        imp_c
            .import_connect(NodeId(11), id, Perm::RDWR)
            .unwrap_err(),
        RsmError::PermDenied
    );
    let i = imp_c.import_connect(NodeId(11), id, Perm::READ).unwrap();
    assert_eq!(i.len(), LEN);
    assert_eq!(i.put(0, &[1]).unwrap_err(), RsmError::PermDenied);
    assert_eq!(
        imp_c
            .import_connect(NodeId(99), id, Perm::READ)
            .unwrap_err(),
        RsmError::RemoteNodeUnreachable
    );
    assert_eq!(
        e.publish(Some(id), &[]).unwrap_err(),
        RsmError::SegAlreadyPublished
    );
}

#[test]
fn put_get_barrier_signal() {
    let c = controllers(&[21, 22]);
    let (exp_c, imp_c) = (&c[0], &c[1]);
    let e = exp_c.export_create(LEN, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    assert!(id.0 >= SegmentId::USER_BASE, "{id:?}");
    let i = imp_c.import_connect(NodeId(21), id, Perm::RDWR).unwrap();

    // Implicit mode: each put is in remote memory when it returns.
    i.put(100, b"hello").unwrap();
    let seen = unsafe_read(&e, 100, 5);
    assert_eq!(seen, b"hello");
    let mut out = [0u8; 5];
    i.get(100, &mut out).unwrap();
    assert_eq!(&out, b"hello");

    // Large: pipelined put, pulled get.
    let big: Vec<u8> = (0..LEN - 8).map(|k| (k * 31 + 7) as u8).collect();
    i.put(8, &big).unwrap();
    let mut back = vec![0u8; big.len()];
    i.get(8, &mut back).unwrap();
    assert!(back == big);

    // Scalars.
    i.put_scalars::<u64>(0, &[0x0102_0304_0506_0708]).unwrap();
    let mut v = [0u32; 2];
    i.get_scalars(0, &mut v).unwrap();
    assert_eq!(v, [0x0506_0708, 0x0102_0304]);

    // Explicit mode: a barrier's close returns once its writes are remote.
    i.set_mode(BarrierMode::Explicit).unwrap();
    let mut b = i.init_barrier(BarrierType::Segment).unwrap();
    assert_eq!(b.close().unwrap_err(), RsmError::BarrierNotOpened);
    b.open().unwrap();
    for k in 0..100u32 {
        i.put((k * 8) as usize, &k.to_le_bytes()).unwrap();
    }
    b.close().unwrap();
    for k in 0..100u32 {
        assert_eq!(unsafe_read(&e, (k * 8) as usize, 4), k.to_le_bytes());
    }

    // Signals both ways, with pollfds and the sender's node.
    let efd = e.pollfd().unwrap();
    assert!(!readable(efd));
    i.signal_post(Default::default()).unwrap();
    let t = Instant::now();
    while !readable(efd) {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "exporter fd never readable"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        e.signal_wait_from(Some(Duration::from_secs(5)))
            .unwrap()
            .node,
        NodeId(22)
    );
    assert!(!readable(efd));
    assert_eq!(
        e.signal_wait(Some(Duration::from_millis(20))).unwrap_err(),
        RsmError::Timeout
    );
    let ifd = i.pollfd().unwrap();
    e.signal_post(Default::default()).unwrap();
    assert_eq!(
        i.signal_wait_from(Some(Duration::from_secs(5)))
            .unwrap()
            .node,
        NodeId(21)
    );
    assert!(!readable(ifd));
}

fn unsafe_read(e: &myrix_rsm::Export, off: usize, n: usize) -> Vec<u8> {
    // SAFETY: in bounds of the export's live memory; the test orders the accesses.
    #[allow(unsafe_code)]
    unsafe {
        std::slice::from_raw_parts(e.as_ptr().add(off), n).to_vec()
    }
}

#[test]
fn no_accumulate_signals() {
    let c = controllers(&[31, 32]);
    let e = c[0].export_create(4096, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let i = c[1].import_connect(NodeId(31), id, Perm::RDWR).unwrap();
    let na = myrix_rsm::SignalFlags {
        no_accumulate: true,
    };
    i.signal_post(na).unwrap();
    i.signal_post(na).unwrap();
    i.signal_post(na).unwrap();
    // A put in implicit mode is acknowledged after the signals (same order): all three
    // arrived by then.
    i.put(0, &[1]).unwrap();
    e.signal_wait(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(
        e.signal_wait(Some(Duration::from_millis(50))).unwrap_err(),
        RsmError::Timeout
    );
    i.signal_post(Default::default()).unwrap();
    i.signal_post(Default::default()).unwrap();
    i.put(0, &[1]).unwrap();
    e.signal_wait(Some(Duration::from_secs(5))).unwrap();
    e.signal_wait(Some(Duration::from_secs(5))).unwrap();
}

#[test]
fn unpublish_aborts_importers() {
    let c = controllers(&[41, 42]);
    let e = c[0].export_create(LEN, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let i = c[1].import_connect(NodeId(41), id, Perm::RDWR).unwrap();
    let i2 = c[1].import_connect(NodeId(41), id, Perm::RDWR).unwrap();
    i2.set_mode(BarrierMode::Explicit).unwrap();
    let mut b = i2.init_barrier(BarrierType::Segment).unwrap();
    b.open().unwrap();
    i.put(0, &[7; 16]).unwrap();
    e.unpublish().unwrap();
    let t = Instant::now();
    loop {
        match i.check() {
            Err(RsmError::ConnAborted) => break,
            Ok(()) => assert!(t.elapsed() < Duration::from_secs(5), "no abort"),
            Err(x) => panic!("{x:?}"),
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(i.put(0, &[9; 16]).unwrap_err(), RsmError::ConnAborted);
    let mut out = [0u8; 4];
    assert_eq!(i.get(0, &mut out).unwrap_err(), RsmError::ConnAborted);
    let _ = i2.put(0, &[1]);
    assert_eq!(b.close().unwrap_err(), RsmError::ConnAborted);
    assert_eq!(unsafe_read(&e, 0, 16), vec![7; 16]);
    assert_eq!(
        c[1].import_connect(NodeId(41), id, Perm::RDWR).unwrap_err(),
        RsmError::SegNotPublished
    );
}

#[test]
fn unreachable_node() {
    let text = table_text(&[51, 52]);
    let t = NodeTable::parse(&text).unwrap();
    let mut cfg = myrix_rsm::net::default_config();
    cfg.resend_ns = 2_000_000;
    cfg.timeout_ns = 300_000_000;
    // Node 52 is never started.
    let c = Controller::net("udp", NodeId(51), t, cfg).unwrap();
    let t0 = Instant::now();
    assert_eq!(
        c.import_connect(NodeId(52), SegmentId(0x8000_0001), Perm::READ)
            .unwrap_err(),
        RsmError::RemoteNodeUnreachable
    );
    assert!(t0.elapsed() < Duration::from_secs(3));
}

#[test]
fn bad_tables() {
    let t = NodeTable::parse(&table_text(&[61])).unwrap();
    let e = Controller::udp(NodeId(62), t).unwrap_err();
    assert!(e.to_string().contains("not in the table"), "{e}");
    std::env::remove_var("MYRIX_RSM_NODES");
    assert_eq!(
        Controller::get("udp").unwrap_err(),
        RsmError::CtlrNotPresent
    );
    let dir = std::env::temp_dir().join(format!("myrix-rsm-net-{}", std::process::id()));
    std::fs::write(&dir, "1 udp:127.0.0.1:7001\nbad line\n").unwrap();
    std::env::set_var("MYRIX_RSM_NODES", &dir);
    std::env::set_var("MYRIX_RSM_NODE", "1");
    assert_eq!(Controller::get("udp").unwrap_err(), RsmError::BadConf);
    assert_eq!(Controller::get("eth").unwrap_err(), RsmError::BadConf);
    std::fs::remove_file(&dir).unwrap();
    assert_eq!(Controller::get("udp").unwrap_err(), RsmError::BadConf);
}

#[test]
fn own_node_and_rebind() {
    let c = controllers(&[71]);
    let e = c[0]
        .export_create(
            8192,
            ExportFlags {
                allow_rebind: true,
                ..Default::default()
            },
        )
        .unwrap();
    let id = e.publish(None, &[]).unwrap();
    let i = c[0].import_connect(NodeId(71), id, Perm::RDWR).unwrap();
    i.put(10, b"self").unwrap();
    let mut out = [0u8; 4];
    i.get(10, &mut out).unwrap();
    assert_eq!(&out, b"self");
}
