//! Large puts are pipelined within the write window and cut to the MTU; large gets are
//! pulled in blocks within the read window.

mod common;

use common::{Net, NetConfig};
use myrix_rsm_proto::engine::{Config, Event};
use myrix_rsm_proto::{Acl, Credentials, NodeId, Perm, SegmentId};
use myrix_wire::rsm::{Body, Repr};

const SEG: SegmentId = SegmentId(0x8000_0001);
const USER: Credentials = Credentials { uid: 1, gid: 1 };
const MIB: usize = 1 << 20;

#[test]
fn a_large_put_is_pipelined_in_the_window_and_a_large_get_pulled_in_blocks() {
    let cfg = Config {
        mtu: 1000,
        write_window: 64 * 1024,
        read_block: 16 * 1024,
        read_window: 48 * 1024,
        ..Config::fast_timers()
    };
    let mut net = Net::new(2, cfg, NetConfig::lossy(0.01, 11));
    net.mems[0].insert(SEG, vec![0; MIB]);
    net.engines[0]
        .publish(SEG, Acl::Open(Perm(0o666)), USER)
        .unwrap();
    let imp = net.engines[1]
        .connect(0, NodeId(0), SEG, Perm::RDWR, USER)
        .unwrap();
    net.wait_for(1, |e| {
        matches!(e, Event::Connected { result: Ok(_), .. }).then_some(())
    });

    let data: Vec<u8> = (0..MIB).map(|i| (i * 31 + i / 4096) as u8).collect();
    net.engines[1].put(imp, 0, &data).unwrap();
    // Before any ack: no more than the window, every frame within the MTU.
    let mut buf = vec![0u8; 1000];
    let (mut frames, mut bytes) = (0, 0);
    while let Some((_, n)) = net.engines[1].poll_transmit(net.now, &mut buf) {
        if let Body::Write { data, .. } = Repr::parse_bytes(&buf[..n]).unwrap().body {
            frames += 1;
            bytes += data.len();
        }
    }
    assert!(
        bytes <= 64 * 1024 && bytes > 60 * 1024,
        "{bytes} bytes in flight"
    );
    assert_eq!(frames, bytes.div_ceil(1000 - 24));
    // Those frames were taken off the wire (lost); the rest follows on resends.
    let f = net.engines[1].flush(imp).unwrap();
    net.wait_for(1, |e| {
        matches!(e, Event::BarrierDone { flush, result: Ok(()), .. } if *flush == f).then_some(())
    });
    assert!(net.mems[0][&SEG] == data);

    let g = net.engines[1].get(imp, 0, MIB as u64).unwrap();
    let mut requests = Vec::new();
    while let Some((_, n)) = net.engines[1].poll_transmit(net.now, &mut buf) {
        if let Body::ReadReq { offset, length, .. } = Repr::parse_bytes(&buf[..n]).unwrap().body {
            requests.push((offset, length));
        }
    }
    assert_eq!(requests, [(0, 16384), (16384, 16384), (32768, 16384)]);
    let got = net.wait_for(1, |e| match e {
        Event::GetDone { get, result, .. } if *get == g => Some(result.clone()),
        _ => None,
    });
    assert!(got.unwrap() == data);
    net.settle();
    assert_eq!(
        net.engines[0].buffers_held() + net.engines[1].buffers_held(),
        0
    );
}
