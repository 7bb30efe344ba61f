//! Any text as a topology file: an error or a topology that writes back identically.
#![no_main]
use libfuzzer_sys::fuzz_target;
use myrix_fabric::format::{from_toml, to_toml};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(t) = from_toml(text) {
            let again = from_toml(&to_toml(&t)).expect("what was written reads back");
            assert_eq!(again, t);
        }
    }
});
