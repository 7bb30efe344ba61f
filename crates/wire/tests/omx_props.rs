//! Property tests for the Open-MX frame views: every layout re-parses as it was
//! emitted, in both wire modes, and no input makes a checked view or a parser panic.

use myrix_wire::omx::*;
use proptest::prelude::*;

/// Raw material for one frame; [`Case::body`] shapes it into a valid [`Body`].
#[derive(Debug, Clone)]
struct Case {
    mode: WireMode,
    head: EthHead,
    kind: u8,
    n: [u32; 16],
    data: Vec<u8>,
}

const KINDS: u8 = 14;

fn mode() -> impl Strategy<Value = WireMode> {
    prop_oneof![Just(WireMode::Default), Just(WireMode::MxCompat)]
}

fn case() -> impl Strategy<Value = Case> {
    (
        mode(),
        any::<([u8; 6], [u8; 6], u16)>(),
        0..KINDS,
        any::<[u32; 16]>(),
        prop_oneof![
            3 => prop::collection::vec(any::<u8>(), 0..200),
            1 => prop::collection::vec(any::<u8>(), 0..9000),
        ],
    )
        .prop_map(|(mode, (dst, src, peer_index), kind, n, data)| Case {
            mode,
            head: EthHead {
                dst,
                src,
                peer_index,
            },
            kind,
            n,
            data,
        })
}

impl Case {
    fn body(&self) -> Body<'_> {
        let n = &self.n;
        let m = self.mode;
        let compat = m == WireMode::MxCompat;
        let data = |max: usize| &self.data[..self.data.len().min(max)];
        let header = MsgHeader {
            dst_endpoint: n[0] as u8,
            src_endpoint: n[1] as u8,
            src_generation: n[2] as u8,
            lib_seqnum: n[3] as u16,
            lib_piggyack: (n[3] >> 16) as u16,
            match_info: (n[4] as u64) << 32 | n[5] as u64,
            session: n[6],
            checksum: n[7] as u16,
        };
        // Fields 8 bits wide in compat mode, 16 bits wide, or 32 in both modes.
        let w8 = |v: u32| if compat { v & 0xff } else { v };
        let w16 = |v: u32| if compat { v & 0xffff } else { v };
        match self.kind {
            0 => Body::Msg(MsgRepr {
                kind: MsgKind::Tiny,
                header,
                data: data(TINY_MAX),
            }),
            1 => Body::Msg(MsgRepr {
                kind: MsgKind::Small,
                header,
                data: data(SMALL_MAX),
            }),
            2 => {
                let d = data(m.medium_frag_max());
                let seq = n[8] as usize % m.medium_frags_max();
                let end = seq * m.medium_frag_max() + d.len();
                // Up to a fragment's worth after this one; a compat length stays 16-bit.
                let extra = n[9] as usize % m.medium_frag_max();
                let len = if compat {
                    (end + extra).min(0xffff)
                } else {
                    end + extra
                };
                Body::Medium(MediumRepr {
                    header,
                    msg_length: len as u32,
                    frag_seqnum: seq as u8,
                    data: d,
                })
            }
            3 => Body::Rndv(RndvRepr {
                header,
                msg_length: n[8],
                rdma_id: n[9] as u8,
                rdma_seqnum: n[10] as u8,
                rdma_offset: n[11] as u16,
            }),
            4 => Body::Pull(PullRepr {
                dst_endpoint: n[0] as u8,
                src_endpoint: n[1] as u8,
                src_generation: n[2] as u8,
                session: n[6],
                total_length: n[7],
                rdma_id: w8(n[8]),
                rdma_seqnum: n[9] as u8,
                rdma_offset: w16(n[10]),
                src_pull_handle: n[11],
                src_magic: n[12],
                first_frame_offset: w16(n[13]),
                block_length: w16(n[14]),
                frame_index: n[15],
            }),
            5 => Body::PullReply(PullReplyRepr {
                frame_seqnum: n[0] as u8,
                msg_offset: n[1],
                dst_pull_handle: n[2],
                dst_magic: n[3],
                data: data(m.pull_reply_max()),
            }),
            6 => Body::Notify(NotifyRepr {
                dst_endpoint: n[0] as u8,
                src_endpoint: n[1] as u8,
                src_generation: n[2] as u8,
                session: n[6],
                total_length: n[7],
                rdma_id: n[8] as u8,
                rdma_seqnum: n[9] as u8,
                lib_seqnum: n[10] as u16,
                lib_piggyack: n[11] as u16,
            }),
            7 | 8 => Body::Connect(ConnectRepr {
                dst_endpoint: n[0] as u8,
                src_endpoint: n[1] as u8,
                src_generation: n[2] as u8,
                lib_seqnum: n[3] as u16,
                src_dst_peer_index: n[4] as u16,
                src_session_id: n[6],
                target_recv_seqnum_start: n[7] as u16,
                connect_seqnum: n[8] as u8,
                kind: if self.kind == 7 {
                    ConnectKind::Request { app_key: n[9] }
                } else {
                    ConnectKind::Reply {
                        target_session_id: n[9],
                        status: n[10] as u8,
                    }
                },
            }),
            9 => Body::Truc(TrucRepr {
                dst_endpoint: n[0] as u8,
                src_endpoint: n[1] as u8,
                src_generation: n[2] as u8,
                session: n[6],
                lib_seqnum: n[7] as u16,
                session_id: n[8],
                acknum: n[9],
                send_seq: n[10] as u16,
                resent: n[11] as u8,
            }),
            10 => Body::NackLib(NackLibRepr {
                src_endpoint: n[1] as u8,
                src_generation: n[2] as u8,
                nack_type: NackType::from_u8((n[8] % 5) as u8).unwrap(),
                dst_endpoint: n[0] as u8,
                dst_src_peer_index: n[9] as u16,
                lib_seqnum: n[10] as u16,
            }),
            11 => Body::NackMcp(NackMcpRepr {
                src_endpoint: n[1] as u8,
                src_generation: n[2] as u8,
                nack_type: NackType::from_u8((n[8] % 5) as u8).unwrap(),
                src_pull_handle: n[9],
                src_magic: n[10],
            }),
            12 => Body::Host(HostRepr {
                src_dst_peer_index: n[4] as u16,
                magic: n[5],
                hostname: None,
            }),
            _ => Body::Host(HostRepr {
                src_dst_peer_index: n[4] as u16,
                magic: n[5],
                hostname: Some(data(control::HOSTNAME_MAX)),
            }),
        }
    }

    fn repr(&self) -> Repr<'_> {
        Repr {
            head: self.head,
            body: self.body(),
        }
    }
}

/// Reads every accessor of the head and of the view the body's type names: none may
/// panic once `new_checked` said yes.
fn touch_views(bytes: &[u8], mode: WireMode) {
    let Ok(f) = Frame::new_checked(bytes) else {
        return;
    };
    let _ = (f.dst_mac(), f.src_mac(), f.ethertype(), f.peer_index());
    let _ = (f.ptype(), f.packet_type());
    let b = f.body();
    if let Ok(p) = MsgPacket::new_checked(b) {
        let _ = (
            p.kind(),
            p.length(),
            p.checksum(),
            p.match_info(),
            p.payload(),
        );
        let _ = (
            p.lib_seqnum(),
            p.lib_piggyack(),
            p.session(),
            p.src_generation(),
        );
    }
    if let Ok(p) = MediumPacket::new_checked(b, mode) {
        let _ = (
            p.msg_length(),
            p.frag_length(),
            p.frag_seqnum(),
            p.frag_pipeline(),
        );
        let _ = (p.checksum(), p.match_info(), p.payload(), p.session());
    }
    if let Ok(p) = RndvPacket::new_checked(b) {
        let _ = (p.length(), p.msg_length(), p.rdma_id(), p.rdma_seqnum());
        let _ = (p.rdma_offset(), p.match_info(), p.checksum());
    }
    if let Ok(p) = PullPacket::new_checked(b, mode) {
        let _ = (p.session(), p.total_length(), p.rdma_id(), p.rdma_seqnum());
        let _ = (p.rdma_offset(), p.src_pull_handle(), p.src_magic());
        let _ = (p.first_frame_offset(), p.block_length(), p.frame_index());
    }
    if let Ok(p) = PullReplyPacket::new_checked(b) {
        let _ = (p.frame_seqnum(), p.frame_length(), p.msg_offset());
        let _ = (p.dst_pull_handle(), p.dst_magic(), p.payload());
    }
    if let Ok(p) = NotifyPacket::new_checked(b) {
        let _ = (p.session(), p.total_length(), p.rdma_id(), p.rdma_seqnum());
        let _ = (p.lib_seqnum(), p.lib_piggyack());
    }
    if let Ok(p) = ConnectPacket::new_checked(b) {
        let _ = (p.length(), p.lib_seqnum(), p.src_dst_peer_index());
        let _ = (p.src_session_id(), p.app_key(), p.target_session_id());
        let _ = (
            p.target_recv_seqnum_start(),
            p.is_reply(),
            p.connect_seqnum(),
        );
        let _ = p.status();
    }
    if let Ok(p) = TrucPacket::new_checked(b) {
        let _ = (p.length(), p.session(), p.data_type(), p.lib_seqnum());
        let _ = (p.session_id(), p.acknum(), p.send_seq(), p.resent());
    }
    if let Ok(p) = NackLibPacket::new_checked(b) {
        let _ = (p.nack_type(), p.dst_endpoint(), p.dst_src_peer_index());
        let _ = p.lib_seqnum();
    }
    if let Ok(p) = NackMcpPacket::new_checked(b) {
        let _ = (p.nack_type(), p.src_pull_handle(), p.src_magic());
    }
    if let Ok(p) = HostPacket::new_checked(b) {
        let _ = (
            p.is_reply(),
            p.src_dst_peer_index(),
            p.magic(),
            p.hostname(),
        );
    }
}

/// Whatever parses re-emits to bytes that parse the same.
fn reparse(bytes: &[u8], mode: WireMode) {
    touch_views(bytes, mode);
    if let Ok(r) = Repr::parse_bytes(bytes, mode) {
        let mut out = vec![0u8; r.buffer_len(mode)];
        let n = r.emit(&mut out, mode).expect("a parsed frame re-emits");
        assert_eq!(n, out.len());
        assert_eq!(Repr::parse_bytes(&out, mode).unwrap(), r);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn emit_then_parse_is_identity(c in case()) {
        let r = c.repr();
        let m = c.mode;
        let len = r.buffer_len(m);
        prop_assert!(len >= ETH_ZLEN);
        prop_assert!(len <= m.mtu(), "{len} bytes exceed the {m:?} MTU");
        // Into a dirty buffer and a clean one: the same bytes.
        let mut dirty = vec![0xa5u8; len + 3];
        let mut clean = vec![0u8; len];
        prop_assert_eq!(r.emit(&mut dirty, m), Ok(len));
        prop_assert_eq!(r.emit(&mut clean, m), Ok(len));
        prop_assert_eq!(&dirty[..len], &clean[..]);
        prop_assert_eq!(Repr::parse_bytes(&clean, m), Ok(r));
        // The body alone, through its own view, too.
        prop_assert_eq!(Body::parse(&clean[HEAD_LEN..], m), Ok(r.body));
        // Extra padding changes nothing.
        clean.extend_from_slice(&[0xee; 9]);
        prop_assert_eq!(Repr::parse_bytes(&clean, m), Ok(r));
        // A buffer one byte short is refused, not overrun.
        let mut short = vec![0u8; len - 1];
        let shorted = matches!(r.emit(&mut short, m), Err(Error::Buffer { .. }));
        prop_assert!(shorted);
    }

    #[test]
    fn truncated_frames_are_errors(c in case(), cut in any::<prop::sample::Index>()) {
        let r = c.repr();
        let m = c.mode;
        let mut buf = vec![0u8; r.buffer_len(m)];
        r.emit(&mut buf, m).unwrap();
        // Shorter than the frame before padding: every prefix is refused.
        let natural = HEAD_LEN + r.body.buffer_len(m);
        let n = cut.index(natural);
        prop_assert!(Repr::parse_bytes(&buf[..n], m).is_err());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300), m in mode()) {
        reparse(&bytes, m);
    }

    #[test]
    fn plausible_frames_never_panic(
        mut bytes in prop::collection::vec(any::<u8>(), 17..600),
        ptype in prop_oneof![3u8..=4, 32u8..=46],
        m in mode(),
    ) {
        // Open-MX's EtherType and a known type, so the layouts' checks are reached.
        bytes[12] = 0x86;
        bytes[13] = 0xdf;
        bytes[16] = ptype;
        reparse(&bytes, m);
    }

    #[test]
    fn mutated_frames_never_panic(c in case(), at in any::<prop::sample::Index>(), v in any::<u8>()) {
        let r = c.repr();
        let m = c.mode;
        let mut buf = vec![0u8; r.buffer_len(m)];
        r.emit(&mut buf, m).unwrap();
        let i = at.index(buf.len());
        buf[i] = v;
        reparse(&buf, m);
        // And the other mode's reading of the same bytes.
        let other = if m == WireMode::Default { WireMode::MxCompat } else { WireMode::Default };
        reparse(&buf, other);
    }

    #[test]
    fn lib_seqnum_keeps_its_session(session in 0u8..4, seq in 0u16..0x4000, k in any::<u16>()) {
        let s = LibSeqnum::new(session, seq);
        prop_assert_eq!((s.session(), s.seq()), (session, seq));
        let t = s.add(k);
        prop_assert_eq!(t.session(), session);
        prop_assert_eq!(t.since(s), k & 0x3fff);
    }
}
