//! Property tests for the Myrinet packet view.

use myrix_wire::myrinet::{crc8, forward, route_byte, Packet, PacketRepr, PacketType, TO_SWITCH};
use proptest::prelude::*;

fn ptype() -> impl Strategy<Value = PacketType> {
    (0u8..0x80).prop_map(PacketType::from_byte)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn emit_then_parse_is_identity(
        ports in prop::collection::vec(0u8..=127, 0..12),
        t in ptype(),
        payload in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        let route: Vec<u8> = ports.iter().map(|&p| route_byte(p).unwrap()).collect();
        let repr = PacketRepr { route: &route, packet_type: t, payload: &payload };
        let buf = repr.to_vec().unwrap();
        prop_assert_eq!(buf.len(), repr.buffer_len());
        let p = Packet::new_checked(&buf[..]).unwrap();
        prop_assert_eq!(p.ports().collect::<Vec<_>>(), ports);
        prop_assert_eq!(PacketRepr::parse(&p).unwrap(), repr);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(p) = Packet::new_checked(&bytes[..]) {
            let _ = (p.route(), p.packet_type(), p.payload(), p.crc(), p.verify_crc());
            prop_assert_eq!(p.route().len() + 2 + p.payload().len(), bytes.len());
            let _ = PacketRepr::parse(&p);
        }
        let mut b = bytes.clone();
        let n = b.len();
        let _ = forward(&mut b, n);
        let _ = forward(&mut b, n + 5);
    }

    /// One bit flipped on any link of the path is still seen at the destination.
    #[test]
    fn an_error_on_any_link_is_detected_at_the_destination(
        ports in prop::collection::vec(0u8..=127, 1..8),
        payload in prop::collection::vec(any::<u8>(), 0..200),
        hop_seed in any::<usize>(),
        bit_seed in any::<usize>(),
    ) {
        let route: Vec<u8> = ports.iter().map(|&p| route_byte(p).unwrap()).collect();
        let repr = PacketRepr { route: &route, packet_type: PacketType::Data, payload: &payload };
        let mut buf = repr.to_vec().unwrap();
        let mut len = buf.len();
        let bad_link = hop_seed % (ports.len() + 1);
        let mut link = 0;
        let mut dropped = false;
        loop {
            if link == bad_link {
                let bit = bit_seed % (len * 8);
                buf[bit / 8] ^= 1 << (bit % 8);
            }
            if buf[0] & TO_SWITCH == 0 || len < 3 {
                break;
            }
            match forward(&mut buf, len) {
                Ok((_, n)) => len = n,
                Err(_) => { dropped = true; break; }
            }
            link += 1;
        }
        if !dropped {
            // Wherever the packet ended up, its CRC no longer matches.
            prop_assert_ne!(crc8(&buf[..len - 1]), buf[len - 1]);
        }
    }
}
