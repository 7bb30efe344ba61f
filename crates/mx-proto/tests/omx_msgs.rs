//! The engine with Open-MX's frames (`codec::Omx`) over the test network: large sends
//! named by Open-MX's 8-bit regions (allocated per send, released when it ends, sends
//! waiting while none is free) and medium messages numbered as Open-MX numbers them (one
//! `lib_seqnum` per message, fragments told apart by `frag_seqnum`). Each test reads the
//! wire with `wire::omx`'s own views.

mod common;
use common::*;
use myrix_mx_proto::engine::{Code, Config, Request};
use myrix_mx_proto::testnet::{NetConfig, TestNet};
use myrix_mx_proto::RecvBuf;
use myrix_wire::codec::{omx, Omx};
use myrix_wire::omx as wire;
use std::collections::{BTreeMap, BTreeSet};

fn omx_config() -> Config {
    Config {
        mtu: omx::MTU,
        ..Config::default()
    }
}

/// Open-MX's reading of every frame from `src` to `dst` in a capture.
fn frames(t: &TestNet<Omx>, src: usize, dst: usize) -> Vec<wire::Body<'_>> {
    t.tap
        .as_ref()
        .unwrap()
        .iter()
        .filter(|(s, d, _)| (*s, *d) == (src, dst))
        .map(|(_, _, f)| {
            wire::Repr::parse_bytes(f, wire::WireMode::Default)
                .unwrap()
                .body
        })
        .collect()
}

/// Runs until every request of `reqs` (engine, request, bytes expected for a receive)
/// completes, checking each receive's data; returns the largest number of regions
/// engine `watch` held at any step.
fn finish(
    t: &mut TestNet<Omx>,
    reqs: Vec<(usize, Request, Option<Vec<u8>>)>,
    watch: usize,
) -> usize {
    let mut left = reqs;
    let mut most = 0;
    let ok = t.run_until(60_000_000_000, |t| {
        most = most.max(t.engines[watch].regions_held());
        left.retain(|(e, r, want)| match t.engines[*e].test(*r).unwrap() {
            None => true,
            Some((st, buf)) => {
                assert_eq!(st.code, Code::Success);
                if let Some(want) = want {
                    assert_eq!(&buf.unwrap().to_vec(), want);
                }
                false
            }
        });
        left.is_empty()
    });
    assert!(ok, "{} requests did not complete", left.len());
    most
}

/// With 2 regions, 8 large sends in a row under loss, duplication and reordering (and
/// small sends queued behind them): the RNDVs name regions 0 and 1 only, never more
/// than 2 held at once, each use with a new seqnum; every PULL names a region in its
/// use; the sends wait for a region rather than fail, all data arrives in order, and
/// every region is free at the end.
#[test]
fn large_sends_take_regions_and_wait_for_a_free_one() {
    for (loss, seed) in [(0.0, 3), (0.1, 4)] {
        let cfg = Config {
            large_regions: 2,
            ..omx_config()
        };
        let (mut t, peers) = mesh_with::<Omx>(2, &cfg, NetConfig::lossy(loss, seed));
        t.tap = Some(Vec::new());
        let p01 = peers[0][1];
        let mut reqs = Vec::new();
        for i in 0..8u64 {
            let len = 40_000 + i as usize * 1000;
            let s = t.engines[0]
                .isend(t.now, p01, &[&pattern(i, len)], i, 0, false)
                .unwrap();
            reqs.push((0, s, None));
            let small = t.engines[0]
                .isend(t.now, p01, &[&pattern(100 + i, 10)], 100 + i, 0, false)
                .unwrap();
            reqs.push((0, small, None));
        }
        for i in 0..8u64 {
            let len = 40_000 + i as usize * 1000;
            let r = t.engines[1]
                .irecv(t.now, RecvBuf::One(vec![0; len]), i, u64::MAX, 0)
                .unwrap();
            reqs.push((1, r, Some(pattern(i, len))));
            let r = t.engines[1]
                .irecv(t.now, RecvBuf::One(vec![0; 10]), 100 + i, u64::MAX, 0)
                .unwrap();
            reqs.push((1, r, Some(pattern(100 + i, 10))));
        }
        let most = finish(&mut t, reqs, 0);
        assert_eq!(most, 2, "both regions used, never more");
        assert_eq!(t.engines[0].regions_held(), 0, "all released");

        let rndvs: BTreeMap<u16, (u8, u8)> = frames(&t, 0, 1)
            .into_iter()
            .filter_map(|b| match b {
                wire::Body::Rndv(r) => {
                    assert_eq!(r.rdma_offset, 0);
                    Some((r.header.lib_seqnum, (r.rdma_id, r.rdma_seqnum)))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            rndvs.len(),
            8,
            "one RNDV per large send (resends repeat it)"
        );
        let uses: BTreeSet<(u8, u8)> = rndvs.values().copied().collect();
        assert_eq!(uses.len(), 8, "each use of a region has its own seqnum");
        assert!(uses.iter().all(|&(id, _)| id < 2));
        for b in frames(&t, 1, 0) {
            if let wire::Body::Pull(p) = b {
                assert!(uses.contains(&(p.rdma_id as u8, p.rdma_seqnum)), "{p:?}");
                assert!(p.rdma_id < 2);
            }
        }
    }
}

/// The whole table: 300 large sends at once hold all 256 regions and the rest wait;
/// all complete. A PULL naming a region after its send ended (its old seqnum) gets no
/// reply and is counted stale.
#[test]
fn the_table_has_256_regions_and_stale_pulls_find_none() {
    let cfg = omx_config();
    let (mut t, peers) = mesh_with::<Omx>(2, &cfg, NetConfig::lossy(0.0, 9));
    let p01 = peers[0][1];
    t.tap = Some(Vec::new());
    let mut reqs = Vec::new();
    for i in 0..300u64 {
        let s = t.engines[0]
            .isend(t.now, p01, &[&pattern(i, 33_000)], i, 0, false)
            .unwrap();
        reqs.push((0, s, None));
    }
    t.run_until(50_000_000, |_| false);
    assert_eq!(t.engines[0].regions_held(), 256);
    for i in 0..300u64 {
        let r = t.engines[1]
            .irecv(t.now, RecvBuf::One(vec![0; 33_000]), i, u64::MAX, 0)
            .unwrap();
        reqs.push((1, r, Some(pattern(i, 33_000))));
    }
    assert_eq!(finish(&mut t, reqs, 0), 256);
    assert_eq!(t.engines[0].regions_held(), 0);

    // Replay the first PULL of the capture: its region's use has ended.
    let tap = t.tap.take().unwrap();
    let (_, _, pull) = tap
        .iter()
        .find(|(s, _, f)| {
            *s == 1
                && matches!(
                    wire::Repr::parse_bytes(f, wire::WireMode::Default).map(|r| r.body),
                    Ok(wire::Body::Pull(_))
                )
        })
        .unwrap()
        .clone();
    let stale = t.engines[0].stats().stale_frames;
    let out = t.engines[0].stats().frames_out;
    t.send_frame(1, 0, &pull);
    t.run_until(1_000_000, |_| false);
    assert_eq!(t.engines[0].stats().stale_frames, stale + 1);
    assert_eq!(t.engines[0].stats().frames_out, out, "no PULL_REPLY");
}

/// Medium messages as Open-MX numbers them: every fragment of a message carries the
/// message's one `lib_seqnum` and its place in `frag_seqnum` (0, 1, 2 for 3 slots of
/// 8 KiB), consecutive messages take consecutive numbers (tiny ones between them
/// included), and under loss, duplication and reordering every message arrives whole
/// and in order; on a lossless network too.
#[test]
fn medium_fragments_share_their_message_sequence_number() {
    for net in [
        NetConfig::lossy(0.0, 1),
        NetConfig::lossy(0.15, 2),
        NetConfig::lossless(3),
    ] {
        let cfg = Config {
            reliable_transport: net.lossless,
            ..omx_config()
        };
        let (mut t, peers) = mesh_with::<Omx>(2, &cfg, net);
        t.tap = Some(Vec::new());
        let p01 = peers[0][1];
        let mut reqs = Vec::new();
        let lens = [20_000usize, 5, 8192, 8193, 30_000, 200];
        for (i, &len) in lens.iter().enumerate() {
            let i = i as u64;
            let s = t.engines[0]
                .isend(t.now, p01, &[&pattern(i, len)], i, 0, false)
                .unwrap();
            reqs.push((0, s, None));
            let r = t.engines[1]
                .irecv(t.now, RecvBuf::One(vec![0; len]), i, u64::MAX, 0)
                .unwrap();
            reqs.push((1, r, Some(pattern(i, len))));
        }
        finish(&mut t, reqs, 0);

        // First transmissions, by lib_seqnum: the message's length and its fragments.
        let mut msgs: BTreeMap<u16, (u32, BTreeSet<u8>)> = BTreeMap::new();
        for b in frames(&t, 0, 1) {
            match b {
                wire::Body::Medium(m) => {
                    let e = msgs
                        .entry(m.header.lib_seqnum)
                        .or_insert((m.msg_length, BTreeSet::new()));
                    assert_eq!(e.0, m.msg_length, "one number, one message");
                    e.1.insert(m.frag_seqnum);
                }
                wire::Body::Msg(m) => {
                    msgs.entry(m.header.lib_seqnum)
                        .or_insert((m.data.len() as u32, BTreeSet::from([0])));
                }
                _ => {}
            }
        }
        let got: Vec<(u16, u32, Vec<u8>)> = msgs
            .into_iter()
            .map(|(s, (l, f))| (s, l, f.into_iter().collect()))
            .collect();
        let want: Vec<(u16, u32, Vec<u8>)> = lens
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                let frags = l.div_ceil(omx::MEDIUM_FRAG).max(1) as u8;
                // Numbers from the 1 the receiver announced.
                (1 + i as u16, l as u32, (0..frags).collect())
            })
            .collect();
        assert_eq!(got, want, "{net:?}");
    }
}

/// Open-MX's MX-compatible wire mode (`codec::OmxMxWire`, a 4144-byte MTU): messages of
/// every class arrive whole under loss, duplication and reordering, and the capture
/// reads as that mode's frames: medium fragments in 4 KiB slots with `frag_pipeline`
/// 12, one `lib_seqnum` per message, pull replies of at most 4096 bytes on a 4096-byte
/// grid, 32-byte PULLs naming 8-bit regions.
#[test]
fn the_mx_compatible_wire_mode_carries_every_class() {
    use myrix_wire::codec::OmxMxWire;
    let mode = wire::WireMode::MxCompat;
    let cfg = Config {
        mtu: OmxMxWire::MTU,
        ..Config::default()
    };
    let (mut t, peers) = mesh_with::<OmxMxWire>(2, &cfg, NetConfig::lossy(0.1, 21));
    t.tap = Some(Vec::new());
    let p01 = peers[0][1];
    let mut reqs = Vec::new();
    let lens = [0usize, 30, 100, 4096, 10_000, 32_768, 100_000, 1 << 20];
    for (i, &len) in lens.iter().enumerate() {
        let i = i as u64;
        let s = t.engines[0]
            .isend(t.now, p01, &[&pattern(i, len)], i, 0, false)
            .unwrap();
        reqs.push((0, s, None));
        let r = t.engines[1]
            .irecv(t.now, RecvBuf::One(vec![0; len]), i, u64::MAX, 0)
            .unwrap();
        reqs.push((1, r, Some(pattern(i, len))));
    }
    // Frames of this engine pair are Open-MX's frames of this mode.
    let tap_frames = |t: &TestNet<OmxMxWire>, s: usize| -> Vec<Vec<u8>> {
        (t.tap.as_ref().unwrap().iter())
            .filter(|(src, _, _)| *src == s)
            .map(|(_, _, f)| f.clone())
            .collect()
    };
    let mut left = reqs;
    assert!(t.run_until(60_000_000_000, |t| {
        left.retain(|(e, r, want)| match t.engines[*e].test(*r).unwrap() {
            None => true,
            Some((st, buf)) => {
                assert_eq!(st.code, Code::Success);
                if let Some(want) = want {
                    assert_eq!(&buf.unwrap().to_vec(), want);
                }
                false
            }
        });
        left.is_empty()
    }));
    let mut medium_seqs: BTreeMap<u16, BTreeSet<u8>> = BTreeMap::new();
    let (mut replies, mut pulls) = (0, 0);
    for f in tap_frames(&t, 0).iter().chain(tap_frames(&t, 1).iter()) {
        assert!(f.len() <= OmxMxWire::MTU);
        match wire::Repr::parse_bytes(f, mode).unwrap().body {
            wire::Body::Medium(m) => {
                assert_eq!(f[omx_head() + 27], 12, "frag_pipeline");
                assert!(m.data.len() <= 4096);
                medium_seqs
                    .entry(m.header.lib_seqnum)
                    .or_default()
                    .insert(m.frag_seqnum);
            }
            wire::Body::PullReply(p) => {
                replies += 1;
                assert!(!p.data.is_empty() && p.data.len() <= 4096);
                assert!(p.msg_offset % 4096 + p.data.len() as u32 <= 4096);
                assert_eq!(p.frame_seqnum as u32, p.msg_offset / 4096 % 256);
            }
            wire::Body::Pull(p) => {
                pulls += 1;
                // The 32-byte PULL: pulled_rdma_id u8 at 12, _seqnum at 13,
                // block_length u16 at 26.
                let b = &f[omx_head()..];
                assert_eq!(b.len(), 32);
                assert_eq!((b[12] as u32, b[13]), (p.rdma_id, p.rdma_seqnum));
                assert_eq!(u16::from_be_bytes([b[26], b[27]]) as u32, p.block_length);
                assert!(p.block_length <= 32_768);
            }
            _ => {}
        }
    }
    // 4096 is one fragment; 10 000 three; 32 768 eight; each under one number.
    let frag_counts: BTreeSet<usize> = medium_seqs.values().map(|f| f.len()).collect();
    assert_eq!(frag_counts, BTreeSet::from([1, 3, 8]));
    assert!(
        replies > 256 && pulls >= 32,
        "{replies} replies, {pulls} pulls"
    );
}

fn omx_head() -> usize {
    wire::HEAD_LEN
}

/// In the MX-compatible mode a NOTIFY is acknowledged at once (a TRUC ack within a few
/// microseconds), as Open-MX does for native MX's sake; in the default mode the ack
/// waits for the delayed-ack timer (1 ms) when nothing else carries it.
#[test]
fn the_mx_compatible_mode_acks_a_notify_at_once() {
    fn acks_after_notify<C: myrix_wire::codec::Codec>(mtu: usize, mode: wire::WireMode) -> usize {
        let cfg = Config {
            mtu,
            ..Config::default()
        };
        let (mut t, peers) = mesh_with::<C>(2, &cfg, NetConfig::lossy(0.0, 1));
        let s = t.engines[0]
            .isend(t.now, peers[0][1], &[&pattern(1, 100_000)], 1, 0, false)
            .unwrap();
        let r = t.engines[1]
            .irecv(t.now, RecvBuf::One(vec![0; 100_000]), 1, u64::MAX, 0)
            .unwrap();
        // The receive completes as its NOTIFY leaves: what 0 sends 1 in the next
        // 200 µs (the NOTIFY arrives within 5 µs; nothing else of 1's awaits an ack).
        assert_eq!(wait(&mut t, 1, r).code, Code::Success);
        t.tap = Some(Vec::new());
        t.run_until(200_000, |_| false);
        assert_eq!(wait(&mut t, 0, s).code, Code::Success);
        (t.tap.as_ref().unwrap().iter())
            .filter(|(s, _, f)| {
                *s == 0
                    && matches!(
                        wire::Repr::parse_bytes(f, mode).map(|r| r.body),
                        Ok(wire::Body::Truc(_))
                    )
            })
            .count()
    }
    use myrix_wire::codec::OmxMxWire;
    assert_eq!(
        acks_after_notify::<OmxMxWire>(OmxMxWire::MTU, wire::WireMode::MxCompat),
        1
    );
    assert_eq!(
        acks_after_notify::<Omx>(omx::MTU, wire::WireMode::Default),
        0
    );
}

/// A stream of rendezvous on a 1500-byte link (mediums of one frame, everything longer
/// by rendezvous), far more sends in flight than regions, both ways at once, under
/// loss, duplication and reordering: every message arrives, every region comes back.
#[test]
fn a_stream_past_the_region_table_completes_under_loss() {
    let cfg = Config {
        mtu: 1514,
        medium_max: 1514
            - <Omx as myrix_wire::codec::Codec>::head_len(myrix_wire::mx::Kind::Medium),
        ..Config::default()
    };
    let (mut t, peers) = mesh_with::<Omx>(2, &cfg, NetConfig::lossy(0.05, 31));
    let mut reqs = Vec::new();
    for i in 0..600u64 {
        let len = [4096usize, 16_384, 1500, 65_536][i as usize % 4];
        for (a, b) in [(0usize, 1usize), (1, 0)] {
            let s = t.engines[a]
                .isend(t.now, peers[a][b], &[&pattern(i, len)], i, 0, false)
                .unwrap();
            reqs.push((a, s, None));
            let r = t.engines[b]
                .irecv(t.now, RecvBuf::One(vec![0; len]), i, u64::MAX, 0)
                .unwrap();
            reqs.push((b, r, Some(pattern(i, len))));
        }
    }
    assert_eq!(finish(&mut t, reqs, 0), 256);
    assert_eq!(t.engines[0].regions_held() + t.engines[1].regions_held(), 0);
}

/// NOTIFY carries the length the receiver took (Open-MX's `total_length`), in both wire
/// modes, under loss, duplication and reordering: a rendezvous into a shorter buffer
/// ends the send with that length as its transfer length (as Open-MX's sender reports
/// it), a whole one with the message's; myrix's own layout has no such field and the
/// send keeps its length.
#[test]
fn notify_carries_the_length_pulled() {
    fn run<C: myrix_wire::codec::Codec>(mtu: usize, mode: Option<wire::WireMode>) {
        let cfg = Config {
            mtu,
            ..Config::default()
        };
        let mut net = NetConfig::lossy(0.1, 7);
        net.duplicate = 0.05;
        let (mut t, peers) = mesh_with::<C>(2, &cfg, net);
        t.tap = Some(Vec::new());
        for (i, (len, room)) in [(100_000, 60_000), (100_000, 100_000), (70_000, 0)]
            .into_iter()
            .enumerate()
        {
            let i = i as u64;
            let s = t.engines[0]
                .isend(t.now, peers[0][1], &[&pattern(i, len)], i, 0, false)
                .unwrap();
            let r = t.engines[1]
                .irecv(t.now, RecvBuf::One(vec![0; room]), i, u64::MAX, 0)
                .unwrap();
            let (st, buf) = wait_buf(&mut t, 1, r);
            assert_eq!(st.xfer_len, room);
            assert_eq!(buf.unwrap().to_vec(), pattern(i, len)[..room]);
            let st = wait(&mut t, 0, s);
            assert_eq!(st.code, Code::Success);
            let want = if C::NOTIFY_LENGTH { room } else { len };
            assert_eq!(st.xfer_len, want, "send {i} of {len} into {room}");
        }
        let Some(mode) = mode else { return };
        let notified: BTreeSet<u32> = (t.tap.as_ref().unwrap().iter())
            .filter(|(s, _, _)| *s == 1)
            .filter_map(
                |(_, _, f)| match wire::Repr::parse_bytes(f, mode).ok()?.body {
                    wire::Body::Notify(n) => Some(n.total_length),
                    _ => None,
                },
            )
            .collect();
        assert_eq!(notified, BTreeSet::from([0, 60_000, 100_000]));
        assert_eq!(t.engines[0].stats().bad_frames, 0);
    }
    use myrix_wire::codec::{Mx, OmxMxWire};
    run::<Omx>(omx::MTU, Some(wire::WireMode::Default));
    run::<OmxMxWire>(OmxMxWire::MTU, Some(wire::WireMode::MxCompat));
    run::<Mx>(9000, None);
}
