//! Large messages in bulk over a lossy network: every byte arrives, and flow control
//! keeps the frames received twice to a small share (once the receiver pulled every
//! posted message at once and re-requested whole blocks on a fixed timer: a storm).

mod common;

use common::*;
use myrix_mx_proto::engine::{Code, Config};
use myrix_mx_proto::testnet::NetConfig;
use myrix_mx_proto::RecvBuf;

/// `n` messages of `len` bytes posted at once on both sides, over `net`; returns the
/// receiver's (frames in, duplicate frames, pull re-requests).
fn bulk(net: NetConfig, n: usize, len: usize) -> (u64, u64, u64) {
    let cfg = Config::default();
    let (mut t, peers) = mesh(2, &cfg, net);
    let now = t.now;
    let data: Vec<Vec<u8>> = (0..n).map(|i| pattern(i as u64, len)).collect();
    let recvs: Vec<_> = (0..n)
        .map(|i| {
            t.engines[1]
                .irecv(now, RecvBuf::One(vec![0; len]), i as u64, u64::MAX, 0)
                .unwrap()
        })
        .collect();
    let sends: Vec<_> = (0..n)
        .map(|i| {
            t.engines[0]
                .isend(now, peers[0][1], &[&data[i]], i as u64, 0, false)
                .unwrap()
        })
        .collect();
    for (i, r) in recvs.into_iter().enumerate() {
        let (st, buf) = wait_buf(&mut t, 1, r);
        assert_eq!((st.code, st.xfer_len), (Code::Success, len));
        assert_eq!(buf.unwrap().to_vec(), data[i], "message {i}");
    }
    for s in sends {
        assert_eq!(wait(&mut t, 0, s).code, Code::Success);
    }
    let st = t.engines[1].stats();
    (st.frames_in, st.duplicates, st.pull_rerequests)
}

#[test]
fn a_lossless_path_needs_no_second_frame() {
    let net = NetConfig {
        jitter_ns: 0,
        ..NetConfig::lossy(0.0, 1)
    };
    let (frames, dups, again) = bulk(net, 32, 256 * 1024);
    assert_eq!((dups, again), (0, 0), "{frames} frames");
}

#[test]
fn reordering_alone_asks_for_little_twice() {
    // Jitter of 1.5 times the latency reorders frames; none is lost.
    let (frames, dups, again) = bulk(NetConfig::lossy(0.0, 2), 32, 256 * 1024);
    assert!(
        (dups as f64) < 0.01 * frames as f64,
        "{dups} of {frames} frames twice ({again} re-requests)"
    );
}

#[test]
fn a_lossy_path_delivers_everything_with_few_frames_twice() {
    for seed in 1..=3 {
        let (frames, dups, again) = bulk(NetConfig::lossy(0.02, seed), 32, 256 * 1024);
        // 2 % loss and 1 % duplication by the network itself: what the protocol adds on
        // top must stay of the same order.
        let share = dups as f64 / frames as f64;
        assert!(
            share < 0.05,
            "seed {seed}: {dups} of {frames} frames twice ({again} re-requests)"
        );
    }
}
