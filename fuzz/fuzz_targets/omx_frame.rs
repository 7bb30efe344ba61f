//! Any bytes as an Open-MX frame, read in both wire modes: the head view, the body
//! views, and the parser; what parses re-emits to bytes that parse the same. Then as
//! MX's events through the Open-MX codecs (`codec::Omx`, `codec::OmxMxWire`, with its region names and
//! medium fragment slots): what it reads re-emits to a frame it reads the same.
#![no_main]
use libfuzzer_sys::fuzz_target;
use myrix_wire::codec::{Codec, Omx, OmxMxWire};
use myrix_wire::mx::Body;
use myrix_wire::omx::{Frame, Repr, WireMode};

fuzz_target!(|data: &[u8]| {
    for mode in [WireMode::Default, WireMode::MxCompat] {
        if let Ok(f) = Frame::new_checked(data) {
            let _ = (f.dst_mac(), f.src_mac(), f.peer_index(), f.packet_type(), f.body());
        }
        if let Ok(r) = Repr::parse_bytes(data, mode) {
            let mut out = vec![0u8; r.buffer_len(mode)];
            let n = r.emit(&mut out, mode).unwrap();
            assert_eq!(n, out.len());
            assert_eq!(Repr::parse_bytes(&out, mode).unwrap(), r);
        }
    }
    codec_round_trip::<Omx>(data);
    codec_round_trip::<OmxMxWire>(data);
});

fn codec_round_trip<C: Codec>(data: &[u8]) {
    if let Ok(r) = C::parse(data) {
        let d = match r.body {
            Body::Eager { data, .. } | Body::PullReply { data, .. } => data,
            _ => &[][..],
        };
        let mut buf = vec![0u8; myrix_wire::codec::omx::MTU];
        if let Ok(n) = C::emit_head(&r.header, &r.body, &mut buf, d.len()) {
            buf[n - d.len()..n].copy_from_slice(d);
            assert_eq!(C::parse(&buf[..n.max(60)]).unwrap().body, r.body);
        }
    }
}
