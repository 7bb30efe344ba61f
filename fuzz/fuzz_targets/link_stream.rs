//! Any code-group stream through the decoders, and any text through the code-group and
//! octet parsers the `myrix link decode` command uses.
#![no_main]
use libfuzzer_sys::fuzz_target;
use myrix_link::code::{decode_slice, CodeGroup, Octet, Rd};
use myrix_link::framing::{decode_stream, Found};
use myrix_link::symbol::SymbolDecoder;

fuzz_target!(|data: &[u8]| {
    let cgs: Vec<CodeGroup> = data
        .chunks_exact(2)
        .map(|c| CodeGroup::new(u16::from_le_bytes([c[0], c[1]])))
        .collect();
    let mut dec = SymbolDecoder::new();
    dec.hunting = data.first().is_some_and(|b| b & 1 == 1);
    for &cg in &cgs {
        dec.push(cg);
    }
    let mut bytes = 0;
    for f in decode_stream(&cgs) {
        if let Found::Packet { bytes: b, .. } = f {
            bytes += b.len();
        }
    }
    assert!(bytes <= cgs.len());
    let mut out = vec![0u8; cgs.len()];
    let _ = decode_slice(&cgs, &mut out, Rd::Neg);
    if let Ok(text) = std::str::from_utf8(data) {
        for line in text.lines() {
            let _ = CodeGroup::parse(line);
            let _ = Octet::parse(line);
        }
    }
});
