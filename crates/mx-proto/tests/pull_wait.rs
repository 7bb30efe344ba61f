//! Large receives that wait their turn in a peer's pull window (`engine::flow`) while
//! the pulls ahead of them progress: the request timeout is for a peer that stopped
//! answering, not for a receive that is waiting behind others. Over the test network,
//! in both frame layouts.

mod common;
use common::*;
use myrix_mx_proto::engine::{Code, Codec, Config, Mx, Request};
use myrix_mx_proto::testnet::NetConfig;
use myrix_mx_proto::RecvBuf;
use myrix_wire::codec::{omx, Omx};

/// A slow link (2 ms one way) with some jitter, loss and duplication.
fn slow_link(seed: u64) -> NetConfig {
    NetConfig {
        latency_ns: 2_000_000,
        jitter_ns: 1_000_000,
        loss: 0.01,
        duplicate: 0.005,
        lossless: false,
        seed,
    }
}

/// 24 receives of 1 MiB posted at once, and their 24 sends: 768 pull blocks through a
/// window of at most 64, about 20 round trips of 4 to 6 ms, so the last receives wait
/// for the window far longer than the 40 ms request timeout while every block asked is
/// answered. Each receive completes, every byte as sent. (Before the fix, a receive
/// queued behind the others failed with `Unreachable` 40 ms after its RNDV came.)
fn many_large_receives<C: Codec>(mtu: usize) {
    const N: u64 = 24;
    const LEN: usize = 1 << 20;
    let cfg = Config {
        mtu,
        resend_ns: 20_000_000,
        request_timeout_ns: 40_000_000,
        ..Config::default()
    };
    let (mut t, peers) = mesh_with::<C>(2, &cfg, slow_link(7));
    let mut recvs: Vec<(Request, u64)> = Vec::new();
    let mut sends = Vec::new();
    for i in 0..N {
        let r = t.engines[1]
            .irecv(t.now, RecvBuf::One(vec![0; LEN]), i, u64::MAX, 0)
            .unwrap();
        recvs.push((r, i));
    }
    for i in 0..N {
        let s = t.engines[0]
            .isend(t.now, peers[0][1], &[&pattern(i, LEN)], i, 0, false)
            .unwrap();
        sends.push(s);
    }
    let start = t.now;
    let mut left_recvs = recvs.clone();
    let mut left_sends = sends.clone();
    let ok = t.run_until(60_000_000_000, |t| {
        left_recvs.retain(|&(r, i)| match t.engines[1].test(r).unwrap() {
            None => true,
            Some((st, buf)) => {
                assert_eq!(
                    st.code,
                    Code::Success,
                    "receive {i} after {} ns",
                    t.now - start
                );
                assert!(
                    buf.unwrap().to_vec() == pattern(i, LEN),
                    "receive {i}'s bytes"
                );
                false
            }
        });
        left_sends.retain(|&s| match t.engines[0].test(s).unwrap() {
            None => true,
            Some((st, _)) => {
                assert_eq!(st.code, Code::Success);
                false
            }
        });
        left_recvs.is_empty() && left_sends.is_empty()
    });
    assert!(ok, "{} receives did not complete", left_recvs.len());
    // The premise: the whole took several request timeouts, so the last receives
    // waited longer than one for their first block.
    assert!(
        t.now - start > 2 * cfg.request_timeout_ns,
        "took {} ns only",
        t.now - start
    );
}

#[test]
fn receives_waiting_for_the_pull_window_do_not_time_out() {
    many_large_receives::<Mx>(9000);
}

#[test]
fn receives_waiting_for_the_pull_window_do_not_time_out_open_mx() {
    many_large_receives::<Omx>(omx::MTU);
}
