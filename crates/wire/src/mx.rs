//! MX frames: the messages two MX endpoints exchange, on any transport (UDP datagrams,
//! shared-memory ring slots, Ethernet frames, simulated Myrinet packets).
//!
//! The layout follows what the Open-MX paper describes of the MX wire protocol (message
//! kinds tiny, small, medium and large-by-rendezvous, a pull protocol for large messages,
//! per-peer sequence numbers with piggy-backed acknowledgements), but it is myrix's own:
//! it is not wire-compatible with MXoE. All fields are big-endian.
//!
//! ```text
//!  0       1       2               4                       10      11      12
//! +-------+-------+---------------+-----------------------+-------+-------+
//! |version| kind  | peer index    | source NIC id (48 b)  |src ep |dst ep |
//! +-------+-------+---------------+-----------------------+-------+-------+
//! | session (32 b)                | seq (16 b)    | ack (16 b)    |  kind-specific body...
//! +-------------------------------+---------------+---------------+
//! 12                              16              18              20
//! ```
//!
//! * **peer index**: the index the *receiver* gave the sender when they connected, so
//!   the receiver finds the sender's state without a lookup; [`NO_PEER`] before that.
//! * **session**: chosen at random by the sender when its endpoint opens; a frame from
//!   an older session of a restarted peer is recognised and dropped.
//! * **seq**: per-peer sequence number of the sequenced kinds (tiny, small, medium,
//!   rendezvous, notify); **ack**: the next sequence number the sender expects from the
//!   receiver, piggy-backed on every frame.
//!
//! This module only knows bytes. It must never hold protocol state.

use core::fmt;

mod eager;
use eager::write_header;
pub use eager::{emit_whole_eager, parse_whole_eager, WholeEager, EAGER_HEAD};

/// Frame format version this module reads and writes.
pub const VERSION: u8 = 1;
/// Bytes of the common header.
pub const HEADER_LEN: usize = 20;
/// `peer_index` of a frame sent before the receiver assigned the sender an index.
pub const NO_PEER: u16 = 0xffff;
/// `handle` of an eager frame whose sender wants no match notification.
pub const NO_HANDLE: u32 = 0xffff_ffff;

/// Where each field lies, in bytes from the frame's start: the header's, then each
/// kind's body (which starts at [`HEADER_LEN`]). Nothing else in this crate or above it
/// writes an offset by hand.
mod field {
    use core::ops::Range;
    pub const VERSION: usize = 0;
    pub const KIND: usize = 1;
    pub const PEER: Range<usize> = 2..4;
    pub const NIC: Range<usize> = 4..10;
    pub const SRC_EP: usize = 10;
    pub const DST_EP: usize = 11;
    pub const SESSION: Range<usize> = 12..16;
    pub const SEQ: Range<usize> = 16..18;
    pub const ACK: Range<usize> = 18..20;

    pub mod connect {
        use core::ops::Range;
        pub const KEY: Range<usize> = 20..24;
        pub const INDEX: Range<usize> = 24..26;
        pub const RESERVED: Range<usize> = 26..28;
        pub const REQUEST: Range<usize> = 28..32;
    }
    pub mod connect_reply {
        use core::ops::Range;
        pub const STATUS: usize = 20;
        pub const RESERVED: Range<usize> = 21..22;
        pub const INDEX: Range<usize> = 22..24;
        pub const REQUEST: Range<usize> = 24..28;
        /// The requester's session, echoed.
        pub const ECHO: Range<usize> = 28..32;
    }
    /// Tiny, small and medium.
    pub mod eager {
        use core::ops::Range;
        pub const MATCH: Range<usize> = 20..28;
        pub const MSG_LEN: Range<usize> = 28..32;
        pub const OFFSET: Range<usize> = 32..36;
        pub const HANDLE: Range<usize> = 36..40;
        /// The data follows.
        pub const END: usize = 40;
    }
    pub mod rndv {
        use core::ops::Range;
        pub const MATCH: Range<usize> = 20..28;
        pub const MSG_LEN: Range<usize> = 28..32;
        pub const HANDLE: Range<usize> = 32..36;
        pub const END: usize = 36;
    }
    pub mod pull {
        use core::ops::Range;
        pub const HANDLE: Range<usize> = 20..24;
        pub const RECV_HANDLE: Range<usize> = 24..28;
        pub const OFFSET: Range<usize> = 28..32;
        pub const LENGTH: Range<usize> = 32..36;
        pub const END: usize = 36;
    }
    pub mod pull_reply {
        use core::ops::Range;
        pub const RECV_HANDLE: Range<usize> = 20..24;
        pub const OFFSET: Range<usize> = 24..28;
        /// The data follows.
        pub const END: usize = 28;
    }
    pub mod notify {
        use core::ops::Range;
        pub const HANDLE: Range<usize> = 20..24;
        pub const END: usize = 24;
    }
    pub mod nack {
        use core::ops::Range;
        pub const REASON: usize = 20;
        pub const RESERVED: Range<usize> = 21..22;
        pub const SEQ: Range<usize> = 22..24;
        pub const HANDLE: Range<usize> = 24..28;
        pub const END: usize = 28;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("MX frame truncated: {have} bytes, need {need}")]
    Truncated { have: usize, need: usize },
    #[error("MX frame version {0}, expected {VERSION}")]
    Version(u8),
    #[error("unknown MX frame kind {0}")]
    Kind(u8),
    #[error("MX frame field out of range: {0}")]
    Field(&'static str),
    #[error("buffer too short to emit: {have} bytes, need {need}")]
    Buffer { have: usize, need: usize },
}

/// What a frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    Connect = 1,
    ConnectReply = 2,
    /// A whole message of at most the tiny limit.
    Tiny = 3,
    /// A whole message of at most the small limit.
    Small = 4,
    /// One fragment of an eager medium message.
    Medium = 5,
    /// Announces a large message the receiver will pull.
    Rndv = 6,
    /// Asks the sender of a large message for a range of it.
    Pull = 7,
    /// A range of a large message, answering a pull.
    PullReply = 8,
    /// Tells a sender its message was received (large) or matched (synchronous).
    Notify = 9,
    /// An explicit acknowledgement: only the header's `ack` field counts.
    Ack = 10,
    /// A refusal of a frame (Open-MX's NACK_LIB / NACK_MCP): see [`Body::Nack`].
    Nack = 11,
}

impl Kind {
    pub fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Connect,
            2 => Kind::ConnectReply,
            3 => Kind::Tiny,
            4 => Kind::Small,
            5 => Kind::Medium,
            6 => Kind::Rndv,
            7 => Kind::Pull,
            8 => Kind::PullReply,
            9 => Kind::Notify,
            10 => Kind::Ack,
            11 => Kind::Nack,
            _ => return None,
        })
    }

    /// Kinds that carry a sequence number and are delivered reliably and in order.
    pub fn sequenced(self) -> bool {
        matches!(
            self,
            Kind::Tiny | Kind::Small | Kind::Medium | Kind::Rndv | Kind::Notify
        )
    }

    /// Fixed bytes after the common header.
    pub fn body_len(self) -> usize {
        let end = match self {
            Kind::Connect => field::connect::REQUEST.end,
            Kind::ConnectReply => field::connect_reply::ECHO.end,
            Kind::Tiny | Kind::Small | Kind::Medium => field::eager::END,
            Kind::Rndv => field::rndv::END,
            Kind::Pull => field::pull::END,
            Kind::PullReply => field::pull_reply::END,
            Kind::Notify => field::notify::END,
            Kind::Ack => HEADER_LEN,
            Kind::Nack => field::nack::END,
        };
        end - HEADER_LEN
    }

    /// Kinds whose frame ends with data after the fixed body.
    pub fn has_data(self) -> bool {
        matches!(
            self,
            Kind::Tiny | Kind::Small | Kind::Medium | Kind::PullReply
        )
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A view of an MX frame. After [`Frame::new_checked`] no accessor panics.
#[derive(Debug, Clone, Copy)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

#[inline(always)]
fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
#[inline(always)]
fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}
#[inline(always)]
fn be64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}

impl<T: AsRef<[u8]>> Frame<T> {
    pub fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    /// Checks version, kind and lengths.
    pub fn new_checked(buffer: T) -> Result<Frame<T>, Error> {
        let f = Frame { buffer };
        f.check()?;
        Ok(f)
    }

    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated {
                have: b.len(),
                need: HEADER_LEN,
            });
        }
        if b[field::VERSION] != VERSION {
            return Err(Error::Version(b[field::VERSION]));
        }
        let kind = Kind::from_u8(b[field::KIND]).ok_or(Error::Kind(b[field::KIND]))?;
        let need = HEADER_LEN + kind.body_len();
        if b.len() < need {
            return Err(Error::Truncated {
                have: b.len(),
                need,
            });
        }
        if !kind.has_data() && b.len() != need {
            return Err(Error::Field("trailing bytes"));
        }
        let reserved = match kind {
            Kind::Connect => &b[field::connect::RESERVED],
            Kind::ConnectReply => &b[field::connect_reply::RESERVED],
            Kind::Nack => &b[field::nack::RESERVED],
            _ => &[][..],
        };
        if reserved.iter().any(|&x| x != 0) {
            return Err(Error::Field("reserved bytes not zero"));
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn kind(&self) -> Kind {
        // new_checked validated it; an unchecked view of garbage reads as Ack.
        Kind::from_u8(self.buffer.as_ref()[field::KIND]).unwrap_or(Kind::Ack)
    }
    pub fn peer_index(&self) -> u16 {
        be16(&self.buffer.as_ref()[field::PEER])
    }
    pub fn nic(&self) -> u64 {
        let b = &self.buffer.as_ref()[field::NIC];
        b.iter().fold(0u64, |a, &x| (a << 8) | x as u64)
    }
    pub fn src_endpoint(&self) -> u8 {
        self.buffer.as_ref()[field::SRC_EP]
    }
    pub fn dst_endpoint(&self) -> u8 {
        self.buffer.as_ref()[field::DST_EP]
    }
    pub fn session(&self) -> u32 {
        be32(&self.buffer.as_ref()[field::SESSION])
    }
    pub fn seq(&self) -> u16 {
        be16(&self.buffer.as_ref()[field::SEQ])
    }
    pub fn ack(&self) -> u16 {
        be16(&self.buffer.as_ref()[field::ACK])
    }
    /// Data after the fixed body (empty for kinds without data).
    pub fn data(&self) -> &[u8] {
        let k = self.kind();
        &self.buffer.as_ref()[HEADER_LEN + k.body_len()..]
    }
}

/// The common header, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub peer_index: u16,
    /// 48-bit NIC id of the sender.
    pub nic: u64,
    pub src_endpoint: u8,
    pub dst_endpoint: u8,
    pub session: u32,
    pub seq: u16,
    pub ack: u16,
}

/// Connect request status in a [`Body::ConnectReply`].
pub const CONNECT_OK: u8 = 0;
pub const CONNECT_BAD_KEY: u8 = 1;
pub const CONNECT_NO_ENDPOINT: u8 = 2;

/// Why a [`Body::Nack`] refuses a frame (Open-MX's `omx_nack_type` values).
pub const NACK_BAD_ENDPOINT: u8 = 1;
pub const NACK_ENDPOINT_CLOSED: u8 = 2;
pub const NACK_BAD_SESSION: u8 = 3;

/// The kind-specific part of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body<'a> {
    Connect {
        key: u32,
        /// The index the requester gave the receiver: put it in frames to the requester.
        index: u16,
        request: u32,
    },
    ConnectReply {
        status: u8,
        index: u16,
        request: u32,
        /// The requester's session, echoed (as Open-MX's reply does) so the requester
        /// knows the reply answers its current instance; the header's is the replier's.
        session: u32,
    },
    /// Tiny, small or medium (`kind` says which): `data` starts at `offset` in a message
    /// of `msg_len` bytes.
    Eager {
        kind: Kind,
        match_info: u64,
        msg_len: u32,
        offset: u32,
        /// The sender's request, when it wants to be told of the match ([`NO_HANDLE`]).
        handle: u32,
        data: &'a [u8],
    },
    Rndv {
        match_info: u64,
        msg_len: u32,
        handle: u32,
    },
    /// `total`: the whole pull's length, what the receiver takes of the message
    /// (Open-MX's PULL `total_length`; myrix's layout has no room for it and reads 0).
    Pull {
        handle: u32,
        recv_handle: u32,
        offset: u32,
        length: u32,
        total: u32,
    },
    PullReply {
        recv_handle: u32,
        offset: u32,
        data: &'a [u8],
    },
    /// `length`: what the receiver took of the message (Open-MX's `total_length`;
    /// myrix's layout has no room for it and reads 0: [`crate::codec::Codec::NOTIFY_LENGTH`]).
    Notify {
        handle: u32,
        length: u32,
    },
    Ack,
    /// The receiver refused a frame ([`NACK_BAD_SESSION`]…): a sequenced one by its
    /// number `seq` (`handle` is [`NO_HANDLE`]), or a pull by the puller's `handle`.
    /// The header's session and ack mean nothing here.
    Nack {
        reason: u8,
        seq: u16,
        handle: u32,
    },
}

impl Body<'_> {
    pub fn kind(&self) -> Kind {
        match self {
            Body::Connect { .. } => Kind::Connect,
            Body::ConnectReply { .. } => Kind::ConnectReply,
            Body::Eager { kind, .. } => *kind,
            Body::Rndv { .. } => Kind::Rndv,
            Body::Pull { .. } => Kind::Pull,
            Body::PullReply { .. } => Kind::PullReply,
            Body::Notify { .. } => Kind::Notify,
            Body::Ack => Kind::Ack,
            Body::Nack { .. } => Kind::Nack,
        }
    }
    fn data(&self) -> &[u8] {
        match self {
            Body::Eager { data, .. } | Body::PullReply { data, .. } => data,
            _ => &[],
        }
    }
}

/// A whole frame, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr<'a> {
    pub header: Header,
    pub body: Body<'a>,
}

impl<'a> Repr<'a> {
    /// Parses a checked frame; rejects eager fragments that do not fit their message.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(frame: &'a Frame<&'a T>) -> Result<Repr<'a>, Error> {
        Repr::parse_bytes(T::as_ref(frame.buffer))
    }

    /// [`Frame::new_checked`] and [`Repr::parse`] in one: the frame is checked once and
    /// the result borrows `bytes` only.
    pub fn parse_bytes(bytes: &'a [u8]) -> Result<Repr<'a>, Error> {
        let frame = Frame::new_checked(bytes)?;
        let header = Header {
            peer_index: frame.peer_index(),
            nic: frame.nic(),
            src_endpoint: frame.src_endpoint(),
            dst_endpoint: frame.dst_endpoint(),
            session: frame.session(),
            seq: frame.seq(),
            ack: frame.ack(),
        };
        let f = bytes;
        let kind = frame.kind();
        let data: &'a [u8] = &f[HEADER_LEN + kind.body_len()..];
        let body = match kind {
            Kind::Connect => Body::Connect {
                key: be32(&f[field::connect::KEY]),
                index: be16(&f[field::connect::INDEX]),
                request: be32(&f[field::connect::REQUEST]),
            },
            Kind::ConnectReply => Body::ConnectReply {
                status: f[field::connect_reply::STATUS],
                index: be16(&f[field::connect_reply::INDEX]),
                request: be32(&f[field::connect_reply::REQUEST]),
                session: be32(&f[field::connect_reply::ECHO]),
            },
            Kind::Tiny | Kind::Small | Kind::Medium => {
                let msg_len = be32(&f[field::eager::MSG_LEN]);
                let offset = be32(&f[field::eager::OFFSET]);
                if offset as u64 + data.len() as u64 > msg_len as u64 {
                    return Err(Error::Field("fragment beyond the message length"));
                }
                Body::Eager {
                    kind,
                    match_info: be64(&f[field::eager::MATCH]),
                    msg_len,
                    offset,
                    handle: be32(&f[field::eager::HANDLE]),
                    data,
                }
            }
            Kind::Rndv => Body::Rndv {
                match_info: be64(&f[field::rndv::MATCH]),
                msg_len: be32(&f[field::rndv::MSG_LEN]),
                handle: be32(&f[field::rndv::HANDLE]),
            },
            Kind::Pull => Body::Pull {
                handle: be32(&f[field::pull::HANDLE]),
                recv_handle: be32(&f[field::pull::RECV_HANDLE]),
                offset: be32(&f[field::pull::OFFSET]),
                length: be32(&f[field::pull::LENGTH]),
                total: 0,
            },
            Kind::PullReply => Body::PullReply {
                recv_handle: be32(&f[field::pull_reply::RECV_HANDLE]),
                offset: be32(&f[field::pull_reply::OFFSET]),
                data,
            },
            Kind::Notify => Body::Notify {
                handle: be32(&f[field::notify::HANDLE]),
                length: 0,
            },
            Kind::Ack => Body::Ack,
            Kind::Nack => Body::Nack {
                reason: f[field::nack::REASON],
                seq: be16(&f[field::nack::SEQ]),
                handle: be32(&f[field::nack::HANDLE]),
            },
        };
        Ok(Repr { header, body })
    }

    /// Bytes [`Repr::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.body.kind().body_len() + self.body.data().len()
    }

    /// Writes the frame; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let data = self.body.data();
        let n = emit_head(&self.header, &self.body, buf, data.len())?;
        buf[n - data.len()..n].copy_from_slice(data);
        Ok(n)
    }
}

/// Writes the header and fixed body of `body` into `buf`, leaving room for `data_len`
/// bytes of data after them, which the caller writes (so data can be copied straight from
/// scattered buffers). Returns the whole frame length. The data inside `body` is ignored.
pub fn emit_head(
    h: &Header,
    body: &Body<'_>,
    buf: &mut [u8],
    data_len: usize,
) -> Result<usize, Error> {
    let kind = body.kind();
    let need = HEADER_LEN + kind.body_len() + data_len;
    if buf.len() < need {
        return Err(Error::Buffer {
            have: buf.len(),
            need,
        });
    }
    if h.nic >> 48 != 0 {
        return Err(Error::Field("NIC id wider than 48 bits"));
    }
    // Fields go into a fixed array first: constant offsets, no bounds checks, one copy.
    // The largest head is an eager frame's.
    let mut head = [0u8; EAGER_HEAD];
    let f = &mut head;
    write_header(h, kind, f);
    match *body {
        Body::Connect {
            key,
            index,
            request,
        } => {
            f[field::connect::KEY].copy_from_slice(&key.to_be_bytes());
            f[field::connect::INDEX].copy_from_slice(&index.to_be_bytes());
            f[field::connect::REQUEST].copy_from_slice(&request.to_be_bytes());
        }
        Body::ConnectReply {
            status,
            index,
            request,
            session,
        } => {
            f[field::connect_reply::STATUS] = status;
            f[field::connect_reply::INDEX].copy_from_slice(&index.to_be_bytes());
            f[field::connect_reply::REQUEST].copy_from_slice(&request.to_be_bytes());
            f[field::connect_reply::ECHO].copy_from_slice(&session.to_be_bytes());
        }
        Body::Eager {
            match_info,
            msg_len,
            offset,
            handle,
            ..
        } => {
            if offset as u64 + data_len as u64 > msg_len as u64 {
                return Err(Error::Field("fragment beyond the message length"));
            }
            f[field::eager::MATCH].copy_from_slice(&match_info.to_be_bytes());
            f[field::eager::MSG_LEN].copy_from_slice(&msg_len.to_be_bytes());
            f[field::eager::OFFSET].copy_from_slice(&offset.to_be_bytes());
            f[field::eager::HANDLE].copy_from_slice(&handle.to_be_bytes());
        }
        Body::Rndv {
            match_info,
            msg_len,
            handle,
        } => {
            f[field::rndv::MATCH].copy_from_slice(&match_info.to_be_bytes());
            f[field::rndv::MSG_LEN].copy_from_slice(&msg_len.to_be_bytes());
            f[field::rndv::HANDLE].copy_from_slice(&handle.to_be_bytes());
        }
        Body::Pull {
            handle,
            recv_handle,
            offset,
            length,
            ..
        } => {
            f[field::pull::HANDLE].copy_from_slice(&handle.to_be_bytes());
            f[field::pull::RECV_HANDLE].copy_from_slice(&recv_handle.to_be_bytes());
            f[field::pull::OFFSET].copy_from_slice(&offset.to_be_bytes());
            f[field::pull::LENGTH].copy_from_slice(&length.to_be_bytes());
        }
        Body::PullReply {
            recv_handle,
            offset,
            ..
        } => {
            f[field::pull_reply::RECV_HANDLE].copy_from_slice(&recv_handle.to_be_bytes());
            f[field::pull_reply::OFFSET].copy_from_slice(&offset.to_be_bytes());
        }
        Body::Notify { handle, .. } => {
            f[field::notify::HANDLE].copy_from_slice(&handle.to_be_bytes());
        }
        Body::Ack => {}
        Body::Nack {
            reason,
            seq,
            handle,
        } => {
            f[field::nack::REASON] = reason;
            f[field::nack::SEQ].copy_from_slice(&seq.to_be_bytes());
            f[field::nack::HANDLE].copy_from_slice(&handle.to_be_bytes());
        }
    }
    let fixed = HEADER_LEN + kind.body_len();
    buf[..fixed].copy_from_slice(&head[..fixed]);
    Ok(need)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            peer_index: 3,
            nic: 0x0000_a1b2_c3d4_e5f6,
            src_endpoint: 1,
            dst_endpoint: 2,
            session: 0xdead_beef,
            seq: 65535,
            ack: 7,
        }
    }

    #[test]
    fn eager_round_trip() {
        let r = Repr {
            header: header(),
            body: Body::Eager {
                kind: Kind::Tiny,
                match_info: 0x1122_3344_5566_7788,
                msg_len: 5,
                offset: 0,
                handle: NO_HANDLE,
                data: b"hello",
            },
        };
        let mut buf = [0u8; 64];
        let n = r.emit(&mut buf).unwrap();
        assert_eq!(n, HEADER_LEN + 20 + 5);
        let f = Frame::new_checked(&buf[..n]).unwrap();
        assert_eq!(Repr::parse(&f).unwrap(), r);
    }

    #[test]
    fn rejects_fragment_past_message() {
        let r = Repr {
            header: header(),
            body: Body::Eager {
                kind: Kind::Medium,
                match_info: 1,
                msg_len: 4,
                offset: 2,
                handle: NO_HANDLE,
                data: b"abc",
            },
        };
        let mut buf = [0u8; 64];
        assert!(r.emit(&mut buf).is_err());
    }

    #[test]
    fn rejects_bad_version_kind_and_trailing_bytes() {
        let r = Repr {
            header: header(),
            body: Body::Ack,
        };
        let mut buf = [0u8; 32];
        let n = r.emit(&mut buf).unwrap();
        assert!(Frame::new_checked(&buf[..n]).is_ok());
        assert!(matches!(
            Frame::new_checked(&buf[..n + 1]),
            Err(Error::Field(_))
        ));
        buf[0] = 9;
        assert_eq!(
            Frame::new_checked(&buf[..n]).unwrap_err(),
            Error::Version(9)
        );
        buf[0] = VERSION;
        buf[1] = 77;
        assert_eq!(Frame::new_checked(&buf[..n]).unwrap_err(), Error::Kind(77));
        assert!(matches!(
            Frame::new_checked(&buf[..5]),
            Err(Error::Truncated { .. })
        ));
    }
}
