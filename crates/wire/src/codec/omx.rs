//! [`Omx`]: MX's events in Open-MX's frames ([`crate::omx`], default wire mode), for
//! the raw-Ethernet transport; [`OmxMxWire`] the same in Open-MX's MX-compatible wire
//! mode (4 KiB medium slots, 4096-byte pull replies, the 32-byte PULL, a 4144-byte
//! MTU). The offsets below are the default mode's; the other mode's grid is 4096.
//!
//! A frame is a whole Ethernet frame: the 16-byte head (destination MAC, left zero for
//! the transport to fill; source MAC = the sender's NIC id; EtherType 0x86DF; the
//! receiver's peer index for the sender) and the body of the packet type. Frames are not
//! padded here: the transport pads them to 60 bytes, and every parser reads lengths from
//! the layout, not from the frame's size.
//!
//! | MX event | Open-MX packet | how the event's fields are carried |
//! |---|---|---|
//! | `Eager` tiny/small | TINY / SMALL | `length` = the message; whole messages only |
//! | `Eager` medium | MEDIUM | fragment `offset` = `frag_seqnum` × 8192; all fragments of a message under its one `lib_seqnum` ([`Codec::MESSAGE_SEQ`]) |
//! | `Rndv` | RNDV | region name `id \| seqnum << 8` ([`Codec::REGIONS`]) in `pulled_rdma_id`, `_seqnum`; `_offset` 0 |
//! | `Pull` | PULL | region in `rdma_id`, `rdma_seqnum`; `src_pull_handle` = receive handle, offset = `frame_index` × 8968 + `first_frame_offset` (`pulled_rdma_offset` 0), `block_length` = length, `total_length` = total, `src_magic` = [`omx::pull_magic`] of the puller's endpoint |
//! | `PullReply` | PULL_REPLY | `dst_pull_handle`, `msg_offset`, `frame_length`, `frame_seqnum` = `msg_offset` / 8968 mod 256, `dst_magic` = the puller's magic (its endpoint: [`omx::endpoint_of_magic`]) |
//! | `Notify` | NOTIFY | region in `rdma_id`, `rdma_seqnum`; `total_length` = `length` (pulled) |
//! | `Connect` / `ConnectReply` | CONNECT | key, `src_dst_peer_index`, sessions, `target_recv_seqnum_start` = header `ack`, `connect_seqnum` = request's low byte, `lib_seqnum` 0 |
//! | `Ack` | TRUC liback | `lib_seqnum` = the next sequence number expected |
//! | `Nack` | NACK_LIB (by `lib_seqnum`) / NACK_MCP (by `src_pull_handle`, `src_magic`) | `nack_type` = reason |
//!
//! Header: `seq` ↔ `lib_seqnum`, `ack` ↔ `lib_piggyack`, both already in Open-MX's
//! numbering (14 bits under 2 session bits: the engine maps its own numbers with
//! [`super::seq`] and [`Codec::SEQ_BITS`]), `session` ↔ `session` (the receiver's
//! session, as Open-MX: [`Codec::RECEIVER_SESSION`]; in a CONNECT request
//! `src_session_id`, in a reply `target_session_id`, the replier's, while the reply's
//! `src_session_id` echoes the requester's), endpoints ↔ `dst_endpoint`/`src_endpoint`,
//! `nic` ↔ source MAC, `peer_index` ↔ the head's `dst_src_peer_index`.
//!
//! Where MX's engine state does not hold what Open-MX's fields mean (each a gap an
//! Open-MX peer would notice; see `docs/mx.md`):
//! * The connect's request handle keeps only its low byte (`connect_seqnum`); the engine finds its
//!   connect by it and the replier.
//! * Eager frames have no room for the handle of a synchronous send: such sends go by
//!   rendezvous ([`Codec::EAGER_NOTIFY`] is false), as Open-MX sends them.
//!
//! Not gaps: PULL and PULL_REPLY carry no ack, and PULL_REPLY no session or source
//! endpoint ([`Codec::carries_ack`], [`Codec::carries_session`]), exactly as Open-MX's
//! (its pulls are the driver's, below the library's sequence numbers and acks): the
//! engine finds its receive by the handle and its endpoint by the magic.
//! * TRUC types other than the ack, and host queries, are not MX events: `parse`
//!   refuses them (the engine counts them as bad frames).

use super::Codec;
use crate::mx::{
    Body, Error, Header, Kind, Repr, WholeEager, CONNECT_BAD_KEY, CONNECT_NO_ENDPOINT, CONNECT_OK,
    NO_HANDLE,
};
use crate::omx::{
    self, control, msg, pull, ConnectKind, ConnectRepr, EthHead, MediumRepr, MsgHeader, MsgKind,
    MsgRepr, NackLibRepr, NackMcpRepr, NackType, NotifyRepr, PullReplyRepr, PullRepr, RndvRepr,
    TrucRepr, WireMode,
};

/// Open-MX's layout in one of its wire modes: the default (`MX_WIRE` false) or the
/// MX-compatible one (`--enable-mx-wire`: 4 KiB medium fragments, 4096-byte pull
/// replies, the 32-byte PULL, a 4144-byte MTU). See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct OmxCodec<const MX_WIRE: bool>;

/// Open-MX's layout in its default wire mode.
pub type Omx = OmxCodec<false>;
/// Open-MX's layout in its MX-compatible wire mode (`OMX_MX_WIRE_COMPAT`).
pub type OmxMxWire = OmxCodec<true>;

impl<const MX_WIRE: bool> OmxCodec<MX_WIRE> {
    /// The wire mode this codec speaks.
    pub const MODE: WireMode = if MX_WIRE {
        WireMode::MxCompat
    } else {
        WireMode::Default
    };
    /// Largest frame of this mode, Ethernet header included.
    pub const MTU: usize = Self::MODE.mtu();
    /// Bytes of a medium fragment's slot in this mode.
    pub const MEDIUM_FRAG: usize = Self::MODE.medium_frag_max();
}

/// The default wire mode ([`Omx`]'s).
pub const MODE: WireMode = WireMode::Default;
/// Bytes of a medium fragment's slot: fragment `i` starts at `i * MEDIUM_FRAG`.
pub const MEDIUM_FRAG: usize = MODE.medium_frag_max();
/// Bytes of data in a full PULL_REPLY (`OMX_PULL_REPLY_LENGTH_MAX`): the grid pulls
/// are numbered on.
pub const PULL_REPLY_MAX: u32 = MODE.pull_reply_max() as u32;
/// Largest frame: Open-MX's 9000-byte MTU, Ethernet header included.
pub const MTU: usize = MODE.mtu();
/// The connect status Open-MX gives an unknown endpoint (MX's `ENDPOINT_UNKNOWN`).
pub const CONNECT_STATUS_NO_ENDPOINT: u8 = 7;

/// Zeros standing in for the data the caller writes after [`Codec::emit_head`].
static ZEROS: [u8; MTU] = [0; MTU];

fn err(e: omx::Error) -> Error {
    match e {
        omx::Error::Truncated { have, need } => Error::Truncated { have, need },
        omx::Error::Buffer { have, need } => Error::Buffer { have, need },
        omx::Error::EtherType(_) => Error::Field("not an Open-MX frame"),
        omx::Error::UnknownType(t) => Error::Kind(t),
        omx::Error::Unsupported(_) => Error::Field("an Open-MX packet type with no MX event"),
        omx::Error::Field(f) => Error::Field(f),
    }
}

fn msg_header(h: &Header, match_info: u64) -> MsgHeader {
    MsgHeader {
        dst_endpoint: h.dst_endpoint,
        src_endpoint: h.src_endpoint,
        src_generation: 0,
        lib_seqnum: h.seq,
        lib_piggyack: h.ack,
        match_info,
        session: h.session,
        checksum: 0,
    }
}

fn from_msg(nic: u64, peer_index: u16, m: &MsgHeader) -> Header {
    Header {
        peer_index,
        nic,
        src_endpoint: m.src_endpoint,
        dst_endpoint: m.dst_endpoint,
        session: m.session,
        seq: m.lib_seqnum,
        ack: m.lib_piggyack,
    }
}

fn mac_of(nic: u64) -> [u8; 6] {
    let b = nic.to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}

fn nic_of(mac: [u8; 6]) -> u64 {
    u64::from_be_bytes([0, 0, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]])
}

/// A large send's wire name (`id | seqnum << 8`, [`Codec::REGIONS`]) as Open-MX's
/// `pulled_rdma_id` and `pulled_rdma_seqnum`; an error for a name no region has.
fn region_of(name: u32) -> Result<(u8, u8), Error> {
    if name > 0xffff {
        return Err(Error::Field(
            "large send handle wider than an Open-MX region",
        ));
    }
    Ok((name as u8, (name >> 8) as u8))
}

/// [`region_of`]'s inverse.
fn region_name(id: u8, seqnum: u8) -> u32 {
    id as u32 | (seqnum as u32) << 8
}

fn connect_status_to_wire(s: u8) -> u8 {
    match s {
        CONNECT_OK => control::CONNECT_STATUS_SUCCESS,
        CONNECT_BAD_KEY => control::CONNECT_STATUS_BAD_KEY,
        _ => CONNECT_STATUS_NO_ENDPOINT,
    }
}

fn connect_status_from_wire(s: u8) -> u8 {
    match s {
        control::CONNECT_STATUS_SUCCESS => CONNECT_OK,
        control::CONNECT_STATUS_BAD_KEY => CONNECT_BAD_KEY,
        _ => CONNECT_NO_ENDPOINT,
    }
}

/// The Open-MX body of `h` and `body`, with `data_len` bytes of (zero) data.
fn to_omx<'a>(
    h: &Header,
    body: &Body<'_>,
    data_len: usize,
    mode: WireMode,
) -> Result<omx::Body<'a>, Error> {
    let medium_frag = mode.medium_frag_max();
    let reply_max = mode.pull_reply_max() as u32;
    let data = ZEROS
        .get(..data_len)
        .ok_or(Error::Field("data longer than an Open-MX frame"))?;
    let endpoints = (h.dst_endpoint, h.src_endpoint);
    Ok(match *body {
        Body::Eager {
            kind,
            match_info,
            msg_len,
            offset,
            handle,
            ..
        } => {
            if handle != NO_HANDLE {
                return Err(Error::Field("Open-MX eager frames carry no notify handle"));
            }
            let header = msg_header(h, match_info);
            match kind {
                Kind::Tiny | Kind::Small => {
                    if offset != 0 || msg_len as usize != data_len {
                        return Err(Error::Field("Open-MX tiny/small messages are whole"));
                    }
                    let kind = if kind == Kind::Tiny {
                        MsgKind::Tiny
                    } else {
                        MsgKind::Small
                    };
                    omx::Body::Msg(MsgRepr { kind, header, data })
                }
                _ => {
                    let frag = offset as usize / medium_frag;
                    if offset as usize % medium_frag != 0 || frag > u8::MAX as usize {
                        return Err(Error::Field("medium fragment not at an Open-MX slot"));
                    }
                    omx::Body::Medium(MediumRepr {
                        header,
                        msg_length: msg_len,
                        frag_seqnum: frag as u8,
                        data,
                    })
                }
            }
        }
        Body::Rndv {
            match_info,
            msg_len,
            handle,
        } => {
            let (rdma_id, rdma_seqnum) = region_of(handle)?;
            omx::Body::Rndv(RndvRepr {
                header: msg_header(h, match_info),
                msg_length: msg_len,
                rdma_id,
                rdma_seqnum,
                // The region starts at the message, as Open-MX's library registers it.
                rdma_offset: 0,
            })
        }
        Body::Pull {
            handle,
            recv_handle,
            offset,
            length,
            total,
        } => {
            let (rdma_id, rdma_seqnum) = region_of(handle)?;
            omx::Body::Pull(PullRepr {
                dst_endpoint: endpoints.0,
                src_endpoint: endpoints.1,
                src_generation: 0,
                session: h.session,
                total_length: total,
                rdma_id: rdma_id as u32,
                rdma_seqnum,
                // The block's place as Open-MX's driver reads it: frame `frame_index` of
                // the sender's reply grid, `first_frame_offset` into it; the region starts
                // at the message (`pulled_rdma_offset` 0).
                rdma_offset: 0,
                src_pull_handle: recv_handle,
                src_magic: omx::pull_magic(h.src_endpoint),
                first_frame_offset: offset % reply_max,
                block_length: length,
                frame_index: offset / reply_max,
            })
        }
        Body::PullReply {
            recv_handle,
            offset,
            ..
        } => omx::Body::PullReply(PullReplyRepr {
            frame_seqnum: (offset / reply_max) as u8,
            msg_offset: offset,
            dst_pull_handle: recv_handle,
            // Open-MX's replier echoes the PULL's `src_magic`; computed from the puller's
            // endpoint instead, the same value for every Open-MX puller (its driver
            // derives both fields from the one endpoint index).
            dst_magic: omx::pull_magic(h.dst_endpoint),
            data,
        }),
        Body::Notify { handle, length } => {
            let (rdma_id, rdma_seqnum) = region_of(handle)?;
            omx::Body::Notify(NotifyRepr {
                dst_endpoint: endpoints.0,
                src_endpoint: endpoints.1,
                src_generation: 0,
                session: h.session,
                // The length the receiver pulled, as Open-MX's receiver fills it.
                total_length: length,
                rdma_id,
                rdma_seqnum,
                lib_seqnum: h.seq,
                lib_piggyack: h.ack,
            })
        }
        Body::Connect {
            key,
            index,
            request,
        } => omx::Body::Connect(connect(
            h,
            index,
            request,
            h.session,
            ConnectKind::Request { app_key: key },
        )),
        // Open-MX's reply: `src_session_id` echoes the requester's, `target_session_id`
        // is the replier's own (the one the requester then puts in its frames).
        Body::ConnectReply {
            status,
            index,
            request,
            session,
        } => omx::Body::Connect(connect(
            h,
            index,
            request,
            session,
            ConnectKind::Reply {
                target_session_id: h.session,
                status: connect_status_to_wire(status),
            },
        )),
        // As Open-MX's driver answers: NACK_LIB names the refused frame by its
        // `lib_seqnum`, NACK_MCP a pull by the puller's handle and endpoint magic (the
        // PULL's `src_magic`, computed from the puller's endpoint as for PULL_REPLY).
        Body::Nack {
            reason,
            seq,
            handle,
        } => {
            let nack_type = NackType::from_u8(reason).ok_or(Error::Field("NACK reason"))?;
            if handle == NO_HANDLE {
                omx::Body::NackLib(NackLibRepr {
                    src_endpoint: h.src_endpoint,
                    src_generation: 0,
                    nack_type,
                    dst_endpoint: h.dst_endpoint,
                    dst_src_peer_index: h.peer_index,
                    lib_seqnum: seq,
                })
            } else {
                omx::Body::NackMcp(NackMcpRepr {
                    src_endpoint: h.src_endpoint,
                    src_generation: 0,
                    nack_type,
                    src_pull_handle: handle,
                    src_magic: omx::pull_magic(h.dst_endpoint),
                })
            }
        }
        Body::Ack => omx::Body::Truc(TrucRepr {
            dst_endpoint: endpoints.0,
            src_endpoint: endpoints.1,
            src_generation: 0,
            session: h.session,
            lib_seqnum: h.ack,
            session_id: h.session,
            acknum: 0,
            send_seq: h.seq,
            resent: 0,
        }),
    })
}

/// A CONNECT as Open-MX's library fills it: `lib_seqnum` 0, the sender's next expected
/// sequence number (the header's `ack`) in `target_recv_seqnum_start`, the request's
/// low byte as `connect_seqnum`.
fn connect(
    h: &Header,
    index: u16,
    request: u32,
    src_session_id: u32,
    kind: ConnectKind,
) -> ConnectRepr {
    ConnectRepr {
        dst_endpoint: h.dst_endpoint,
        src_endpoint: h.src_endpoint,
        src_generation: 0,
        lib_seqnum: 0,
        src_dst_peer_index: index,
        src_session_id,
        target_recv_seqnum_start: h.ack,
        connect_seqnum: request as u8,
        kind,
    }
}

/// MX's events of an Open-MX frame.
fn from_omx<'a>(r: &omx::Repr<'a>, mode: WireMode) -> Result<Repr<'a>, Error> {
    let reply_max = mode.pull_reply_max() as u32;
    let nic = nic_of(r.head.src);
    let pi = r.head.peer_index;
    let plain = |dst: u8, src: u8, session: u32, seq: u16, ack: u16| Header {
        peer_index: pi,
        nic,
        src_endpoint: src,
        dst_endpoint: dst,
        session,
        seq,
        ack,
    };
    Ok(match r.body {
        omx::Body::Msg(m) => Repr {
            header: from_msg(nic, pi, &m.header),
            body: Body::Eager {
                kind: if m.kind == MsgKind::Tiny {
                    Kind::Tiny
                } else {
                    Kind::Small
                },
                match_info: m.header.match_info,
                msg_len: m.data.len() as u32,
                offset: 0,
                handle: NO_HANDLE,
                data: m.data,
            },
        },
        omx::Body::Medium(m) => Repr {
            header: from_msg(nic, pi, &m.header),
            body: Body::Eager {
                kind: Kind::Medium,
                match_info: m.header.match_info,
                msg_len: m.msg_length,
                offset: m.offset(mode) as u32,
                handle: NO_HANDLE,
                data: m.data,
            },
        },
        omx::Body::Rndv(m) if m.rdma_offset != 0 => {
            // Open-MX registers a large send's region from the message's start.
            return Err(Error::Field("RNDV region offset not 0"));
        }
        omx::Body::Rndv(m) => Repr {
            header: from_msg(nic, pi, &m.header),
            body: Body::Rndv {
                match_info: m.header.match_info,
                msg_len: m.msg_length,
                handle: region_name(m.rdma_id, m.rdma_seqnum),
            },
        },
        omx::Body::Pull(p) => Repr {
            header: plain(p.dst_endpoint, p.src_endpoint, p.session, 0, 0),
            body: Body::Pull {
                handle: region_name(
                    u8::try_from(p.rdma_id).map_err(|_| Error::Field("pull region id"))?,
                    p.rdma_seqnum,
                ),
                recv_handle: p.src_pull_handle,
                // As Open-MX's driver computes the first reply's `msg_offset`.
                offset: p
                    .frame_index
                    .checked_mul(reply_max)
                    .and_then(|o| o.checked_add(p.first_frame_offset))
                    .and_then(|o| o.checked_sub(p.rdma_offset % reply_max))
                    .ok_or(Error::Field("pull offset"))?,
                length: p.block_length,
                total: p.total_length,
            },
        },
        omx::Body::PullReply(p) => {
            // Open-MX's driver finds the puller's endpoint by the magic and drops a reply
            // whose magic names none: here a magic naming no endpoint id is a bad frame,
            // and one naming another endpoint is that endpoint's (the engine drops it).
            let dst = omx::endpoint_of_magic(p.dst_magic)
                .ok_or(Error::Field("pull reply magic names no endpoint"))?;
            Repr {
                header: plain(dst, 0, 0, 0, 0),
                body: Body::PullReply {
                    recv_handle: p.dst_pull_handle,
                    offset: p.msg_offset,
                    data: p.data,
                },
            }
        }
        omx::Body::Notify(n) => Repr {
            header: plain(
                n.dst_endpoint,
                n.src_endpoint,
                n.session,
                n.lib_seqnum,
                n.lib_piggyack,
            ),
            body: Body::Notify {
                handle: region_name(n.rdma_id, n.rdma_seqnum),
                length: n.total_length,
            },
        },
        omx::Body::Connect(c) => {
            let request = c.connect_seqnum as u32;
            let start = c.target_recv_seqnum_start;
            let (header, body) = match c.kind {
                ConnectKind::Request { app_key } => (
                    plain(c.dst_endpoint, c.src_endpoint, c.src_session_id, 0, start),
                    Body::Connect {
                        key: app_key,
                        index: c.src_dst_peer_index,
                        request,
                    },
                ),
                ConnectKind::Reply {
                    status,
                    target_session_id,
                } => (
                    plain(c.dst_endpoint, c.src_endpoint, target_session_id, 0, start),
                    Body::ConnectReply {
                        status: connect_status_from_wire(status),
                        index: c.src_dst_peer_index,
                        request,
                        session: c.src_session_id,
                    },
                ),
            };
            Repr { header, body }
        }
        omx::Body::Truc(t) => Repr {
            header: plain(
                t.dst_endpoint,
                t.src_endpoint,
                t.session,
                t.send_seq,
                t.lib_seqnum,
            ),
            body: Body::Ack,
        },
        omx::Body::NackLib(n) => Repr {
            header: plain(n.dst_endpoint, n.src_endpoint, 0, 0, 0),
            body: Body::Nack {
                reason: n.nack_type as u8,
                seq: n.lib_seqnum,
                handle: NO_HANDLE,
            },
        },
        omx::Body::NackMcp(n) => {
            let dst = omx::endpoint_of_magic(n.src_magic)
                .ok_or(Error::Field("NACK MCP magic names no endpoint"))?;
            if n.src_pull_handle == NO_HANDLE {
                return Err(Error::Field("NACK MCP without a pull handle"));
            }
            Repr {
                header: plain(dst, n.src_endpoint, 0, 0, 0),
                body: Body::Nack {
                    reason: n.nack_type as u8,
                    seq: 0,
                    handle: n.src_pull_handle,
                },
            }
        }
        omx::Body::Host(_) => return Err(Error::Field("an Open-MX packet type with no MX event")),
    })
}

impl<const MX_WIRE: bool> Codec for OmxCodec<MX_WIRE> {
    /// TINY and SMALL: the head and the message header. (The whole-eager fast paths are
    /// off for this codec: see [`Codec::FAST_PATHS`].)
    const EAGER_HEAD: usize = omx::HEAD_LEN + msg::MSG_LEN;
    const FAST_PATHS: bool = false;
    const EAGER_NOTIFY: bool = false;
    const RECEIVER_SESSION: bool = true;
    const CONNECT_REQUEST_MASK: u32 = 0xff;
    const NACKS: bool = true;
    const SEQ_BITS: u32 = omx::LibSeqnum::SEQ_BITS;
    const SEQ_START: u16 = 1;
    const PULL_REPLY_GRID: bool = true;
    const REGIONS: bool = true;
    const MESSAGE_SEQ: bool = true;
    const PULL_REPLY_MAX: usize = Self::MODE.pull_reply_max();
    const NOTIFY_ACK_NOW: bool = MX_WIRE;
    const FRAME_MAX: usize = Self::MTU;
    const MEDIUM_SLOT: usize = Self::MEDIUM_FRAG;
    const NOTIFY_LENGTH: bool = true;

    fn head_len(kind: Kind) -> usize {
        omx::HEAD_LEN
            + match kind {
                Kind::Tiny | Kind::Small => msg::MSG_LEN,
                Kind::Medium => msg::MEDIUM_LEN,
                Kind::Rndv => msg::RNDV_LEN,
                Kind::Pull => match Self::MODE {
                    WireMode::Default => pull::PULL_LEN_DEFAULT,
                    WireMode::MxCompat => pull::PULL_LEN_COMPAT,
                },
                Kind::PullReply => pull::PULL_REPLY_LEN,
                Kind::Notify => pull::NOTIFY_LEN,
                Kind::Connect | Kind::ConnectReply => control::CONNECT_LEN,
                Kind::Ack => control::TRUC_LEN,
                Kind::Nack => control::NACK_LEN,
            }
    }

    fn carries_ack(kind: Kind) -> bool {
        !matches!(kind, Kind::Pull | Kind::PullReply | Kind::Nack)
    }

    fn carries_session(kind: Kind) -> bool {
        !matches!(kind, Kind::PullReply | Kind::Nack)
    }

    fn parse(bytes: &[u8]) -> Result<Repr<'_>, Error> {
        let r = omx::Repr::parse_bytes(bytes, Self::MODE).map_err(err)?;
        from_omx(&r, Self::MODE)
    }

    fn parse_whole_eager(_bytes: &[u8]) -> Option<WholeEager<'_>> {
        None
    }

    fn emit_head(
        h: &Header,
        body: &Body<'_>,
        buf: &mut [u8],
        data_len: usize,
    ) -> Result<usize, Error> {
        if h.nic >> 48 != 0 {
            return Err(Error::Field("NIC id wider than a MAC"));
        }
        let repr = omx::Repr {
            head: EthHead {
                dst: [0; 6],
                src: mac_of(h.nic),
                peer_index: h.peer_index,
            },
            body: to_omx(h, body, data_len, Self::MODE)?,
        };
        // Unpadded: the data ends the frame, and the transport pads.
        let n = omx::HEAD_LEN + repr.body.buffer_len(Self::MODE);
        repr.emit(buf, Self::MODE).map_err(err)?;
        Ok(n)
    }

    fn emit_whole_eager(h: &Header, kind: Kind, match_info: u64, msg_len: u32, out: &mut [u8]) {
        // Never called (no fast paths); written for TINY and SMALL, whose head is
        // EAGER_HEAD long, to keep the trait's promise where it can be kept.
        let kind = if kind == Kind::Tiny {
            Kind::Tiny
        } else {
            Kind::Small
        };
        let body = Body::Eager {
            kind,
            match_info,
            msg_len,
            offset: 0,
            handle: NO_HANDLE,
            data: &[],
        };
        let mut buf = [0u8; omx::HEAD_LEN + msg::MSG_LEN + omx::SMALL_MAX];
        if Self::emit_head(h, &body, &mut buf, msg_len as usize).is_ok() {
            out.copy_from_slice(&buf[..Self::EAGER_HEAD]);
        }
    }
}
