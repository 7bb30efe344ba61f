//! Any bytes as a Myrinet packet: the view, the parser and a switch's forwarding.
#![no_main]
use libfuzzer_sys::fuzz_target;
use myrix_wire::myrinet::{forward, Packet, PacketRepr};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::new_checked(data) {
        let _ = (p.route(), p.packet_type(), p.payload(), p.crc(), p.verify_crc());
        assert_eq!(p.route().len() + p.payload().len() + 2, data.len());
        if let Ok(r) = PacketRepr::parse(&p) {
            assert_eq!(r.to_vec().unwrap(), data);
        }
    }
    let mut buf = data.to_vec();
    let mut len = buf.len();
    while let Ok((_, n)) = forward(&mut buf, len) {
        assert_eq!(n + 1, len);
        len = n;
    }
});
