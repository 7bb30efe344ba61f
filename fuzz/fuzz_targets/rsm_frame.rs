//! Any bytes as an RSM frame: the view and the parser never panic, and what parses
//! re-emits identically.
#![no_main]
use libfuzzer_sys::fuzz_target;
use myrix_wire::rsm::{Frame, Repr};

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = Frame::new_checked(data) {
        let _ = (f.kind(), f.session(), f.seq(), f.ack(), f.data());
        if let Ok(r) = Repr::parse(&f) {
            let mut out = vec![0u8; r.buffer_len()];
            r.emit(&mut out).unwrap();
            assert_eq!(&out[..], data);
        }
    }
});
