//! Property tests for the MX frame view.

use myrix_wire::mx::{
    emit_whole_eager, parse_whole_eager, Body, Frame, Header, Kind, Repr, EAGER_HEAD, HEADER_LEN,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;

fn header() -> impl Strategy<Value = Header> {
    (
        any::<u16>(),
        0u64..(1 << 48),
        any::<u8>(),
        any::<u8>(),
        any::<u32>(),
        any::<u16>(),
        any::<u16>(),
    )
        .prop_map(|(peer_index, nic, s, d, session, seq, ack)| Header {
            peer_index,
            nic,
            src_endpoint: s,
            dst_endpoint: d,
            session,
            seq,
            ack,
        })
}

/// Every kind, with data where the kind has data.
fn body(data: &[u8]) -> impl Strategy<Value = Body<'_>> {
    let n = data.len() as u32;
    prop_oneof![
        (any::<u32>(), any::<u16>(), any::<u32>()).prop_map(|(key, index, request)| {
            Body::Connect {
                key,
                index,
                request,
            }
        }),
        (any::<u8>(), any::<u16>(), any::<u32>(), any::<u32>()).prop_map(
            |(status, index, request, session)| Body::ConnectReply {
                status,
                index,
                request,
                session,
            }
        ),
        (
            0usize..3,
            any::<u64>(),
            prop_oneof![Just(0u32), 0u32..1000],
            any::<u32>()
        )
            .prop_map(move |(k, match_info, extra, handle)| Body::Eager {
                kind: [Kind::Tiny, Kind::Small, Kind::Medium][k],
                match_info,
                msg_len: n + extra,
                offset: extra / 2,
                handle,
                data,
            }),
        (any::<u64>(), any::<u32>(), any::<u32>()).prop_map(|(match_info, msg_len, handle)| {
            Body::Rndv {
                match_info,
                msg_len,
                handle,
            }
        }),
        (any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>()).prop_map(|(a, b, c, d)| {
            Body::Pull {
                handle: a,
                recv_handle: b,
                offset: c,
                length: d,
                // myrix's layout has no room for the total and reads 0.
                total: 0,
            }
        }),
        (any::<u32>(), any::<u32>()).prop_map(move |(recv_handle, offset)| Body::PullReply {
            recv_handle,
            offset,
            data,
        }),
        any::<u32>().prop_map(|handle| Body::Notify { handle, length: 0 }),
        Just(Body::Ack),
        (any::<u8>(), any::<u16>(), any::<u32>()).prop_map(|(reason, seq, handle)| Body::Nack {
            reason,
            seq,
            handle
        }),
    ]
}

/// The fast path's reader answers exactly for whole single-frame eager messages, with
/// the fields [`Repr::parse`] reads.
fn agrees_with_parse(bytes: &[u8]) -> Result<(), TestCaseError> {
    let f = Frame::new_checked(bytes).ok();
    let full = f
        .as_ref()
        .and_then(|f| Repr::parse(f).ok().map(|r| (r.header, r.body)));
    let whole = match full {
        Some((
            header,
            Body::Eager {
                kind,
                match_info,
                msg_len,
                offset: 0,
                handle,
                data,
            },
        )) if msg_len as usize == data.len() => Some((header, kind, match_info, handle, data)),
        _ => None,
    };
    let fast = parse_whole_eager(bytes).map(|w| (w.header, w.kind, w.match_info, w.handle, w.data));
    prop_assert_eq!(fast, whole);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn emit_then_parse_is_identity(
        h in header(),
        data in prop::collection::vec(any::<u8>(), 0..200),
        seed in any::<u64>(),
    ) {
        // Pick the body from the seed so the data borrow outlives the strategy.
        let mut runner = proptest::test_runner::TestRunner::new_with_rng(
            Default::default(),
            proptest::test_runner::TestRng::from_seed(
                proptest::test_runner::RngAlgorithm::ChaCha,
                &[seed as u8; 32],
            ),
        );
        let b = body(&data).new_tree(&mut runner).unwrap().current();
        let repr = Repr { header: h, body: b };
        let mut buf = vec![0u8; repr.buffer_len()];
        prop_assert_eq!(repr.emit(&mut buf).unwrap(), buf.len());
        let f = Frame::new_checked(&buf[..]).unwrap();
        prop_assert_eq!(Repr::parse(&f).unwrap(), repr);
        agrees_with_parse(&buf)?;
        // Every shorter prefix is refused, never misread.
        for cut in 0..HEADER_LEN.min(buf.len()) {
            prop_assert!(Frame::new_checked(&buf[..cut]).is_err());
        }
    }

    #[test]
    fn whole_eager_emitter_writes_what_emit_head_writes(
        h in header(),
        kind in prop_oneof![Just(Kind::Tiny), Just(Kind::Small), Just(Kind::Medium)],
        match_info in any::<u64>(),
        data in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let body = Body::Eager {
            kind,
            match_info,
            msg_len: data.len() as u32,
            offset: 0,
            handle: myrix_wire::mx::NO_HANDLE,
            data: &data,
        };
        let mut slow = vec![0u8; 256];
        let n = Repr { header: h, body }.emit(&mut slow).unwrap();
        let mut fast = [0u8; EAGER_HEAD];
        emit_whole_eager(&h, kind, match_info, data.len() as u32, &mut fast);
        prop_assert_eq!(&slow[..EAGER_HEAD], &fast[..]);
        prop_assert_eq!(n, EAGER_HEAD + data.len());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..96)) {
        agrees_with_parse(&bytes)?;
        if let Ok(f) = Frame::new_checked(&bytes[..]) {
            let _ = (f.kind(), f.peer_index(), f.nic(), f.session(), f.seq(), f.ack(), f.data());
            if let Ok(r) = Repr::parse(&f) {
                let mut out = vec![0u8; r.buffer_len()];
                r.emit(&mut out).unwrap();
                prop_assert_eq!(&out[..], &bytes[..]);
            }
        }
    }
}
