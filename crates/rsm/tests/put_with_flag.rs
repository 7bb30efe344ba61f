//! `Import::put_with_flag` on shm and over loopback UDP: the data lands after the flag
//! word, the flag is seen only with the data (an exporter polling the flag while the
//! importer writes, in both the one-write and the data-then-flag form), and bad
//! offsets and lengths are refused before anything is written.

mod net_common;

use std::time::{Duration, Instant};

use myrix_rsm::{
    BarrierMode, BarrierType, Controller, Export, ExportFlags, Import, NodeId, Perm, RsmError,
};
use net_common::controllers;

const LEN: usize = 64 * 1024;

fn read(e: &Export, off: usize, n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    e.read(off, &mut out).unwrap();
    out
}

fn pattern(n: usize, seed: u64) -> Vec<u8> {
    (0..n).map(|i| (i as u64 * 7 + seed) as u8).collect()
}

/// Refusals, then `rounds` flagged puts of each length polled by the exporter: every
/// flag seen comes with its data.
fn check(e: &Export, i: &Import, lens: &[usize], rounds: u64) {
    assert_eq!(
        i.put_with_flag(4, 1, b"x").unwrap_err(),
        RsmError::MisalignedOffset
    );
    assert_eq!(
        i.put_with_flag(LEN - 8, 1, b"x").unwrap_err(),
        RsmError::BadLength
    );
    assert_eq!(
        i.put_with_flag(LEN, 1, b"").unwrap_err(),
        RsmError::BadOffset
    );
    assert_eq!(read(e, LEN - 16, 16), vec![0u8; 16], "nothing written");
    // Empty data: the flag alone.
    i.put_with_flag(LEN - 8, 0xfeed, b"").unwrap();
    let start = Instant::now();
    while e.load_u64(LEN - 8).unwrap() != 0xfeed {
        assert!(start.elapsed() < Duration::from_secs(10));
    }
    let mut seq = 0u64;
    for &n in lens {
        for _ in 0..rounds {
            seq += 1;
            let data = pattern(n, seq);
            i.put_with_flag(0, seq, &data).unwrap();
            let start = Instant::now();
            while e.load_u64(0).unwrap() != seq {
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "flag {seq} never came"
                );
                std::hint::spin_loop();
            }
            assert_eq!(read(e, 8, n), data, "length {n}, flag {seq}");
        }
    }
}

#[test]
fn on_shm() {
    let c = Controller::get("shm").unwrap();
    let e = c.export_create(LEN, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let i = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    check(&e, &i, &[0, 8, 100, 4000], 20);
}

#[test]
fn over_udp_explicit_and_implicit() {
    let c = controllers(&[61, 62]);
    let (exp_c, imp_c) = (&c[0], &c[1]);
    let e = exp_c.export_create(LEN, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    let i = imp_c.import_connect(NodeId(61), id, Perm::RDWR).unwrap();
    // Implicit mode: one write (short), data then flag (longer), striped-size data.
    check(&e, &i, &[0, 8, 496, 504, 505, 3000, LEN - 8], 20);
    // Explicit mode inside a scope, as the benchmark's ping-pong.
    i.set_mode(BarrierMode::Explicit).unwrap();
    let mut bar = i.init_barrier(BarrierType::Segment).unwrap();
    bar.open().unwrap();
    let mut seq = 1u64 << 40;
    for &n in &[8usize, 504, 2000] {
        for _ in 0..50 {
            seq += 1;
            let data = pattern(n, seq);
            i.put_with_flag(64, seq, &data).unwrap();
            let start = Instant::now();
            while e.load_u64(64).unwrap() != seq {
                assert!(start.elapsed() < Duration::from_secs(10));
            }
            assert_eq!(read(&e, 72, n), data, "explicit, length {n}");
        }
    }
    bar.close().unwrap();
    // A read-only import is refused before anything leaves.
    let ro = imp_c.import_connect(NodeId(61), id, Perm::READ).unwrap();
    assert_eq!(
        ro.put_with_flag(0, 1, b"z").unwrap_err(),
        RsmError::PermDenied
    );
}
