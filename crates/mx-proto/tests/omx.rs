//! The engine with Open-MX's frames (`codec::Omx`) over the lossy test network, for what
//! Open-MX does differently from myrix's own layout: NACKs for frames of a wrong session,
//! its 14-bit sequence numbers.

mod common;
use common::*;
use myrix_mx_proto::engine::{Code, Config};
use myrix_mx_proto::testnet::NetConfig;
use myrix_mx_proto::RecvBuf;
use myrix_wire::codec::{omx, Omx};
use myrix_wire::omx as wire;

fn omx_config() -> Config {
    Config {
        mtu: omx::MTU,
        ..Config::default()
    }
}

/// A peer that disconnected (so its session for us changed) answers our frames with
/// NACK_LIB BAD_SESSION, as Open-MX's driver does, and our sends end with the bad-session
/// status at once, not after the request timeout; its pulls of the old session get
/// NACK_MCP and its receive ends the same way.
#[test]
fn a_wrong_session_is_nacked_and_ends_the_request() {
    for (loss, seed) in [(0.0, 1), (0.2, 2)] {
        let cfg = omx_config();
        let (mut t, peers) = mesh_with::<Omx>(2, &cfg, NetConfig::lossy(loss, seed));
        let (p01, p10) = (peers[0][1], peers[1][0]);
        let s = t.engines[0]
            .isend(t.now, p01, &[&pattern(1, 50)], 1, 0, false)
            .unwrap();
        let r = t.engines[1]
            .irecv(t.now, RecvBuf::One(vec![0; 50]), 1, u64::MAX, 0)
            .unwrap();
        assert_eq!(wait(&mut t, 1, r).code, Code::Success);
        assert_eq!(wait(&mut t, 0, s).code, Code::Success);

        // 1 forgets 0; 0 does not know and sends a small and a medium message.
        t.engines[1].disconnect(p10).unwrap();
        let start = t.now;
        let small = t.engines[0]
            .isend(t.now, p01, &[&pattern(2, 20)], 2, 0, false)
            .unwrap();
        let medium = t.engines[0]
            .isend(t.now, p01, &[&pattern(3, 20_000)], 3, 0, false)
            .unwrap();
        assert_eq!(wait(&mut t, 0, small).code, Code::PeerReset);
        assert_eq!(wait(&mut t, 0, medium).code, Code::PeerReset);
        assert!(
            t.now - start < cfg.request_timeout_ns / 4,
            "ended by the NACK, not the timeout: {} ns",
            t.now - start
        );
        assert!(t.engines[1].stats().nacks_sent >= 1);
        assert!(t.engines[0].stats().nacks_received >= 1);

        // The other way: 1 connects again (a new session both ways) and sends a large
        // message; 0 disconnects before receiving it, then posts the receive, whose
        // pulls carry 1's old session and are refused with NACK_MCP.
        let c = t.engines[1].iconnect(t.now, 0, nic(0), 0, KEY, 0).unwrap();
        assert_eq!(wait(&mut t, 1, c).code, Code::Success);
        let big = t.engines[1]
            .isend(t.now, p10, &[&pattern(4, 200_000)], 4, 0, false)
            .unwrap();
        t.run_until(20_000_000, |_| false);
        let nacks = t.engines[1].stats().nacks_sent;
        t.engines[1].disconnect(p10).unwrap();
        assert_eq!(wait(&mut t, 1, big).code, Code::Disconnected);
        let r = t.engines[0]
            .irecv(t.now, RecvBuf::One(vec![0; 200_000]), 4, u64::MAX, 0)
            .unwrap();
        assert_eq!(wait(&mut t, 0, r).code, Code::PeerReset);
        assert!(t.engines[1].stats().nacks_sent > nacks);
    }
}

/// Tiny frames from `src` to `dst` in a capture, as Open-MX reads them: `lib_seqnum`,
/// `lib_piggyack`.
fn tiny_seqnums(tap: &[(usize, usize, Vec<u8>)], src: usize, dst: usize) -> Vec<(u16, u16)> {
    tap.iter()
        .filter(|(s, d, _)| (*s, *d) == (src, dst))
        .filter_map(
            |(_, _, f)| match wire::Repr::parse_bytes(f, wire::WireMode::Default) {
                Ok(wire::Repr {
                    body: wire::Body::Msg(m),
                    ..
                }) => Some((m.header.lib_seqnum, m.header.lib_piggyack)),
                _ => None,
            },
        )
        .collect()
}

/// Past 2^14 messages on a lossy link, `lib_seqnum` wraps as Open-MX's does (14 bits,
/// the 2 session bits untouched, starting from the 1 the receiver announced), every
/// message arrives once and in order, and the piggy-backed acks are in the same
/// numbering; after a disconnect and a new connect the receiver's new session number
/// is in the top bits.
#[test]
fn sequence_numbers_wrap_in_fourteen_bits_with_the_session_on_top() {
    let cfg = omx_config();
    let (mut t, peers) = mesh_with::<Omx>(2, &cfg, NetConfig::lossy(0.05, 11));
    let (p01, p10) = (peers[0][1], peers[1][0]);
    t.tap = Some(Vec::new());
    let n = (1u64 << 14) + 600;
    let mut sends = std::collections::VecDeque::new();
    for i in 0..n {
        sends.push_back(
            t.engines[0]
                .isend(t.now, p01, &[&i.to_be_bytes()], i, 0, false)
                .unwrap(),
        );
        let r = t.engines[1]
            .irecv(t.now, RecvBuf::One(vec![0; 8]), i, u64::MAX, 0)
            .unwrap();
        // A window of outstanding messages, as a streaming program keeps.
        if sends.len() >= 64 {
            let s = sends.pop_front().unwrap();
            assert_eq!(wait(&mut t, 0, s).code, Code::Success);
        }
        if i % 64 == 63 || i == n - 1 {
            let (st, buf) = wait_buf(&mut t, 1, r);
            assert_eq!(st.code, Code::Success);
            assert_eq!(buf.unwrap().to_vec(), i.to_be_bytes());
        }
    }
    for s in sends {
        assert_eq!(wait(&mut t, 0, s).code, Code::Success);
    }
    // A reply so that 1's acks ride on a message too.
    let s = t.engines[1]
        .isend(t.now, p10, &[b"back"], 7, 0, false)
        .unwrap();
    let r = t.engines[0]
        .irecv(t.now, RecvBuf::One(vec![0; 4]), 7, u64::MAX, 0)
        .unwrap();
    assert_eq!(wait(&mut t, 0, r).code, Code::Success);
    assert_eq!(wait(&mut t, 1, s).code, Code::Success);

    let tap = t.tap.take().unwrap();
    let seqs = tiny_seqnums(&tap, 0, 1);
    // First transmissions in order: 1, 2, … 0x3fff, 0, 1, … in session 0.
    let mut firsts = Vec::new();
    let mut next = wire::LibSeqnum(1);
    for &(seq, _) in &seqs {
        assert_eq!(wire::LibSeqnum(seq).session(), 0, "{seq:#x}");
        if seq == next.0 {
            firsts.push(seq);
            next = next.add(1);
        }
    }
    assert_eq!(
        firsts.len() as u64,
        n,
        "every message numbered once, in order"
    );
    assert!(firsts.contains(&0x3fff) && firsts[0x3fff] == 0);
    // 1's reply acknowledges everything: its piggy-back is the next number 0 will use.
    let back = tiny_seqnums(&tap, 1, 0);
    let &(_, piggyack) = back.last().unwrap();
    assert_eq!(piggyack, next.0);

    // 1 disconnects and connects again: its new session number is in the top bits of
    // what 0 sends it now.
    t.engines[1].disconnect(p10).unwrap();
    let c = t.engines[1].iconnect(t.now, 0, nic(0), 0, KEY, 0).unwrap();
    assert_eq!(wait(&mut t, 1, c).code, Code::Success);
    t.tap = Some(Vec::new());
    let s = t.engines[0]
        .isend(t.now, p01, &[b"again"], 8, 0, false)
        .unwrap();
    let r = t.engines[1]
        .irecv(t.now, RecvBuf::One(vec![0; 5]), 8, u64::MAX, 0)
        .unwrap();
    assert_eq!(wait(&mut t, 1, r).code, Code::Success);
    assert_eq!(wait(&mut t, 0, s).code, Code::Success);
    let again = tiny_seqnums(t.tap.as_ref().unwrap(), 0, 1);
    assert_eq!(again[0].0, wire::LibSeqnum::new(1, 1).0);
}

/// A connect that an Open-MX driver refuses (no such endpoint open: NACK_LIB ENDPT_CLOSED
/// with `lib_seqnum` 0, as `driver/linux/omx_recv.c` answers a CONNECT) ends with
/// no-endpoint, as Open-MX's library ends its oldest connect to that peer, rather than
/// after the connect timeout.
#[test]
fn a_nacked_connect_ends_with_no_endpoint() {
    use myrix_wire::codec::Codec;
    use myrix_wire::mx::{Body, Header, NACK_ENDPOINT_CLOSED, NO_HANDLE};
    let cfg = omx_config();
    let mut t = myrix_mx_proto::testnet::TestNet::new(
        NetConfig::lossy(0.0, 5),
        engines_with::<Omx>(2, &cfg),
    );
    // Engine 0 connects to NIC 9 endpoint 3 (reached at engine 1's place, which has no
    // such endpoint and drops the request).
    let c = t.engines[0].iconnect(t.now, 1, nic(9), 3, KEY, 0).unwrap();
    t.run_until(1_000_000, |_| false);
    // NIC 9's driver answers: to engine 0's endpoint 0, from endpoint 3, addressed with
    // the index engine 0 gave it in the connect (its first peer: 0).
    let h = Header {
        peer_index: 0,
        nic: nic(9),
        src_endpoint: 3,
        dst_endpoint: 0,
        session: 0,
        seq: 0,
        ack: 0,
    };
    let nack = Body::Nack {
        reason: NACK_ENDPOINT_CLOSED,
        seq: 0,
        handle: NO_HANDLE,
    };
    let mut frame = vec![0u8; 64];
    let n = Omx::emit_head(&h, &nack, &mut frame, 0).unwrap();
    frame.truncate(n.max(60));
    let start = t.now;
    t.send_frame(1, 0, &frame);
    let st = wait(&mut t, 0, c);
    assert_eq!(st.code, Code::NoEndpoint);
    assert!(t.now - start < cfg.connect_timeout_ns / 4);
    assert_eq!(t.engines[0].stats().nacks_received, 1);
}
