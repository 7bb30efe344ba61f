//! The MX engine over the in-memory network: each feature on its own.

mod common;

use common::*;
use myrix_mx_proto::engine::{Code, Config, Error, HandlerAction, PeerId, RecvBuf};
use myrix_mx_proto::testnet::{NetConfig, TestNet};

fn lossless() -> Config {
    Config {
        reliable_transport: true,
        ..Config::default()
    }
}

fn round_trip(cfg: &Config, net: NetConfig, len: usize) {
    let (mut t, peers) = mesh(2, cfg, net);
    let data = pattern(len as u64, len);
    let now = t.now;
    let s = t.engines[0]
        .isend(now, peers[0][1], &[&data], 0xabc, 7, false)
        .unwrap();
    let r = t.engines[1]
        .irecv(now, RecvBuf::One(vec![0; len]), 0xabc, u64::MAX, 9)
        .unwrap();
    let (st, buf) = wait_buf(&mut t, 1, r);
    assert_eq!(st.code, Code::Success);
    assert_eq!((st.msg_len, st.xfer_len, st.context), (len, len, 9));
    assert_eq!(st.source, peers[1][0]);
    assert_eq!(buf.unwrap().to_vec(), data, "len {len}");
    let st = wait(&mut t, 0, s);
    assert_eq!((st.code, st.context), (Code::Success, 7));
}

#[test]
fn every_class_round_trips_lossless_and_lossy() {
    for len in [
        0,
        1,
        32,
        33,
        128,
        129,
        4000,
        32 * 1024,
        32 * 1024 + 1,
        300_000,
    ] {
        round_trip(&lossless(), NetConfig::lossless(1), len);
        round_trip(&Config::default(), NetConfig::lossy(0.0, 2), len);
        round_trip(&Config::default(), NetConfig::lossy(0.2, 3), len);
    }
}

#[test]
fn wrong_key_is_refused() {
    let mut t = TestNet::new(NetConfig::lossy(0.0, 1), engines(2, &Config::default()));
    let r = t.engines[0].iconnect(1, 1, nic(1), 0, KEY + 1, 0).unwrap();
    assert_eq!(wait(&mut t, 0, r).code, Code::BadKey);
    // Not connected: sending is refused.
    assert!(matches!(
        t.engines[0].isend(t.now, PeerId(0), &[b"x"], 0, 0, false),
        Err(Error::NotConnected(_))
    ));
}

#[test]
fn connect_to_nobody_times_out() {
    let cfg = Config {
        connect_timeout_ns: 50_000_000,
        ..Config::default()
    };
    let mut t = TestNet::new(NetConfig::lossy(0.0, 1), engines(1, &cfg));
    // Location 5 does not exist: frames vanish.
    let r = t.engines[0].iconnect(1, 5, nic(5), 0, KEY, 0).unwrap();
    assert_eq!(wait(&mut t, 0, r).code, Code::Unreachable);
}

#[test]
fn api_misuse_is_an_error() {
    let (mut t, peers) = mesh(2, &Config::default(), NetConfig::lossy(0.0, 1));
    let e = &mut t.engines[0];
    assert!(matches!(
        e.irecv(0, RecvBuf::One(vec![]), 0b11, 0b01, 0),
        Err(Error::BadMatchMask { .. })
    ));
    assert!(matches!(
        e.isend(0, PeerId(40), &[b"x"], 0, 0, false),
        Err(Error::UnknownPeer(_))
    ));
    let big = Config {
        max_message: 10,
        ..Config::default()
    };
    let mut t2 = TestNet::new(NetConfig::lossy(0.0, 1), engines(2, &big));
    let r = t2.engines[0].iconnect(1, 1, nic(1), 0, KEY, 0).unwrap();
    let p = wait(&mut t2, 0, r).source;
    assert!(matches!(
        t2.engines[0].isend(1, p, &[&[0u8; 11]], 0, 0, false),
        Err(Error::TooLarge { len: 11, max: 10 })
    ));
    // A stale handle is refused.
    let s = t.engines[0]
        .isend(1, peers[0][1], &[b"x"], 0, 0, false)
        .unwrap();
    wait(&mut t, 0, s);
    assert_eq!(t.engines[0].test(s), Err(Error::BadRequest));
}

#[test]
fn short_buffer_truncates() {
    for len in [20, 1000, 100_000] {
        let (mut t, peers) = mesh(2, &Config::default(), NetConfig::lossy(0.01, 4));
        let data = pattern(1, len);
        t.engines[0]
            .isend(1, peers[0][1], &[&data], 5, 0, false)
            .unwrap();
        let r = t.engines[1]
            .irecv(1, RecvBuf::One(vec![0; 10]), 5, u64::MAX, 0)
            .unwrap();
        let (st, buf) = wait_buf(&mut t, 1, r);
        assert_eq!(
            (st.code, st.msg_len, st.xfer_len),
            (Code::Truncated, len, 10)
        );
        assert_eq!(buf.unwrap().to_vec(), data[..10]);
    }
}

#[test]
fn scatter_gather_segments() {
    let (mut t, peers) = mesh(2, &lossless(), NetConfig::lossless(1));
    for len in [30, 5000, 70_000] {
        let data = pattern(2, len);
        let (a, b) = data.split_at(len / 3);
        let (b, c) = b.split_at(len / 3);
        t.engines[0]
            .isend(1, peers[0][1], &[a, b, &[], c], 1, 0, false)
            .unwrap();
        let segs = vec![vec![0; 7], vec![], vec![0; len / 2], vec![0; len]];
        let r = t.engines[1]
            .irecv(1, RecvBuf::Segments(segs), 1, u64::MAX, 0)
            .unwrap();
        let (st, buf) = wait_buf(&mut t, 1, r);
        assert_eq!(st.xfer_len, len);
        assert_eq!(buf.unwrap().to_vec()[..len], data[..]);
    }
}

#[test]
fn synchronous_send_completes_only_when_matched() {
    for len in [8, 5000] {
        let (mut t, peers) = mesh(2, &Config::default(), NetConfig::lossy(0.0, 1));
        let s = t.engines[0]
            .isend(t.now, peers[0][1], &[&pattern(3, len)], 3, 0, true)
            .unwrap();
        // Long enough for every frame to be delivered and acknowledged.
        t.run_until(200_000_000, |_| false);
        assert!(t.engines[0].test(s).unwrap().is_none());
        assert_eq!(t.engines[1].unexpected_len(), 1);
        let r = t.engines[1]
            .irecv(t.now, RecvBuf::One(vec![0; len]), 3, u64::MAX, 0)
            .unwrap();
        assert_eq!(wait(&mut t, 1, r).code, Code::Success);
        assert_eq!(wait(&mut t, 0, s).code, Code::Success);
    }
}

#[test]
fn probe_peek_test_any_cancel_forget() {
    let (mut t, peers) = mesh(2, &lossless(), NetConfig::lossless(1));
    let hello = t.engines[0]
        .isend(1, peers[0][1], &[b"hello"], 0x77, 0, false)
        .unwrap();
    t.run_until(1_000_000, |_| false);
    assert_eq!(wait(&mut t, 0, hello).code, Code::Success);
    let st = t.engines[1].iprobe(0x70, 0xf0).unwrap().unwrap();
    assert_eq!((st.match_info, st.msg_len), (0x77, 5));
    assert!(t.engines[1].iprobe(0x60, 0xf0).unwrap().is_none());
    // Cancel an unmatched receive: the buffer comes back.
    let c = t.engines[1]
        .irecv(1, RecvBuf::One(vec![1, 2, 3]), 0x99, u64::MAX, 0)
        .unwrap();
    assert_eq!(t.engines[1].cancel(c).unwrap(), RecvBuf::One(vec![1, 2, 3]));
    // The probed message is received; ipeek sees it, test_any takes it.
    let r = t.engines[1]
        .irecv(1, RecvBuf::One(vec![0; 5]), 0x77, u64::MAX, 42)
        .unwrap();
    assert_eq!(t.engines[1].ipeek(), Some(r));
    assert_eq!(t.engines[1].context(r).unwrap(), 42);
    assert!(t.engines[1].test_any(0x8, 0x8).unwrap().is_none());
    let (rr, st, _) = t.engines[1].test_any(0x7, 0xf).unwrap().unwrap();
    assert_eq!((rr, st.context), (r, 42));
    assert_eq!(t.engines[1].ipeek(), None);
    // A forgotten request frees itself.
    let s = t.engines[0]
        .isend(1, peers[0][1], &[b"x"], 1, 0, false)
        .unwrap();
    t.engines[0].forget(s).unwrap();
    t.run_until(1_000_000, |_| false);
    assert_eq!(t.engines[0].ipeek(), None);
    assert_eq!(t.engines[0].test(s), Err(Error::BadRequest));
}

#[test]
fn unexpected_handler_sees_messages_first() {
    let (mut t, peers) = mesh(2, &lossless(), NetConfig::lossless(1));
    t.engines[1].set_unexpected_handler(Some(Box::new(|info| {
        if info.match_info == 1 {
            HandlerAction::Receive {
                buf: RecvBuf::One(vec![0; info.msg_len]),
                context: 11,
            }
        } else {
            HandlerAction::Continue
        }
    })));
    t.engines[0]
        .isend(1, peers[0][1], &[b"one"], 1, 0, false)
        .unwrap();
    t.engines[0]
        .isend(1, peers[0][1], &[b"two"], 2, 0, false)
        .unwrap();
    t.run_until(1_000_000, |_| false);
    assert_eq!(t.engines[1].unexpected_len(), 1);
    let (_, st, buf) = t.engines[1].test_any(0, 0).unwrap().unwrap();
    assert_eq!((st.context, buf.unwrap().to_vec()), (11, b"one".to_vec()));
}

#[test]
fn full_unexpected_queue_pushes_back_without_loss() {
    for (cfg, net) in [
        (
            Config {
                unexpected_max: 3,
                ..lossless()
            },
            NetConfig::lossless(1),
        ),
        (
            Config {
                unexpected_max: 3,
                ..Config::default()
            },
            NetConfig::lossy(0.05, 2),
        ),
    ] {
        let (mut t, peers) = mesh(2, &cfg, net);
        for i in 0..10u64 {
            t.engines[0]
                .isend(t.now, peers[0][1], &[&pattern(i, 50)], i, 0, false)
                .unwrap();
        }
        t.run_until(100_000_000, |_| false);
        assert_eq!(t.engines[1].unexpected_len(), 3);
        assert!(t.engines[1].stats().busy > 0);
        for i in 0..10u64 {
            let now = t.now;
            let r = t.engines[1]
                .irecv(now, RecvBuf::One(vec![0; 50]), 0, 0, 0)
                .unwrap();
            let (st, buf) = wait_buf(&mut t, 1, r);
            assert_eq!(st.match_info, i, "in order");
            assert_eq!(buf.unwrap().to_vec(), pattern(i, 50));
        }
    }
}

#[test]
fn silent_peer_becomes_unreachable() {
    let cfg = Config {
        request_timeout_ns: 100_000_000,
        ..Config::default()
    };
    let (mut t, peers) = mesh(2, &cfg, NetConfig::lossy(0.0, 1));
    // Engine 1 disappears: replace it with one that has another NIC id.
    t.engines[1] = myrix_mx_proto::Engine::new(cfg.clone(), nic(9), 0, KEY, 77);
    let s = t.engines[0]
        .isend(t.now, peers[0][1], &[b"lost"], 0, 0, false)
        .unwrap();
    assert_eq!(wait(&mut t, 0, s).code, Code::Unreachable);
    assert!(t.engines[0].stats().retransmits > 0);
}

/// `set_request_timeout` (MX's `mx_set_request_timeout` with no request) takes effect
/// at run time: with the default 10 s, a send to a silent peer fails only after it;
/// lowered to 50 ms it fails within 50 ms of simulated time plus a resend interval.
#[test]
fn the_request_timeout_can_be_changed_at_run_time() {
    let cfg = Config::default();
    let (mut t, peers) = mesh(2, &cfg, NetConfig::lossy(0.0, 1));
    t.engines[1] = myrix_mx_proto::Engine::new(cfg.clone(), nic(9), 0, KEY, 77);
    t.engines[0].set_request_timeout(50_000_000);
    assert_eq!(t.engines[0].config().request_timeout_ns, 50_000_000);
    let start = t.now;
    let s = t.engines[0]
        .isend(t.now, peers[0][1], &[b"lost"], 0, 0, false)
        .unwrap();
    assert_eq!(wait(&mut t, 0, s).code, Code::Unreachable);
    let took = t.now - start;
    assert!(
        took >= 50_000_000 && took < 50_000_000 + 4 * cfg.resend_ns,
        "failed after {took} ns"
    );
}

#[test]
fn restarted_peer_resets_the_session() {
    let cfg = Config::default();
    let (mut t, peers) = mesh(2, &cfg, NetConfig::lossy(0.0, 1));
    // Traffic in the first session moves the sequence numbers.
    for i in 0..5u64 {
        t.engines[0]
            .isend(t.now, peers[0][1], &[b"a"], i, 0, false)
            .unwrap();
    }
    t.run_until(10_000_000, |_| false);
    // Engine 1 restarts with a new session and connects again.
    t.engines[1] = myrix_mx_proto::Engine::new(cfg.clone(), nic(1), 0, KEY, 0x2222);
    let c = t.engines[1].iconnect(t.now, 0, nic(0), 0, KEY, 0).unwrap();
    let p10 = wait(&mut t, 1, c).source;
    let s = t.engines[1]
        .isend(t.now, p10, &[b"new"], 9, 0, false)
        .unwrap();
    let r = t.engines[0]
        .irecv(t.now, RecvBuf::One(vec![0; 3]), 9, u64::MAX, 0)
        .unwrap();
    let (st, buf) = wait_buf(&mut t, 0, r);
    assert_eq!(
        (st.code, buf.unwrap().to_vec()),
        (Code::Success, b"new".to_vec())
    );
    assert_eq!(wait(&mut t, 1, s).code, Code::Success);
    // And the old side can send to the new incarnation.
    let s = t.engines[0]
        .isend(t.now, peers[0][1], &[b"back"], 4, 0, false)
        .unwrap();
    let r = t.engines[1]
        .irecv(t.now, RecvBuf::One(vec![0; 4]), 4, u64::MAX, 0)
        .unwrap();
    assert_eq!(wait(&mut t, 1, r).code, Code::Success);
    assert_eq!(wait(&mut t, 0, s).code, Code::Success);
}

#[test]
fn garbage_frames_are_counted_and_dropped() {
    let (mut t, _) = mesh(2, &Config::default(), NetConfig::lossy(0.0, 1));
    let before = t.engines[1].stats().bad_frames;
    for junk in [
        &b""[..],
        b"\x01",
        &[1u8; 19],
        &[1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0][..],
    ] {
        assert_eq!(
            t.engines[1].handle_frame(1, &0, junk),
            myrix_mx_proto::Handled::Dropped
        );
    }
    assert_eq!(t.engines[1].stats().bad_frames, before + 4);
}

/// A lent send of `len` bytes in uneven segments; `unlend_after` steps later (if any)
/// the lender takes its segments back and the engine must carry on from its own copy.
fn lent_round_trip(cfg: &Config, net: NetConfig, len: usize, unlend_after: Option<usize>) {
    let (mut t, peers) = mesh(2, cfg, net);
    let data = pattern(len as u64 + 1, len);
    let cuts = [0, len / 7, len / 7 + 1, len / 2, len];
    let segs: Vec<Vec<u8>> = cuts.windows(2).map(|w| data[w[0]..w[1]].to_vec()).collect();
    let now = t.now;
    let s = t.engines[0]
        .isend_lent(now, peers[0][1], len, 0x77, 3, false)
        .unwrap();
    t.lend(0, s, segs);
    let r = t.engines[1]
        .irecv(now, RecvBuf::One(vec![0; len]), 0x77, u64::MAX, 0)
        .unwrap();
    if let Some(k) = unlend_after {
        for _ in 0..k {
            t.step();
        }
        t.unlend(0);
    }
    let (st, buf) = wait_buf(&mut t, 1, r);
    assert_eq!(
        (st.code, st.msg_len, st.xfer_len),
        (Code::Success, len, len)
    );
    assert_eq!(buf.unwrap().to_vec(), data, "len {len}");
    assert_eq!(wait(&mut t, 0, s).code, Code::Success);
    t.unlend(0);
}

#[test]
fn lent_sends_arrive_whole_with_and_without_loss() {
    for len in [4000, 32 * 1024 + 1, 300_000] {
        lent_round_trip(&lossless(), NetConfig::lossless(4), len, None);
        lent_round_trip(&Config::default(), NetConfig::lossy(0.0, 5), len, None);
        lent_round_trip(&Config::default(), NetConfig::lossy(0.2, 6), len, None);
    }
}

#[test]
fn a_send_unlent_midway_carries_on_from_its_own_copy() {
    for k in [0, 1, 3, 10] {
        lent_round_trip(&lossless(), NetConfig::lossless(7), 300_000, Some(k));
        lent_round_trip(
            &Config::default(),
            NetConfig::lossy(0.2, 8),
            300_000,
            Some(k),
        );
    }
}

#[test]
fn isend_vec_hands_its_vector_back() {
    for (cfg, net) in [
        (lossless(), NetConfig::lossless(9)),
        (Config::default(), NetConfig::lossy(0.2, 10)),
    ] {
        let (mut t, peers) = mesh(2, &cfg, net);
        for len in [5, 40_000, 200_000] {
            let data = pattern(len as u64 + 3, len);
            let now = t.now;
            let s = t.engines[0]
                .isend_vec(now, peers[0][1], data.clone(), 0x5, 0, false)
                .unwrap();
            let r = t.engines[1]
                .irecv(now, RecvBuf::One(vec![0; len]), 0x5, u64::MAX, 0)
                .unwrap();
            let (_, got) = wait_buf(&mut t, 1, r);
            assert_eq!(got.unwrap().to_vec(), data);
            let (st, back) = wait_buf(&mut t, 0, s);
            assert_eq!(st.code, Code::Success);
            assert_eq!(back.unwrap().to_vec(), data, "the sender's vector, intact");
        }
    }
}

#[test]
fn disconnect_ends_requests_and_a_new_connect_starts_afresh() {
    for (cfg, net) in [
        (Config::default(), NetConfig::lossy(0.0, 1)),
        (Config::default(), NetConfig::lossy(0.2, 2)),
        (lossless(), NetConfig::lossless(3)),
    ] {
        let (mut t, peers) = mesh(2, &cfg, net);
        let (p01, p10) = (peers[0][1], peers[1][0]);
        // Sequence numbers move in both directions first.
        for i in 0..3u64 {
            let s = t.engines[0]
                .isend(t.now, p01, &[&pattern(i, 40)], 1, 0, false)
                .unwrap();
            let r = t.engines[1]
                .irecv(t.now, RecvBuf::One(vec![0; 40]), 1, u64::MAX, 0)
                .unwrap();
            assert_eq!(wait(&mut t, 1, r).code, Code::Success);
            assert_eq!(wait(&mut t, 0, s).code, Code::Success);
        }
        // Pending on both sides: 0's synchronous send (nobody receives it) and 1's.
        let s0 = t.engines[0]
            .isend(t.now, p01, &[&pattern(7, 5000)], 2, 0, true)
            .unwrap();
        let s1 = t.engines[1]
            .isend(t.now, p10, &[b"to 0"], 3, 0, true)
            .unwrap();
        t.run_until(50_000_000, |_| false);
        t.engines[0].disconnect(p01).unwrap();
        assert_eq!(wait(&mut t, 0, s0).code, Code::Disconnected);
        assert!(matches!(
            t.engines[0].isend(t.now, p01, &[b"x"], 0, 0, false),
            Err(Error::NotConnected(_))
        ));
        assert!(matches!(
            t.engines[0].disconnect(PeerId(99)),
            Err(Error::UnknownPeer(_))
        ));
        // A connect given up by another disconnect before any answer.
        let c = t.engines[0].iconnect(t.now, 1, nic(1), 0, KEY, 0).unwrap();
        t.engines[0].disconnect(p01).unwrap();
        assert_eq!(wait(&mut t, 0, c).code, Code::Disconnected);
        // Connecting again: 1 sees a new session, so its pending send is reset.
        let c = t.engines[0].iconnect(t.now, 1, nic(1), 0, KEY, 0).unwrap();
        assert_eq!(wait(&mut t, 0, c).source, p01);
        assert_eq!(wait(&mut t, 1, s1).code, Code::PeerReset);
        // And messages flow both ways again, in order, from fresh sequence numbers.
        for (from, to, peer) in [(0, 1, p01), (1, 0, p10), (0, 1, p01)] {
            let mut sends = Vec::new();
            for i in 0..5u64 {
                let data = pattern(i, 100 * i as usize);
                let now = t.now;
                sends.push(
                    t.engines[from]
                        .isend(now, peer, &[&data], 4, 0, false)
                        .unwrap(),
                );
            }
            for i in 0..5u64 {
                let now = t.now;
                let r = t.engines[to]
                    .irecv(now, RecvBuf::One(vec![0; 500]), 4, u64::MAX, 0)
                    .unwrap();
                let (st, buf) = wait_buf(&mut t, to, r);
                assert_eq!(st.code, Code::Success);
                assert_eq!(
                    buf.unwrap().to_vec()[..st.xfer_len],
                    pattern(i, 100 * i as usize)
                );
            }
            for s in sends {
                assert_eq!(wait(&mut t, from, s).code, Code::Success);
            }
        }
    }
}

/// Memory the engine does not own, behind the safe [`RecvTarget`] seam (the IO crate's
/// raw-pointer target is the same seam).
#[derive(Debug)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl myrix_mx_proto::engine::RecvTarget for Shared {
    fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }
    fn write_at(&mut self, offset: usize, data: &[u8]) {
        self.0.lock().unwrap()[offset..offset + data.len()].copy_from_slice(data);
    }
}

/// Every message class lands in a receive target, lossless and lossy, and a target
/// shorter than the message is truncated.
#[test]
fn receives_into_a_target() {
    for (cfg, net) in [
        (lossless(), NetConfig::lossless(1)),
        (Config::default(), NetConfig::lossy(0.2, 4)),
    ] {
        for len in [0usize, 8, 129, 4000, 32 * 1024 + 1, 300_000] {
            for room in [len, len / 2] {
                let (mut t, peers) = mesh(2, &cfg, net);
                let data = pattern(len as u64 + 1, len);
                let mem = std::sync::Arc::new(std::sync::Mutex::new(vec![0u8; room]));
                let buf = RecvBuf::target(Shared(mem.clone()));
                let now = t.now;
                let r = t.engines[1].irecv(now, buf, 3, u64::MAX, 0).unwrap();
                t.engines[0]
                    .isend(now, peers[0][1], &[&data], 3, 0, false)
                    .unwrap();
                let (st, back) = wait_buf(&mut t, 1, r);
                assert!(matches!(back, Some(RecvBuf::Target(_))));
                let code = if room < len {
                    Code::Truncated
                } else {
                    Code::Success
                };
                assert_eq!((st.code, st.msg_len, st.xfer_len), (code, len, room));
                assert_eq!(*mem.lock().unwrap(), data[..room], "len {len} room {room}");
            }
        }
    }
}

/// Cached deadlines: once every message is through and acknowledged, the network goes
/// quiet (the deadlines that moved later were each seen once and dropped), every engine
/// is idle and has no deadline left.
#[test]
fn timers_go_quiet_after_traffic() {
    let (mut t, peers) = mesh(3, &Config::default(), NetConfig::lossy(0.1, 5));
    let mut reqs = Vec::new();
    for (i, len) in [8usize, 4000, 100_000].into_iter().enumerate() {
        let now = t.now;
        let data = pattern(i as u64, len);
        reqs.push((
            0,
            t.engines[0]
                .isend(now, peers[0][1 + i % 2], &[&data], i as u64, 0, false)
                .unwrap(),
        ));
        let r = t.engines[1 + i % 2]
            .irecv(now, RecvBuf::One(vec![0; len]), i as u64, u64::MAX, 0)
            .unwrap();
        reqs.push((1 + i % 2, r));
    }
    for (e, r) in reqs {
        assert_eq!(wait(&mut t, e, r).code, Code::Success);
    }
    let mut steps = 0;
    while t.step() {
        steps += 1;
        assert!(steps < 10_000, "the network never goes quiet");
    }
    for e in &t.engines {
        assert!(e.idle());
        assert_eq!(e.poll_timeout(), None);
    }
}
