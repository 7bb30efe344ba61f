//! The control layouts: CONNECT (request and reply share 32 bytes; `is_reply` tells
//! them apart), TRUC (library-level messages; only the explicit ack, "liback", exists),
//! NACK_LIB and NACK_MCP (refusals from a receiver's library or driver), and
//! HOST_QUERY/HOST_REPLY (asking a peer's driver for its hostname).
//!
//! Offsets are from the body's start (frame offset 16). This module must never decide
//! whether a connect is accepted or an ack is new: it only reads and writes fields.

use super::{need, room, Error, NackType, PacketType};

/// Bytes of a CONNECT body.
pub const CONNECT_LEN: usize = connect_field::END;
/// The `length` a CONNECT carries: its request/reply data after the first 16 bytes.
pub const CONNECT_DATA_LEN: u8 = 16;
/// `status` of a connect reply: accepted.
pub const CONNECT_STATUS_SUCCESS: u8 = 0;
/// `status` of a connect reply: the application key did not match (MX's code).
pub const CONNECT_STATUS_BAD_KEY: u8 = 11;
/// Bytes of a TRUC body.
pub const TRUC_LEN: usize = truc_field::END;
/// The `length` a TRUC carries: its liback data.
pub const TRUC_LIBACK_DATA_LEN: u8 = 16;
/// TRUC `type` of an explicit library ack.
pub const TRUC_TYPE_ACK: u8 = 0x55;
/// Bytes of a NACK_LIB or NACK_MCP body.
pub const NACK_LEN: usize = nack_lib_field::END;
/// Bytes of a HOST_QUERY/HOST_REPLY header; a reply's hostname follows.
pub const HOST_LEN: usize = host_field::END;
/// Longest hostname a reply carries (its length byte counts the NUL too).
pub const HOSTNAME_MAX: usize = 254;

/// `struct omx_pkt_connect`.
pub(crate) mod connect_field {
    use core::ops::Range;
    pub const PTYPE: usize = 0;
    pub const DST_EP: usize = 1;
    pub const SRC_EP: usize = 2;
    pub const SRC_GEN: usize = 3;
    pub const LENGTH: usize = 4;
    pub const LIB_SEQNUM: Range<usize> = 8..10;
    /// The index the sender gave the receiver: what the receiver puts in its heads.
    pub const SRC_DST_PEER_INDEX: Range<usize> = 10..12;
    pub const SRC_SESSION_ID: Range<usize> = 16..20;
    /// Request only.
    pub const APP_KEY: Range<usize> = 20..24;
    /// Reply only.
    pub const TARGET_SESSION_ID: Range<usize> = 20..24;
    pub const TARGET_RECV_SEQNUM_START: Range<usize> = 24..26;
    pub const IS_REPLY: usize = 26;
    pub const CONNECT_SEQNUM: usize = 27;
    /// Reply only.
    pub const STATUS: usize = 28;
    pub const END: usize = 32;
}

/// `struct omx_pkt_truc` with its liback data.
pub(crate) mod truc_field {
    use core::ops::Range;
    pub const PTYPE: usize = 0;
    pub const DST_EP: usize = 1;
    pub const SRC_EP: usize = 2;
    pub const SRC_GEN: usize = 3;
    pub const LENGTH: usize = 4;
    pub const SESSION: Range<usize> = 8..12;
    pub const TYPE: usize = 12;
    /// Acknowledges everything below it.
    pub const LIB_SEQNUM: Range<usize> = 14..16;
    pub const SESSION_ID: Range<usize> = 16..20;
    /// Per-partner counter, incremented on each ack sent.
    pub const ACKNUM: Range<usize> = 20..24;
    pub const SEND_SEQ: Range<usize> = 24..26;
    pub const RESENT: usize = 26;
    pub const END: usize = 28;
}

/// `struct omx_pkt_nack_lib`.
pub(crate) mod nack_lib_field {
    use core::ops::Range;
    pub const PTYPE: usize = 0;
    pub const SRC_EP: usize = 1;
    pub const SRC_GEN: usize = 2;
    pub const NACK_TYPE: usize = 3;
    pub const DST_EP: usize = 9;
    pub const DST_SRC_PEER_INDEX: Range<usize> = 10..12;
    pub const LIB_SEQNUM: Range<usize> = 12..14;
    pub const END: usize = 16;
}

/// `struct omx_pkt_nack_mcp`.
pub(crate) mod nack_mcp_field {
    pub use super::nack_lib_field::{NACK_TYPE, PTYPE, SRC_EP, SRC_GEN};
    use core::ops::Range;
    pub const SRC_PULL_HANDLE: Range<usize> = 8..12;
    pub const SRC_MAGIC: Range<usize> = 12..16;
    pub const END: usize = 16;
}

/// `struct omx_pkt_host_query` and `struct omx_pkt_host_reply`; a reply's
/// NUL-terminated hostname follows at [`HOST_LEN`].
pub(crate) mod host_field {
    use core::ops::Range;
    pub const PTYPE: usize = 0;
    /// Reply only: hostname bytes including the NUL. Padding in a query.
    pub const LENGTH: usize = 1;
    pub const SRC_DST_PEER_INDEX: Range<usize> = 2..4;
    /// The reply echoes the query's.
    pub const MAGIC: Range<usize> = 8..12;
    pub const END: usize = 16;
}

/// `Err(Field)` unless `b[at]` is `want`.
fn ptype_is(b: &[u8], at: usize, want: PacketType, what: &'static str) -> Result<(), Error> {
    if b[at] != want as u8 {
        return Err(Error::Field(what));
    }
    Ok(())
}

view!(
    /// A view of a CONNECT body. After `new_checked` no accessor panics.
    ConnectPacket
);

impl<T: AsRef<[u8]>> ConnectPacket<T> {
    /// Checks the type and length, and that `is_reply` is 0 or 1.
    pub fn new_checked(buffer: T) -> Result<ConnectPacket<T>, Error> {
        let p = ConnectPacket { buffer };
        p.check()?;
        Ok(p)
    }
    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        need(b.len(), connect_field::END)?;
        ptype_is(b, connect_field::PTYPE, PacketType::Connect, "not CONNECT")?;
        if b[connect_field::IS_REPLY] > 1 {
            return Err(Error::Field("connect is_reply neither 0 nor 1"));
        }
        Ok(())
    }
    get!(dst_endpoint, u8, connect_field::DST_EP);
    get!(src_endpoint, u8, connect_field::SRC_EP);
    get!(src_generation, u8, connect_field::SRC_GEN);
    get!(
        /// [`CONNECT_DATA_LEN`] from Open-MX; not checked.
        length,
        u8,
        connect_field::LENGTH
    );
    get!(lib_seqnum, u16, connect_field::LIB_SEQNUM);
    get!(src_dst_peer_index, u16, connect_field::SRC_DST_PEER_INDEX);
    get!(src_session_id, u32, connect_field::SRC_SESSION_ID);
    get!(app_key, u32, connect_field::APP_KEY);
    get!(target_session_id, u32, connect_field::TARGET_SESSION_ID);
    get!(
        target_recv_seqnum_start,
        u16,
        connect_field::TARGET_RECV_SEQNUM_START
    );
    pub fn is_reply(&self) -> bool {
        self.buffer.as_ref()[connect_field::IS_REPLY] == 1
    }
    get!(connect_seqnum, u8, connect_field::CONNECT_SEQNUM);
    get!(status, u8, connect_field::STATUS);
}

/// What differs between a connect request and its reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectKind {
    Request {
        /// The key the target checks against its own.
        app_key: u32,
    },
    Reply {
        /// The target's session id: the connecter puts it in every `session` field.
        target_session_id: u32,
        /// [`CONNECT_STATUS_SUCCESS`] or [`CONNECT_STATUS_BAD_KEY`].
        status: u8,
    },
}

/// A CONNECT request or reply, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectRepr {
    pub dst_endpoint: u8,
    pub src_endpoint: u8,
    pub src_generation: u8,
    pub lib_seqnum: u16,
    pub src_dst_peer_index: u16,
    pub src_session_id: u32,
    pub target_recv_seqnum_start: u16,
    /// Which attempt this is (or answers), in case some were lost.
    pub connect_seqnum: u8,
    pub kind: ConnectKind,
}

impl ConnectRepr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &ConnectPacket<&T>) -> Result<ConnectRepr, Error> {
        Ok(ConnectRepr {
            dst_endpoint: p.dst_endpoint(),
            src_endpoint: p.src_endpoint(),
            src_generation: p.src_generation(),
            lib_seqnum: p.lib_seqnum(),
            src_dst_peer_index: p.src_dst_peer_index(),
            src_session_id: p.src_session_id(),
            target_recv_seqnum_start: p.target_recv_seqnum_start(),
            connect_seqnum: p.connect_seqnum(),
            kind: if p.is_reply() {
                ConnectKind::Reply {
                    target_session_id: p.target_session_id(),
                    status: p.status(),
                }
            } else {
                ConnectKind::Request {
                    app_key: p.app_key(),
                }
            },
        })
    }
    pub fn buffer_len(&self) -> usize {
        CONNECT_LEN
    }
    /// Writes the body; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, Error> {
        room(buf.len(), CONNECT_LEN)?;
        use connect_field as f;
        let b = &mut buf[..CONNECT_LEN];
        b.fill(0);
        b[f::PTYPE] = PacketType::Connect as u8;
        b[f::DST_EP] = self.dst_endpoint;
        b[f::SRC_EP] = self.src_endpoint;
        b[f::SRC_GEN] = self.src_generation;
        b[f::LENGTH] = CONNECT_DATA_LEN;
        b[f::LIB_SEQNUM].copy_from_slice(&self.lib_seqnum.to_be_bytes());
        b[f::SRC_DST_PEER_INDEX].copy_from_slice(&self.src_dst_peer_index.to_be_bytes());
        b[f::SRC_SESSION_ID].copy_from_slice(&self.src_session_id.to_be_bytes());
        b[f::TARGET_RECV_SEQNUM_START]
            .copy_from_slice(&self.target_recv_seqnum_start.to_be_bytes());
        b[f::CONNECT_SEQNUM] = self.connect_seqnum;
        match self.kind {
            ConnectKind::Request { app_key } => {
                b[f::APP_KEY].copy_from_slice(&app_key.to_be_bytes());
                b[f::IS_REPLY] = 0;
            }
            ConnectKind::Reply {
                target_session_id,
                status,
            } => {
                b[f::TARGET_SESSION_ID].copy_from_slice(&target_session_id.to_be_bytes());
                b[f::IS_REPLY] = 1;
                b[f::STATUS] = status;
            }
        }
        Ok(CONNECT_LEN)
    }
}

view!(
    /// A view of a TRUC body. After `new_checked` no accessor panics.
    TrucPacket
);

impl<T: AsRef<[u8]>> TrucPacket<T> {
    /// Checks the type and length, and that the data is a liback (the one TRUC type).
    pub fn new_checked(buffer: T) -> Result<TrucPacket<T>, Error> {
        let p = TrucPacket { buffer };
        p.check()?;
        Ok(p)
    }
    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        need(b.len(), truc_field::END)?;
        ptype_is(b, truc_field::PTYPE, PacketType::Truc, "not TRUC")?;
        if b[truc_field::TYPE] != TRUC_TYPE_ACK {
            return Err(Error::Field("unknown TRUC data type"));
        }
        Ok(())
    }
    get!(dst_endpoint, u8, truc_field::DST_EP);
    get!(src_endpoint, u8, truc_field::SRC_EP);
    get!(src_generation, u8, truc_field::SRC_GEN);
    get!(
        /// [`TRUC_LIBACK_DATA_LEN`] from Open-MX; not checked.
        length,
        u8,
        truc_field::LENGTH
    );
    get!(session, u32, truc_field::SESSION);
    get!(data_type, u8, truc_field::TYPE);
    get!(lib_seqnum, u16, truc_field::LIB_SEQNUM);
    get!(session_id, u32, truc_field::SESSION_ID);
    get!(acknum, u32, truc_field::ACKNUM);
    get!(send_seq, u16, truc_field::SEND_SEQ);
    get!(resent, u8, truc_field::RESENT);
}

/// A TRUC liback, parsed: an explicit acknowledgement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrucRepr {
    pub dst_endpoint: u8,
    pub src_endpoint: u8,
    pub src_generation: u8,
    pub session: u32,
    /// Everything below it is acknowledged.
    pub lib_seqnum: u16,
    pub session_id: u32,
    /// Orders acks to one partner: a stale one (lower) is ignored.
    pub acknum: u32,
    pub send_seq: u16,
    pub resent: u8,
}

impl TrucRepr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &TrucPacket<&T>) -> Result<TrucRepr, Error> {
        Ok(TrucRepr {
            dst_endpoint: p.dst_endpoint(),
            src_endpoint: p.src_endpoint(),
            src_generation: p.src_generation(),
            session: p.session(),
            lib_seqnum: p.lib_seqnum(),
            session_id: p.session_id(),
            acknum: p.acknum(),
            send_seq: p.send_seq(),
            resent: p.resent(),
        })
    }
    pub fn buffer_len(&self) -> usize {
        TRUC_LEN
    }
    /// Writes the body; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, Error> {
        room(buf.len(), TRUC_LEN)?;
        use truc_field as f;
        let b = &mut buf[..TRUC_LEN];
        b.fill(0);
        b[f::PTYPE] = PacketType::Truc as u8;
        b[f::DST_EP] = self.dst_endpoint;
        b[f::SRC_EP] = self.src_endpoint;
        b[f::SRC_GEN] = self.src_generation;
        b[f::LENGTH] = TRUC_LIBACK_DATA_LEN;
        b[f::SESSION].copy_from_slice(&self.session.to_be_bytes());
        b[f::TYPE] = TRUC_TYPE_ACK;
        b[f::LIB_SEQNUM].copy_from_slice(&self.lib_seqnum.to_be_bytes());
        b[f::SESSION_ID].copy_from_slice(&self.session_id.to_be_bytes());
        b[f::ACKNUM].copy_from_slice(&self.acknum.to_be_bytes());
        b[f::SEND_SEQ].copy_from_slice(&self.send_seq.to_be_bytes());
        b[f::RESENT] = self.resent;
        Ok(TRUC_LEN)
    }
}

/// Reads a NACK's reason.
fn nack_type(b: &[u8]) -> Result<NackType, Error> {
    NackType::from_u8(b[nack_lib_field::NACK_TYPE]).ok_or(Error::Field("unknown NACK type"))
}

view!(
    /// A view of a NACK_LIB body. After `new_checked` no accessor panics.
    NackLibPacket
);

impl<T: AsRef<[u8]>> NackLibPacket<T> {
    /// Checks the type, the length and the reason.
    pub fn new_checked(buffer: T) -> Result<NackLibPacket<T>, Error> {
        let p = NackLibPacket { buffer };
        p.check()?;
        Ok(p)
    }
    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        need(b.len(), nack_lib_field::END)?;
        ptype_is(
            b,
            nack_lib_field::PTYPE,
            PacketType::NackLib,
            "not NACK_LIB",
        )?;
        nack_type(b).map(|_| ())
    }
    get!(src_endpoint, u8, nack_lib_field::SRC_EP);
    get!(src_generation, u8, nack_lib_field::SRC_GEN);
    /// The reason (an unchecked view of an unknown code reads as `None`).
    pub fn nack_type(&self) -> NackType {
        nack_type(self.buffer.as_ref()).unwrap_or(NackType::None)
    }
    get!(dst_endpoint, u8, nack_lib_field::DST_EP);
    get!(dst_src_peer_index, u16, nack_lib_field::DST_SRC_PEER_INDEX);
    get!(lib_seqnum, u16, nack_lib_field::LIB_SEQNUM);
}

/// A NACK_LIB, parsed: the packet `lib_seqnum` was refused for `nack_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NackLibRepr {
    pub src_endpoint: u8,
    pub src_generation: u8,
    pub nack_type: NackType,
    pub dst_endpoint: u8,
    pub dst_src_peer_index: u16,
    pub lib_seqnum: u16,
}

impl NackLibRepr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &NackLibPacket<&T>) -> Result<NackLibRepr, Error> {
        Ok(NackLibRepr {
            src_endpoint: p.src_endpoint(),
            src_generation: p.src_generation(),
            nack_type: nack_type(T::as_ref(p.buffer))?,
            dst_endpoint: p.dst_endpoint(),
            dst_src_peer_index: p.dst_src_peer_index(),
            lib_seqnum: p.lib_seqnum(),
        })
    }
    pub fn buffer_len(&self) -> usize {
        NACK_LEN
    }
    /// Writes the body; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, Error> {
        room(buf.len(), NACK_LEN)?;
        use nack_lib_field as f;
        let b = &mut buf[..NACK_LEN];
        b.fill(0);
        b[f::PTYPE] = PacketType::NackLib as u8;
        b[f::SRC_EP] = self.src_endpoint;
        b[f::SRC_GEN] = self.src_generation;
        b[f::NACK_TYPE] = self.nack_type as u8;
        b[f::DST_EP] = self.dst_endpoint;
        b[f::DST_SRC_PEER_INDEX].copy_from_slice(&self.dst_src_peer_index.to_be_bytes());
        b[f::LIB_SEQNUM].copy_from_slice(&self.lib_seqnum.to_be_bytes());
        Ok(NACK_LEN)
    }
}

view!(
    /// A view of a NACK_MCP body. After `new_checked` no accessor panics.
    NackMcpPacket
);

impl<T: AsRef<[u8]>> NackMcpPacket<T> {
    /// Checks the type, the length and the reason.
    pub fn new_checked(buffer: T) -> Result<NackMcpPacket<T>, Error> {
        let p = NackMcpPacket { buffer };
        p.check()?;
        Ok(p)
    }
    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        need(b.len(), nack_mcp_field::END)?;
        ptype_is(
            b,
            nack_mcp_field::PTYPE,
            PacketType::NackMcp,
            "not NACK_MCP",
        )?;
        nack_type(b).map(|_| ())
    }
    get!(src_endpoint, u8, nack_mcp_field::SRC_EP);
    get!(src_generation, u8, nack_mcp_field::SRC_GEN);
    /// The reason (an unchecked view of an unknown code reads as `None`).
    pub fn nack_type(&self) -> NackType {
        nack_type(self.buffer.as_ref()).unwrap_or(NackType::None)
    }
    get!(src_pull_handle, u32, nack_mcp_field::SRC_PULL_HANDLE);
    get!(src_magic, u32, nack_mcp_field::SRC_MAGIC);
}

/// A NACK_MCP, parsed: the driver refused the pull `src_pull_handle`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NackMcpRepr {
    pub src_endpoint: u8,
    pub src_generation: u8,
    pub nack_type: NackType,
    pub src_pull_handle: u32,
    pub src_magic: u32,
}

impl NackMcpRepr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &NackMcpPacket<&T>) -> Result<NackMcpRepr, Error> {
        Ok(NackMcpRepr {
            src_endpoint: p.src_endpoint(),
            src_generation: p.src_generation(),
            nack_type: nack_type(T::as_ref(p.buffer))?,
            src_pull_handle: p.src_pull_handle(),
            src_magic: p.src_magic(),
        })
    }
    pub fn buffer_len(&self) -> usize {
        NACK_LEN
    }
    /// Writes the body; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, Error> {
        room(buf.len(), NACK_LEN)?;
        use nack_mcp_field as f;
        let b = &mut buf[..NACK_LEN];
        b.fill(0);
        b[f::PTYPE] = PacketType::NackMcp as u8;
        b[f::SRC_EP] = self.src_endpoint;
        b[f::SRC_GEN] = self.src_generation;
        b[f::NACK_TYPE] = self.nack_type as u8;
        b[f::SRC_PULL_HANDLE].copy_from_slice(&self.src_pull_handle.to_be_bytes());
        b[f::SRC_MAGIC].copy_from_slice(&self.src_magic.to_be_bytes());
        Ok(NACK_LEN)
    }
}

view!(
    /// A view of a HOST_QUERY or HOST_REPLY body. After `new_checked` no accessor panics.
    HostPacket
);

impl<T: AsRef<[u8]>> HostPacket<T> {
    /// Checks the type and length; for a reply, that the hostname's length counts at
    /// least its NUL and fits the buffer.
    pub fn new_checked(buffer: T) -> Result<HostPacket<T>, Error> {
        let p = HostPacket { buffer };
        p.check()?;
        Ok(p)
    }
    pub fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        need(b.len(), host_field::END)?;
        match PacketType::from_u8(b[host_field::PTYPE]) {
            Some(PacketType::HostQuery) => Ok(()),
            Some(PacketType::HostReply) => {
                let len = b[host_field::LENGTH] as usize;
                if len == 0 {
                    return Err(Error::Field("host reply without its NUL"));
                }
                need(b.len(), host_field::END + len)
            }
            _ => Err(Error::Field("not HOST_QUERY/HOST_REPLY")),
        }
    }
    pub fn is_reply(&self) -> bool {
        self.buffer.as_ref()[host_field::PTYPE] == PacketType::HostReply as u8
    }
    get!(src_dst_peer_index, u16, host_field::SRC_DST_PEER_INDEX);
    get!(magic, u32, host_field::MAGIC);
    /// A reply's hostname without its terminator (whatever that last byte holds: the
    /// receiver overwrites it with NUL); `None` for a query.
    pub fn hostname(&self) -> Option<&[u8]> {
        if !self.is_reply() {
            return None;
        }
        let b = self.buffer.as_ref();
        let len = b[host_field::LENGTH] as usize;
        Some(&b[host_field::END..host_field::END + len.saturating_sub(1)])
    }
}

/// A HOST_QUERY (`hostname` is `None`) or HOST_REPLY, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostRepr<'a> {
    pub src_dst_peer_index: u16,
    /// Chosen by the querier, echoed by the replier.
    pub magic: u32,
    /// Without the NUL, at most [`HOSTNAME_MAX`] bytes.
    pub hostname: Option<&'a [u8]>,
}

impl<'a> HostRepr<'a> {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &HostPacket<&'a T>) -> Result<HostRepr<'a>, Error> {
        let b = T::as_ref(p.buffer);
        let hostname = if p.is_reply() {
            let len = b[host_field::LENGTH] as usize;
            Some(&b[host_field::END..host_field::END + len.saturating_sub(1)])
        } else {
            None
        };
        Ok(HostRepr {
            src_dst_peer_index: p.src_dst_peer_index(),
            magic: p.magic(),
            hostname,
        })
    }
    pub fn packet_type(&self) -> PacketType {
        match self.hostname {
            Some(_) => PacketType::HostReply,
            None => PacketType::HostQuery,
        }
    }
    pub fn buffer_len(&self) -> usize {
        HOST_LEN + self.hostname.map_or(0, |h| h.len() + 1)
    }
    /// Writes the body (a reply's hostname NUL-terminated); returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, Error> {
        if self.hostname.is_some_and(|h| h.len() > HOSTNAME_MAX) {
            return Err(Error::Field("hostname longer than 254 bytes"));
        }
        let n = self.buffer_len();
        room(buf.len(), n)?;
        use host_field as f;
        buf[..HOST_LEN].fill(0);
        buf[f::PTYPE] = self.packet_type() as u8;
        buf[f::SRC_DST_PEER_INDEX].copy_from_slice(&self.src_dst_peer_index.to_be_bytes());
        buf[f::MAGIC].copy_from_slice(&self.magic.to_be_bytes());
        if let Some(h) = self.hostname {
            buf[f::LENGTH] = (h.len() + 1) as u8;
            buf[f::END..n - 1].copy_from_slice(h);
            buf[n - 1] = 0;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::frame;
    use super::super::*;
    use super::*;

    fn connect(kind: ConnectKind) -> ConnectRepr {
        ConnectRepr {
            dst_endpoint: 0x07,
            src_endpoint: 0x09,
            src_generation: 0x0b,
            lib_seqnum: 0x8123,
            src_dst_peer_index: 0x4567,
            src_session_id: 0xdead_beef,
            target_recv_seqnum_start: 0x0a0b,
            connect_seqnum: 0x0c,
            kind,
        }
    }

    fn check_connect_common(b: &[u8]) {
        assert_eq!(b.len(), 16 + 32);
        assert_eq!(
            &b[16..21],
            &[36, 0x07, 0x09, 0x0b, 16],
            "hdr4 and data length"
        );
        assert_eq!(&b[21..24], &[0, 0, 0]);
        assert_eq!(
            &b[24..28],
            &[0x81, 0x23, 0x45, 0x67],
            "lib_seqnum, peer index"
        );
        assert_eq!(&b[28..32], &[0, 0, 0, 0]);
        assert_eq!(&b[32..36], &[0xde, 0xad, 0xbe, 0xef], "src_session_id");
        assert_eq!(&b[40..42], &[0x0a, 0x0b], "target_recv_seqnum_start");
        assert_eq!(b[43], 0x0c, "connect_seqnum");
    }

    #[test]
    fn connect_request_offsets() {
        let r = connect(ConnectKind::Request {
            app_key: 0x1122_3344,
        });
        // 48 bytes: padded to 60.
        let b = frame(Body::Connect(r), WireMode::Default);
        check_connect_common(&b[..48]);
        assert_eq!(b.len(), 60);
        assert_eq!(&b[36..40], &[0x11, 0x22, 0x33, 0x44], "app_key");
        assert_eq!(b[42], 0, "is_reply");
        assert_eq!(&b[44..48], &[0, 0, 0, 0]);
    }

    #[test]
    fn connect_reply_offsets() {
        let r = connect(ConnectKind::Reply {
            target_session_id: 0x5566_7788,
            status: CONNECT_STATUS_BAD_KEY,
        });
        let b = frame(Body::Connect(r), WireMode::MxCompat);
        check_connect_common(&b[..48]);
        assert_eq!(&b[36..40], &[0x55, 0x66, 0x77, 0x88], "target_session_id");
        assert_eq!(b[42], 1, "is_reply");
        assert_eq!(b[44], 11, "status");
        let mut x = b.clone();
        x[42] = 2;
        assert!(matches!(
            Repr::parse_bytes(&x, WireMode::Default),
            Err(Error::Field(_))
        ));
    }

    #[test]
    fn truc_offsets() {
        let r = TrucRepr {
            dst_endpoint: 0x07,
            src_endpoint: 0x09,
            src_generation: 0x0b,
            session: 0xdead_beef,
            lib_seqnum: 0x8123,
            session_id: 0x1122_3344,
            acknum: 0x5566_7788,
            send_seq: 0x99aa,
            resent: 1,
        };
        let b = frame(Body::Truc(r), WireMode::Default);
        assert_eq!(b.len(), 60, "16 + 28, padded");
        assert_eq!(
            &b[16..21],
            &[35, 0x07, 0x09, 0x0b, 16],
            "hdr4 and data length"
        );
        assert_eq!(&b[24..28], &[0xde, 0xad, 0xbe, 0xef], "session");
        assert_eq!(
            &b[28..32],
            &[0x55, 0, 0x81, 0x23],
            "type ACK, pad, lib_seqnum"
        );
        assert_eq!(&b[32..36], &[0x11, 0x22, 0x33, 0x44], "session_id");
        assert_eq!(&b[36..40], &[0x55, 0x66, 0x77, 0x88], "acknum");
        assert_eq!(&b[40..44], &[0x99, 0xaa, 1, 0], "send_seq, resent, pad");
        let mut x = b.clone();
        x[28] = 0x56;
        assert!(matches!(
            Repr::parse_bytes(&x, WireMode::Default),
            Err(Error::Field(_))
        ));
    }

    #[test]
    fn nack_lib_offsets() {
        let r = NackLibRepr {
            src_endpoint: 0x09,
            src_generation: 0x0b,
            nack_type: NackType::BadSession,
            dst_endpoint: 0x07,
            dst_src_peer_index: 0x4567,
            lib_seqnum: 0x8123,
        };
        let b = frame(Body::NackLib(r), WireMode::Default);
        assert_eq!(&b[16..20], &[44, 0x09, 0x0b, 3]);
        assert_eq!(&b[20..25], &[0, 0, 0, 0, 0]);
        assert_eq!(&b[25..32], &[0x07, 0x45, 0x67, 0x81, 0x23, 0, 0]);
    }

    #[test]
    fn nack_mcp_offsets() {
        let r = NackMcpRepr {
            src_endpoint: 0x09,
            src_generation: 0x0b,
            nack_type: NackType::BadRdmaWin,
            src_pull_handle: 0x3132_3334,
            src_magic: 0x4142_4344,
        };
        let b = frame(Body::NackMcp(r), WireMode::MxCompat);
        assert_eq!(&b[16..24], &[45, 0x09, 0x0b, 4, 0, 0, 0, 0]);
        assert_eq!(&b[24..28], &[0x31, 0x32, 0x33, 0x34], "src_pull_handle");
        assert_eq!(&b[28..32], &[0x41, 0x42, 0x43, 0x44], "src_magic");
    }

    #[test]
    fn host_query_and_reply_offsets() {
        let q = HostRepr {
            src_dst_peer_index: 0x4567,
            magic: 0x1122_3344,
            hostname: None,
        };
        let b = frame(Body::Host(q), WireMode::Default);
        assert_eq!(b.len(), 60);
        assert_eq!(&b[16..20], &[3, 0, 0x45, 0x67]);
        assert_eq!(&b[24..28], &[0x11, 0x22, 0x33, 0x44], "magic");
        let r = HostRepr {
            hostname: Some(b"node-17"),
            ..q
        };
        let b = frame(Body::Host(r), WireMode::Default);
        assert_eq!(&b[16..20], &[4, 8, 0x45, 0x67], "length counts the NUL");
        assert_eq!(&b[24..28], &[0x11, 0x22, 0x33, 0x44], "magic echoed");
        assert_eq!(&b[32..40], b"node-17\0");
        // A zero length, or one past the buffer, is refused.
        let mut x = b.clone();
        x[17] = 0;
        assert!(Repr::parse_bytes(&x, WireMode::Default).is_err());
        x[17] = 45;
        assert!(matches!(
            Repr::parse_bytes(&x, WireMode::Default),
            Err(Error::Truncated { .. })
        ));
        let long = [b'x'; 255];
        let too = HostRepr {
            hostname: Some(&long),
            ..q
        };
        assert!(too.emit(&mut [0u8; 300]).is_err());
        let ok = HostRepr {
            hostname: Some(&long[..254]),
            ..q
        };
        assert_eq!(ok.emit(&mut [0u8; 300]), Ok(16 + 255));
    }
}
