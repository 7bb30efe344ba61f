//! Property tests for the link-level parsers: code-groups, symbols, streams.

use myrix_link::code::{decode, decode_slice, encode_slice, CodeGroup, Rd};
use myrix_link::framing::{decode_stream, frame_packet, Found};
use myrix_link::symbol::{Control, SymbolDecoder, SymbolEncoder, Unit};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn bulk_encode_then_decode_is_identity(data in prop::collection::vec(any::<u8>(), 0..2000), pos in any::<bool>()) {
        let rd = if pos { Rd::Pos } else { Rd::Neg };
        let mut cgs = vec![CodeGroup::default(); data.len()];
        let end = encode_slice(&data, &mut cgs, rd);
        let mut out = vec![0u8; data.len()];
        prop_assert_eq!(decode_slice(&cgs, &mut out, rd), Ok(end));
        prop_assert_eq!(out, data);
    }

    #[test]
    fn arbitrary_code_groups_never_panic(raw in prop::collection::vec(0u16..1024, 0..500), hunting in any::<bool>()) {
        let cgs: Vec<CodeGroup> = raw.iter().map(|&b| CodeGroup::new(b)).collect();
        let mut dec = SymbolDecoder::new();
        dec.hunting = hunting;
        let mut rd = Rd::Neg;
        for &cg in &cgs {
            dec.push(cg);
            rd = decode(cg, rd).1;
        }
        let _ = rd;
        let found = decode_stream(&cgs);
        let bytes: usize = found.iter().map(|f| match f { Found::Packet { bytes, .. } => bytes.len(), _ => 0 }).sum();
        prop_assert!(bytes <= cgs.len());
    }

    /// Packets and control symbols, framed in pairs, come back exactly.
    #[test]
    fn framed_streams_round_trip(
        items in prop::collection::vec(
            prop_oneof![
                prop::collection::vec(any::<u8>(), 1..50).prop_map(Ok),
                prop::sample::select(vec![Control::Stop, Control::Go, Control::Idle, Control::Beat, Control::Sync, Control::Lost, Control::Ilgl]).prop_map(Err),
            ],
            0..30,
        )
    ) {
        let mut enc = SymbolEncoder::new();
        let mut cgs = Vec::new();
        for it in &items {
            match it {
                Ok(p) => for u in frame_packet(p) { enc.encode(u, |cg, _, _| cgs.push(cg)); },
                Err(c) => enc.encode(Unit::Ctl(*c), |cg, _, _| cgs.push(cg)),
            }
        }
        prop_assert!(enc.at_pair_start());
        let want: Vec<Found> = {
            let mut at = 0;
            items.iter().map(|it| match it {
                Ok(p) => { let f = Found::Packet { start: at, bytes: p.clone(), damaged: false }; at += p.len() + 2 - p.len() % 2; f }
                Err(c) => { let f = Found::Control { at, symbol: *c }; at += 2; f }
            }).collect()
        };
        prop_assert_eq!(decode_stream(&cgs), want);
    }
}
