//! The Open-MX codec (`codec::Omx`): MX's events through Open-MX's frames and back, read
//! with `wire::omx`'s own views at the byte offsets of `common/omx_wire.h`.

use myrix_wire::codec::omx::{MODE, MTU};
use myrix_wire::codec::{Codec, Omx};
use myrix_wire::mx::{Body, Header, Kind, CONNECT_BAD_KEY, NO_HANDLE};
use myrix_wire::omx::{self, control, ConnectKind};

fn header() -> Header {
    Header {
        peer_index: 5,
        nic: 0x0000_02aa_bbcc_ddee,
        src_endpoint: 1,
        dst_endpoint: 2,
        session: 0xdead_beef,
        seq: 0x4003,
        ack: 0x4001,
    }
}

/// Emits `body` with `data`, the way the engine does (head, then the data).
fn emit(h: &Header, body: &Body<'_>, data: &[u8]) -> Vec<u8> {
    let mut buf = vec![0xffu8; MTU];
    let n = Omx::emit_head(h, body, &mut buf, data.len()).unwrap();
    buf[n - data.len()..n].copy_from_slice(data);
    buf.truncate(n.max(omx::ETH_ZLEN));
    buf
}

/// Every MX event comes back from its Open-MX frame as it went (but for what the
/// layout does not carry), and the frame reads right with `wire::omx`'s views.
#[test]
fn every_event_round_trips_through_open_mx_frames() {
    let h = header();
    let data = [7u8; 200];
    let bodies = [
        Body::Eager {
            kind: Kind::Tiny,
            match_info: 0x1122_3344_5566_7788,
            msg_len: 3,
            offset: 0,
            handle: NO_HANDLE,
            data: &data[..3],
        },
        Body::Eager {
            kind: Kind::Small,
            match_info: 9,
            msg_len: 100,
            offset: 0,
            handle: NO_HANDLE,
            data: &data[..100],
        },
        Body::Eager {
            kind: Kind::Medium,
            match_info: 9,
            msg_len: 8192 + 200,
            offset: 8192,
            handle: NO_HANDLE,
            data: &data[..200],
        },
        Body::Rndv {
            match_info: 1,
            msg_len: 1 << 20,
            handle: 0x1a07,
        },
        Body::Pull {
            handle: 0x1a07,
            recv_handle: 0x0900_0a0b,
            offset: 65536,
            length: 32768,
            total: 0x0010_2030,
        },
        Body::PullReply {
            recv_handle: 0x0900_0a0b,
            offset: 65536,
            data: &data[..150],
        },
        Body::Notify {
            handle: 0x1a07,
            length: 0x0102_0304,
        },
        Body::Connect {
            key: 0x5eed,
            index: 3,
            request: 0x01,
        },
        Body::ConnectReply {
            status: CONNECT_BAD_KEY,
            index: 4,
            request: 0x01,
            session: 0x1234_5678,
        },
        Body::Ack,
        Body::Nack {
            reason: myrix_wire::mx::NACK_BAD_SESSION,
            seq: 0x4003,
            handle: NO_HANDLE,
        },
        Body::Nack {
            reason: myrix_wire::mx::NACK_BAD_ENDPOINT,
            seq: 0,
            handle: 0x0900_0a0b,
        },
    ];
    for body in bodies {
        let d = match body {
            Body::Eager { data, .. } | Body::PullReply { data, .. } => data,
            _ => &[][..],
        };
        let frame = emit(&h, &body, d);
        let f = omx::Frame::new_checked(&frame[..]).unwrap();
        assert_eq!(f.ethertype(), omx::ETHERTYPE);
        assert_eq!(f.src_mac(), [0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee]);
        assert_eq!(f.peer_index(), 5);
        let got = Omx::parse(&frame).unwrap();
        assert_eq!(got.body, body, "{body:?}");
        let mut want = h;
        match body.kind() {
            Kind::Connect | Kind::ConnectReply => want.seq = 0,
            Kind::Pull => (want.seq, want.ack) = (0, 0),
            Kind::Nack => (want.seq, want.ack, want.session) = (0, 0, 0),
            Kind::PullReply => (want.seq, want.ack, want.session, want.src_endpoint) = (0, 0, 0, 0),
            _ => {}
        }
        assert_eq!(got.header, want, "{body:?}");
        // Open-MX's own reading of the same bytes.
        let r = omx::Repr::parse_bytes(&frame, MODE).unwrap();
        match r.body {
            omx::Body::Msg(m) => {
                assert_eq!(m.header.lib_seqnum, 0x4003);
                assert_eq!(omx::LibSeqnum(m.header.lib_seqnum).session(), 1);
                assert_eq!(m.header.lib_piggyack, 0x4001);
                assert_eq!(m.header.session, 0xdead_beef);
            }
            omx::Body::Medium(m) => assert_eq!(m.frag_seqnum, 1),
            // The large send's region: id 7, seqnum 0x1a (`struct omx_pkt_rndv`:
            // pulled_rdma_id 28, _seqnum 29, _offset 30).
            omx::Body::Rndv(r) => {
                let b = &frame[omx::HEAD_LEN..];
                assert_eq!(&b[28..32], &[7, 0x1a, 0, 0]);
                assert_eq!((r.rdma_id, r.rdma_seqnum, r.rdma_offset), (7, 0x1a, 0));
            }
            // `struct omx_pkt_notify`: total_length 8, pulled_rdma_id 12, _seqnum 13.
            omx::Body::Notify(n) => {
                let b = &frame[omx::HEAD_LEN..];
                assert_eq!(&b[8..14], &[1, 2, 3, 4, 7, 0x1a]);
                assert_eq!((n.rdma_id, n.rdma_seqnum), (7, 0x1a));
                assert_eq!(n.total_length, 0x0102_0304);
            }
            // 65536 = 7 × 8968 + 2760: frame 7 of the reply grid, 2760 bytes in.
            omx::Body::Pull(p) => {
                // Default mode's `struct omx_pkt_pull`: pulled_rdma_id u32 at 12,
                // pulled_rdma_seqnum at 16.
                let b = &frame[omx::HEAD_LEN..];
                assert_eq!(&b[12..17], &[0, 0, 0, 7, 0x1a]);
                assert_eq!((p.rdma_id, p.rdma_seqnum), (7, 0x1a));
                assert_eq!((p.frame_index, p.first_frame_offset), (7, 2760));
                assert_eq!((p.rdma_offset, p.block_length), (0, 32768));
                // total_length at 8: the whole pull, not this block's end; src_magic
                // at 28: Open-MX's pull magic of the puller (endpoint 1 ^ 0x21071980).
                assert_eq!(&b[8..12], &[0, 0x10, 0x20, 0x30], "total_length");
                assert_eq!(&b[28..32], &[0x21, 0x07, 0x19, 0x81], "src_magic");
                assert_eq!(p.src_magic, omx::pull_magic(1));
            }
            // `struct omx_pkt_pull_reply`: frame_seqnum 1, dst_magic 12: the puller's
            // (the header's destination, endpoint 2) magic.
            omx::Body::PullReply(p) => {
                let b = &frame[omx::HEAD_LEN..];
                assert_eq!(p.frame_seqnum, 7);
                assert_eq!(&b[12..16], &[0x21, 0x07, 0x19, 0x82], "dst_magic");
            }
            omx::Body::Connect(c) => {
                // As Open-MX's library fills them: lib_seqnum 0, the next expected
                // sequence number, the attempt's number; a reply echoes the
                // requester's session and gives the replier's.
                assert_eq!(c.lib_seqnum, 0);
                assert_eq!(c.target_recv_seqnum_start, 0x4001);
                assert_eq!(c.connect_seqnum, 1);
                match c.kind {
                    ConnectKind::Reply {
                        status,
                        target_session_id,
                    } => {
                        assert_eq!(status, control::CONNECT_STATUS_BAD_KEY);
                        assert_eq!(c.src_session_id, 0x1234_5678);
                        assert_eq!(target_session_id, 0xdead_beef);
                    }
                    ConnectKind::Request { app_key } => {
                        assert_eq!(app_key, 0x5eed);
                        assert_eq!(c.src_session_id, 0xdead_beef);
                    }
                }
            }
            omx::Body::Truc(t) => assert_eq!(t.lib_seqnum, 0x4001),
            omx::Body::NackLib(n) => {
                // Byte offsets from `struct omx_pkt_nack_lib`: ptype 0, src_endpoint
                // 1, nack_type 3, dst_endpoint 9, dst_src_peer_index 10, lib_seqnum 12.
                let b = &frame[omx::HEAD_LEN..];
                assert_eq!(b[0], omx::PacketType::NackLib as u8);
                assert_eq!((b[1], b[3], b[9]), (1, 3, 2));
                assert_eq!(&b[10..14], &[0, 5, 0x40, 0x03]);
                assert_eq!(n.nack_type, omx::NackType::BadSession);
            }
            omx::Body::NackMcp(n) => {
                // `struct omx_pkt_nack_mcp`: src_endpoint 1, nack_type 3,
                // src_pull_handle 8, src_magic 12.
                let b = &frame[omx::HEAD_LEN..];
                assert_eq!(b[0], omx::PacketType::NackMcp as u8);
                assert_eq!((b[1], b[3]), (1, 1));
                // The refused puller's (endpoint 2) pull magic, as its PULL carried it.
                assert_eq!(&b[8..16], &[9, 0, 0x0a, 0x0b, 0x21, 0x07, 0x19, 0x82]);
                assert_eq!(n.src_pull_handle, 0x0900_0a0b);
            }
            _ => {}
        }
    }
}

proptest::proptest! {
    /// Any bytes: an answer, never a panic; and what parses emits back the same
    /// events.
    #[test]
    fn any_bytes_parse_without_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
        let _ = Omx::parse(&bytes);
        let mut b = bytes.clone();
        if b.len() > omx::HEAD_LEN {
            b[12] = 0x86;
            b[13] = 0xdf;
            b[omx::HEAD_LEN] = 37 + b[omx::HEAD_LEN] % 9;
        }
        if let Ok(r) = Omx::parse(&b) {
            let d = match r.body {
                Body::Eager { data, .. } | Body::PullReply { data, .. } => data,
                _ => &[][..],
            };
            let mut buf = vec![0u8; MTU];
            if let Ok(n) = Omx::emit_head(&r.header, &r.body, &mut buf, d.len()) {
                buf[n - d.len()..n].copy_from_slice(d);
                let again = Omx::parse(&buf[..n.max(omx::ETH_ZLEN)]).unwrap();
                proptest::prop_assert_eq!(again.body, r.body);
            }
        }
    }

    /// Every region name (id, seqnum) goes through RNDV, PULL and NOTIFY into Open-MX's
    /// region fields and back; an RNDV with a region offset, or a PULL whose 32-bit
    /// region id is past 255, is refused.
    #[test]
    fn region_names_round_trip(
        id in proptest::prelude::any::<u8>(),
        seqnum in proptest::prelude::any::<u8>(),
        wide in 256u32..,
        offset in 1u16..,
        length in proptest::num::u32::ANY,
    ) {
        let h = header();
        let name = id as u32 | (seqnum as u32) << 8;
        let bodies = [
            Body::Rndv { match_info: 3, msg_len: 1 << 20, handle: name },
            Body::Pull { handle: name, recv_handle: 9, offset: 0, length: 4096, total: 4096 },
            Body::Notify { handle: name, length },
        ];
        for body in bodies {
            let frame = emit(&h, &body, &[]);
            proptest::prop_assert_eq!(Omx::parse(&frame).unwrap().body, body);
            let (rid, rseq) = match omx::Repr::parse_bytes(&frame, MODE).unwrap().body {
                omx::Body::Rndv(r) => (r.rdma_id as u32, r.rdma_seqnum),
                omx::Body::Pull(p) => (p.rdma_id, p.rdma_seqnum),
                omx::Body::Notify(n) => (n.rdma_id as u32, n.rdma_seqnum),
                _ => unreachable!(),
            };
            proptest::prop_assert_eq!((rid, rseq), (id as u32, seqnum));
        }
        // Bytes an Open-MX peer could send that name no region of ours.
        let mut rndv = emit(&h, &bodies[0], &[]);
        rndv[omx::HEAD_LEN + 30..omx::HEAD_LEN + 32].copy_from_slice(&offset.to_be_bytes());
        proptest::prop_assert!(Omx::parse(&rndv).is_err());
        let mut pull = emit(&h, &bodies[1], &[]);
        pull[omx::HEAD_LEN + 12..omx::HEAD_LEN + 16].copy_from_slice(&wide.to_be_bytes());
        proptest::prop_assert!(Omx::parse(&pull).is_err());
    }

    /// Whole eager messages of every length and header round-trip.
    #[test]
    fn eager_messages_round_trip(
        len in 0usize..=128,
        seq in proptest::prelude::any::<u16>(),
        ack in proptest::prelude::any::<u16>(),
        session in proptest::prelude::any::<u32>(),
        match_info in proptest::prelude::any::<u64>(),
        peer_index in proptest::prelude::any::<u16>(),
    ) {
        let h = Header { seq, ack, session, peer_index, ..header() };
        let data: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let kind = if len <= omx::TINY_MAX { Kind::Tiny } else { Kind::Small };
        let body = Body::Eager {
            kind,
            match_info,
            msg_len: len as u32,
            offset: 0,
            handle: NO_HANDLE,
            data: &data,
        };
        let frame = emit(&h, &body, &data);
        let r = Omx::parse(&frame).unwrap();
        proptest::prop_assert_eq!(r.header, h);
        proptest::prop_assert_eq!(r.body, body);
    }
}

/// What the layout cannot say is refused, not sent wrong.
#[test]
fn events_open_mx_cannot_carry_are_refused() {
    let h = header();
    let mut buf = [0u8; 256];
    let notify_wanted = Body::Eager {
        kind: Kind::Tiny,
        match_info: 0,
        msg_len: 1,
        offset: 0,
        handle: 3,
        data: &[],
    };
    assert!(Omx::emit_head(&h, &notify_wanted, &mut buf, 1).is_err());
    let off_slot = Body::Eager {
        kind: Kind::Medium,
        match_info: 0,
        msg_len: 3000,
        offset: 1000,
        handle: NO_HANDLE,
        data: &[],
    };
    assert!(Omx::emit_head(&h, &off_slot, &mut buf, 10).is_err());
    // Large sends are named by an 8-bit region and its 8-bit seqnum.
    for body in [
        Body::Rndv {
            match_info: 0,
            msg_len: 1 << 20,
            handle: 0x1_0000,
        },
        Body::Pull {
            handle: 0x1_0000,
            recv_handle: 1,
            offset: 0,
            length: 1,
            total: 1,
        },
        Body::Notify {
            handle: 0x1_0000,
            length: 0,
        },
    ] {
        assert!(Omx::emit_head(&h, &body, &mut buf, 0).is_err(), "{body:?}");
    }
    let wide = Header { nic: 1 << 48, ..h };
    assert!(Omx::emit_head(&wide, &Body::Ack, &mut buf, 0).is_err());
    assert!(Omx::parse(&buf[..10]).is_err());
}

/// The MX-compatible wire mode (`OmxMxWire`): medium fragments in 4 KiB slots with
/// `frag_pipeline` 12 and a 16-bit message length, the 32-byte PULL (8-bit region id,
/// 16-bit `first_frame_offset` and `block_length`) on a 4096-byte reply grid, at the
/// byte offsets of `common/omx_wire.h` built with `OMX_MX_WIRE_COMPAT`; what that mode
/// cannot say (a medium past 64 KiB, a fragment off its slot) is refused.
#[test]
fn the_mx_compatible_mode_lays_out_mediums_and_pulls_as_mx_does() {
    use myrix_wire::codec::OmxMxWire;
    let h = header();
    let data = [5u8; 300];
    let mut buf = vec![0u8; OmxMxWire::MTU];
    let mut emit_c = |body: &Body<'_>, d: &[u8]| {
        let n = OmxMxWire::emit_head(&h, body, &mut buf, d.len()).unwrap();
        buf[n - d.len()..n].copy_from_slice(d);
        let f = buf[..n.max(omx::ETH_ZLEN)].to_vec();
        assert_eq!(OmxMxWire::parse(&f).unwrap().body, *body);
        f
    };
    let medium = Body::Eager {
        kind: Kind::Medium,
        match_info: 9,
        msg_len: 2 * 4096 + 300,
        offset: 2 * 4096,
        handle: NO_HANDLE,
        data: &data,
    };
    let f = emit_c(&medium, &data);
    let b = &f[omx::HEAD_LEN..];
    // total length u16 at 4, frag_length u16 at 24, frag_seqnum 26, frag_pipeline 27.
    assert_eq!(&b[4..6], &(2 * 4096 + 300u16).to_be_bytes());
    assert_eq!(&b[24..28], &[1, 44, 2, 12]);
    let pull = Body::Pull {
        handle: 0x1a07,
        recv_handle: 0x0900_0a0b,
        offset: 16 * 4096 + 100,
        length: 32768,
        total: 1 << 20,
    };
    let f = emit_c(&pull, &[]);
    let b = &f[omx::HEAD_LEN..];
    assert_eq!(b[0], omx::PacketType::Pull as u8);
    assert_eq!(&b[12..16], &[7, 0x1a, 0, 0], "rdma id, seqnum, offset");
    assert_eq!(&b[16..20], &[9, 0, 0x0a, 0x0b], "src_pull_handle");
    assert_eq!(&b[24..32], &[0, 100, 0x80, 0, 0, 0, 0, 16], "grid of 4096");
    // Bytes 0..12 as in the default mode: total_length at 8; src_magic at 20 here.
    assert_eq!(&b[8..12], &[0, 0x10, 0, 0], "total_length: the whole pull");
    assert_eq!(&b[20..24], &[0x21, 0x07, 0x19, 0x81], "src_magic");
    let reply = Body::PullReply {
        recv_handle: 3,
        offset: 16 * 4096,
        data: &data,
    };
    let f = emit_c(&reply, &data);
    assert_eq!(f[omx::HEAD_LEN + 1], 16, "frame_seqnum on the 4096 grid");
    assert_eq!(
        &f[omx::HEAD_LEN + 12..][..4],
        &[0x21, 0x07, 0x19, 0x82],
        "dst_magic"
    );
    // The default mode reads neither layout the same way.
    assert!(Omx::parse(&emit_c(&pull, &[])).is_err());
    let mut out = [0u8; 128];
    let medium_at = |msg_len: u32, offset: u32| Body::Eager {
        kind: Kind::Medium,
        match_info: 9,
        msg_len,
        offset,
        handle: NO_HANDLE,
        data: &[],
    };
    for (len, offset) in [(70_000, 4096), (3 * 4096, 4096 + 2048)] {
        let body = medium_at(len, offset);
        assert!(OmxMxWire::emit_head(&h, &body, &mut out, 300).is_err());
    }
}

proptest::proptest! {
    /// Any bytes read as the MX-compatible mode: an answer, never a panic; what
    /// parses emits back to the same events.
    #[test]
    fn mx_compatible_mode_parses_any_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120)) {
        use myrix_wire::codec::OmxMxWire;
        let mut b = bytes.clone();
        if b.len() > omx::HEAD_LEN {
            b[12] = 0x86;
            b[13] = 0xdf;
            b[omx::HEAD_LEN] = 37 + b[omx::HEAD_LEN] % 9;
        }
        if let Ok(r) = OmxMxWire::parse(&b) {
            let d = match r.body {
                Body::Eager { data, .. } | Body::PullReply { data, .. } => data,
                _ => &[][..],
            };
            let mut buf = vec![0u8; OmxMxWire::MTU];
            if let Ok(n) = OmxMxWire::emit_head(&r.header, &r.body, &mut buf, d.len()) {
                buf[n - d.len()..n].copy_from_slice(d);
                let again = OmxMxWire::parse(&buf[..n.max(omx::ETH_ZLEN)]).unwrap();
                proptest::prop_assert_eq!(again.body, r.body);
            }
        }
    }
}

/// A PULL_REPLY's `dst_magic` names the puller's endpoint as Open-MX's driver reads it
/// (`magic ^ 0x21071980`): a magic naming another endpoint parses as that endpoint's
/// frame (the engine drops it as not its own), and one naming no 8-bit endpoint id is
/// refused (the engine counts it as a bad frame), as Open-MX's driver drops it.
#[test]
fn pull_reply_magic_names_the_puller_and_a_wrong_one_is_refused() {
    let h = header();
    let data = [3u8; 20];
    let reply = Body::PullReply {
        recv_handle: 4,
        offset: 0,
        data: &data,
    };
    let mut frame = emit(&h, &reply, &data);
    assert_eq!(Omx::parse(&frame).unwrap().header.dst_endpoint, 2);
    let magic = omx::HEAD_LEN + 12..omx::HEAD_LEN + 16;
    frame[magic.clone()].copy_from_slice(&omx::pull_magic(9).to_be_bytes());
    assert_eq!(Omx::parse(&frame).unwrap().header.dst_endpoint, 9);
    // The endpoint id itself (the old layout of this field), or any magic whose high
    // bits differ: no endpoint.
    for wrong in [2u32, 0x2107_1a82, 0xffff_ffff, 0] {
        frame[magic.clone()].copy_from_slice(&wrong.to_be_bytes());
        assert!(Omx::parse(&frame).is_err(), "{wrong:#x}");
    }
    assert_eq!(omx::endpoint_of_magic(omx::pull_magic(255)), Some(255));
}
