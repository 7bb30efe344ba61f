//! A port fed arbitrary code-groups and actions never panics and never delivers more
//! bytes than it received.
#![no_main]
use libfuzzer_sys::fuzz_target;
use myrix_link::code::CodeGroup;
use myrix_link::port::{Port, PortConfig};
use myrix_link::Picos;

fuzz_target!(|data: &[u8]| {
    let mut p = Port::new(PortConfig { beat: true, ..PortConfig::default() }).unwrap();
    let mut now = Picos::ZERO;
    let mut read = 0u64;
    for c in data.chunks_exact(2) {
        let v = u16::from_le_bytes([c[0], c[1]]);
        match v >> 12 {
            0xf => p.reset(),
            0xe => {
                let _ = p.send(&c[..1 + (c[1] as usize & 1)]);
            }
            0xd => {
                while p.read().is_some() {
                    read += 1;
                }
            }
            _ => p.handle_receive(CodeGroup::new(v)),
        }
        p.tick(now);
        now += Picos(4_000 * (1 + (v as u64 & 0x3ff)));
    }
    while p.poll_event().is_some() {}
    assert!(p.stats.cg_received <= data.len() as u64);
    assert!(read <= p.stats.cg_received * 2);
});
