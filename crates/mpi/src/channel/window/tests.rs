//! Tests of the channel's memory views: bounds checks, truncation, and the network
//! windows' staging.

use super::net::NET_CARRY_MIN;
use super::*;

#[test]
fn accesses_are_bounds_checked() {
    let (a, b) = Mem::heap(128);
    assert_eq!(a.len(), 128);
    a.store_u64(120, 7).unwrap();
    assert_eq!(b.load_u64(120), Ok(7));
    assert_eq!(a.load_u64(121), Err(OutOfBounds));
    assert_eq!(a.load_u64(128), Err(OutOfBounds));
    assert_eq!(a.load_u64(usize::MAX - 3), Err(OutOfBounds));
    assert_eq!(a.write(100, &[0; 29]), Err(OutOfBounds));
    a.write(100, &[1; 28]).unwrap();
    let mut out = [0u8; 4];
    b.read(124, &mut out).unwrap();
    assert_eq!(out, [1; 4]);
    assert_eq!(b.read(125, &mut out), Err(OutOfBounds));
    b.store_u8(127, 9).unwrap();
    assert_eq!(a.load_u8(127), Ok(9));
    assert_eq!(a.load_u8(128), Err(OutOfBounds));
    a.store_u32(4, 0xabcd).unwrap();
    assert_eq!(b.load_u32(4), Ok(0xabcd));
}

#[test]
fn user_buffers_truncate_and_check() {
    let (a, _b) = Mem::heap(64);
    let data = [5u8; 16];
    // SAFETY: (test) `data` outlives `src`.
    let src = unsafe { SrcBuf::new(data.as_ptr(), data.len()) };
    a.write_from(0, &src, 8, 8).unwrap();
    assert_eq!(a.write_from(0, &src, 9, 8), Err(OutOfBounds));
    let mut out = [0u8; 4];
    // SAFETY: (test) `out` outlives `dst`.
    let dst = unsafe { DstBuf::new(out.as_mut_ptr(), out.len()) };
    a.read_into(0, &dst, 2, 8).unwrap();
    src.copy_to(0, &dst, 0, 1);
    assert_eq!(out, [5, 0, 5, 5]);
}

/// Over RSM's udp controller on loopback (two nodes in this process): postboxes
/// written body first then flag, batched into one put, arrive whole; a lazy
/// window's acks wait for the flush.
#[test]
fn network_windows_batch_postboxes_and_stage_acks() {
    use myrix_rsm::net::node_table::NodeTable;
    use myrix_rsm::{Controller, ExportFlags, NodeId, Perm};
    let port = || {
        std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let boards = [
        format!("udp:127.0.0.1:{}", port()),
        format!("udp:127.0.0.1:{}", port()),
    ];
    let t = NodeTable::from_pairs([(1, boards[0].as_str()), (2, boards[1].as_str())]).unwrap();
    let a = Controller::udp(NodeId(1), t.clone()).unwrap();
    let b = Controller::udp(NodeId(2), t).unwrap();
    let e = a.export_create(4096, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let local = Mem::export(e);
    let wait = |off: usize, v: u64| {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while local.load_u64(off) != Ok(v) {
            local.poll_net();
            assert!(
                std::time::Instant::now() < end,
                "word at {off} never became {v}"
            );
        }
    };
    let imp = Arc::new(b.import_connect(NodeId(1), id, Perm::RDWR).unwrap());
    let w = Mem::net_batch(imp.clone());
    w.write(8, &[1; 56]).unwrap();
    w.store_u64(0, 11).unwrap();
    w.write(72, &[2; 56]).unwrap();
    w.store_u64(64, 22).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    local.poll_net();
    assert_eq!(local.load_u64(0), Ok(0), "a batch waits for its flush");
    w.net_flush().unwrap().flush();
    wait(0, 11);
    let mut got = [0u8; 128];
    local.read(0, &mut got).unwrap();
    assert_eq!(&got[8..64], &[1; 56][..]);
    assert_eq!(local.load_u64(64), Ok(22));
    assert_eq!(&got[72..128], &[2; 56][..]);
    // Data not led by its flag: the data first, then the flag as a put of its own.
    w.write(1000, &[3; 24]).unwrap();
    w.store_u64(2048, 33).unwrap();
    w.net_flush().unwrap().flush();
    wait(2048, 33);
    let mut d = [0u8; 24];
    local.read(1000, &mut d).unwrap();
    assert_eq!(d, [3; 24]);
    // Acks: staged until the flush.
    let acks = Mem::net_lazy(imp);
    acks.store_u8(3000, 1).unwrap();
    acks.store_u8(3001, 1).unwrap();
    acks.store_u64(3008, 44).unwrap(); // a word: the acks, then it
    wait(3008, 44);
    assert_eq!(local.load_u8(3001), Ok(1));
    acks.store_u8(3002, 1).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    local.poll_net();
    assert_eq!(local.load_u8(3002), Ok(0));
    acks.net_flush().unwrap().flush();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while local.load_u8(3002) != Ok(1) {
        local.poll_net();
        assert!(std::time::Instant::now() < end);
    }
}

/// A batch window carries its peer's staged acks only once [`NET_CARRY_MIN`] are
/// staged (over RSM's udp controller on loopback): fewer wait for a later put or the
/// lazy window's own flush.
#[test]
fn a_batch_carries_acks_once_enough_are_staged() {
    use myrix_rsm::net::node_table::NodeTable;
    use myrix_rsm::{Controller, ExportFlags, NodeId, Perm};
    let port = || {
        std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let boards = [
        format!("udp:127.0.0.1:{}", port()),
        format!("udp:127.0.0.1:{}", port()),
    ];
    // Nodes of their own: a process opens a udp node once per table, and the test
    // above runs beside this one.
    let t = NodeTable::from_pairs([(11, boards[0].as_str()), (12, boards[1].as_str())]).unwrap();
    let a = Controller::udp(NodeId(11), t.clone()).unwrap();
    let b = Controller::udp(NodeId(12), t).unwrap();
    let (ea, eb) = (
        a.export_create(4096, ExportFlags::default()).unwrap(),
        a.export_create(4096, ExportFlags::default()).unwrap(),
    );
    let (ida, idb) = (
        ea.publish(None, &[]).unwrap(),
        eb.publish(None, &[]).unwrap(),
    );
    let (area, ackseg) = (Mem::export(ea), Mem::export(eb));
    let wait = |m: &Mem, off: usize, v: u64| {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while m.load_u64(off) != Ok(v) {
            m.poll_net();
            assert!(
                std::time::Instant::now() < end,
                "word at {off} never became {v}"
            );
        }
    };
    let w = Mem::net_batch(Arc::new(
        b.import_connect(NodeId(11), ida, Perm::RDWR).unwrap(),
    ));
    let acks = Mem::net_lazy(Arc::new(
        b.import_connect(NodeId(11), idb, Perm::RDWR).unwrap(),
    ));
    w.net_flush()
        .unwrap()
        .carry_acks(&acks.net_flush().unwrap());
    let postbox = |flag: u64| {
        w.write(8, &[7; 56]).unwrap();
        w.store_u64(0, flag).unwrap();
        w.net_flush().unwrap().flush();
        wait(&area, 0, flag);
    };
    acks.store_u8(100, 1).unwrap();
    postbox(1);
    // The postbox came; the single ack did not ride with it.
    std::thread::sleep(std::time::Duration::from_millis(20));
    ackseg.poll_net();
    assert_eq!(ackseg.load_u8(100), Ok(0));
    for k in 1..NET_CARRY_MIN {
        acks.store_u8(100 + k, 1).unwrap();
    }
    postbox(2);
    let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while ackseg.load_u8(100 + NET_CARRY_MIN - 1) != Ok(1) {
        ackseg.poll_net();
        assert!(std::time::Instant::now() < end, "the acks did not ride");
    }
    assert_eq!(ackseg.load_u8(100), Ok(1));
}

/// [`Mem::post_led`] (flag and body in one step, session 26) on a batch window over
/// RSM's udp controller on loopback: consecutive postboxes wait for the flush and
/// arrive whole, as body-then-flag stores do; a run not led by a flag is put before
/// the postbox; on a plain window the postbox is put at once.
#[test]
fn post_led_batches_postboxes_as_body_then_flag_does() {
    use myrix_rsm::net::node_table::NodeTable;
    use myrix_rsm::{Controller, ExportFlags, NodeId, Perm};
    let port = || {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    };
    let boards = [
        format!("udp:127.0.0.1:{}", port()),
        format!("udp:127.0.0.1:{}", port()),
    ];
    // Nodes of their own (the tests above run beside this one).
    let t = NodeTable::from_pairs([(21, boards[0].as_str()), (22, boards[1].as_str())]).unwrap();
    let a = Controller::udp(NodeId(21), t.clone()).unwrap();
    let b = Controller::udp(NodeId(22), t).unwrap();
    let e = a.export_create(4096, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let local = Mem::export(e);
    let wait = |off: usize, v: u64| {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while local.load_u64(off) != Ok(v) {
            local.poll_net();
            assert!(
                std::time::Instant::now() < end,
                "word at {off} never became {v}"
            );
        }
    };
    let imp = Arc::new(b.import_connect(NodeId(21), id, Perm::RDWR).unwrap());
    let w = Mem::net_batch(imp.clone());
    w.post_led(0, 11, &[1u8; 56], 56).unwrap();
    w.post_led(64, 22, &[2u8; 56], 56).unwrap();
    // Short: only its first 20 bytes travel.
    w.post_led(128, 33, &[3u8; 56], 20).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    local.poll_net();
    assert_eq!(local.load_u64(0), Ok(0), "a batch waits for its flush");
    w.net_flush().unwrap().flush();
    wait(128, 33);
    let mut got = [0u8; 192];
    local.read(0, &mut got).unwrap();
    assert_eq!(local.load_u64(0), Ok(11));
    assert_eq!(&got[8..64], &[1; 56][..]);
    assert_eq!(local.load_u64(64), Ok(22));
    assert_eq!(&got[72..128], &[2; 56][..]);
    assert_eq!(&got[136..156], &[3; 20][..]);
    assert_eq!(&got[156..192], &[0; 36][..]);
    // A staged run not led by a flag goes first; the postbox after it.
    w.write(1000, &[4; 24]).unwrap();
    w.post_led(2048, 44, &[5u8; 56], 8).unwrap();
    w.net_flush().unwrap().flush();
    wait(2048, 44);
    let mut d = [0u8; 24];
    local.read(1000, &mut d).unwrap();
    assert_eq!(d, [4; 24]);
    // Out of bounds and misaligned flags are refused.
    assert!(w.post_led(4096 - 32, 1, &[0u8; 56], 56).is_err());
    assert!(w.post_led(3001, 1, &[0u8; 56], 8).is_err());
    // A plain network window puts the postbox at once.
    let p = Mem::net(imp);
    p.post_led(3072, 55, &[6u8; 56], 56).unwrap();
    wait(3072, 55);
    let mut d = [0u8; 56];
    local.read(3080, &mut d).unwrap();
    assert_eq!(d, [6; 56]);
}

/// A sender's area for another node's host (`hostnet`): two receivers export the
/// same memory on their own network controllers; the sender writes receiver 1's
/// queue through one import and receiver 2's through the other, a window skipped to
/// its queue (over RSM's udp controller on loopback).
#[test]
fn two_exports_of_one_area_each_take_their_receivers_queue() {
    use myrix_rsm::net::node_table::NodeTable;
    use myrix_rsm::{Controller, ExportFlags, NodeId, Perm};
    let port = || {
        std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let boards: Vec<String> = (0..3)
        .map(|_| format!("udp:127.0.0.1:{}", port()))
        .collect();
    let t = NodeTable::from_pairs([
        (1, boards[0].as_str()),
        (2, boards[1].as_str()),
        (3, boards[2].as_str()),
    ])
    .unwrap();
    let r1 = Controller::udp(NodeId(1), t.clone()).unwrap();
    let r2 = Controller::udp(NodeId(2), t.clone()).unwrap();
    let s = Controller::udp(NodeId(3), t).unwrap();
    let e1 = r1.export_create(8192, ExportFlags::default()).unwrap();
    let id1 = e1.publish(None, &[]).unwrap();
    // SAFETY: `e1`'s memory outlives `e2` (dropped first, below).
    let e2 = unsafe { r2.export_create_at(e1.as_ptr(), 8192, ExportFlags::default()) }.unwrap();
    let id2 = e2.publish(None, &[]).unwrap();
    let area = Mem::export(e1);
    let q1 = Mem::net_batch(Arc::new(
        s.import_connect(NodeId(1), id1, Perm::RDWR).unwrap(),
    ));
    let q2 = Mem::net_batch(Arc::new(
        s.import_connect(NodeId(2), id2, Perm::RDWR).unwrap(),
    ))
    .skip(4096)
    .unwrap();
    assert_eq!(q2.len(), 4096);
    for (q, v) in [(&q1, 11u64), (&q2, 22)] {
        q.write(8, &[v as u8; 56]).unwrap();
        q.store_u64(0, v).unwrap();
        q.net_flush().unwrap().flush();
    }
    let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while area.load_u64(0) != Ok(11) || area.load_u64(4096) != Ok(22) {
        area.poll_net();
        e2.poll();
        assert!(std::time::Instant::now() < end, "a postbox never came");
    }
    let mut got = [0u8; 56];
    area.read(8, &mut got).unwrap();
    assert_eq!(got, [11; 56]);
    area.read(4096 + 8, &mut got).unwrap();
    assert_eq!(got, [22; 56]);
    // A window with writes staged, or a flush handle out, is not skipped (the
    // writes would be left behind in it).
    q1.write(200, &[5; 8]).unwrap();
    assert!(q1.skip(64).is_none());
    let f = q2.net_flush();
    assert!(q2.skip(64).is_none());
    drop((f, e2));
}
