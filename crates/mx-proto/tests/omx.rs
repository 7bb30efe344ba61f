//! The engine with Open-MX's frames (`codec::Omx`) over the lossy test network, for what
//! Open-MX does differently from myrix's own layout: NACKs for frames of a wrong session,
//! its 14-bit sequence numbers.

mod common;
use common::*;
use myrix_mx_proto::engine::{Code, Config};
use myrix_mx_proto::testnet::NetConfig;
use myrix_mx_proto::RecvBuf;
use myrix_wire::codec::{omx, Omx};

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
