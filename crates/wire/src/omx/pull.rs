//! The large-message layouts: PULL (a receiver asks for a block of the sender's
//! window; 32 bytes with 8/16-bit fields in MX-compat mode, 44 bytes with 32-bit fields
//! in default mode), PULL_REPLY (one frame of the block, answered by the sender's
//! driver) and NOTIFY (the receiver tells the sender the message arrived).
//!
//! Offsets are from the body's start (frame offset 16). This module must never track a
//! pull: it reads and writes the fields and refuses values a layout cannot hold.

use super::{be16, be32, need, room, Error, PacketType, WireMode};

/// Bytes of a PULL body in default mode.
pub const PULL_LEN_DEFAULT: usize = pull_default::END;
/// Bytes of a PULL body in MX-compat mode.
pub const PULL_LEN_COMPAT: usize = pull_compat::END;
/// Bytes of a PULL_REPLY header; the frame's data follows.
pub const PULL_REPLY_LEN: usize = pull_reply_field::END;
/// Bytes of a NOTIFY body.
pub const NOTIFY_LEN: usize = notify_field::END;

/// What Open-MX's driver XORs an endpoint's index with to make its pull magic (a PULL's
/// `src_magic`, echoed in each PULL_REPLY's `dst_magic` and a NACK_MCP's `src_magic`).
/// The driver finds the puller's endpoint by undoing it, and drops a reply whose magic
/// names no open endpoint (its counter "Drop Pull Reply Bad Endpoint in Magic").
pub const PULL_MAGIC_XOR: u32 = 0x2107_1980;

/// The pull magic of endpoint `endpoint`, as Open-MX's driver computes it.
pub const fn pull_magic(endpoint: u8) -> u32 {
    endpoint as u32 ^ PULL_MAGIC_XOR
}

/// The endpoint a pull magic names, or `None` when `magic` is no endpoint's. Stricter
/// than Open-MX's driver, which keeps only the low byte of `magic ^ PULL_MAGIC_XOR`
/// (its lookup takes an 8-bit index): a magic with other high bits is refused here.
pub const fn endpoint_of_magic(magic: u32) -> Option<u8> {
    let index = magic ^ PULL_MAGIC_XOR;
    if index <= u8::MAX as u32 {
        Some(index as u8)
    } else {
        None
    }
}

/// `struct omx_pkt_pull_request`, default mode.
pub(crate) mod pull_default {
    use core::ops::Range;
    pub const PTYPE: usize = 0;
    pub const DST_EP: usize = 1;
    pub const SRC_EP: usize = 2;
    pub const SRC_GEN: usize = 3;
    pub const SESSION: Range<usize> = 4..8;
    pub const TOTAL_LENGTH: Range<usize> = 8..12;
    pub const RDMA_ID: Range<usize> = 12..16;
    /// Followed by 3 bytes of padding.
    pub const RDMA_SEQNUM: usize = 16;
    pub const RDMA_OFFSET: Range<usize> = 20..24;
    pub const SRC_PULL_HANDLE: Range<usize> = 24..28;
    pub const SRC_MAGIC: Range<usize> = 28..32;
    pub const FIRST_FRAME_OFFSET: Range<usize> = 32..36;
    pub const BLOCK_LENGTH: Range<usize> = 36..40;
    pub const FRAME_INDEX: Range<usize> = 40..44;
    pub const END: usize = 44;
}

/// `struct omx_pkt_pull_request`, MX-compat mode.
pub(crate) mod pull_compat {
    use core::ops::Range;
    // Bytes 0..12 are the default layout's; listed so this layout reads whole here.
    #[allow(unused_imports)]
    pub use super::pull_default::{DST_EP, PTYPE, SESSION, SRC_EP, SRC_GEN, TOTAL_LENGTH};
    pub const RDMA_ID: usize = 12;
    pub const RDMA_SEQNUM: usize = 13;
    pub const RDMA_OFFSET: Range<usize> = 14..16;
    pub const SRC_PULL_HANDLE: Range<usize> = 16..20;
    pub const SRC_MAGIC: Range<usize> = 20..24;
    pub const FIRST_FRAME_OFFSET: Range<usize> = 24..26;
    pub const BLOCK_LENGTH: Range<usize> = 26..28;
    pub const FRAME_INDEX: Range<usize> = 28..32;
    pub const END: usize = 32;
}

/// `struct omx_pkt_pull_reply`; the data follows at [`PULL_REPLY_LEN`].
pub(crate) mod pull_reply_field {
    use core::ops::Range;
    pub const PTYPE: usize = 0;
    pub const FRAME_SEQNUM: usize = 1;
    pub const FRAME_LENGTH: Range<usize> = 2..4;
    pub const MSG_OFFSET: Range<usize> = 4..8;
    pub const DST_PULL_HANDLE: Range<usize> = 8..12;
    pub const DST_MAGIC: Range<usize> = 12..16;
    pub const END: usize = 16;
}

/// `struct omx_pkt_notify`.
pub(crate) mod notify_field {
    use core::ops::Range;
    pub const PTYPE: usize = 0;
    pub const DST_EP: usize = 1;
    pub const SRC_EP: usize = 2;
    pub const SRC_GEN: usize = 3;
    pub const SESSION: Range<usize> = 4..8;
    pub const TOTAL_LENGTH: Range<usize> = 8..12;
    pub const RDMA_ID: usize = 12;
    pub const RDMA_SEQNUM: usize = 13;
    pub const LIB_SEQNUM: Range<usize> = 18..20;
    pub const LIB_PIGGYACK: Range<usize> = 20..22;
    pub const END: usize = 24;
}

/// Bytes of a PULL body in `mode`.
pub const fn pull_len(mode: WireMode) -> usize {
    match mode {
        WireMode::Default => PULL_LEN_DEFAULT,
        WireMode::MxCompat => PULL_LEN_COMPAT,
    }
}

/// A view of a PULL body, laid out as `mode` says. Fields narrower in compat mode read
/// widened to the default mode's 32 bits.
#[derive(Debug, Clone, Copy)]
pub struct PullPacket<T: AsRef<[u8]>> {
    buffer: T,
    mode: WireMode,
}

impl<T: AsRef<[u8]>> PullPacket<T> {
    pub fn new_unchecked(buffer: T, mode: WireMode) -> PullPacket<T> {
        PullPacket { buffer, mode }
    }
    pub fn new_checked(buffer: T, mode: WireMode) -> Result<PullPacket<T>, Error> {
        let p = PullPacket { buffer, mode };
        p.check()?;
        Ok(p)
    }
    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        need(b.len(), pull_len(self.mode))?;
        if b[pull_default::PTYPE] != PacketType::Pull as u8 {
            return Err(Error::Field("not PULL"));
        }
        Ok(())
    }
    pub fn into_inner(self) -> T {
        self.buffer
    }
    pub fn mode(&self) -> WireMode {
        self.mode
    }
    get!(dst_endpoint, u8, pull_default::DST_EP);
    get!(src_endpoint, u8, pull_default::SRC_EP);
    get!(src_generation, u8, pull_default::SRC_GEN);
    get!(session, u32, pull_default::SESSION);
    get!(total_length, u32, pull_default::TOTAL_LENGTH);

    /// Reads a field whose place and width depend on the mode.
    fn wide(&self, default: core::ops::Range<usize>, compat: core::ops::Range<usize>) -> u32 {
        let b = self.buffer.as_ref();
        match self.mode {
            WireMode::Default => be32(&b[default]),
            WireMode::MxCompat => be16(&b[compat]) as u32,
        }
    }
    pub fn rdma_id(&self) -> u32 {
        let b = self.buffer.as_ref();
        match self.mode {
            WireMode::Default => be32(&b[pull_default::RDMA_ID]),
            WireMode::MxCompat => b[pull_compat::RDMA_ID] as u32,
        }
    }
    pub fn rdma_seqnum(&self) -> u8 {
        let b = self.buffer.as_ref();
        match self.mode {
            WireMode::Default => b[pull_default::RDMA_SEQNUM],
            WireMode::MxCompat => b[pull_compat::RDMA_SEQNUM],
        }
    }
    pub fn rdma_offset(&self) -> u32 {
        self.wide(pull_default::RDMA_OFFSET, pull_compat::RDMA_OFFSET)
    }
    pub fn src_pull_handle(&self) -> u32 {
        let b = self.buffer.as_ref();
        match self.mode {
            WireMode::Default => be32(&b[pull_default::SRC_PULL_HANDLE]),
            WireMode::MxCompat => be32(&b[pull_compat::SRC_PULL_HANDLE]),
        }
    }
    pub fn src_magic(&self) -> u32 {
        let b = self.buffer.as_ref();
        match self.mode {
            WireMode::Default => be32(&b[pull_default::SRC_MAGIC]),
            WireMode::MxCompat => be32(&b[pull_compat::SRC_MAGIC]),
        }
    }
    pub fn first_frame_offset(&self) -> u32 {
        self.wide(
            pull_default::FIRST_FRAME_OFFSET,
            pull_compat::FIRST_FRAME_OFFSET,
        )
    }
    pub fn block_length(&self) -> u32 {
        self.wide(pull_default::BLOCK_LENGTH, pull_compat::BLOCK_LENGTH)
    }
    pub fn frame_index(&self) -> u32 {
        let b = self.buffer.as_ref();
        match self.mode {
            WireMode::Default => be32(&b[pull_default::FRAME_INDEX]),
            WireMode::MxCompat => be32(&b[pull_compat::FRAME_INDEX]),
        }
    }
}

/// A PULL, parsed: asks the sender for `block_length` bytes of its window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PullRepr {
    pub dst_endpoint: u8,
    pub src_endpoint: u8,
    pub src_generation: u8,
    pub session: u32,
    /// The whole pull's length (every block of it), not this block's.
    pub total_length: u32,
    /// 8 bits wide in compat mode.
    pub rdma_id: u32,
    pub rdma_seqnum: u8,
    /// 16 bits wide in compat mode.
    pub rdma_offset: u32,
    /// The puller's handle, echoed in each reply's `dst_pull_handle`.
    pub src_pull_handle: u32,
    /// The puller's endpoint magic ([`pull_magic`]), echoed in each reply's `dst_magic`.
    pub src_magic: u32,
    /// 16 bits wide in compat mode.
    pub first_frame_offset: u32,
    /// 16 bits wide in compat mode.
    pub block_length: u32,
    pub frame_index: u32,
}

impl PullRepr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &PullPacket<&T>) -> Result<PullRepr, Error> {
        Ok(PullRepr {
            dst_endpoint: p.dst_endpoint(),
            src_endpoint: p.src_endpoint(),
            src_generation: p.src_generation(),
            session: p.session(),
            total_length: p.total_length(),
            rdma_id: p.rdma_id(),
            rdma_seqnum: p.rdma_seqnum(),
            rdma_offset: p.rdma_offset(),
            src_pull_handle: p.src_pull_handle(),
            src_magic: p.src_magic(),
            first_frame_offset: p.first_frame_offset(),
            block_length: p.block_length(),
            frame_index: p.frame_index(),
        })
    }
    pub fn buffer_len(&self, mode: WireMode) -> usize {
        pull_len(mode)
    }
    /// Writes the body; returns its length. In compat mode, refuses values wider than
    /// their field.
    pub fn emit(&self, buf: &mut [u8], mode: WireMode) -> Result<usize, Error> {
        let n = pull_len(mode);
        room(buf.len(), n)?;
        let b = &mut buf[..n];
        b.fill(0);
        b[pull_default::PTYPE] = PacketType::Pull as u8;
        b[pull_default::DST_EP] = self.dst_endpoint;
        b[pull_default::SRC_EP] = self.src_endpoint;
        b[pull_default::SRC_GEN] = self.src_generation;
        b[pull_default::SESSION].copy_from_slice(&self.session.to_be_bytes());
        b[pull_default::TOTAL_LENGTH].copy_from_slice(&self.total_length.to_be_bytes());
        match mode {
            WireMode::Default => {
                use pull_default as f;
                b[f::RDMA_ID].copy_from_slice(&self.rdma_id.to_be_bytes());
                b[f::RDMA_SEQNUM] = self.rdma_seqnum;
                b[f::RDMA_OFFSET].copy_from_slice(&self.rdma_offset.to_be_bytes());
                b[f::SRC_PULL_HANDLE].copy_from_slice(&self.src_pull_handle.to_be_bytes());
                b[f::SRC_MAGIC].copy_from_slice(&self.src_magic.to_be_bytes());
                b[f::FIRST_FRAME_OFFSET].copy_from_slice(&self.first_frame_offset.to_be_bytes());
                b[f::BLOCK_LENGTH].copy_from_slice(&self.block_length.to_be_bytes());
                b[f::FRAME_INDEX].copy_from_slice(&self.frame_index.to_be_bytes());
            }
            WireMode::MxCompat => {
                use pull_compat as f;
                let narrow = |v: u32, what| u16::try_from(v).map_err(|_| Error::Field(what));
                b[f::RDMA_ID] = u8::try_from(self.rdma_id)
                    .map_err(|_| Error::Field("pull rdma_id wider than 8 bits"))?;
                b[f::RDMA_SEQNUM] = self.rdma_seqnum;
                let off = narrow(self.rdma_offset, "pull rdma_offset wider than 16 bits")?;
                b[f::RDMA_OFFSET].copy_from_slice(&off.to_be_bytes());
                b[f::SRC_PULL_HANDLE].copy_from_slice(&self.src_pull_handle.to_be_bytes());
                b[f::SRC_MAGIC].copy_from_slice(&self.src_magic.to_be_bytes());
                let ffo = narrow(
                    self.first_frame_offset,
                    "pull first_frame_offset wider than 16 bits",
                )?;
                b[f::FIRST_FRAME_OFFSET].copy_from_slice(&ffo.to_be_bytes());
                let bl = narrow(self.block_length, "pull block_length wider than 16 bits")?;
                b[f::BLOCK_LENGTH].copy_from_slice(&bl.to_be_bytes());
                b[f::FRAME_INDEX].copy_from_slice(&self.frame_index.to_be_bytes());
            }
        }
        Ok(n)
    }
}

view!(
    /// A view of a PULL_REPLY body. After `new_checked` no accessor panics.
    PullReplyPacket
);

impl<T: AsRef<[u8]>> PullReplyPacket<T> {
    /// Checks the type and that the buffer holds `frame_length` bytes of data.
    pub fn new_checked(buffer: T) -> Result<PullReplyPacket<T>, Error> {
        let p = PullReplyPacket { buffer };
        p.check()?;
        Ok(p)
    }
    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        need(b.len(), pull_reply_field::END)?;
        if b[pull_reply_field::PTYPE] != PacketType::PullReply as u8 {
            return Err(Error::Field("not PULL_REPLY"));
        }
        need(
            b.len(),
            pull_reply_field::END + self.frame_length() as usize,
        )
    }
    get!(frame_seqnum, u8, pull_reply_field::FRAME_SEQNUM);
    get!(frame_length, u16, pull_reply_field::FRAME_LENGTH);
    get!(msg_offset, u32, pull_reply_field::MSG_OFFSET);
    get!(dst_pull_handle, u32, pull_reply_field::DST_PULL_HANDLE);
    get!(dst_magic, u32, pull_reply_field::DST_MAGIC);
    /// The frame's data (padding excluded).
    pub fn payload(&self) -> &[u8] {
        let end = pull_reply_field::END + self.frame_length() as usize;
        &self.buffer.as_ref()[pull_reply_field::END..end]
    }
}

/// A PULL_REPLY, parsed: `data` goes at `msg_offset` in the puller's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PullReplyRepr<'a> {
    pub frame_seqnum: u8,
    pub msg_offset: u32,
    pub dst_pull_handle: u32,
    pub dst_magic: u32,
    pub data: &'a [u8],
}

impl<'a> PullReplyRepr<'a> {
    /// Also refuses more data than a reply carries in `mode`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(
        p: &PullReplyPacket<&'a T>,
        mode: WireMode,
    ) -> Result<PullReplyRepr<'a>, Error> {
        let b = T::as_ref(p.buffer);
        let end = pull_reply_field::END + p.frame_length() as usize;
        if p.frame_length() as usize > mode.pull_reply_max() {
            return Err(Error::Field("pull reply longer than the mode allows"));
        }
        Ok(PullReplyRepr {
            frame_seqnum: p.frame_seqnum(),
            msg_offset: p.msg_offset(),
            dst_pull_handle: p.dst_pull_handle(),
            dst_magic: p.dst_magic(),
            data: &b[pull_reply_field::END..end],
        })
    }
    pub fn buffer_len(&self) -> usize {
        PULL_REPLY_LEN + self.data.len()
    }
    /// Writes the body; returns its length.
    pub fn emit(&self, buf: &mut [u8], mode: WireMode) -> Result<usize, Error> {
        if self.data.len() > mode.pull_reply_max() {
            return Err(Error::Field("pull reply longer than the mode allows"));
        }
        let n = self.buffer_len();
        room(buf.len(), n)?;
        use pull_reply_field as f;
        buf[f::PTYPE] = PacketType::PullReply as u8;
        buf[f::FRAME_SEQNUM] = self.frame_seqnum;
        buf[f::FRAME_LENGTH].copy_from_slice(&(self.data.len() as u16).to_be_bytes());
        buf[f::MSG_OFFSET].copy_from_slice(&self.msg_offset.to_be_bytes());
        buf[f::DST_PULL_HANDLE].copy_from_slice(&self.dst_pull_handle.to_be_bytes());
        buf[f::DST_MAGIC].copy_from_slice(&self.dst_magic.to_be_bytes());
        buf[f::END..n].copy_from_slice(self.data);
        Ok(n)
    }
}

view!(
    /// A view of a NOTIFY body. After `new_checked` no accessor panics.
    NotifyPacket
);

impl<T: AsRef<[u8]>> NotifyPacket<T> {
    pub fn new_checked(buffer: T) -> Result<NotifyPacket<T>, Error> {
        let p = NotifyPacket { buffer };
        p.check()?;
        Ok(p)
    }
    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        need(b.len(), notify_field::END)?;
        if b[notify_field::PTYPE] != PacketType::Notify as u8 {
            return Err(Error::Field("not NOTIFY"));
        }
        Ok(())
    }
    get!(dst_endpoint, u8, notify_field::DST_EP);
    get!(src_endpoint, u8, notify_field::SRC_EP);
    get!(src_generation, u8, notify_field::SRC_GEN);
    get!(session, u32, notify_field::SESSION);
    get!(total_length, u32, notify_field::TOTAL_LENGTH);
    get!(rdma_id, u8, notify_field::RDMA_ID);
    get!(rdma_seqnum, u8, notify_field::RDMA_SEQNUM);
    get!(lib_seqnum, u16, notify_field::LIB_SEQNUM);
    get!(lib_piggyack, u16, notify_field::LIB_PIGGYACK);
}

/// A NOTIFY, parsed: the pull of the sender's window `rdma_id` is done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NotifyRepr {
    pub dst_endpoint: u8,
    pub src_endpoint: u8,
    pub src_generation: u8,
    pub session: u32,
    pub total_length: u32,
    pub rdma_id: u8,
    pub rdma_seqnum: u8,
    pub lib_seqnum: u16,
    pub lib_piggyack: u16,
}

impl NotifyRepr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &NotifyPacket<&T>) -> Result<NotifyRepr, Error> {
        Ok(NotifyRepr {
            dst_endpoint: p.dst_endpoint(),
            src_endpoint: p.src_endpoint(),
            src_generation: p.src_generation(),
            session: p.session(),
            total_length: p.total_length(),
            rdma_id: p.rdma_id(),
            rdma_seqnum: p.rdma_seqnum(),
            lib_seqnum: p.lib_seqnum(),
            lib_piggyack: p.lib_piggyack(),
        })
    }
    pub fn buffer_len(&self) -> usize {
        NOTIFY_LEN
    }
    /// Writes the body; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, Error> {
        room(buf.len(), NOTIFY_LEN)?;
        use notify_field as f;
        let b = &mut buf[..NOTIFY_LEN];
        b.fill(0);
        b[f::PTYPE] = PacketType::Notify as u8;
        b[f::DST_EP] = self.dst_endpoint;
        b[f::SRC_EP] = self.src_endpoint;
        b[f::SRC_GEN] = self.src_generation;
        b[f::SESSION].copy_from_slice(&self.session.to_be_bytes());
        b[f::TOTAL_LENGTH].copy_from_slice(&self.total_length.to_be_bytes());
        b[f::RDMA_ID] = self.rdma_id;
        b[f::RDMA_SEQNUM] = self.rdma_seqnum;
        b[f::LIB_SEQNUM].copy_from_slice(&self.lib_seqnum.to_be_bytes());
        b[f::LIB_PIGGYACK].copy_from_slice(&self.lib_piggyack.to_be_bytes());
        Ok(NOTIFY_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::frame;
    use super::super::*;
    use super::*;

    fn pull(mode: WireMode) -> PullRepr {
        let wide = mode == WireMode::Default;
        PullRepr {
            dst_endpoint: 0x07,
            src_endpoint: 0x09,
            src_generation: 0x0b,
            session: 0xdead_beef,
            total_length: 0x0102_0304,
            rdma_id: if wide { 0x1112_1314 } else { 0x11 },
            rdma_seqnum: 0x15,
            rdma_offset: if wide { 0x2122_2324 } else { 0x2324 },
            src_pull_handle: 0x3132_3334,
            src_magic: 0x4142_4344,
            first_frame_offset: if wide { 0x5152_5354 } else { 0x5354 },
            block_length: if wide { 0x6162_6364 } else { 0x6364 },
            frame_index: 0x7172_7374,
        }
    }

    #[test]
    fn pull_default_offsets() {
        let b = frame(Body::Pull(pull(WireMode::Default)), WireMode::Default);
        assert_eq!(b.len(), 16 + 44);
        assert_eq!(&b[16..20], &[41, 0x07, 0x09, 0x0b]);
        assert_eq!(&b[20..24], &[0xde, 0xad, 0xbe, 0xef], "session");
        assert_eq!(&b[24..28], &[1, 2, 3, 4], "total_length");
        assert_eq!(&b[28..32], &[0x11, 0x12, 0x13, 0x14], "rdma_id");
        assert_eq!(&b[32..36], &[0x15, 0, 0, 0], "rdma_seqnum and padding");
        assert_eq!(&b[36..40], &[0x21, 0x22, 0x23, 0x24], "rdma_offset");
        assert_eq!(&b[40..44], &[0x31, 0x32, 0x33, 0x34], "src_pull_handle");
        assert_eq!(&b[44..48], &[0x41, 0x42, 0x43, 0x44], "src_magic");
        assert_eq!(&b[48..52], &[0x51, 0x52, 0x53, 0x54], "first_frame_offset");
        assert_eq!(&b[52..56], &[0x61, 0x62, 0x63, 0x64], "block_length");
        assert_eq!(&b[56..60], &[0x71, 0x72, 0x73, 0x74], "frame_index");
        // The same bytes are too short for... nothing: a compat parser reads 32 of them,
        // but a default parser refuses a compat-sized pull.
        let c = frame(Body::Pull(pull(WireMode::MxCompat)), WireMode::MxCompat);
        assert!(matches!(
            PullPacket::new_checked(&c[16..16 + 32], WireMode::Default),
            Err(Error::Truncated { .. })
        ));
    }

    #[test]
    fn pull_compat_offsets() {
        let b = frame(Body::Pull(pull(WireMode::MxCompat)), WireMode::MxCompat);
        assert_eq!(b.len(), 60, "16 + 32, padded");
        assert_eq!(&b[16..20], &[41, 0x07, 0x09, 0x0b]);
        assert_eq!(&b[20..24], &[0xde, 0xad, 0xbe, 0xef], "session");
        assert_eq!(&b[24..28], &[1, 2, 3, 4], "total_length");
        assert_eq!(
            &b[28..32],
            &[0x11, 0x15, 0x23, 0x24],
            "rdma id, seqnum, offset"
        );
        assert_eq!(&b[32..36], &[0x31, 0x32, 0x33, 0x34], "src_pull_handle");
        assert_eq!(&b[36..40], &[0x41, 0x42, 0x43, 0x44], "src_magic");
        assert_eq!(
            &b[40..44],
            &[0x53, 0x54, 0x63, 0x64],
            "first offset, block length"
        );
        assert_eq!(&b[44..48], &[0x71, 0x72, 0x73, 0x74], "frame_index");
        let mut buf = [0u8; 64];
        for r in [
            PullRepr {
                rdma_id: 256,
                ..pull(WireMode::MxCompat)
            },
            PullRepr {
                rdma_offset: 0x1_0000,
                ..pull(WireMode::MxCompat)
            },
            PullRepr {
                first_frame_offset: 0x1_0000,
                ..pull(WireMode::MxCompat)
            },
            PullRepr {
                block_length: 0x1_0000,
                ..pull(WireMode::MxCompat)
            },
        ] {
            assert!(matches!(
                r.emit(&mut buf, WireMode::MxCompat),
                Err(Error::Field(_))
            ));
            assert!(r.emit(&mut buf, WireMode::Default).is_ok());
        }
    }

    #[test]
    fn pull_reply_offsets() {
        let data = [0x77u8; 40];
        let r = PullReplyRepr {
            frame_seqnum: 0x81,
            msg_offset: 0x0a0b_0c0d,
            dst_pull_handle: 0x3132_3334,
            dst_magic: 0x4142_4344,
            data: &data,
        };
        let b = frame(Body::PullReply(r), WireMode::Default);
        assert_eq!(b.len(), 16 + 16 + 40);
        assert_eq!(
            &b[16..20],
            &[42, 0x81, 0, 40],
            "ptype, frame_seqnum, frame_length"
        );
        assert_eq!(&b[20..24], &[0x0a, 0x0b, 0x0c, 0x0d], "msg_offset");
        assert_eq!(&b[24..28], &[0x31, 0x32, 0x33, 0x34], "dst_pull_handle");
        assert_eq!(&b[28..32], &[0x41, 0x42, 0x43, 0x44], "dst_magic");
        assert_eq!(&b[32..72], &data[..], "data at body offset 16");
        // The largest reply of each mode, and one byte more.
        let big = vec![1u8; 8969];
        let mut buf = vec![0u8; 9100];
        for (m, max) in [(WireMode::Default, 8968), (WireMode::MxCompat, 4096)] {
            let ok = PullReplyRepr {
                data: &big[..max],
                ..r
            };
            assert_eq!(ok.emit(&mut buf, m), Ok(16 + max));
            let too = PullReplyRepr {
                data: &big[..max + 1],
                ..r
            };
            assert!(too.emit(&mut buf, m).is_err());
        }
        let b = frame(
            Body::PullReply(PullReplyRepr {
                data: &big[..4097],
                ..r
            }),
            WireMode::Default,
        );
        assert!(matches!(
            Repr::parse_bytes(&b, WireMode::MxCompat),
            Err(Error::Field(_))
        ));
    }

    #[test]
    fn notify_offsets() {
        let r = NotifyRepr {
            dst_endpoint: 0x07,
            src_endpoint: 0x09,
            src_generation: 0x0b,
            session: 0xdead_beef,
            total_length: 0x0102_0304,
            rdma_id: 0x11,
            rdma_seqnum: 0x12,
            lib_seqnum: 0x8123,
            lib_piggyack: 0x4567,
        };
        let b = frame(Body::Notify(r), WireMode::Default);
        assert_eq!(b.len(), 60);
        assert_eq!(&b[16..20], &[43, 0x07, 0x09, 0x0b]);
        assert_eq!(&b[20..24], &[0xde, 0xad, 0xbe, 0xef], "session");
        assert_eq!(&b[24..28], &[1, 2, 3, 4], "total_length");
        assert_eq!(
            &b[28..34],
            &[0x11, 0x12, 0, 0, 0, 0],
            "rdma id, seqnum, padding"
        );
        assert_eq!(
            &b[34..38],
            &[0x81, 0x23, 0x45, 0x67],
            "lib_seqnum, lib_piggyack"
        );
        assert_eq!(&b[38..40], &[0, 0]);
    }
}
