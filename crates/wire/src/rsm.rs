//! Remote shared memory (RSM) frames: what an importing and an exporting node exchange to
//! connect to a segment, write into it, read from it, flush a barrier's writes, signal
//! each other and abort connections, on any transport (UDP datagrams, shared-memory ring
//! slots, Ethernet frames, simulated Myrinet packets). All fields are big-endian.
//!
//! ```text
//!  0       1       2               4                               8
//! +-------+-------+---------------+-------------------------------+
//! | 0x52  | kind  |seq_hi |ack_hi | session (32 b)                |
//! +-------+-------+---------------+-------------------------------+
//! | seq (16 b)    | ack (16 b)    |  kind-specific body...
//! +---------------+---------------+
//!  8              10              12
//! ```
//!
//! * **tag** `0x52` ([`crate::protocol::RSM`]): whose frame this is on a shared transport;
//! * **session**: the sender engine's incarnation; a peer that sees a newer one knows
//!   the sender restarted, and drops frames of an older one;
//! * **seq**: the per-peer sequence number of every kind but [`Kind::Ack`] (an ack
//!   carries the sender's next one); **ack**: the next sequence number the sender
//!   expects from the receiver, on every frame;
//! * **seq_hi**, **ack_hi**: bits 16..24 of the same two numbers. The reliability
//!   layer counts in 16 bits; the extra 8 let a receiver tell a frame held back in the
//!   network while the sender went once round the 16-bit space from a new one
//!   (`myrix_rsm_proto`'s engine drops it, ack and all).
//!
//! Bodies (offsets from the frame's start; `conn` is the *receiver's* connection id
//! except in a connect, where it is the importer's own):
//!
//! | kind | body |
//! |---|---|
//! | Connect | segment 12..16, perm 16..20, node 20..24, uid 24..28, gid 28..32, conn 32..36 |
//! | ConnectReply | conn 12..16, status 16..20, exporter's conn 20..24, reserved 24..28, segment length 28..36 |
//! | Disconnect | conn 12..16 |
//! | Write | conn 12..16, offset 16..24, data 24.. |
//! | ReadReq | conn 12..16, request 16..20, offset 20..28, length 28..32 |
//! | ReadReply | request 12..16, status 16..20, offset 20..28, data 28.. |
//! | Flush | conn 12..16, token 16..20 |
//! | FlushReply | token 12..16, status 16..20 |
//! | SignalExporter, SignalImporter | conn 12..16, flags 16..20 |
//! | Abort | conn 12..16, status 16..20 |
//! | Ack | (none) |
//!
//! `status` is 0 for success or an RSMAPI error number (`RSMERR_*`); this module does not
//! interpret it. A frame of a kind without data has exactly its fixed length.
//!
//! This module only knows bytes. It must never hold protocol state.

use core::fmt;

use crate::protocol::RSM as TAG;

/// Bytes of the common header.
pub const HEADER_LEN: usize = 12;
/// Bytes before a write's data.
pub const WRITE_HEAD: usize = field::write::END;
/// Bytes before a read reply's data.
pub const READ_REPLY_HEAD: usize = field::read_reply::END;
/// Longest fixed part of any frame (a connect's or a connect reply's).
pub const MAX_HEAD: usize = 36;
/// Signal flag: do not post the signal if one is already pending at the target
/// (RSMAPI's `RSM_SIGPOST_NO_ACCUMULATE`).
pub const SIGNAL_NO_ACCUMULATE: u32 = 0x02;

/// Where each field lies, in bytes from the frame's start. Nothing else writes an
/// offset by hand.
mod field {
    use core::ops::Range;
    pub const TAG: usize = 0;
    pub const KIND: usize = 1;
    pub const SEQ_HI: usize = 2;
    pub const ACK_HI: usize = 3;
    pub const SESSION: Range<usize> = 4..8;
    pub const SEQ: Range<usize> = 8..10;
    pub const ACK: Range<usize> = 10..12;

    pub mod connect {
        use core::ops::Range;
        pub const SEGMENT: Range<usize> = 12..16;
        pub const PERM: Range<usize> = 16..20;
        pub const NODE: Range<usize> = 20..24;
        pub const UID: Range<usize> = 24..28;
        pub const GID: Range<usize> = 28..32;
        pub const CONN: Range<usize> = 32..36;
        pub const END: usize = 36;
    }
    pub mod connect_reply {
        use core::ops::Range;
        pub const CONN: Range<usize> = 12..16;
        pub const STATUS: Range<usize> = 16..20;
        pub const EXPORTER_CONN: Range<usize> = 20..24;
        pub const RESERVED: Range<usize> = 24..28;
        pub const LENGTH: Range<usize> = 28..36;
        pub const END: usize = 36;
    }
    pub mod disconnect {
        use core::ops::Range;
        pub const CONN: Range<usize> = 12..16;
        pub const END: usize = 16;
    }
    pub mod write {
        use core::ops::Range;
        pub const CONN: Range<usize> = 12..16;
        pub const OFFSET: Range<usize> = 16..24;
        /// The data follows.
        pub const END: usize = 24;
    }
    pub mod read_req {
        use core::ops::Range;
        pub const CONN: Range<usize> = 12..16;
        pub const REQUEST: Range<usize> = 16..20;
        pub const OFFSET: Range<usize> = 20..28;
        pub const LENGTH: Range<usize> = 28..32;
        pub const END: usize = 32;
    }
    pub mod read_reply {
        use core::ops::Range;
        pub const REQUEST: Range<usize> = 12..16;
        pub const STATUS: Range<usize> = 16..20;
        pub const OFFSET: Range<usize> = 20..28;
        /// The data follows.
        pub const END: usize = 28;
    }
    pub mod flush {
        use core::ops::Range;
        pub const CONN: Range<usize> = 12..16;
        pub const TOKEN: Range<usize> = 16..20;
        pub const END: usize = 20;
    }
    pub mod flush_reply {
        use core::ops::Range;
        pub const TOKEN: Range<usize> = 12..16;
        pub const STATUS: Range<usize> = 16..20;
        pub const END: usize = 20;
    }
    /// Both signal kinds.
    pub mod signal {
        use core::ops::Range;
        pub const CONN: Range<usize> = 12..16;
        pub const FLAGS: Range<usize> = 16..20;
        pub const END: usize = 20;
    }
    pub mod abort {
        use core::ops::Range;
        pub const CONN: Range<usize> = 12..16;
        pub const STATUS: Range<usize> = 16..20;
        pub const END: usize = 20;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("RSM frame truncated: {have} bytes, need {need}")]
    Truncated { have: usize, need: usize },
    #[error("not an RSM frame: tag {0:#04x}")]
    Tag(u8),
    #[error("unknown RSM frame kind {0}")]
    Kind(u8),
    #[error("RSM frame field out of range: {0}")]
    Field(&'static str),
    #[error("buffer too short to emit: {have} bytes, need {need}")]
    Buffer { have: usize, need: usize },
}

/// What a frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// An importer asks for a connection to a published segment.
    Connect = 1,
    /// The exporter's answer: a connection, or why not.
    ConnectReply = 2,
    /// The importer closes its connection.
    Disconnect = 3,
    /// Data to write at an offset of the segment: a whole small put or one fragment of
    /// a large one.
    Write = 4,
    /// A block of the segment to read.
    ReadReq = 5,
    /// Part of a block read, or why the block cannot be read.
    ReadReply = 6,
    /// Closes a barrier: answer when every write before this one is applied, and say
    /// whether any failed since the last flush.
    Flush = 7,
    FlushReply = 8,
    /// An importer signals the exporter.
    SignalExporter = 9,
    /// An exporter signals one of its importers.
    SignalImporter = 10,
    /// The exporter ended a connection (the segment was unpublished).
    Abort = 11,
    /// An explicit acknowledgement: only the header's `ack` field counts.
    Ack = 12,
}

impl Kind {
    pub fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Connect,
            2 => Kind::ConnectReply,
            3 => Kind::Disconnect,
            4 => Kind::Write,
            5 => Kind::ReadReq,
            6 => Kind::ReadReply,
            7 => Kind::Flush,
            8 => Kind::FlushReply,
            9 => Kind::SignalExporter,
            10 => Kind::SignalImporter,
            11 => Kind::Abort,
            12 => Kind::Ack,
            _ => return None,
        })
    }

    /// Kinds that carry a sequence number and are delivered reliably and in order: all
    /// but the explicit ack.
    pub fn sequenced(self) -> bool {
        self != Kind::Ack
    }

    /// Bytes of the header and the fixed body.
    pub fn head_len(self) -> usize {
        match self {
            Kind::Connect => field::connect::END,
            Kind::ConnectReply => field::connect_reply::END,
            Kind::Disconnect => field::disconnect::END,
            Kind::Write => field::write::END,
            Kind::ReadReq => field::read_req::END,
            Kind::ReadReply => field::read_reply::END,
            Kind::Flush => field::flush::END,
            Kind::FlushReply => field::flush_reply::END,
            Kind::SignalExporter | Kind::SignalImporter => field::signal::END,
            Kind::Abort => field::abort::END,
            Kind::Ack => HEADER_LEN,
        }
    }

    /// Kinds whose frame ends with data after the fixed body.
    pub fn has_data(self) -> bool {
        matches!(self, Kind::Write | Kind::ReadReply)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
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

/// A view of an RSM frame. After [`Frame::new_checked`] no accessor panics.
#[derive(Debug, Clone, Copy)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    pub fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    /// Checks tag, kind, lengths and reserved bytes.
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
        if b[field::TAG] != TAG {
            return Err(Error::Tag(b[field::TAG]));
        }
        let kind = Kind::from_u8(b[field::KIND]).ok_or(Error::Kind(b[field::KIND]))?;
        let need = kind.head_len();
        if b.len() < need {
            return Err(Error::Truncated {
                have: b.len(),
                need,
            });
        }
        if !kind.has_data() && b.len() != need {
            return Err(Error::Field("trailing bytes"));
        }
        let reserved_zero =
            kind != Kind::ConnectReply || b[field::connect_reply::RESERVED].iter().all(|&x| x == 0);
        if !reserved_zero {
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
    pub fn session(&self) -> u32 {
        be32(&self.buffer.as_ref()[field::SESSION])
    }
    pub fn seq(&self) -> u16 {
        be16(&self.buffer.as_ref()[field::SEQ])
    }
    pub fn ack(&self) -> u16 {
        be16(&self.buffer.as_ref()[field::ACK])
    }
    pub fn seq_hi(&self) -> u8 {
        self.buffer.as_ref()[field::SEQ_HI]
    }
    pub fn ack_hi(&self) -> u8 {
        self.buffer.as_ref()[field::ACK_HI]
    }
    /// Data after the fixed body (empty for kinds without data).
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[self.kind().head_len()..]
    }
}

/// The common header, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Header {
    pub session: u32,
    pub seq: u16,
    pub ack: u16,
    /// Bits 16..24 of `seq` and `ack` (see the module docs).
    pub seq_hi: u8,
    pub ack_hi: u8,
}

/// The kind-specific part of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body<'a> {
    Connect {
        segment: u32,
        perm: u32,
        /// The node the importer says it is.
        node: u32,
        uid: u32,
        gid: u32,
        /// The importer's id for the connection: frames to it carry this.
        conn: u32,
    },
    ConnectReply {
        /// The importer's id, from the connect.
        conn: u32,
        status: u32,
        /// The exporter's id: frames to it carry this.
        exporter_conn: u32,
        length: u64,
    },
    Disconnect {
        conn: u32,
    },
    Write {
        conn: u32,
        offset: u64,
        data: &'a [u8],
    },
    ReadReq {
        conn: u32,
        request: u32,
        offset: u64,
        length: u32,
    },
    ReadReply {
        request: u32,
        status: u32,
        offset: u64,
        data: &'a [u8],
    },
    Flush {
        conn: u32,
        token: u32,
    },
    FlushReply {
        token: u32,
        status: u32,
    },
    /// `to_importer` says which kind: [`Kind::SignalImporter`] or
    /// [`Kind::SignalExporter`].
    Signal {
        to_importer: bool,
        conn: u32,
        flags: u32,
    },
    Abort {
        conn: u32,
        status: u32,
    },
    Ack,
}

impl Body<'_> {
    pub fn kind(&self) -> Kind {
        match self {
            Body::Connect { .. } => Kind::Connect,
            Body::ConnectReply { .. } => Kind::ConnectReply,
            Body::Disconnect { .. } => Kind::Disconnect,
            Body::Write { .. } => Kind::Write,
            Body::ReadReq { .. } => Kind::ReadReq,
            Body::ReadReply { .. } => Kind::ReadReply,
            Body::Flush { .. } => Kind::Flush,
            Body::FlushReply { .. } => Kind::FlushReply,
            Body::Signal {
                to_importer: true, ..
            } => Kind::SignalImporter,
            Body::Signal { .. } => Kind::SignalExporter,
            Body::Abort { .. } => Kind::Abort,
            Body::Ack => Kind::Ack,
        }
    }

    pub fn data(&self) -> &[u8] {
        match self {
            Body::Write { data, .. } | Body::ReadReply { data, .. } => data,
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
    /// Parses a checked frame; rejects data that would end past `u64::MAX`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(frame: &'a Frame<&'a T>) -> Result<Repr<'a>, Error> {
        Repr::parse_bytes(T::as_ref(frame.buffer))
    }

    /// [`Frame::new_checked`] and [`Repr::parse`] in one.
    pub fn parse_bytes(f: &'a [u8]) -> Result<Repr<'a>, Error> {
        let frame = Frame::new_checked(f)?;
        let header = Header {
            session: frame.session(),
            seq: frame.seq(),
            ack: frame.ack(),
            seq_hi: frame.seq_hi(),
            ack_hi: frame.ack_hi(),
        };
        let kind = frame.kind();
        let data: &'a [u8] = &f[kind.head_len()..];
        let body = match kind {
            Kind::Connect => Body::Connect {
                segment: be32(&f[field::connect::SEGMENT]),
                perm: be32(&f[field::connect::PERM]),
                node: be32(&f[field::connect::NODE]),
                uid: be32(&f[field::connect::UID]),
                gid: be32(&f[field::connect::GID]),
                conn: be32(&f[field::connect::CONN]),
            },
            Kind::ConnectReply => Body::ConnectReply {
                conn: be32(&f[field::connect_reply::CONN]),
                status: be32(&f[field::connect_reply::STATUS]),
                exporter_conn: be32(&f[field::connect_reply::EXPORTER_CONN]),
                length: be64(&f[field::connect_reply::LENGTH]),
            },
            Kind::Disconnect => Body::Disconnect {
                conn: be32(&f[field::disconnect::CONN]),
            },
            Kind::Write => {
                let offset = be64(&f[field::write::OFFSET]);
                if offset.checked_add(data.len() as u64).is_none() {
                    return Err(Error::Field("write ends past 2^64"));
                }
                Body::Write {
                    conn: be32(&f[field::write::CONN]),
                    offset,
                    data,
                }
            }
            Kind::ReadReq => Body::ReadReq {
                conn: be32(&f[field::read_req::CONN]),
                request: be32(&f[field::read_req::REQUEST]),
                offset: be64(&f[field::read_req::OFFSET]),
                length: be32(&f[field::read_req::LENGTH]),
            },
            Kind::ReadReply => {
                let offset = be64(&f[field::read_reply::OFFSET]);
                if offset.checked_add(data.len() as u64).is_none() {
                    return Err(Error::Field("read reply ends past 2^64"));
                }
                Body::ReadReply {
                    request: be32(&f[field::read_reply::REQUEST]),
                    status: be32(&f[field::read_reply::STATUS]),
                    offset,
                    data,
                }
            }
            Kind::Flush => Body::Flush {
                conn: be32(&f[field::flush::CONN]),
                token: be32(&f[field::flush::TOKEN]),
            },
            Kind::FlushReply => Body::FlushReply {
                token: be32(&f[field::flush_reply::TOKEN]),
                status: be32(&f[field::flush_reply::STATUS]),
            },
            Kind::SignalExporter | Kind::SignalImporter => Body::Signal {
                to_importer: kind == Kind::SignalImporter,
                conn: be32(&f[field::signal::CONN]),
                flags: be32(&f[field::signal::FLAGS]),
            },
            Kind::Abort => Body::Abort {
                conn: be32(&f[field::abort::CONN]),
                status: be32(&f[field::abort::STATUS]),
            },
            Kind::Ack => Body::Ack,
        };
        Ok(Repr { header, body })
    }

    /// Bytes [`Repr::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        self.body.kind().head_len() + self.body.data().len()
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
/// bytes of data after them, which the caller writes (so data is copied once, straight
/// from where it is kept). Returns the whole frame length. The data inside `body` is
/// ignored; `data_len` must be 0 for kinds without data.
pub fn emit_head(
    h: &Header,
    body: &Body<'_>,
    buf: &mut [u8],
    data_len: usize,
) -> Result<usize, Error> {
    let kind = body.kind();
    if data_len > 0 && !kind.has_data() {
        return Err(Error::Field("data on a kind without data"));
    }
    let need = kind.head_len() + data_len;
    if buf.len() < need {
        return Err(Error::Buffer {
            have: buf.len(),
            need,
        });
    }
    let mut head = [0u8; MAX_HEAD];
    let f = &mut head;
    f[field::TAG] = TAG;
    f[field::KIND] = kind as u8;
    f[field::SESSION].copy_from_slice(&h.session.to_be_bytes());
    f[field::SEQ].copy_from_slice(&h.seq.to_be_bytes());
    f[field::ACK].copy_from_slice(&h.ack.to_be_bytes());
    f[field::SEQ_HI] = h.seq_hi;
    f[field::ACK_HI] = h.ack_hi;
    match *body {
        Body::Connect {
            segment,
            perm,
            node,
            uid,
            gid,
            conn,
        } => {
            f[field::connect::SEGMENT].copy_from_slice(&segment.to_be_bytes());
            f[field::connect::PERM].copy_from_slice(&perm.to_be_bytes());
            f[field::connect::NODE].copy_from_slice(&node.to_be_bytes());
            f[field::connect::UID].copy_from_slice(&uid.to_be_bytes());
            f[field::connect::GID].copy_from_slice(&gid.to_be_bytes());
            f[field::connect::CONN].copy_from_slice(&conn.to_be_bytes());
        }
        Body::ConnectReply {
            conn,
            status,
            exporter_conn,
            length,
        } => {
            f[field::connect_reply::CONN].copy_from_slice(&conn.to_be_bytes());
            f[field::connect_reply::STATUS].copy_from_slice(&status.to_be_bytes());
            f[field::connect_reply::EXPORTER_CONN].copy_from_slice(&exporter_conn.to_be_bytes());
            f[field::connect_reply::LENGTH].copy_from_slice(&length.to_be_bytes());
        }
        Body::Disconnect { conn } => {
            f[field::disconnect::CONN].copy_from_slice(&conn.to_be_bytes());
        }
        Body::Write { conn, offset, .. } => {
            if offset.checked_add(data_len as u64).is_none() {
                return Err(Error::Field("write ends past 2^64"));
            }
            f[field::write::CONN].copy_from_slice(&conn.to_be_bytes());
            f[field::write::OFFSET].copy_from_slice(&offset.to_be_bytes());
        }
        Body::ReadReq {
            conn,
            request,
            offset,
            length,
        } => {
            f[field::read_req::CONN].copy_from_slice(&conn.to_be_bytes());
            f[field::read_req::REQUEST].copy_from_slice(&request.to_be_bytes());
            f[field::read_req::OFFSET].copy_from_slice(&offset.to_be_bytes());
            f[field::read_req::LENGTH].copy_from_slice(&length.to_be_bytes());
        }
        Body::ReadReply {
            request,
            status,
            offset,
            ..
        } => {
            if offset.checked_add(data_len as u64).is_none() {
                return Err(Error::Field("read reply ends past 2^64"));
            }
            f[field::read_reply::REQUEST].copy_from_slice(&request.to_be_bytes());
            f[field::read_reply::STATUS].copy_from_slice(&status.to_be_bytes());
            f[field::read_reply::OFFSET].copy_from_slice(&offset.to_be_bytes());
        }
        Body::Flush { conn, token } => {
            f[field::flush::CONN].copy_from_slice(&conn.to_be_bytes());
            f[field::flush::TOKEN].copy_from_slice(&token.to_be_bytes());
        }
        Body::FlushReply { token, status } => {
            f[field::flush_reply::TOKEN].copy_from_slice(&token.to_be_bytes());
            f[field::flush_reply::STATUS].copy_from_slice(&status.to_be_bytes());
        }
        Body::Signal { conn, flags, .. } => {
            f[field::signal::CONN].copy_from_slice(&conn.to_be_bytes());
            f[field::signal::FLAGS].copy_from_slice(&flags.to_be_bytes());
        }
        Body::Abort { conn, status } => {
            f[field::abort::CONN].copy_from_slice(&conn.to_be_bytes());
            f[field::abort::STATUS].copy_from_slice(&status.to_be_bytes());
        }
        Body::Ack => {}
    }
    let fixed = kind.head_len();
    buf[..fixed].copy_from_slice(&head[..fixed]);
    Ok(need)
}
