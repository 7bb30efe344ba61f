//! Property tests for the RSM frame view: every frame round-trips, and no bytes make the
//! view or the parser panic.

use myrix_wire::rsm::{Body, Frame, Header, Kind, Repr};
use proptest::prelude::*;

fn header() -> impl Strategy<Value = Header> {
    (
        any::<u32>(),
        any::<u16>(),
        any::<u16>(),
        any::<u8>(),
        any::<u8>(),
    )
        .prop_map(|(session, seq, ack, seq_hi, ack_hi)| Header {
            session,
            seq,
            ack,
            seq_hi,
            ack_hi,
        })
}

/// A body's kind (1..=12) and its numbers; data comes separately.
fn build(kind: u8, a: u32, b: u32, c: u64, d: u32, data: &[u8]) -> Body<'_> {
    // Keep offsets where data fits below 2^64.
    let off = c.min(u64::MAX - data.len() as u64);
    match kind {
        1 => Body::Connect {
            segment: a,
            perm: b,
            node: d,
            uid: c as u32,
            gid: (c >> 32) as u32,
            conn: a ^ b,
        },
        2 => Body::ConnectReply {
            conn: a,
            status: b,
            exporter_conn: d,
            length: c,
        },
        3 => Body::Disconnect { conn: a },
        4 => Body::Write {
            conn: a,
            offset: off,
            data,
        },
        5 => Body::ReadReq {
            conn: a,
            request: b,
            offset: c,
            length: d,
        },
        6 => Body::ReadReply {
            request: a,
            status: b,
            offset: off,
            data,
        },
        7 => Body::Flush { conn: a, token: b },
        8 => Body::FlushReply {
            token: a,
            status: b,
        },
        9 | 10 => Body::Signal {
            to_importer: kind == 10,
            conn: a,
            flags: b,
        },
        11 => Body::Abort { conn: a, status: b },
        _ => Body::Ack,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn every_frame_round_trips(
        h in header(),
        kind in 1u8..=12,
        a in any::<u32>(), b in any::<u32>(), c in any::<u64>(), d in any::<u32>(),
        data in proptest::collection::vec(any::<u8>(), 0..1500),
    ) {
        let body = build(kind, a, b, c, d, &data);
        prop_assert_eq!(body.kind() as u8, kind);
        let r = Repr { header: h, body };
        let mut buf = vec![0u8; r.buffer_len()];
        let n = r.emit(&mut buf).unwrap();
        prop_assert_eq!(n, buf.len());
        prop_assert_eq!(buf[0], 0x52);
        let f = Frame::new_checked(&buf[..]).unwrap();
        prop_assert_eq!(f.kind(), body.kind());
        prop_assert_eq!((f.session(), f.seq(), f.ack()), (h.session, h.seq, h.ack));
        prop_assert_eq!(Repr::parse(&f).unwrap(), r);
        let kind = Kind::from_u8(kind).unwrap();
        prop_assert_eq!(f.data(), if kind.has_data() { &data[..] } else { &[][..] });
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        mut bytes in proptest::collection::vec(any::<u8>(), 0..64),
        rsm_tag in any::<bool>(),
        kind in 0u8..14,
    ) {
        if rsm_tag && bytes.len() >= 2 {
            bytes[0] = 0x52;
            bytes[1] = kind;
        }
        if let Ok(f) = Frame::new_checked(&bytes[..]) {
            let _ = (f.kind(), f.session(), f.seq(), f.ack(), f.data());
            if let Ok(r) = Repr::parse(&f) {
                let mut out = vec![0u8; r.buffer_len()];
                r.emit(&mut out).unwrap();
                prop_assert_eq!(&out[..], &bytes[..]);
            }
        }
        let _ = Repr::parse_bytes(&bytes);
    }
}
