//! The seam between MX's protocol events and a frame layout.
//!
//! The engine thinks in events: a [`Header`] (who, which session, sequence number and
//! ack) and a [`Body`] (connect, eager fragment, rendezvous, pull, notify, ack…). A
//! [`Codec`] turns them into bytes and back. [`Mx`] is myrix's own layout ([`crate::mx`]);
//! another layout (Open-MX's) is one more module here and one more `impl Codec`, and the
//! engine, generic over its codec, is unchanged.
//!
//! A codec only knows bytes: it must never hold protocol state.

use crate::mx::{self, Body, Error, Header, Kind, Repr, WholeEager};

pub mod omx;
pub use omx::{Omx, OmxMxWire};

/// Sequence numbers between the engine and a layout whose numbers are narrower than the
/// engine's 16 bits (Open-MX's `lib_seqnum`: 14 bits of sequence number, 2 of session
/// on top, `OMX__SEQNUM_BITS`). The engine numbers each peer's frames 0, 1, 2… in 16
/// bits; the wire numbers them from a `base` (the first wire number of the session:
/// the one the receiver announced at connect) in `bits` bits, wrapping without
/// touching the bits above. `from_wire` is `to_wire`'s exact inverse for every engine
/// number within half the wire's range (2^13 for Open-MX) of `near`, the engine number
/// expected; the engine's windows stay inside that. With 16 bits and base 0 both are the
/// identity.
pub mod seq {
    #[inline(always)]
    const fn mask(bits: u32) -> u16 {
        if bits >= 16 {
            u16::MAX
        } else {
            (1 << bits) - 1
        }
    }

    /// The wire number of engine number `s`.
    #[inline(always)]
    pub const fn to_wire(base: u16, s: u16, bits: u32) -> u16 {
        let m = mask(bits);
        (base & !m) | (base.wrapping_add(s) & m)
    }

    /// The engine number of wire number `w`, taken as the one nearest `near`; `None`
    /// when its session bits are not `base`'s (a frame of another session, which
    /// Open-MX's library drops as obsolete).
    #[inline(always)]
    pub const fn from_wire(base: u16, w: u16, near: u16, bits: u32) -> Option<u16> {
        let m = mask(bits);
        if (w ^ base) & !m != 0 {
            return None;
        }
        // Distance from `near` on the wire, then sign-extended from `bits` bits.
        let x = w.wrapping_sub(to_wire(base, near, bits)) & m;
        let half = m / 2 + 1;
        let delta = if x >= half {
            x.wrapping_sub(m).wrapping_sub(1)
        } else {
            x
        };
        Some(near.wrapping_add(delta))
    }
}

/// A frame layout for MX's events; see the module docs.
pub trait Codec {
    /// Bytes before a whole eager message's data: what [`Codec::emit_whole_eager`]
    /// writes.
    const EAGER_HEAD: usize;

    /// The whole-eager fast paths ([`Codec::parse_whole_eager`],
    /// [`Codec::emit_whole_eager`]) may be used: every eager kind's head is
    /// `EAGER_HEAD` bytes.
    const FAST_PATHS: bool = true;

    /// Eager frames carry the sender's handle for a notify (a synchronous send's);
    /// without it, synchronous sends go by rendezvous.
    const EAGER_NOTIFY: bool = true;

    /// The header's `session` is the receiver's (Open-MX: the sender puts the session
    /// its peer announced at connect, the receiver checks it is its own) rather than
    /// the sender's (myrix). Connect requests and replies carry the sender's either way.
    const RECEIVER_SESSION: bool = false;

    /// The bits of a connect's request handle its reply brings back: all of them, or
    /// (Open-MX: the 8-bit `connect_seqnum`) the low ones, and the engine finds its
    /// connect to the replier by them.
    const CONNECT_REQUEST_MASK: u32 = u32::MAX;

    /// Bits of a sequence number on the wire: 16 (myrix: the engine's numbers as they
    /// are), or fewer (Open-MX: 14) with the rest, above them, a session number that
    /// sequence arithmetic never touches. See [`seq`].
    const SEQ_BITS: u32 = 16;

    /// The wire number a fresh receiver expects first (Open-MX resets to 1).
    const SEQ_START: u16 = 0;

    /// Pull replies are cut on a grid of the reply frame's data room counted from the
    /// message's start (Open-MX's driver replies frame by frame, numbering each by its
    /// place on that grid: `frame_seqnum`), rather than from the pull's offset.
    const PULL_REPLY_GRID: bool = false;

    /// A frame of a known peer whose session is not the one expected is answered with a
    /// [`Body::Nack`] (Open-MX's driver does so for messages, notifies and pulls), and a
    /// NACK received ends the refused request; otherwise such frames are dropped.
    const NACKS: bool = false;

    /// Large sends are named on the wire by a region of an endpoint-wide table of 256
    /// (Open-MX's 8-bit `pulled_rdma_id`, with an 8-bit seqnum bumped at each use)
    /// rather than by their 32-bit request handle: the `handle` of RNDV, PULL and
    /// NOTIFY is then `id | seqnum << 8`, and a send waits for a free region.
    const REGIONS: bool = false;

    /// One sequence number per message (Open-MX: a medium message's fragments share
    /// it and are told apart by their place, `frag_seqnum`) rather than per frame.
    const MESSAGE_SEQ: bool = false;

    /// A NOTIFY received is acknowledged at once rather than with the next delayed ack
    /// (Open-MX's MX-compatible mode: native MX before 1.2.5 needs it).
    const NOTIFY_ACK_NOW: bool = false;

    /// Most data bytes in a PULL_REPLY, whatever the MTU leaves (Open-MX's
    /// MX-compatible mode: 4096, less than its MTU's room).
    const PULL_REPLY_MAX: usize = usize::MAX;

    /// Largest frame of the layout, whatever the link allows (Open-MX: 9000 bytes, or
    /// 4144 in its MX-compatible mode).
    const FRAME_MAX: usize = usize::MAX;

    /// Medium fragments sit in slots of this many bytes (fragment `i` at `i` × slot:
    /// Open-MX's 8 KiB, or 4 KiB in its MX-compatible mode); 0 where fragments follow
    /// one another.
    const MEDIUM_SLOT: usize = 0;

    /// NOTIFY carries the length the receiver pulled (Open-MX's `total_length`), which
    /// the sender checks against its message and reports as its transfer length.
    const NOTIFY_LENGTH: bool = false;

    /// Frames of `kind` carry the header's `ack`; when not, the engine ignores it.
    #[inline(always)]
    fn carries_ack(_kind: Kind) -> bool {
        true
    }

    /// Frames of `kind` carry the header's session and source endpoint; when not, the
    /// engine knows the sender by the peer index and NIC id alone (and the frame's
    /// request handle).
    #[inline(always)]
    fn carries_session(_kind: Kind) -> bool {
        true
    }

    /// Bytes before the data of a frame of `kind` (all of it for kinds without data).
    fn head_len(kind: Kind) -> usize;

    /// A frame's events; an error for bytes that are not a valid frame.
    fn parse(bytes: &[u8]) -> Result<Repr<'_>, Error>;

    /// The receive fast path's shortcut: a whole message in one eager frame read with
    /// fixed offsets, or `None` for anything else ([`Codec::parse`] then decides). Where
    /// it answers, it agrees with `parse`.
    fn parse_whole_eager(bytes: &[u8]) -> Option<WholeEager<'_>>;

    /// Writes the frame of `header` and `body` into `buf` but for the last `data_len`
    /// bytes, which the caller writes (from scattered buffers, say); the frame's
    /// length. `body`'s own data is ignored.
    fn emit_head(
        h: &Header,
        body: &Body<'_>,
        buf: &mut [u8],
        data_len: usize,
    ) -> Result<usize, Error>;

    /// The send fast path's twin of [`Codec::emit_head`] for a whole eager message
    /// (offset 0, no notify wanted): writes exactly `out.len() == EAGER_HEAD` bytes, the
    /// same ones `emit_head` would.
    fn emit_whole_eager(h: &Header, kind: Kind, match_info: u64, msg_len: u32, out: &mut [u8]);
}

/// myrix's MX layout ([`crate::mx`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Mx;

impl Codec for Mx {
    const EAGER_HEAD: usize = mx::EAGER_HEAD;

    #[inline(always)]
    fn head_len(kind: Kind) -> usize {
        mx::HEADER_LEN + kind.body_len()
    }

    #[inline]
    fn parse(bytes: &[u8]) -> Result<Repr<'_>, Error> {
        Repr::parse_bytes(bytes)
    }

    #[inline(always)]
    fn parse_whole_eager(bytes: &[u8]) -> Option<WholeEager<'_>> {
        mx::parse_whole_eager(bytes)
    }

    #[inline]
    fn emit_head(
        h: &Header,
        body: &Body<'_>,
        buf: &mut [u8],
        data_len: usize,
    ) -> Result<usize, Error> {
        mx::emit_head(h, body, buf, data_len)
    }

    #[inline(always)]
    fn emit_whole_eager(h: &Header, kind: Kind, match_info: u64, msg_len: u32, out: &mut [u8]) {
        let out: &mut [u8; mx::EAGER_HEAD] = out.try_into().expect("EAGER_HEAD bytes");
        mx::emit_whole_eager(h, kind, match_info, msg_len, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codec's fast-path pair writes and reads the bytes the general pair does.
    #[test]
    fn mx_fast_pair_agrees_with_the_general_pair() {
        let h = Header {
            peer_index: 3,
            nic: 0x0000_a1b2_c3d4_e5f6,
            src_endpoint: 1,
            dst_endpoint: 2,
            session: 0xdead_beef,
            seq: 9,
            ack: 7,
        };
        let body = Body::Eager {
            kind: Kind::Small,
            match_info: 0x1122_3344_5566_7788,
            msg_len: 3,
            offset: 0,
            handle: mx::NO_HANDLE,
            data: b"abc",
        };
        let mut slow = [0u8; 64];
        let n = Mx::emit_head(&h, &body, &mut slow, 3).unwrap();
        slow[n - 3..n].copy_from_slice(b"abc");
        let mut fast = [0xffu8; 64];
        Mx::emit_whole_eager(
            &h,
            Kind::Small,
            0x1122_3344_5566_7788,
            3,
            &mut fast[..Mx::EAGER_HEAD],
        );
        fast[Mx::EAGER_HEAD..n].copy_from_slice(b"abc");
        assert_eq!(slow[..n], fast[..n]);
        assert_eq!(Mx::head_len(Kind::Small), Mx::EAGER_HEAD);
        let repr = Mx::parse(&slow[..n]).unwrap();
        assert_eq!(repr, Repr { header: h, body });
        let w = Mx::parse_whole_eager(&slow[..n]).unwrap();
        assert_eq!((w.header, w.data), (h, &b"abc"[..]));
        assert!(Mx::parse(&slow[..Mx::EAGER_HEAD - 1]).is_err());
    }
}

#[cfg(test)]
mod seq_tests {
    use super::seq::{from_wire, to_wire};
    use crate::omx::LibSeqnum;
    use proptest::prelude::*;

    /// 16 bits from base 0: the engine's numbers are the wire's.
    #[test]
    fn sixteen_bits_is_the_identity() {
        for s in [0u16, 1, 0x3fff, 0x4000, 0xffff] {
            assert_eq!(to_wire(0, s, 16), s);
            assert_eq!(from_wire(0, s, s.wrapping_sub(5), 16), Some(s));
        }
    }

    /// Open-MX's wrap: from 0x3fff the next number is 0 of the same session (2 bits
    /// kept), as `OMX__SEQNUM_INCREASE` does; and back.
    #[test]
    fn fourteen_bits_wrap_inside_the_session() {
        let base = LibSeqnum::new(2, 1).0;
        assert_eq!(to_wire(base, 0, 14), 0x8001);
        assert_eq!(to_wire(base, 0x3ffe, 14), 0xbfff);
        assert_eq!(to_wire(base, 0x3fff, 14), 0x8000);
        assert_eq!(to_wire(base, 0x4000, 14), 0x8001);
        assert_eq!(from_wire(base, 0x8000, 0x3ff0, 14), Some(0x3fff));
        assert_eq!(from_wire(base, 0x8001, 0x3ff0, 14), Some(0x4000));
        assert_eq!(from_wire(base, 0x8001, 0x4010, 14), Some(0x4000));
        // Another session's number is refused whatever its sequence part.
        assert_eq!(from_wire(base, 0x4001, 0x3ff0, 14), None);
        assert_eq!(from_wire(base, 0xc001, 0, 14), None);
    }

    proptest! {
        /// Exact both ways for every engine number within 2^13 of the one expected,
        /// and what goes on the wire keeps the base's session bits and steps as
        /// `LibSeqnum::add` does.
        #[test]
        fn the_mapping_is_exact_both_ways(
            base in any::<u16>(),
            near in any::<u16>(),
            d in -8191i32..8192,
        ) {
            let s = (near as i32 + d) as u16;
            let w = to_wire(base, s, 14);
            prop_assert_eq!(LibSeqnum(w).session(), LibSeqnum(base).session());
            prop_assert_eq!(LibSeqnum(w), LibSeqnum(base).add(s));
            prop_assert_eq!(from_wire(base, w, near, 14), Some(s));
            prop_assert_eq!(from_wire(0, s, near, 16), Some(s));
        }
    }
}
