//! The message layouts: TINY and SMALL (`omx_pkt_msg`, payload inline), a MEDIUM
//! fragment (the same header widened to 32 bytes, laid out per [`WireMode`]), and RNDV
//! (the message header and 8 bytes naming the window the receiver will pull from).
//!
//! Offsets are from the body's start (frame offset 16). This module must never decide
//! what a message means; it reads and writes the fields, and refuses lengths that the
//! layout cannot hold.

use super::{be16, be32, need, room, Error, PacketType, WireMode, MX_COMPAT_FRAG_PIPELINE};
use super::{SMALL_MAX, TINY_MAX};

/// Bytes of the TINY/SMALL/RNDV message header.
pub const MSG_LEN: usize = field::END;
/// Bytes of a medium fragment's header (both modes).
pub const MEDIUM_LEN: usize = medium_field::END;
/// Bytes of an RNDV body.
pub const RNDV_LEN: usize = rndv_field::END;
/// The `length` an RNDV carries: its bytes after the message header.
pub const RNDV_DATA_LEN: u16 = (RNDV_LEN - MSG_LEN) as u16;

/// `struct omx_pkt_msg`: TINY and SMALL; the payload follows at [`MSG_LEN`].
pub(crate) mod field {
    use core::ops::Range;
    pub const PTYPE: usize = 0;
    pub const DST_EP: usize = 1;
    pub const SRC_EP: usize = 2;
    pub const SRC_GEN: usize = 3;
    /// Payload bytes (8 in an RNDV: its own fields).
    pub const LENGTH: Range<usize> = 4..6;
    /// Zero unless the sender was built with checksums.
    pub const CHECKSUM: Range<usize> = 6..8;
    pub const LIB_SEQNUM: Range<usize> = 8..10;
    pub const LIB_PIGGYACK: Range<usize> = 10..12;
    pub const MATCH_A: Range<usize> = 12..16;
    pub const MATCH_B: Range<usize> = 16..20;
    pub const SESSION: Range<usize> = 20..24;
    pub const END: usize = 24;
}

/// `struct omx_pkt_medium_frag`; the fragment's payload follows at [`MEDIUM_LEN`].
/// Bytes 0..4 and 8..24 are the message header's (so [`MsgHeader`] reads them alike).
pub(crate) mod medium_field {
    pub use super::field::{
        DST_EP, LIB_PIGGYACK, LIB_SEQNUM, MATCH_A, MATCH_B, PTYPE, SESSION, SRC_EP, SRC_GEN,
    };
    use core::ops::Range;
    /// Whole message length, default mode: 32 bits.
    pub const LENGTH_DEFAULT: Range<usize> = 4..8;
    /// Whole message length, MX-compat mode: 16 bits, then 2 bytes of padding.
    pub const LENGTH_COMPAT: Range<usize> = 4..6;
    pub const FRAG_LENGTH: Range<usize> = 24..26;
    pub const FRAG_SEQNUM: usize = 26;
    /// MX-compat mode only: log2 of the fragment size. Padding in default mode.
    pub const FRAG_PIPELINE: usize = 27;
    pub const CHECKSUM: Range<usize> = 28..30;
    pub const END: usize = 32;
}

/// `struct omx_pkt_rndv`: the message header (bytes 0..24, as in `field`), then the
/// pulled window.
pub(crate) mod rndv_field {
    pub use super::field::{
        CHECKSUM, DST_EP, LENGTH, LIB_PIGGYACK, LIB_SEQNUM, MATCH_A, MATCH_B, PTYPE, SESSION,
        SRC_EP, SRC_GEN,
    };
    use core::ops::Range;
    pub const MSG_LENGTH: Range<usize> = 24..28;
    pub const RDMA_ID: usize = 28;
    pub const RDMA_SEQNUM: usize = 29;
    /// Open-MX always sends 0.
    pub const RDMA_OFFSET: Range<usize> = 30..32;
    pub const END: usize = 32;
}

/// Which eager message a [`MsgRepr`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MsgKind {
    /// At most [`TINY_MAX`] bytes.
    Tiny,
    /// At most [`SMALL_MAX`] bytes.
    Small,
}

impl MsgKind {
    pub fn packet_type(self) -> PacketType {
        match self {
            MsgKind::Tiny => PacketType::Tiny,
            MsgKind::Small => PacketType::Small,
        }
    }
    pub fn max_len(self) -> usize {
        match self {
            MsgKind::Tiny => TINY_MAX,
            MsgKind::Small => SMALL_MAX,
        }
    }
    fn from_ptype(v: u8) -> Option<MsgKind> {
        match PacketType::from_u8(v) {
            Some(PacketType::Tiny) => Some(MsgKind::Tiny),
            Some(PacketType::Small) => Some(MsgKind::Small),
            _ => None,
        }
    }
}

/// The fields TINY, SMALL, MEDIUM and RNDV share (not their lengths).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsgHeader {
    pub dst_endpoint: u8,
    pub src_endpoint: u8,
    /// Unused by Open-MX; carried so frames re-emit as they came.
    pub src_generation: u8,
    /// See [`super::LibSeqnum`].
    pub lib_seqnum: u16,
    /// The next sequence number the sender expects: acknowledges everything below it.
    pub lib_piggyack: u16,
    /// `match_a` (high 32 bits) and `match_b` (low 32 bits) as one value.
    pub match_info: u64,
    /// The receiving endpoint's session id.
    pub session: u32,
    pub checksum: u16,
}

impl MsgHeader {
    /// Reads the shared fields; `b` holds at least [`MSG_LEN`] bytes.
    fn read(b: &[u8], checksum: core::ops::Range<usize>) -> MsgHeader {
        MsgHeader {
            dst_endpoint: b[field::DST_EP],
            src_endpoint: b[field::SRC_EP],
            src_generation: b[field::SRC_GEN],
            lib_seqnum: be16(&b[field::LIB_SEQNUM]),
            lib_piggyack: be16(&b[field::LIB_PIGGYACK]),
            match_info: (be32(&b[field::MATCH_A]) as u64) << 32 | be32(&b[field::MATCH_B]) as u64,
            session: be32(&b[field::SESSION]),
            checksum: be16(&b[checksum]),
        }
    }

    /// Writes the shared fields; `b` holds at least [`MSG_LEN`] bytes.
    fn write(&self, b: &mut [u8], ptype: PacketType, checksum: core::ops::Range<usize>) {
        b[field::PTYPE] = ptype as u8;
        b[field::DST_EP] = self.dst_endpoint;
        b[field::SRC_EP] = self.src_endpoint;
        b[field::SRC_GEN] = self.src_generation;
        b[field::LIB_SEQNUM].copy_from_slice(&self.lib_seqnum.to_be_bytes());
        b[field::LIB_PIGGYACK].copy_from_slice(&self.lib_piggyack.to_be_bytes());
        b[field::MATCH_A].copy_from_slice(&((self.match_info >> 32) as u32).to_be_bytes());
        b[field::MATCH_B].copy_from_slice(&(self.match_info as u32).to_be_bytes());
        b[field::SESSION].copy_from_slice(&self.session.to_be_bytes());
        b[checksum].copy_from_slice(&self.checksum.to_be_bytes());
    }
}

/// The header accessors TINY, SMALL, MEDIUM and RNDV views share.
macro_rules! msg_getters {
    ($f:ident) => {
        get!(dst_endpoint, u8, $f::DST_EP);
        get!(src_endpoint, u8, $f::SRC_EP);
        get!(src_generation, u8, $f::SRC_GEN);
        get!(lib_seqnum, u16, $f::LIB_SEQNUM);
        get!(lib_piggyack, u16, $f::LIB_PIGGYACK);
        get!(match_a, u32, $f::MATCH_A);
        get!(match_b, u32, $f::MATCH_B);
        get!(session, u32, $f::SESSION);
        /// `match_a` and `match_b` as one value.
        pub fn match_info(&self) -> u64 {
            (self.match_a() as u64) << 32 | self.match_b() as u64
        }
    };
}

view!(
    /// A view of a TINY or SMALL body. After `new_checked` no accessor panics.
    MsgPacket
);

impl<T: AsRef<[u8]>> MsgPacket<T> {
    /// Checks the type, the header, and that `length` fits the type and the buffer.
    pub fn new_checked(buffer: T) -> Result<MsgPacket<T>, Error> {
        let p = MsgPacket { buffer };
        p.check()?;
        Ok(p)
    }
    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        need(b.len(), field::END)?;
        let kind = MsgKind::from_ptype(b[field::PTYPE]).ok_or(Error::Field("not TINY/SMALL"))?;
        let len = be16(&b[field::LENGTH]) as usize;
        if len > kind.max_len() {
            return Err(Error::Field("message longer than its type allows"));
        }
        need(b.len(), field::END + len)
    }
    /// TINY or SMALL (an unchecked view of anything else reads as SMALL).
    pub fn kind(&self) -> MsgKind {
        MsgKind::from_ptype(self.buffer.as_ref()[field::PTYPE]).unwrap_or(MsgKind::Small)
    }
    get!(length, u16, field::LENGTH);
    get!(checksum, u16, field::CHECKSUM);
    msg_getters!(field);
    /// The message: `length` bytes after the header (padding excluded).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::END..field::END + self.length() as usize]
    }
}

/// A TINY or SMALL message, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsgRepr<'a> {
    pub kind: MsgKind,
    pub header: MsgHeader,
    pub data: &'a [u8],
}

impl<'a> MsgRepr<'a> {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &MsgPacket<&'a T>) -> Result<MsgRepr<'a>, Error> {
        let b = T::as_ref(p.buffer);
        let len = be16(&b[field::LENGTH]) as usize;
        Ok(MsgRepr {
            kind: p.kind(),
            header: MsgHeader::read(b, field::CHECKSUM),
            data: &b[field::END..field::END + len],
        })
    }
    pub fn buffer_len(&self) -> usize {
        MSG_LEN + self.data.len()
    }
    /// Writes the body; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, Error> {
        if self.data.len() > self.kind.max_len() {
            return Err(Error::Field("message longer than its type allows"));
        }
        let n = self.buffer_len();
        room(buf.len(), n)?;
        buf[..MSG_LEN].fill(0);
        self.header
            .write(buf, self.kind.packet_type(), field::CHECKSUM);
        buf[field::LENGTH].copy_from_slice(&(self.data.len() as u16).to_be_bytes());
        buf[MSG_LEN..n].copy_from_slice(self.data);
        Ok(n)
    }
}

/// A view of a MEDIUM fragment's body, laid out as `mode` says.
#[derive(Debug, Clone, Copy)]
pub struct MediumPacket<T: AsRef<[u8]>> {
    buffer: T,
    mode: WireMode,
}

impl<T: AsRef<[u8]>> MediumPacket<T> {
    pub fn new_unchecked(buffer: T, mode: WireMode) -> MediumPacket<T> {
        MediumPacket { buffer, mode }
    }
    /// Checks the type, the header, the fragment length against the mode's fragment size
    /// and the buffer, and (compat mode) the pipeline byte.
    pub fn new_checked(buffer: T, mode: WireMode) -> Result<MediumPacket<T>, Error> {
        let p = MediumPacket { buffer, mode };
        p.check()?;
        Ok(p)
    }
    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        need(b.len(), medium_field::END)?;
        if b[medium_field::PTYPE] != PacketType::Medium as u8 {
            return Err(Error::Field("not MEDIUM"));
        }
        if self.mode == WireMode::MxCompat
            && b[medium_field::FRAG_PIPELINE] != MX_COMPAT_FRAG_PIPELINE
        {
            return Err(Error::Field("medium frag_pipeline is not 12"));
        }
        let frag = self.frag_length() as usize;
        if frag > self.mode.medium_frag_max() {
            return Err(Error::Field("medium fragment longer than the mode allows"));
        }
        need(b.len(), medium_field::END + frag)
    }
    pub fn into_inner(self) -> T {
        self.buffer
    }
    pub fn mode(&self) -> WireMode {
        self.mode
    }
    /// The whole message's length (16 bits wide in compat mode).
    pub fn msg_length(&self) -> u32 {
        let b = self.buffer.as_ref();
        match self.mode {
            WireMode::Default => be32(&b[medium_field::LENGTH_DEFAULT]),
            WireMode::MxCompat => be16(&b[medium_field::LENGTH_COMPAT]) as u32,
        }
    }
    get!(frag_length, u16, medium_field::FRAG_LENGTH);
    get!(frag_seqnum, u8, medium_field::FRAG_SEQNUM);
    get!(
        /// Log2 of the fragment size in compat mode; padding in default mode.
        frag_pipeline,
        u8,
        medium_field::FRAG_PIPELINE
    );
    get!(checksum, u16, medium_field::CHECKSUM);
    msg_getters!(medium_field);
    /// The fragment's bytes (padding excluded).
    pub fn payload(&self) -> &[u8] {
        let end = medium_field::END + self.frag_length() as usize;
        &self.buffer.as_ref()[medium_field::END..end]
    }
}

/// One fragment of a MEDIUM message, parsed. The fragment starts at
/// `frag_seqnum * mode.medium_frag_max()` in the message ([`MediumRepr::offset`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MediumRepr<'a> {
    pub header: MsgHeader,
    /// The whole message's length.
    pub msg_length: u32,
    pub frag_seqnum: u8,
    pub data: &'a [u8],
}

impl<'a> MediumRepr<'a> {
    /// Also refuses a fragment that ends past the message.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(
        p: &MediumPacket<&'a T>,
    ) -> Result<MediumRepr<'a>, Error> {
        let b = T::as_ref(p.buffer);
        let end = medium_field::END + p.frag_length() as usize;
        let r = MediumRepr {
            header: MsgHeader::read(b, medium_field::CHECKSUM),
            msg_length: p.msg_length(),
            frag_seqnum: p.frag_seqnum(),
            data: &b[medium_field::END..end],
        };
        r.check_fits(p.mode)?;
        Ok(r)
    }
    /// Where the fragment starts in its message.
    pub fn offset(&self, mode: WireMode) -> u64 {
        self.frag_seqnum as u64 * mode.medium_frag_max() as u64
    }
    fn check_fits(&self, mode: WireMode) -> Result<(), Error> {
        if self.offset(mode) + self.data.len() as u64 > self.msg_length as u64 {
            return Err(Error::Field("medium fragment ends past its message"));
        }
        Ok(())
    }
    pub fn buffer_len(&self, _mode: WireMode) -> usize {
        MEDIUM_LEN + self.data.len()
    }
    /// Writes the body; returns its length.
    pub fn emit(&self, buf: &mut [u8], mode: WireMode) -> Result<usize, Error> {
        if self.data.len() > mode.medium_frag_max() {
            return Err(Error::Field("medium fragment longer than the mode allows"));
        }
        self.check_fits(mode)?;
        let n = self.buffer_len(mode);
        room(buf.len(), n)?;
        buf[..MEDIUM_LEN].fill(0);
        self.header
            .write(buf, PacketType::Medium, medium_field::CHECKSUM);
        match mode {
            WireMode::Default => {
                buf[medium_field::LENGTH_DEFAULT].copy_from_slice(&self.msg_length.to_be_bytes())
            }
            WireMode::MxCompat => {
                let l = u16::try_from(self.msg_length)
                    .map_err(|_| Error::Field("medium message longer than 16 bits"))?;
                buf[medium_field::LENGTH_COMPAT].copy_from_slice(&l.to_be_bytes());
                buf[medium_field::FRAG_PIPELINE] = MX_COMPAT_FRAG_PIPELINE;
            }
        }
        buf[medium_field::FRAG_LENGTH].copy_from_slice(&(self.data.len() as u16).to_be_bytes());
        buf[medium_field::FRAG_SEQNUM] = self.frag_seqnum;
        buf[MEDIUM_LEN..n].copy_from_slice(self.data);
        Ok(n)
    }
}

view!(
    /// A view of an RNDV body. After `new_checked` no accessor panics.
    RndvPacket
);

impl<T: AsRef<[u8]>> RndvPacket<T> {
    pub fn new_checked(buffer: T) -> Result<RndvPacket<T>, Error> {
        let p = RndvPacket { buffer };
        p.check()?;
        Ok(p)
    }
    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        need(b.len(), rndv_field::END)?;
        if b[rndv_field::PTYPE] != PacketType::Rndv as u8 {
            return Err(Error::Field("not RNDV"));
        }
        Ok(())
    }
    get!(
        /// [`RNDV_DATA_LEN`] from Open-MX; not checked.
        length,
        u16,
        rndv_field::LENGTH
    );
    get!(checksum, u16, rndv_field::CHECKSUM);
    msg_getters!(rndv_field);
    get!(msg_length, u32, rndv_field::MSG_LENGTH);
    get!(rdma_id, u8, rndv_field::RDMA_ID);
    get!(rdma_seqnum, u8, rndv_field::RDMA_SEQNUM);
    get!(rdma_offset, u16, rndv_field::RDMA_OFFSET);
}

/// An RNDV, parsed: announces a large message and the window to pull it from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RndvRepr {
    pub header: MsgHeader,
    pub msg_length: u32,
    pub rdma_id: u8,
    pub rdma_seqnum: u8,
    pub rdma_offset: u16,
}

impl RndvRepr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &RndvPacket<&T>) -> Result<RndvRepr, Error> {
        Ok(RndvRepr {
            header: MsgHeader::read(T::as_ref(p.buffer), rndv_field::CHECKSUM),
            msg_length: p.msg_length(),
            rdma_id: p.rdma_id(),
            rdma_seqnum: p.rdma_seqnum(),
            rdma_offset: p.rdma_offset(),
        })
    }
    pub fn buffer_len(&self) -> usize {
        RNDV_LEN
    }
    /// Writes the body; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, Error> {
        room(buf.len(), RNDV_LEN)?;
        buf[..RNDV_LEN].fill(0);
        self.header
            .write(buf, PacketType::Rndv, rndv_field::CHECKSUM);
        buf[rndv_field::LENGTH].copy_from_slice(&RNDV_DATA_LEN.to_be_bytes());
        buf[rndv_field::MSG_LENGTH].copy_from_slice(&self.msg_length.to_be_bytes());
        buf[rndv_field::RDMA_ID] = self.rdma_id;
        buf[rndv_field::RDMA_SEQNUM] = self.rdma_seqnum;
        buf[rndv_field::RDMA_OFFSET].copy_from_slice(&self.rdma_offset.to_be_bytes());
        Ok(RNDV_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::frame;
    use super::super::*;
    use super::*;

    fn header() -> MsgHeader {
        MsgHeader {
            dst_endpoint: 0x07,
            src_endpoint: 0x09,
            src_generation: 0x0b,
            lib_seqnum: 0x8123,
            lib_piggyack: 0x4567,
            match_info: 0x0102_0304_a5a6_a7a8,
            session: 0xdead_beef,
            checksum: 0xc0c1,
        }
    }

    /// Frame offsets = body offsets + 16.
    fn check_msg_header(b: &[u8], ptype: u8) {
        assert_eq!(b[16], ptype);
        assert_eq!(&b[17..20], &[0x07, 0x09, 0x0b]);
        assert_eq!(&b[24..28], &[0x81, 0x23, 0x45, 0x67]);
        assert_eq!(
            &b[28..32],
            &[0x01, 0x02, 0x03, 0x04],
            "match_a is the high half"
        );
        assert_eq!(
            &b[32..36],
            &[0xa5, 0xa6, 0xa7, 0xa8],
            "match_b is the low half"
        );
        assert_eq!(&b[36..40], &[0xde, 0xad, 0xbe, 0xef]);
    }

    #[test]
    fn tiny_and_small_offsets() {
        for (kind, code) in [(MsgKind::Tiny, 37), (MsgKind::Small, 38)] {
            let body = Body::Msg(MsgRepr {
                kind,
                header: header(),
                data: b"hello",
            });
            let b = frame(body, WireMode::Default);
            check_msg_header(&b, code);
            assert_eq!(&b[20..22], &[0, 5], "length");
            assert_eq!(&b[22..24], &[0xc0, 0xc1], "checksum");
            assert_eq!(&b[40..45], b"hello", "payload at body offset 24");
            assert_eq!(b.len(), 60, "padded to ETH_ZLEN");
            let p = MsgPacket::new_checked(&b[16..]).unwrap();
            assert_eq!(p.payload(), b"hello");
            assert_eq!(p.match_info(), 0x0102_0304_a5a6_a7a8);
        }
    }

    #[test]
    fn msg_limits() {
        let big = [7u8; 129];
        let r = MsgRepr {
            kind: MsgKind::Tiny,
            header: header(),
            data: &big[..33],
        };
        assert!(matches!(r.emit(&mut [0u8; 200]), Err(Error::Field(_))));
        let r = MsgRepr {
            kind: MsgKind::Small,
            header: header(),
            data: &big[..128],
        };
        let b = frame(Body::Msg(r), WireMode::MxCompat);
        assert_eq!(b.len(), 16 + 24 + 128);
        // A length past the buffer is truncation; past the type's limit, a field error.
        assert!(matches!(
            MsgPacket::new_checked(&b[16..b.len() - 1]),
            Err(Error::Truncated { .. })
        ));
        let mut x = b.clone();
        x[16] = 37;
        assert!(matches!(
            MsgPacket::new_checked(&x[16..]),
            Err(Error::Field(_))
        ));
    }

    #[test]
    fn medium_default_offsets() {
        let data = [0x5au8; 100];
        let body = Body::Medium(MediumRepr {
            header: header(),
            msg_length: 0x0001_2345,
            frag_seqnum: 3,
            data: &data,
        });
        let b = frame(body, WireMode::Default);
        check_msg_header(&b, 39);
        assert_eq!(
            &b[20..24],
            &[0x00, 0x01, 0x23, 0x45],
            "32-bit message length"
        );
        assert_eq!(&b[40..42], &[0, 100], "frag_length");
        assert_eq!(b[42], 3, "frag_seqnum");
        assert_eq!(b[43], 0, "padding in default mode");
        assert_eq!(&b[44..46], &[0xc0, 0xc1], "checksum");
        assert_eq!(&b[46..48], &[0, 0]);
        assert_eq!(&b[48..148], &data[..], "payload at body offset 32");
        let p = MediumPacket::new_checked(&b[16..], WireMode::Default).unwrap();
        assert_eq!(p.msg_length(), 0x12345);
        assert_eq!(p.payload(), &data[..]);
    }

    #[test]
    fn medium_compat_offsets() {
        let data = [0x3cu8; 4096];
        let r = MediumRepr {
            header: header(),
            msg_length: 0x7abc,
            frag_seqnum: 1,
            data: &data,
        };
        let b = frame(Body::Medium(r), WireMode::MxCompat);
        check_msg_header(&b, 39);
        assert_eq!(
            &b[20..24],
            &[0x7a, 0xbc, 0, 0],
            "16-bit length, then padding"
        );
        assert_eq!(&b[40..42], &[0x10, 0x00], "frag_length");
        assert_eq!(b[42], 1, "frag_seqnum");
        assert_eq!(b[43], 12, "frag_pipeline");
        assert_eq!(&b[44..46], &[0xc0, 0xc1], "checksum");
        assert_eq!(b.len(), 16 + 32 + 4096);
        assert_eq!(b.len(), WireMode::MxCompat.mtu());
        // Too long for 16 bits, for the mode's fragment size, or for its message.
        let mut buf = vec![0u8; 9000];
        let r2 = MediumRepr {
            msg_length: 0x1_0000,
            ..r
        };
        assert!(r2.emit(&mut buf, WireMode::MxCompat).is_err());
        let long = [0u8; 4097];
        let r3 = MediumRepr {
            data: &long,
            frag_seqnum: 0,
            msg_length: 5000,
            ..r
        };
        assert!(r3.emit(&mut buf, WireMode::MxCompat).is_err());
        assert!(r3.emit(&mut buf, WireMode::Default).is_ok());
        let r4 = MediumRepr {
            msg_length: 4096 + 4095,
            ..r
        };
        assert!(r4.emit(&mut buf, WireMode::MxCompat).is_err());
        // A compat parser refuses another pipeline value.
        let mut x = b.clone();
        x[43] = 13;
        assert!(matches!(
            MediumPacket::new_checked(&x[16..], WireMode::MxCompat),
            Err(Error::Field(_))
        ));
    }

    #[test]
    fn rndv_offsets() {
        let body = Body::Rndv(RndvRepr {
            header: header(),
            msg_length: 0x0010_0001,
            rdma_id: 0x21,
            rdma_seqnum: 0x22,
            rdma_offset: 0x2324,
        });
        let b = frame(body, WireMode::Default);
        check_msg_header(&b, 40);
        assert_eq!(&b[20..22], &[0, 8], "length is the rndv data length");
        assert_eq!(&b[22..24], &[0xc0, 0xc1]);
        assert_eq!(&b[40..44], &[0x00, 0x10, 0x00, 0x01], "msg_length");
        assert_eq!(
            &b[44..48],
            &[0x21, 0x22, 0x23, 0x24],
            "rdma id, seqnum, offset"
        );
        assert_eq!(b.len(), 60);
    }
}
