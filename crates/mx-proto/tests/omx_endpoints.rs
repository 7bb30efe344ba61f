//! Frames for an endpoint that is not open, with Open-MX's frames (`codec::Omx`) over
//! the test network whose hosts answer them as Open-MX's driver does
//! (`engine::refusal`): NACK_LIB / NACK_MCP with ENDPT_CLOSED for an id with nothing
//! open, BAD_ENDPT for an id past the host's endpoints; the sender's requests end with
//! `Code::NoEndpoint` (`MX_STATUS_ENDPOINT_CLOSED`) or `Code::BadEndpoint`
//! (`MX_STATUS_BAD_ENDPOINT`) at once, not at the request timeout.

mod common;
use common::*;
use myrix_mx_proto::engine::{refusal, Code, Config, OMX_ENDPOINT_MAX};
use myrix_mx_proto::testnet::{NetConfig, TestNet};
use myrix_mx_proto::RecvBuf;
use myrix_wire::codec::{omx, Omx};
use myrix_wire::mx::{NACK_BAD_ENDPOINT, NACK_ENDPOINT_CLOSED};
use myrix_wire::omx as wire;

fn omx_config() -> Config {
    Config {
        mtu: omx::MTU,
        ..Config::default()
    }
}

/// The NACKs in a capture from `src` to `dst`: (NACK_LIB?, type, lib_seqnum or pull
/// handle, head peer index, src_endpoint).
fn nacks(t: &TestNet<Omx>, src: usize, dst: usize) -> Vec<(bool, u8, u32, u16, u8)> {
    let tap = t.tap.as_ref().unwrap();
    tap.iter()
        .filter(|(s, d, _)| (*s, *d) == (src, dst))
        .filter_map(|(_, _, f)| {
            let r = wire::Repr::parse_bytes(f, wire::WireMode::Default).ok()?;
            match r.body {
                wire::Body::NackLib(n) => Some((
                    true,
                    n.nack_type as u8,
                    n.lib_seqnum as u32,
                    r.head.peer_index,
                    n.src_endpoint,
                )),
                wire::Body::NackMcp(n) => Some((
                    false,
                    n.nack_type as u8,
                    n.src_pull_handle,
                    r.head.peer_index,
                    n.src_endpoint,
                )),
                _ => None,
            }
        })
        .collect()
}

/// A connect to an endpoint id the host has not open ends with `NoEndpoint` (ENDPT_CLOSED,
/// id below the host's 32) or `BadEndpoint` (BAD_ENDPT, id past them), answered by the
/// host's NACK_LIB with `lib_seqnum` 0 and addressed with the index the connect gave.
#[test]
fn a_connect_to_an_endpoint_not_open_is_refused_at_once() {
    for (loss, seed) in [(0.0, 1), (0.2, 2)] {
        let cfg = omx_config();
        let mut t = TestNet::new(NetConfig::lossy(loss, seed), engines_with::<Omx>(2, &cfg));
        t.drivers = true;
        t.tap = Some(Vec::new());
        for (id, code, reason) in [
            (5u8, Code::NoEndpoint, NACK_ENDPOINT_CLOSED),
            (OMX_ENDPOINT_MAX, Code::BadEndpoint, NACK_BAD_ENDPOINT),
        ] {
            let start = t.now;
            let c = t.engines[0].iconnect(t.now, 1, nic(1), id, KEY, 0).unwrap();
            assert_eq!(wait(&mut t, 0, c).code, code);
            assert!(t.now - start < cfg.connect_timeout_ns / 4);
            let n = nacks(&t, 1, 0);
            let &(lib, ty, seq, _, src_ep) = n.last().unwrap();
            assert_eq!((lib, ty, seq, src_ep), (true, reason, 0, id));
        }
        // Engine 0's peer slots for (nic 1, ep 5) and (nic 1, ep 32) are 0 and 1.
        let n = nacks(&t, 1, 0);
        assert!(n.iter().all(|&(_, _, _, index, _)| index <= 1), "{n:?}");
        assert_eq!(
            t.engines[1].stats().frames_in,
            0,
            "the engine saw none of it"
        );
    }
}

/// Engine 1 closes while engine 0 sends it a small, a medium and a large message: the
/// host refuses each (NACK_LIB ENDPT_CLOSED naming its `lib_seqnum`, no peer index) and
/// all three sends end with `NoEndpoint` well before the request timeout. A receive of
/// engine 0 pulling a large message from an engine that then closes ends the same way
/// (NACK_MCP naming the receive's pull handle).
#[test]
fn frames_for_a_closed_endpoint_are_nacked_and_end_the_requests() {
    for (loss, seed) in [(0.0, 3), (0.2, 4)] {
        let cfg = omx_config();
        let (mut t, peers) = mesh_with::<Omx>(3, &cfg, NetConfig::lossy(loss, seed));
        let (p01, p20) = (peers[0][1], peers[2][0]);
        t.tap = Some(Vec::new());
        t.closed.insert(1);
        let start = t.now;
        let sends: Vec<_> = [20usize, 20_000, 200_000]
            .iter()
            .enumerate()
            .map(|(i, &len)| {
                t.engines[0]
                    .isend(t.now, p01, &[&pattern(i as u64, len)], i as u64, 0, false)
                    .unwrap()
            })
            .collect();
        for s in sends {
            assert_eq!(wait(&mut t, 0, s).code, Code::NoEndpoint);
        }
        assert!(t.now - start < cfg.request_timeout_ns / 4);
        let n = nacks(&t, 1, 0);
        assert!(!n.is_empty());
        for &(lib, ty, _, index, src_ep) in &n {
            assert_eq!(
                (lib, ty, index, src_ep),
                (true, NACK_ENDPOINT_CLOSED, 0xffff, 0)
            );
        }

        // Engine 2 announces a large message to 0 and closes before 0 pulls it.
        let _big = t.engines[2]
            .isend(t.now, p20, &[&pattern(9, 300_000)], 9, 0, false)
            .unwrap();
        t.run_until(5_000_000, |_| false);
        t.closed.insert(2);
        let r = t.engines[0]
            .irecv(t.now, RecvBuf::One(vec![0; 300_000]), 9, u64::MAX, 0)
            .unwrap();
        assert_eq!(wait(&mut t, 0, r).code, Code::NoEndpoint);
        assert!(nacks(&t, 2, 0)
            .iter()
            .any(|&(lib, ty, _, _, _)| !lib && ty == NACK_ENDPOINT_CLOSED));
    }
}

/// What a host does not answer: acks and NACKs get no NACK, nor do frames that do not
/// parse or that come from its own NIC.
#[test]
fn acks_nacks_and_garbage_get_no_refusal() {
    use myrix_wire::codec::Codec;
    use myrix_wire::mx::{Body, Header, NO_HANDLE};
    let h = Header {
        peer_index: 0,
        nic: nic(0),
        src_endpoint: 0,
        dst_endpoint: 3,
        session: 1,
        seq: 1,
        ack: 1,
    };
    let mut buf = [0u8; 256];
    let mut out = [0u8; 256];
    for body in [
        Body::Ack,
        Body::Nack {
            reason: NACK_ENDPOINT_CLOSED,
            seq: 1,
            handle: NO_HANDLE,
        },
    ] {
        let n = Omx::emit_head(&h, &body, &mut buf, 0).unwrap();
        assert_eq!(refusal::<Omx>(&buf[..n.max(60)], nic(1), 2, &mut out), None);
    }
    assert_eq!(refusal::<Omx>(&[0u8; 10], nic(1), 2, &mut out), None);
    let tiny = Body::Eager {
        kind: myrix_wire::mx::Kind::Tiny,
        match_info: 1,
        msg_len: 0,
        offset: 0,
        handle: NO_HANDLE,
        data: &[],
    };
    let n = Omx::emit_head(&h, &tiny, &mut buf, 0).unwrap();
    assert_eq!(refusal::<Omx>(&buf[..n.max(60)], nic(0), 2, &mut out), None);
    assert!(refusal::<Omx>(&buf[..n.max(60)], nic(1), 2, &mut out).is_some());
    // myrix's own layout has no NACKs.
    let n = myrix_wire::codec::Mx::emit_head(&h, &tiny, &mut buf, 0).unwrap();
    assert_eq!(
        refusal::<myrix_wire::codec::Mx>(&buf[..n], nic(1), 2, &mut out),
        None
    );
}

/// A connect to an address whose endpoint closed and whose id another process opened
/// with the same key (a new session) does not reach the new process: it ends with
/// `NoEndpoint`, binds nothing, and the new process gets no message; with the new
/// address, or with no session (MX's `mx_connect`: NIC and id only), it connects. A
/// peer that disconnected from us and a self-connect after a disconnect still pass the
/// check (their presented session changes only above the instance bits). Both layouts.
#[test]
fn a_stale_address_does_not_reach_a_new_process() {
    fn run<C: myrix_wire::codec::Codec>(cfg: Config) {
        use myrix_mx_proto::engine::Engine;
        let (mut t, peers) = mesh_with::<C>(2, &cfg, NetConfig::lossy(0.1, 5));
        let old = t.engines[1].session();
        // Engine 1 disconnects from 0; 0 connects to 1's address again: same instance.
        t.engines[1].disconnect(peers[1][0]).unwrap();
        let c = t.engines[0]
            .iconnect_session(t.now, 1, nic(1), 0, KEY, old, 0)
            .unwrap();
        assert_eq!(wait(&mut t, 0, c).code, Code::Success);
        // A self-connect, a disconnect from oneself, a self-connect again.
        for _ in 0..2 {
            let me = t.engines[0].session();
            let c = t.engines[0]
                .iconnect_session(t.now, 0, nic(0), 0, KEY, me, 0)
                .unwrap();
            let st = wait(&mut t, 0, c);
            assert_eq!(st.code, Code::Success);
            t.engines[0].disconnect(st.source).unwrap();
        }

        // Engine 1 closes; a new process opens its id with the same key.
        let new = old ^ 0x0055_aa55;
        t.engines[1] = Engine::with_codec(cfg.clone(), nic(1), 0, KEY, new);
        let c = t.engines[0]
            .iconnect_session(t.now, 1, nic(1), 0, KEY, old, 0)
            .unwrap();
        assert_eq!(wait(&mut t, 0, c).code, Code::NoEndpoint);
        // What 0 held of the old instance is gone with it: no send goes to the slot.
        let p = peers[0][1];
        assert_eq!(
            t.engines[0].isend(t.now, p, &[b"x"], 1, 0, false),
            Err(myrix_mx_proto::engine::Error::NotConnected(p))
        );
        t.run_until(50_000_000, |_| false);
        assert_eq!(t.engines[1].unexpected_len(), 0);
        for want in [new, 0] {
            let c = t.engines[0]
                .iconnect_session(t.now, 1, nic(1), 0, KEY, want, 0)
                .unwrap();
            assert_eq!(wait(&mut t, 0, c).code, Code::Success);
        }
    }
    run::<Omx>(omx_config());
    run::<myrix_wire::codec::Mx>(Config::default());
}
