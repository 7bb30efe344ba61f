//! NACKs, as Open-MX's driver and library use them (codecs with [`Codec::NACKS`]): a
//! frame from a known peer whose session is not the one this side expects is answered
//! with a NACK (NACK_LIB naming a message, rendezvous or notify by its sequence number,
//! NACK_MCP naming a pull by the puller's handle) rather than silently dropped, and a
//! NACK received ends the refused request (`MX_STATUS_BAD_SESSION` for a bad session)
//! instead of leaving it to resend until the request timeout.
//!
//! [`refusal`] is the other half of Open-MX's driver: the NACK a host answers a frame
//! for one of its endpoints that is not open (BAD_ENDPT / ENDPT_CLOSED), built from the
//! frame alone, for whoever receives frames for endpoints no engine holds (a transport,
//! the test network).

use super::*;

impl<L: Clone + PartialEq, C: Codec> Engine<L, C> {
    /// A frame from peer slot `h.peer_index` failed the session check: queues a NACK
    /// where Open-MX's driver sends one (messages, rendezvous, notifies, pulls; never
    /// acks). Only a peer known by its NIC id and endpoint is answered, and only once it
    /// has given us an index to address it with.
    pub(super) fn nack_bad_session(&mut self, h: &Header, body: &Body<'_>) {
        if !C::NACKS {
            return;
        }
        let pi = h.peer_index as usize;
        let Some(p) = self.peers.get(pi) else { return };
        if p.nic != h.nic || p.endpoint != h.src_endpoint || p.last_index == NO_PEER {
            return;
        }
        let (seq, handle) = match *body {
            Body::Eager { .. } | Body::Rndv { .. } | Body::Notify { .. } => (h.seq, NO_HANDLE),
            Body::Pull { recv_handle, .. } if recv_handle != NO_HANDLE => (0, recv_handle),
            _ => return,
        };
        self.txq.push_back(Tx::Nack {
            peer: pi as u16,
            reason: NACK_BAD_SESSION,
            seq,
            handle,
        });
    }

    /// A NACK from `peer`: the frame it names is one of ours still unacknowledged (a
    /// sequenced one), or a pull of a receive of ours still pulling from that peer; a
    /// NACK_LIB naming neither ends a connect in progress to the peer, as in Open-MX;
    /// anything else is stale (a repeat, or an answer to a frame since acknowledged).
    pub(super) fn on_nack(&mut self, peer: u16, reason: u8, seq: u16, handle: u32) {
        if !C::NACKS {
            self.stats.bad_frames += 1;
            return;
        }
        let code = match reason {
            NACK_BAD_SESSION => Code::PeerReset,
            NACK_ENDPOINT_CLOSED => Code::NoEndpoint,
            NACK_BAD_ENDPOINT => Code::BadEndpoint,
            _ => {
                self.stats.bad_frames += 1;
                return;
            }
        };
        let refused = if handle == NO_HANDLE {
            let p = &mut self.peers[peer as usize];
            p.tx_from_wire::<C>(seq)
                .is_some_and(|s| p.rel.take(s).is_some())
        } else {
            self.req(handle).is_some_and(|r| {
                r.kind == ReqKind::Recv
                    && r.peer == peer
                    && r.pull.is_some()
                    && r.state == ReqState::Active
            })
        };
        if !refused {
            // Open-MX's library gives a NACK that names no frame in flight to the
            // oldest connect in progress to that peer (its driver NACKs a connect to an
            // endpoint that is not open with `lib_seqnum` 0).
            let connect = (handle == NO_HANDLE)
                .then(|| {
                    self.reqs.iter().enumerate().find_map(|(i, r)| {
                        (r.kind == ReqKind::Connect
                            && r.state == ReqState::Active
                            && r.peer == peer)
                            .then(|| Request::new(i, r.gen).raw())
                    })
                })
                .flatten();
            match connect {
                Some(c) => {
                    self.stats.nacks_received += 1;
                    self.complete(c, code);
                }
                None => self.stats.stale_frames += 1,
            }
            return;
        }
        self.stats.nacks_received += 1;
        // The peer refuses every frame of this session as it refused this one, and
        // Open-MX's library ends each request as its own NACK arrives: the end is the
        // same, every request with that peer failed with the NACK's status, now.
        self.fail_peer(peer, code, false);
    }
}

/// Open-MX's endpoints per interface (`omx_endpoint_max`, 32 by default): a frame for
/// an id past it is refused with BAD_ENDPT, one for an id below it with no endpoint
/// open with ENDPT_CLOSED.
pub const OMX_ENDPOINT_MAX: u8 = 32;

/// The NACK reason Open-MX's driver gives a frame for endpoint `id` that is not open,
/// on a host with `endpoints` endpoint ids.
pub fn unopened_reason(id: u8, endpoints: u8) -> u8 {
    if id >= endpoints {
        NACK_BAD_ENDPOINT
    } else {
        NACK_ENDPOINT_CLOSED
    }
}

/// The NACK (`reason`: BAD_ENDPT or ENDPT_CLOSED) that the host of NIC `nic` sends for
/// `frame`, addressed to one of its endpoints that is not open, as Open-MX's driver
/// answers it: NACK_LIB naming a connect, message, rendezvous or notify by its
/// `lib_seqnum` (a connect's is 0), NACK_MCP naming a pull by the puller's handle; from
/// the refused endpoint to the sender. Its head's peer index is the sender's index for
/// us where the frame gives it (a connect's), else none (`0xffff`: Open-MX's receiver
/// then finds the peer by its MAC). Written into `buf`; its length, or `None` for
/// frames Open-MX does not answer (acks, pull replies, NACKs), frames that do not
/// parse, frames of `nic` itself, and layouts without NACKs.
pub fn refusal<C: Codec>(frame: &[u8], nic: u64, reason: u8, buf: &mut [u8]) -> Option<usize> {
    if !C::NACKS {
        return None;
    }
    let r = C::parse(frame).ok()?;
    let h = r.header;
    if h.nic == nic & 0xffff_ffff_ffff {
        return None;
    }
    let (peer_index, seq, handle) = match r.body {
        Body::Connect { index, .. } | Body::ConnectReply { index, .. } => (index, h.seq, NO_HANDLE),
        Body::Eager { .. } | Body::Rndv { .. } | Body::Notify { .. } => (NO_PEER, h.seq, NO_HANDLE),
        Body::Pull { recv_handle, .. } if recv_handle != NO_HANDLE => (NO_PEER, 0, recv_handle),
        _ => return None,
    };
    let head = Header {
        peer_index,
        nic,
        src_endpoint: h.dst_endpoint,
        dst_endpoint: h.src_endpoint,
        session: 0,
        seq: 0,
        ack: 0,
    };
    let body = Body::Nack {
        reason,
        seq,
        handle,
    };
    C::emit_head(&head, &body, buf, 0).ok()
}
