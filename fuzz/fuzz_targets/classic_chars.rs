//! Any 9-bit (and out-of-range) characters into a classic Myrinet port.
#![no_main]
use libfuzzer_sys::fuzz_target;
use myrix_link::classic::{Char, ClassicConfig, ClassicPort};
use myrix_link::Picos;

fuzz_target!(|data: &[u8]| {
    let mut p = ClassicPort::new(ClassicConfig::default()).unwrap();
    let mut now = Picos::ZERO;
    for c in data.chunks_exact(2) {
        let v = u16::from_le_bytes([c[0], c[1]]);
        if let Ok(ch) = Char::from_bits(v) {
            assert_eq!(ch.bits(), v);
        }
        p.handle_receive(now, v);
        if v & 0x8000 != 0 {
            p.send(&c[..1]);
        }
        if v & 0x4000 != 0 {
            let _ = p.read();
        }
        let out = p.tick(now);
        assert!(Char::from_bits(out).is_ok());
        now += Picos(12_500);
    }
});
