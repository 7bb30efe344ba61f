//! Any bytes as an MX frame: the view and the parser; what parses re-emits identically,
//! and the receive fast path's reader agrees with the parser.
#![no_main]
use libfuzzer_sys::fuzz_target;
use myrix_wire::mx::{parse_whole_eager, Body, Frame, Repr};

fuzz_target!(|data: &[u8]| {
    let f = Frame::new_checked(data).ok();
    let mut whole = None;
    if let Some(f) = &f {
        let _ = (f.kind(), f.peer_index(), f.nic(), f.session(), f.seq(), f.ack(), f.data());
        if let Ok(r) = Repr::parse(f) {
            let mut out = vec![0u8; r.buffer_len()];
            r.emit(&mut out).unwrap();
            assert_eq!(&out[..], data);
            if let Body::Eager { offset: 0, msg_len, match_info, handle, data: d, .. } = r.body {
                if msg_len as usize == d.len() {
                    whole = Some((r.header, match_info, handle, d));
                }
            }
        }
    }
    let fast = parse_whole_eager(data).map(|w| (w.header, w.match_info, w.handle, w.data));
    assert_eq!(fast, whole);
});
