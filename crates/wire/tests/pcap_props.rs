//! Property tests for the pcap writer and reader: what is written reads back, and no
//! input makes the reader panic.

use myrix_wire::pcap::*;
use proptest::prelude::*;
use std::time::Duration;

fn ts() -> impl Strategy<Value = Duration> {
    (any::<u32>(), 0u32..1_000_000).prop_map(|(s, us)| Duration::new(s as u64, us * 1000))
}

fn pseudo() -> impl Strategy<Value = PseudoHeader> {
    (0u8..5, any::<bool>()).prop_map(|(t, sent)| PseudoHeader {
        transport: Transport::from_u8(t).unwrap(),
        direction: if sent {
            Direction::Sent
        } else {
            Direction::Received
        },
    })
}

proptest! {
    #[test]
    fn ethernet_records_round_trip(
        recs in prop::collection::vec((ts(), prop::collection::vec(any::<u8>(), 0..2000)), 0..8),
    ) {
        let mut w = PcapWriter::new(Vec::new(), LINKTYPE_ETHERNET).unwrap();
        for (t, d) in &recs {
            w.write(*t, d).unwrap();
        }
        let got = read_pcap(&w.into_inner()).unwrap();
        prop_assert_eq!(got.len(), recs.len());
        for (g, (t, d)) in got.iter().zip(&recs) {
            prop_assert_eq!(g.link_type, LINKTYPE_ETHERNET);
            prop_assert_eq!(g.ts, *t);
            prop_assert_eq!(g.orig_len as usize, d.len());
            prop_assert_eq!(&g.data, d);
        }
    }

    #[test]
    fn pseudo_records_round_trip(
        recs in prop::collection::vec((ts(), pseudo(), prop::collection::vec(any::<u8>(), 0..600)), 0..8),
    ) {
        let mut w = PcapWriter::new(Vec::new(), LINKTYPE_USER0).unwrap();
        for (t, h, d) in &recs {
            w.write_pseudo(*t, *h, d).unwrap();
        }
        let got = read_pcap(&w.into_inner()).unwrap();
        prop_assert_eq!(got.len(), recs.len());
        for (g, (t, h, d)) in got.iter().zip(&recs) {
            prop_assert_eq!(g.link_type, LINKTYPE_USER0);
            prop_assert_eq!(g.ts, *t);
            prop_assert_eq!(PseudoHeader::parse(&g.data), Ok((*h, &d[..])));
        }
    }

    #[test]
    fn sub_microseconds_are_dropped(s in any::<u32>(), ns in 0u32..1_000_000_000) {
        let mut w = PcapWriter::new(Vec::new(), LINKTYPE_ETHERNET).unwrap();
        w.write(Duration::new(s as u64, ns), b"x").unwrap();
        let got = read_pcap(&w.into_inner()).unwrap();
        prop_assert_eq!(got[0].ts, Duration::new(s as u64, ns / 1000 * 1000));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = read_pcap(&bytes);
        let _ = PseudoHeader::parse(&bytes);
    }

    #[test]
    fn arbitrary_records_never_panic(
        le in any::<bool>(),
        nanos in any::<bool>(),
        tail in prop::collection::vec(any::<u8>(), 0..400),
    ) {
        // A valid file header, so the record loop is what gets the noise.
        let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
        let mut b = Vec::new();
        let put = |b: &mut Vec<u8>, v: u32| {
            b.extend_from_slice(&if le { v.to_le_bytes() } else { v.to_be_bytes() })
        };
        put(&mut b, magic);
        b.extend_from_slice(&if le { [2, 0, 4, 0] } else { [0, 2, 0, 4] });
        put(&mut b, 0);
        put(&mut b, 0);
        put(&mut b, 65535);
        put(&mut b, 147);
        b.extend_from_slice(&tail);
        if let Ok(recs) = read_pcap(&b) {
            for r in recs {
                prop_assert!(r.data.len() <= SNAPLEN as usize);
                let _ = PseudoHeader::parse(&r.data);
            }
        }
    }
}
