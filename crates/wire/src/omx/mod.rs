//! Open-MX frames: the Ethernet wire format of Open-MX (and, in [`WireMode::MxCompat`],
//! of Myricom's MX over Ethernet), as views over byte buffers and parsed `Repr`s.
//!
//! Unlike [`crate::mx`], which is myrix's own layout, this module follows an external
//! format byte for byte, so that myrix can talk to Open-MX peers and read their captures.
//!
//! ```text
//!  0             6             12        14          16
//! +-------------+-------------+---------+-----------+------+--------------------------
//! | dst MAC     | src MAC     | 0x86DF  | peer index| ptype| body, by packet type ...
//! +-------------+-------------+---------+-----------+------+--------------------------
//! ```
//!
//! * The 16-byte head is an Ethernet header plus `dst_src_peer_index`: the index the
//!   *receiver* gave the sender in its peer table (CONNECT frames are matched by source
//!   MAC instead, since the index is not known yet).
//! * The body starts at frame offset 16; its first byte is the [`PacketType`]. Body
//!   layouts live in [`msg`] (tiny, small, medium, rendezvous), [`pull`] (pull, pull
//!   reply, notify) and [`control`] (connect, truc/liback, nacks, host query/reply).
//!   Every offset is in the `mod field` of its layout, relative to the body's start.
//! * Multi-byte fields are big-endian (Open-MX's default "endian-independent" build).
//!   The 64-bit match value travels as `match_a` (high half) then `match_b` (low half).
//! * Frames are padded to [`ETH_ZLEN`] on emit; parsers ignore bytes after a layout.
//! * Only the medium-fragment and pull-request layouts depend on the [`WireMode`].
//!
//! This module only knows bytes: it must never hold protocol state, read a clock, or
//! panic on any input once a view is checked.

use core::fmt;

/// A getter on a view: `get!(name, u16, field::X)` reads `field::X` big-endian.
macro_rules! get {
    ($(#[$m:meta])* $name:ident, u8, $f:expr) => {
        $(#[$m])*
        pub fn $name(&self) -> u8 {
            self.buffer.as_ref()[$f]
        }
    };
    ($(#[$m:meta])* $name:ident, u16, $f:expr) => {
        $(#[$m])*
        pub fn $name(&self) -> u16 {
            $crate::omx::be16(&self.buffer.as_ref()[$f])
        }
    };
    ($(#[$m:meta])* $name:ident, u32, $f:expr) => {
        $(#[$m])*
        pub fn $name(&self) -> u32 {
            $crate::omx::be32(&self.buffer.as_ref()[$f])
        }
    };
}

/// The parts every view shares: the struct, `new_unchecked`, `into_inner`.
macro_rules! view {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name<T: AsRef<[u8]>> {
            buffer: T,
        }
        impl<T: AsRef<[u8]>> $name<T> {
            pub fn new_unchecked(buffer: T) -> $name<T> {
                $name { buffer }
            }
            pub fn into_inner(self) -> T {
                self.buffer
            }
        }
    };
}

pub mod control;
pub mod msg;
pub mod pull;

pub use control::{
    ConnectKind, ConnectPacket, ConnectRepr, HostPacket, HostRepr, NackLibPacket, NackLibRepr,
    NackMcpPacket, NackMcpRepr, TrucPacket, TrucRepr,
};
pub use msg::{
    MediumPacket, MediumRepr, MsgHeader, MsgKind, MsgPacket, MsgRepr, RndvPacket, RndvRepr,
};
pub use pull::{
    endpoint_of_magic, pull_magic, NotifyPacket, NotifyRepr, PullPacket, PullReplyPacket,
    PullReplyRepr, PullRepr,
};

/// EtherType of every Open-MX frame.
pub const ETHERTYPE: u16 = 0x86DF;
/// Bytes of the Ethernet-level head (`struct omx_pkt_head`): MACs, EtherType, peer index.
pub const HEAD_LEN: usize = 16;
/// Shortest Ethernet frame without its FCS: emitted frames are padded up to it.
pub const ETH_ZLEN: usize = 60;
/// Largest payload of a TINY message.
pub const TINY_MAX: usize = 32;
/// Largest payload of a SMALL message.
pub const SMALL_MAX: usize = 128;
/// Message length above which Open-MX sends by rendezvous between hosts.
pub const RNDV_THRESHOLD: usize = 32768;
/// The same threshold between endpoints of one host.
pub const SHARED_RNDV_THRESHOLD: usize = 4096;

/// Where the head's fields lie, in bytes from the frame's start.
mod field {
    use core::ops::Range;
    pub const DST_MAC: Range<usize> = 0..6;
    pub const SRC_MAC: Range<usize> = 6..12;
    pub const ETHERTYPE: Range<usize> = 12..14;
    pub const PEER_INDEX: Range<usize> = 14..16;
    /// The body's first byte.
    pub const PTYPE: usize = 16;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("Open-MX frame truncated: {have} bytes, need {need}")]
    Truncated { have: usize, need: usize },
    #[error("EtherType {0:#06x} is not Open-MX's")]
    EtherType(u16),
    #[error("unknown Open-MX packet type {0}")]
    UnknownType(u8),
    #[error("Open-MX packet type {0} has no layout here")]
    Unsupported(PacketType),
    #[error("Open-MX field out of range: {0}")]
    Field(&'static str),
    #[error("buffer too short to emit: {have} bytes, need {need}")]
    Buffer { have: usize, need: usize },
}

/// Body byte 0 of every frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PacketType {
    None = 0,
    Raw = 1,
    MfmNicReply = 2,
    HostQuery = 3,
    HostReply = 4,
    EtherUnicast = 32,
    EtherMulticast = 33,
    EtherNative = 34,
    Truc = 35,
    Connect = 36,
    Tiny = 37,
    Small = 38,
    Medium = 39,
    Rndv = 40,
    Pull = 41,
    PullReply = 42,
    Notify = 43,
    NackLib = 44,
    NackMcp = 45,
}

impl PacketType {
    pub fn from_u8(v: u8) -> Option<PacketType> {
        use PacketType::*;
        Some(match v {
            0 => None,
            1 => Raw,
            2 => MfmNicReply,
            3 => HostQuery,
            4 => HostReply,
            32 => EtherUnicast,
            33 => EtherMulticast,
            34 => EtherNative,
            35 => Truc,
            36 => Connect,
            37 => Tiny,
            38 => Small,
            39 => Medium,
            40 => Rndv,
            41 => Pull,
            42 => PullReply,
            43 => Notify,
            44 => NackLib,
            45 => NackMcp,
            _ => return Option::None,
        })
    }
}

impl fmt::Display for PacketType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Why a NACK_LIB or NACK_MCP refuses a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum NackType {
    None = 0,
    /// No such endpoint.
    BadEndpoint = 1,
    /// The endpoint exists but is not open.
    EndpointClosed = 2,
    /// `session` is not the receiving endpoint's session id.
    BadSession = 3,
    /// A pull named a window that does not exist.
    BadRdmaWin = 4,
}

impl NackType {
    pub fn from_u8(v: u8) -> Option<NackType> {
        Some(match v {
            0 => NackType::None,
            1 => NackType::BadEndpoint,
            2 => NackType::EndpointClosed,
            3 => NackType::BadSession,
            4 => NackType::BadRdmaWin,
            _ => return None,
        })
    }
}

/// The two ways Open-MX can be built: its own default, or wire-compatible with MX.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WireMode {
    /// 9000-byte MTU, 8 KiB medium fragments, the 44-byte pull request.
    #[default]
    Default,
    /// `--enable-mx-wire`: 4144-byte MTU, 4 KiB medium fragments, the 32-byte pull
    /// request with 16-bit offsets.
    MxCompat,
}

/// `frag_pipeline` of a compat-mode medium fragment: log2 of its fragment size.
pub const MX_COMPAT_FRAG_PIPELINE: u8 = 12;

impl WireMode {
    /// Largest frame, head included (Open-MX counts the head in its MTU).
    pub const fn mtu(self) -> usize {
        match self {
            WireMode::Default => 9000,
            WireMode::MxCompat => 4144,
        }
    }
    /// Payload of every medium fragment but the last.
    pub const fn medium_frag_max(self) -> usize {
        match self {
            WireMode::Default => 8192,
            WireMode::MxCompat => 4096,
        }
    }
    /// Fragments of a medium message at most.
    pub const fn medium_frags_max(self) -> usize {
        match self {
            WireMode::Default => 32,
            WireMode::MxCompat => 8,
        }
    }
    /// Payload of a pull reply at most: the MTU less both headers in default mode.
    pub const fn pull_reply_max(self) -> usize {
        match self {
            WireMode::Default => self.mtu() - HEAD_LEN - pull::PULL_REPLY_LEN,
            WireMode::MxCompat => 4096,
        }
    }
    /// Pull replies answering one pull request.
    pub const fn pull_replies_per_block(self) -> usize {
        match self {
            WireMode::Default => 32,
            WireMode::MxCompat => 8,
        }
    }
    /// Bytes one pull request asks for at most.
    pub const fn pull_block_max(self) -> usize {
        self.pull_reply_max() * self.pull_replies_per_block()
    }
}

/// `lib_seqnum`: a 2-bit session number in the top bits and a 14-bit sequence number.
/// Sequence arithmetic wraps within the 14 bits and never touches the session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LibSeqnum(pub u16);

impl LibSeqnum {
    pub const SEQ_BITS: u32 = 14;
    pub const SEQ_MASK: u16 = (1 << Self::SEQ_BITS) - 1;
    pub const SESSION_MASK: u16 = !Self::SEQ_MASK;

    /// Bits of `session` above 2 and of `seq` above 14 are dropped.
    pub const fn new(session: u8, seq: u16) -> LibSeqnum {
        LibSeqnum(((session as u16) << Self::SEQ_BITS) & Self::SESSION_MASK | seq & Self::SEQ_MASK)
    }
    pub const fn session(self) -> u8 {
        (self.0 >> Self::SEQ_BITS) as u8
    }
    pub const fn seq(self) -> u16 {
        self.0 & Self::SEQ_MASK
    }
    /// `n` sequence numbers later, in the same session.
    pub const fn add(self, n: u16) -> LibSeqnum {
        LibSeqnum(self.0 & Self::SESSION_MASK | self.0.wrapping_add(n) & Self::SEQ_MASK)
    }
    /// Sequence distance from `earlier` to `self`, modulo 2^14 (sessions ignored).
    pub const fn since(self, earlier: LibSeqnum) -> u16 {
        self.0.wrapping_sub(earlier.0) & Self::SEQ_MASK
    }
}

#[inline(always)]
pub(crate) fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
#[inline(always)]
pub(crate) fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// `Err(Truncated)` unless `have >= need`.
#[inline]
pub(crate) fn need(have: usize, need: usize) -> Result<(), Error> {
    if have < need {
        Err(Error::Truncated { have, need })
    } else {
        Ok(())
    }
}

/// `Err(Buffer)` unless `have >= need`.
#[inline]
pub(crate) fn room(have: usize, need: usize) -> Result<(), Error> {
    if have < need {
        Err(Error::Buffer { have, need })
    } else {
        Ok(())
    }
}

/// A view of a whole Open-MX Ethernet frame. After [`Frame::new_checked`] the head's
/// accessors and [`Frame::body`] never panic; the body is checked by its layout's view.
#[derive(Debug, Clone, Copy)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    pub fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    /// Checks the head's length and EtherType and that a packet type byte follows.
    pub fn new_checked(buffer: T) -> Result<Frame<T>, Error> {
        let f = Frame { buffer };
        f.check()?;
        Ok(f)
    }

    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        need(b.len(), field::PTYPE + 1)?;
        let et = be16(&b[field::ETHERTYPE]);
        if et != ETHERTYPE {
            return Err(Error::EtherType(et));
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }
    pub fn dst_mac(&self) -> [u8; 6] {
        mac(&self.buffer.as_ref()[field::DST_MAC])
    }
    pub fn src_mac(&self) -> [u8; 6] {
        mac(&self.buffer.as_ref()[field::SRC_MAC])
    }
    pub fn ethertype(&self) -> u16 {
        be16(&self.buffer.as_ref()[field::ETHERTYPE])
    }
    /// The receiver's peer-table index of the sender.
    pub fn peer_index(&self) -> u16 {
        be16(&self.buffer.as_ref()[field::PEER_INDEX])
    }
    /// The raw packet type byte.
    pub fn ptype(&self) -> u8 {
        self.buffer.as_ref()[field::PTYPE]
    }
    pub fn packet_type(&self) -> Result<PacketType, Error> {
        PacketType::from_u8(self.ptype()).ok_or(Error::UnknownType(self.ptype()))
    }
    /// Everything after the head, padding included.
    pub fn body(&self) -> &[u8] {
        &self.buffer.as_ref()[HEAD_LEN..]
    }
}

fn mac(b: &[u8]) -> [u8; 6] {
    [b[0], b[1], b[2], b[3], b[4], b[5]]
}

/// The head, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthHead {
    pub dst: [u8; 6],
    pub src: [u8; 6],
    /// `dst_src_peer_index`: the receiver's index for the sender.
    pub peer_index: u16,
}

/// A body, parsed: one variant per layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body<'a> {
    /// TINY or SMALL (the `kind` says which).
    Msg(MsgRepr<'a>),
    Medium(MediumRepr<'a>),
    Rndv(RndvRepr),
    Pull(PullRepr),
    PullReply(PullReplyRepr<'a>),
    Notify(NotifyRepr),
    Connect(ConnectRepr),
    Truc(TrucRepr),
    NackLib(NackLibRepr),
    NackMcp(NackMcpRepr),
    /// HOST_QUERY (no hostname) or HOST_REPLY.
    Host(HostRepr<'a>),
}

impl<'a> Body<'a> {
    pub fn packet_type(&self) -> PacketType {
        match self {
            Body::Msg(r) => r.kind.packet_type(),
            Body::Medium(_) => PacketType::Medium,
            Body::Rndv(_) => PacketType::Rndv,
            Body::Pull(_) => PacketType::Pull,
            Body::PullReply(_) => PacketType::PullReply,
            Body::Notify(_) => PacketType::Notify,
            Body::Connect(_) => PacketType::Connect,
            Body::Truc(_) => PacketType::Truc,
            Body::NackLib(_) => PacketType::NackLib,
            Body::NackMcp(_) => PacketType::NackMcp,
            Body::Host(r) => r.packet_type(),
        }
    }

    /// Bytes the body takes, header and payload, before padding.
    pub fn buffer_len(&self, mode: WireMode) -> usize {
        match self {
            Body::Msg(r) => r.buffer_len(),
            Body::Medium(r) => r.buffer_len(mode),
            Body::Rndv(r) => r.buffer_len(),
            Body::Pull(r) => r.buffer_len(mode),
            Body::PullReply(r) => r.buffer_len(),
            Body::Notify(r) => r.buffer_len(),
            Body::Connect(r) => r.buffer_len(),
            Body::Truc(r) => r.buffer_len(),
            Body::NackLib(r) => r.buffer_len(),
            Body::NackMcp(r) => r.buffer_len(),
            Body::Host(r) => r.buffer_len(),
        }
    }

    /// Parses a body (frame offset 16 onwards, padding allowed).
    pub fn parse(body: &'a [u8], mode: WireMode) -> Result<Body<'a>, Error> {
        need(body.len(), 1)?;
        let t = PacketType::from_u8(body[0]).ok_or(Error::UnknownType(body[0]))?;
        Ok(match t {
            PacketType::Tiny | PacketType::Small => {
                Body::Msg(MsgRepr::parse(&MsgPacket::new_checked(body)?)?)
            }
            PacketType::Medium => {
                Body::Medium(MediumRepr::parse(&MediumPacket::new_checked(body, mode)?)?)
            }
            PacketType::Rndv => Body::Rndv(RndvRepr::parse(&RndvPacket::new_checked(body)?)?),
            PacketType::Pull => Body::Pull(PullRepr::parse(&PullPacket::new_checked(body, mode)?)?),
            PacketType::PullReply => Body::PullReply(PullReplyRepr::parse(
                &PullReplyPacket::new_checked(body)?,
                mode,
            )?),
            PacketType::Notify => {
                Body::Notify(NotifyRepr::parse(&NotifyPacket::new_checked(body)?)?)
            }
            PacketType::Connect => {
                Body::Connect(ConnectRepr::parse(&ConnectPacket::new_checked(body)?)?)
            }
            PacketType::Truc => Body::Truc(TrucRepr::parse(&TrucPacket::new_checked(body)?)?),
            PacketType::NackLib => {
                Body::NackLib(NackLibRepr::parse(&NackLibPacket::new_checked(body)?)?)
            }
            PacketType::NackMcp => {
                Body::NackMcp(NackMcpRepr::parse(&NackMcpPacket::new_checked(body)?)?)
            }
            PacketType::HostQuery | PacketType::HostReply => {
                Body::Host(HostRepr::parse(&HostPacket::new_checked(body)?)?)
            }
            other => return Err(Error::Unsupported(other)),
        })
    }

    /// Writes the body at the start of `buf`; returns its length (no padding).
    pub fn emit(&self, buf: &mut [u8], mode: WireMode) -> Result<usize, Error> {
        match self {
            Body::Msg(r) => r.emit(buf),
            Body::Medium(r) => r.emit(buf, mode),
            Body::Rndv(r) => r.emit(buf),
            Body::Pull(r) => r.emit(buf, mode),
            Body::PullReply(r) => r.emit(buf, mode),
            Body::Notify(r) => r.emit(buf),
            Body::Connect(r) => r.emit(buf),
            Body::Truc(r) => r.emit(buf),
            Body::NackLib(r) => r.emit(buf),
            Body::NackMcp(r) => r.emit(buf),
            Body::Host(r) => r.emit(buf),
        }
    }
}

/// A whole frame, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr<'a> {
    pub head: EthHead,
    pub body: Body<'a>,
}

impl<'a> Repr<'a> {
    /// Parses a checked frame as `mode` lays it out.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(
        frame: &Frame<&'a T>,
        mode: WireMode,
    ) -> Result<Repr<'a>, Error> {
        Repr::parse_bytes(T::as_ref(frame.buffer), mode)
    }

    /// [`Frame::new_checked`] and [`Repr::parse`] in one.
    pub fn parse_bytes(bytes: &'a [u8], mode: WireMode) -> Result<Repr<'a>, Error> {
        let frame = Frame::new_checked(bytes)?;
        let head = EthHead {
            dst: frame.dst_mac(),
            src: frame.src_mac(),
            peer_index: frame.peer_index(),
        };
        let body = Body::parse(&bytes[HEAD_LEN..], mode)?;
        Ok(Repr { head, body })
    }

    /// Bytes [`Repr::emit`] writes, padding included.
    pub fn buffer_len(&self, mode: WireMode) -> usize {
        (HEAD_LEN + self.body.buffer_len(mode)).max(ETH_ZLEN)
    }

    /// Writes the frame, zero-padded to [`ETH_ZLEN`]; returns its length.
    pub fn emit(&self, buf: &mut [u8], mode: WireMode) -> Result<usize, Error> {
        let len = self.buffer_len(mode);
        room(buf.len(), len)?;
        let n = HEAD_LEN + self.body.emit(&mut buf[HEAD_LEN..], mode)?;
        buf[field::DST_MAC].copy_from_slice(&self.head.dst);
        buf[field::SRC_MAC].copy_from_slice(&self.head.src);
        buf[field::ETHERTYPE].copy_from_slice(&ETHERTYPE.to_be_bytes());
        buf[field::PEER_INDEX].copy_from_slice(&self.head.peer_index.to_be_bytes());
        buf[n..len].fill(0);
        Ok(len)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub const DST: [u8; 6] = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55];
    pub const SRC: [u8; 6] = [0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee];

    /// Emits `body` in a frame from SRC to DST with peer index 0x1234.
    pub fn frame(body: Body<'_>, mode: WireMode) -> Vec<u8> {
        let r = Repr {
            head: EthHead {
                dst: DST,
                src: SRC,
                peer_index: 0x1234,
            },
            body,
        };
        // A dirty buffer: emit must write every byte it claims.
        let mut buf = vec![0xa5; r.buffer_len(mode) + 7];
        let n = r.emit(&mut buf, mode).unwrap();
        buf.truncate(n);
        assert_eq!(Repr::parse_bytes(&buf, mode).unwrap(), r);
        buf
    }

    #[test]
    fn head_offsets() {
        let body = Body::NackMcp(NackMcpRepr {
            src_endpoint: 1,
            src_generation: 2,
            nack_type: NackType::BadRdmaWin,
            src_pull_handle: 3,
            src_magic: 4,
        });
        let b = frame(body, WireMode::Default);
        assert_eq!(b.len(), 60);
        assert_eq!(&b[0..6], &DST);
        assert_eq!(&b[6..12], &SRC);
        assert_eq!(&b[12..14], &[0x86, 0xdf]);
        assert_eq!(&b[14..16], &[0x12, 0x34]);
        assert_eq!(b[16], 45);
        assert!(b[32..60].iter().all(|&x| x == 0), "padding is zero");
        let f = Frame::new_checked(&b[..]).unwrap();
        assert_eq!(f.dst_mac(), DST);
        assert_eq!(f.src_mac(), SRC);
        assert_eq!(f.ethertype(), 0x86df);
        assert_eq!(f.peer_index(), 0x1234);
        assert_eq!(f.packet_type(), Ok(PacketType::NackMcp));
        assert_eq!(f.body().len(), 44);
    }

    #[test]
    fn rejects_short_foreign_unknown_and_unsupported() {
        let b = frame(
            Body::NackLib(NackLibRepr {
                src_endpoint: 1,
                src_generation: 0,
                nack_type: NackType::BadSession,
                dst_endpoint: 2,
                dst_src_peer_index: 3,
                lib_seqnum: 4,
            }),
            WireMode::Default,
        );
        let m = WireMode::Default;
        for n in 0..17 {
            assert!(matches!(
                Repr::parse_bytes(&b[..n], m),
                Err(Error::Truncated { .. })
            ));
        }
        // A NACK_LIB body is 16 bytes: frame bytes 17..32 cut it short.
        for n in 17..32 {
            assert!(matches!(
                Repr::parse_bytes(&b[..n], m),
                Err(Error::Truncated { .. })
            ));
        }
        assert!(Repr::parse_bytes(&b[..32], m).is_ok());
        let mut x = b.clone();
        x[12] = 0x08;
        x[13] = 0x00;
        assert_eq!(Repr::parse_bytes(&x, m), Err(Error::EtherType(0x0800)));
        let mut x = b.clone();
        x[16] = 46;
        assert_eq!(Repr::parse_bytes(&x, m), Err(Error::UnknownType(46)));
        x[16] = 1;
        assert_eq!(
            Repr::parse_bytes(&x, m),
            Err(Error::Unsupported(PacketType::Raw))
        );
        x[16] = 44;
        x[16 + 3] = 5;
        assert!(matches!(Repr::parse_bytes(&x, m), Err(Error::Field(_))));
    }

    #[test]
    fn packet_type_and_nack_codes() {
        let codes = [
            0u8, 1, 2, 3, 4, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45,
        ];
        for v in 0..=255u8 {
            match PacketType::from_u8(v) {
                Some(t) => assert_eq!(t as u8, v),
                None => assert!(!codes.contains(&v)),
            }
        }
        assert_eq!(PacketType::Truc as u8, 35);
        assert_eq!(PacketType::NackMcp as u8, 45);
        for v in 0..=255u8 {
            match NackType::from_u8(v) {
                Some(t) => assert_eq!(t as u8, v),
                None => assert!(v > 4),
            }
        }
    }

    #[test]
    fn wire_mode_numbers() {
        let d = WireMode::Default;
        let c = WireMode::MxCompat;
        assert_eq!((d.mtu(), c.mtu()), (9000, 4144));
        assert_eq!((d.medium_frag_max(), c.medium_frag_max()), (8192, 4096));
        assert_eq!((d.pull_reply_max(), c.pull_reply_max()), (8968, 4096));
        assert_eq!(
            (d.pull_replies_per_block(), c.pull_replies_per_block()),
            (32, 8)
        );
        assert_eq!((d.medium_frags_max(), c.medium_frags_max()), (32, 8));
        // The compat MTU is the head plus a full medium fragment (the larger of that and
        // a full pull reply, 16 + 4096).
        assert_eq!(c.mtu(), 16 + 32 + 4096);
        // The largest frames of each layout fit the MTU.
        for m in [d, c] {
            assert!(HEAD_LEN + msg::MEDIUM_LEN + m.medium_frag_max() <= m.mtu());
            assert!(HEAD_LEN + pull::PULL_REPLY_LEN + m.pull_reply_max() <= m.mtu());
        }
    }

    #[test]
    fn lib_seqnum_fields() {
        let s = LibSeqnum::new(2, 0x3fff);
        assert_eq!(s.0, 0xbfff);
        assert_eq!((s.session(), s.seq()), (2, 0x3fff));
        let t = s.add(1);
        assert_eq!((t.session(), t.seq()), (2, 0));
        assert_eq!(t.since(s), 1);
        assert_eq!(LibSeqnum::new(7, 0xffff), LibSeqnum::new(3, 0x3fff));
        assert_eq!(LibSeqnum(0x4005).add(0x4000), LibSeqnum(0x4005));
    }
}
