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
pub use omx::Omx;

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

    /// A frame of a known peer whose session is not the one expected is answered with a
    /// [`Body::Nack`] (Open-MX's driver does so for messages, notifies and pulls), and a
    /// NACK received ends the refused request; otherwise such frames are dropped.
    const NACKS: bool = false;

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
