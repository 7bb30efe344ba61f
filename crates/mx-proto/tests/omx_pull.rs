//! The pull's fields as Open-MX's driver fills and checks them, in both wire modes, over
//! the test network: a PULL's `total_length` is the whole pull (what the receiver takes
//! of the message), not the end of its block; its `src_magic` is the puller's endpoint
//! magic (`index ^ 0x21071980`), echoed in every PULL_REPLY's `dst_magic`; and a
//! PULL_REPLY whose magic names no endpoint, or another one, is dropped and counted
//! (Open-MX's "Drop Pull Reply Bad Endpoint in Magic"), its data never written.

mod common;
use common::*;
use myrix_mx_proto::engine::{Code, Codec, Config, Engine, PeerId};
use myrix_mx_proto::testnet::{NetConfig, TestNet};
use myrix_mx_proto::RecvBuf;
use myrix_wire::codec::{Omx, OmxMxWire};
use myrix_wire::mx::{Body, Header};
use myrix_wire::omx::{self as wire, pull_magic, WireMode};

/// The endpoint ids of the two engines: not 0, so a magic is told from an id.
const EPS: [u8; 2] = [3, 5];

/// Two engines with endpoint ids [`EPS`], connected both ways; `peers[a]` is the other
/// as `a` sees it.
fn pair<C: Codec>(mtu: usize, net: NetConfig) -> (TestNet<C>, [PeerId; 2]) {
    let cfg = Config {
        mtu,
        ..Config::default()
    };
    let engines = (0..2)
        .map(|i| Engine::with_codec(cfg.clone(), nic(i), EPS[i], KEY, 0x1000 + i as u32))
        .collect();
    let mut t = TestNet::new(net, engines);
    let mut peers = [PeerId(0); 2];
    for (a, peer) in peers.iter_mut().enumerate() {
        let b = 1 - a;
        let now = t.now;
        let r = t.engines[a]
            .iconnect(now, b, nic(b), EPS[b], KEY, 0)
            .unwrap();
        let st = wait(&mut t, a, r);
        assert_eq!(st.code, Code::Success);
        *peer = st.source;
    }
    (t, peers)
}

/// Rendezvous of 100 000 bytes into 60 000, 300 000 whole and 1 MiB whole from engine 0
/// to 1 under loss, duplication and reordering: every PULL (resends included) carries
/// its receive's whole length in `total_length` and its blocks lie inside it; every
/// PULL's `src_magic` and every PULL_REPLY's `dst_magic` is the puller's magic.
#[test]
fn pulls_carry_the_whole_length_and_the_pullers_magic() {
    fn run<C: Codec>(mtu: usize, mode: WireMode) {
        let mut net = NetConfig::lossy(0.05, 11);
        net.duplicate = 0.03;
        let (mut t, peers) = pair::<C>(mtu, net);
        t.tap = Some(Vec::new());
        let grid = mode.pull_reply_max() as u64;
        for (i, (len, room)) in [(100_000, 60_000), (300_000, 300_000), (1 << 20, 1 << 20)]
            .into_iter()
            .enumerate()
        {
            let i = i as u64;
            let s = t.engines[0]
                .isend(t.now, peers[0], &[&pattern(i, len)], i, 0, false)
                .unwrap();
            let r = t.engines[1]
                .irecv(t.now, RecvBuf::One(vec![0; room]), i, u64::MAX, 0)
                .unwrap();
            let (st, buf) = wait_buf(&mut t, 1, r);
            assert_eq!(buf.unwrap().to_vec(), pattern(i, len)[..room]);
            let want = if room < len {
                Code::Truncated
            } else {
                Code::Success
            };
            assert_eq!(st.code, want);
            assert_eq!(wait(&mut t, 0, s).code, Code::Success);
            let (mut pulls, mut replies) = (0, 0);
            for (src, _, f) in t.tap.as_mut().unwrap().drain(..) {
                match wire::Repr::parse_bytes(&f, mode).unwrap().body {
                    wire::Body::Pull(p) => {
                        assert_eq!(src, 1);
                        pulls += 1;
                        assert_eq!(p.total_length as usize, room, "{p:?}");
                        let start = p.frame_index as u64 * grid + p.first_frame_offset as u64;
                        assert!(start + p.block_length as u64 <= room as u64, "{p:?}");
                        assert_eq!(p.src_magic, pull_magic(EPS[1]));
                        assert_eq!((p.dst_endpoint, p.src_endpoint), (EPS[0], EPS[1]));
                    }
                    wire::Body::PullReply(p) => {
                        replies += 1;
                        assert_eq!(p.dst_magic, pull_magic(EPS[1]));
                    }
                    _ => {}
                }
            }
            assert!(
                pulls >= 2 && replies > pulls,
                "{pulls} pulls, {replies} replies"
            );
        }
        for e in &t.engines {
            assert_eq!(e.stats().bad_frames, 0);
        }
    }
    run::<Omx>(Omx::MTU, WireMode::Default);
    run::<OmxMxWire>(OmxMxWire::MTU, WireMode::MxCompat);
}

/// A forged PULL_REPLY for the receive's first frame (its handle right, its data 0xEE)
/// reaches the puller before the real reply, on a lossless link that keeps order. With
/// a magic naming no endpoint it is a bad frame; naming another endpoint it is not this
/// endpoint's (stale); in both the receive gets the sender's data. The same frame with
/// the puller's own magic is taken: the magic is what turned it away.
#[test]
fn a_pull_reply_with_a_wrong_magic_is_dropped_and_counted() {
    fn run<C: Codec>(mtu: usize, mode: WireMode) {
        for (magic, taken) in [
            (Some(0x0bad_0bad), false),
            (Some(EPS[1] as u32), false),
            (Some(pull_magic(EPS[0])), false),
            (None, true),
        ] {
            let (mut t, peers) = pair::<C>(mtu, NetConfig::lossless(3));
            t.tap = Some(Vec::new());
            let len = 50_000;
            t.engines[0]
                .isend(t.now, peers[0], &[&pattern(1, len)], 1, 0, false)
                .unwrap();
            let r = t.engines[1]
                .irecv(t.now, RecvBuf::One(vec![0; len]), 1, u64::MAX, 0)
                .unwrap();
            // Until the first PULL leaves the puller.
            let mut handle = None;
            let ok = t.run_until(1_000_000_000, |t| {
                handle = t.tap.as_ref().unwrap().iter().find_map(|(s, _, f)| {
                    match wire::Repr::parse_bytes(f, mode).ok()?.body {
                        wire::Body::Pull(p) if *s == 1 => Some(p.src_pull_handle),
                        _ => None,
                    }
                });
                handle.is_some()
            });
            assert!(ok, "no PULL");
            let (before_bad, before_stale) = {
                let s = t.engines[1].stats();
                (s.bad_frames, s.stale_frames)
            };
            // A whole first frame, so that the real one is then a duplicate.
            let data = vec![0xeeu8; mode.pull_reply_max()];
            let h = Header {
                peer_index: 0,
                nic: nic(0),
                src_endpoint: 0,
                dst_endpoint: EPS[1],
                session: 0,
                seq: 0,
                ack: 0,
            };
            let body = Body::PullReply {
                recv_handle: handle.unwrap(),
                offset: 0,
                data: &data,
            };
            let mut f = vec![0u8; mtu];
            let n = C::emit_head(&h, &body, &mut f, data.len()).unwrap();
            f[n - data.len()..n].copy_from_slice(&data);
            f.truncate(n.max(wire::ETH_ZLEN));
            // The head (MACs, EtherType, the puller's index for the sender) of a real
            // frame from the sender, so that only the magic differs from a true reply.
            let real = (t.tap.as_ref().unwrap().iter())
                .find(|(s, _, _)| *s == 0)
                .map(|(_, _, f)| f[..wire::HEAD_LEN].to_vec())
                .unwrap();
            f[..wire::HEAD_LEN].copy_from_slice(&real);
            // `dst_magic` is at 12 in `struct omx_pkt_pull_reply`, after the 16-byte head.
            if let Some(m) = magic {
                f[wire::HEAD_LEN + 12..wire::HEAD_LEN + 16].copy_from_slice(&m.to_be_bytes());
            }
            t.send_frame(0, 1, &f);
            let (st, buf) = wait_buf(&mut t, 1, r);
            assert_eq!(st.code, Code::Success);
            let got = buf.unwrap().to_vec();
            let s = t.engines[1].stats();
            if taken {
                assert_eq!(
                    &got[..data.len()],
                    &data[..],
                    "forged, with the right magic"
                );
                assert_eq!(got[data.len()..], pattern(1, len)[data.len()..]);
            } else {
                assert_eq!(got, pattern(1, len), "magic {magic:x?}");
                let (bad, stale) = (s.bad_frames - before_bad, s.stale_frames - before_stale);
                if magic == Some(pull_magic(EPS[0])) {
                    assert_eq!((bad, stale), (0, 1), "another endpoint's magic");
                } else {
                    assert_eq!((bad, stale), (1, 0), "magic {magic:x?}");
                }
            }
        }
    }
    run::<Omx>(Omx::MTU, WireMode::Default);
    run::<OmxMxWire>(OmxMxWire::MTU, WireMode::MxCompat);
}
