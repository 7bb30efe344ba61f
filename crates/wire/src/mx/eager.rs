//! The eager fast paths: a whole message in one eager frame written into, or read from,
//! fixed offsets with no per-field checks. Same bytes as [`super::Repr`]'s; the tests in
//! the parent module check the two agree. Never holds protocol state.

use super::{be16, be32, be64, field, Header, Kind, NO_HANDLE, VERSION};
#[cfg(doc)]
use super::{emit_head, Repr};

/// A whole message in a single eager frame (tiny, small, or a medium in one fragment),
/// read straight from the bytes for the receive fast path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WholeEager<'a> {
    pub header: Header,
    pub kind: Kind,
    pub match_info: u64,
    pub handle: u32,
    pub data: &'a [u8],
}

/// Bytes before an eager frame's data.
pub const EAGER_HEAD: usize = field::eager::END;

/// Writes the fixed part of a whole eager message (offset 0, no notify wanted) into a
/// fixed-size array: the send fast path's twin of [`emit_head`], same bytes, no checks
/// left to make at run time. `kind` must be an eager kind and `h.nic` 48 bits wide
/// (wider bits are dropped; [`emit_head`] refuses them).
#[inline(always)]
pub fn emit_whole_eager(
    h: &Header,
    kind: Kind,
    match_info: u64,
    msg_len: u32,
    out: &mut [u8; EAGER_HEAD],
) {
    debug_assert!(matches!(kind, Kind::Tiny | Kind::Small | Kind::Medium));
    debug_assert!(h.nic >> 48 == 0);
    // Every byte of `out` is written: the header's fields and the eager body's tile it.
    write_header(h, kind, out);
    out[field::eager::MATCH].copy_from_slice(&match_info.to_be_bytes());
    out[field::eager::MSG_LEN].copy_from_slice(&msg_len.to_be_bytes());
    out[field::eager::OFFSET].copy_from_slice(&0u32.to_be_bytes());
    out[field::eager::HANDLE].copy_from_slice(&NO_HANDLE.to_be_bytes());
}

/// Writes the common header (every one of its bytes) at the start of `out`.
#[inline(always)]
pub(super) fn write_header(h: &Header, kind: Kind, out: &mut [u8; EAGER_HEAD]) {
    out[field::VERSION] = VERSION;
    out[field::KIND] = kind as u8;
    out[field::PEER].copy_from_slice(&h.peer_index.to_be_bytes());
    out[field::NIC].copy_from_slice(&h.nic.to_be_bytes()[2..8]);
    out[field::SRC_EP] = h.src_endpoint;
    out[field::DST_EP] = h.dst_endpoint;
    out[field::SESSION].copy_from_slice(&h.session.to_be_bytes());
    out[field::SEQ].copy_from_slice(&h.seq.to_be_bytes());
    out[field::ACK].copy_from_slice(&h.ack.to_be_bytes());
}

/// Reads `bytes` as [`WholeEager`] with one bounds check and fixed offsets; `None` for
/// anything else (another kind, a fragment, or not a valid frame). Where it answers,
/// [`Repr::parse`] reads the same fields: it is a shortcut, not a second format.
#[inline]
pub fn parse_whole_eager(bytes: &[u8]) -> Option<WholeEager<'_>> {
    let (fixed, data) = bytes.split_first_chunk::<EAGER_HEAD>()?;
    let f = fixed;
    let kind = match f[field::KIND] {
        3 => Kind::Tiny,
        4 => Kind::Small,
        5 => Kind::Medium,
        _ => return None,
    };
    let msg_len = be32(&f[field::eager::MSG_LEN]);
    let offset = be32(&f[field::eager::OFFSET]);
    if f[field::VERSION] != VERSION || offset != 0 || msg_len as usize != data.len() {
        return None;
    }
    let n = &f[field::NIC];
    let header = Header {
        peer_index: be16(&f[field::PEER]),
        nic: u64::from_be_bytes([0, 0, n[0], n[1], n[2], n[3], n[4], n[5]]),
        src_endpoint: f[field::SRC_EP],
        dst_endpoint: f[field::DST_EP],
        session: be32(&f[field::SESSION]),
        seq: be16(&f[field::SEQ]),
        ack: be16(&f[field::ACK]),
    };
    Some(WholeEager {
        header,
        kind,
        match_info: be64(&f[field::eager::MATCH]),
        handle: be32(&f[field::eager::HANDLE]),
        data,
    })
}
