//! Frames in and out: the one place where the engine's protocol events ([`Header`],
//! [`Body`]) meet bytes, through the engine's [`Codec`] (the frame layout: myrix's
//! `wire::mx` by default; another layout is another codec, not a change here); and the
//! transmit queue ([`Tx`]) that frames are built from.
//!
//! Must never change protocol state beyond what emitting a frame means (marking a
//! sequenced frame sent, clearing the piggy-backed ack), and never write a field's
//! offset by hand: offsets are the codec's.

use super::*;

/// Work for `poll_transmit`, in order.
#[derive(Clone, Copy, Debug)]
pub(super) enum Tx {
    /// The unacked frame with this sequence number (fragment `frag` of it where a
    /// number covers a message, [`Codec::MESSAGE_SEQ`]; 0 otherwise).
    Seq {
        peer: u16,
        seq: u16,
        frag: u16,
    },
    Ack {
        peer: u16,
    },
    Connect {
        req: u32,
    },
    ConnectReply {
        peer: u16,
        status: u8,
        request: u32,
        /// The requester's session, echoed.
        echo: u32,
    },
    Refuse {
        peer: u16,
        status: u8,
        request: u32,
        /// The requester's session, echoed.
        echo: u32,
    },
    Pull {
        req: u32,
        offset: usize,
        len: usize,
    },
    /// Refuses a frame of `peer` ([`Body::Nack`]).
    Nack {
        peer: u16,
        reason: u8,
        seq: u16,
        handle: u32,
    },
    PullReply {
        peer: u16,
        send: u32,
        recv_handle: u32,
        offset: usize,
        end: usize,
    },
}

impl<L: Clone + PartialEq, C: Codec> Engine<L, C> {
    /// A frame's events; `None` for bytes that are not a valid frame.
    #[inline]
    pub(super) fn read_frame(bytes: &[u8]) -> Option<Repr<'_>> {
        C::parse(bytes).ok()
    }

    /// The receive fast paths' shortcut: a whole message in one eager frame.
    #[inline(always)]
    pub(super) fn read_whole_eager(bytes: &[u8]) -> Option<WholeEager<'_>> {
        C::parse_whole_eager(bytes)
    }

    /// Writes the frame of a whole eager message of `len` bytes (the concatenation of
    /// `segments`) into `buf`; its length, or `None` when `buf` is too short.
    #[inline(always)]
    pub(super) fn write_whole_eager(
        head: &Header,
        kind: Kind,
        match_info: u64,
        segments: &[&[u8]],
        len: usize,
        buf: &mut [u8],
    ) -> Option<usize> {
        let n = C::EAGER_HEAD + len;
        let (fixed, rest) = buf.get_mut(..n)?.split_at_mut(C::EAGER_HEAD);
        C::emit_whole_eager(head, kind, match_info, len as u32, fixed);
        let mut at = 0;
        for s in segments {
            copy_short(&mut rest[at..at + s.len()], s);
            at += s.len();
        }
        Some(n)
    }

    /// Bytes of data a frame of `kind` carries within `mtu` bytes.
    #[inline]
    pub(super) fn data_room(mtu: usize, kind: Kind) -> usize {
        mtu.saturating_sub(C::head_len(kind))
    }

    /// The header of a frame to `peer` numbered `seq`, carrying our ack.
    #[inline]
    pub(super) fn header(&self, peer: u16, seq: u16) -> Header {
        let p = &self.peers[peer as usize];
        Header {
            peer_index: p.their_index,
            nic: self.nic,
            src_endpoint: self.endpoint,
            dst_endpoint: p.endpoint,
            session: if C::RECEIVER_SESSION {
                p.session
            } else {
                p.my_session
            },
            seq: p.tx_wire::<C>(seq),
            ack: p.ack_wire::<C>(),
        }
    }

    /// Whether [`Engine::poll_transmit`] has a frame to give.
    #[inline]
    pub fn has_transmit(&self) -> bool {
        !self.txq.is_empty()
    }

    /// Writes the next frame into `buf` (at least [`Config::mtu`] bytes); returns where
    /// it goes and its length.
    pub fn poll_transmit(&mut self, now: u64, buf: &mut [u8]) -> Option<(L, usize)> {
        self.poll_transmit_lent(now, buf, None)
    }

    /// [`Engine::poll_transmit`] while a send's message is lent (see [`Engine::isend_lent`]).
    pub fn poll_transmit_lent(
        &mut self,
        now: u64,
        buf: &mut [u8],
        lent: Lent<'_>,
    ) -> Option<(L, usize)> {
        while !self.txq.is_empty() {
            if let Some(x) = self.transmit_front(now, buf, lent) {
                return Some(x);
            }
        }
        None
    }

    /// Where the next frame of [`Engine::poll_transmit`] goes, when that is known
    /// without emitting it: the caller can then fetch room for it at the destination
    /// (a ring slot) and emit with [`Engine::transmit_front`], saving a copy.
    pub fn next_transmit_to(&self) -> Option<&L> {
        let peer = match *self.txq.front()? {
            Tx::Seq { peer, .. }
            | Tx::Ack { peer }
            | Tx::ConnectReply { peer, .. }
            | Tx::Refuse { peer, .. }
            | Tx::Nack { peer, .. }
            | Tx::PullReply { peer, .. } => peer,
            Tx::Connect { req } | Tx::Pull { req, .. } => self.req(req)?.peer,
        };
        self.peers.get(peer as usize).map(|p| &p.loc)
    }

    /// Emits the first queued frame into `buf`; `None` when it had become stale (an
    /// acknowledged frame, a finished request), with nothing to send. Call it right
    /// after [`Engine::next_transmit_to`]: the frame goes where that said.
    pub fn transmit_front(
        &mut self,
        now: u64,
        buf: &mut [u8],
        lent: Lent<'_>,
    ) -> Option<(L, usize)> {
        let tx = self.txq.pop_front()?;
        // Every frame carries the ack, but where the layout has no room for it.
        let carries_ack = match tx {
            Tx::Pull { .. } => C::carries_ack(Kind::Pull),
            Tx::PullReply { .. } => C::carries_ack(Kind::PullReply),
            Tx::Nack { .. } => C::carries_ack(Kind::Nack),
            _ => true,
        };
        let (peer, n) = self.emit(now, tx, buf, lent)?;
        self.stats.frames_out += 1;
        let p = &mut self.peers[peer as usize];
        if carries_ack {
            p.rel.piggybacked();
        }
        Some((p.loc.clone(), n))
    }

    pub(super) fn emit(
        &mut self,
        now: u64,
        tx: Tx,
        buf: &mut [u8],
        lent: Lent<'_>,
    ) -> Option<(u16, usize)> {
        match tx {
            Tx::Seq { peer, seq, frag } => {
                let (what, again) = self.peers[peer as usize].rel.sending(seq, now)?;
                if again && frag == 0 {
                    self.stats.retransmits += 1;
                }
                let h = self.header(peer, seq);
                // Whether this frame is the item's last (a message item is cut into
                // fragments here, each emitted in turn).
                let mut last = true;
                let n = match what {
                    SeqWhat::Eager {
                        req,
                        kind,
                        offset,
                        len,
                    } => {
                        let (offset, len) = if C::MESSAGE_SEQ {
                            let f = self.eager_frag();
                            let o = (frag as usize * f).min(len as usize);
                            last = o + f >= len as usize;
                            (o as u32, (len as usize - o).min(f) as u32)
                        } else {
                            (offset, len)
                        };
                        let r = self.req(req)?;
                        let (o, l) = (offset as usize, len as usize);
                        let body = Body::Eager {
                            kind,
                            match_info: r.match_info,
                            msg_len: r.msg_len as u32,
                            offset,
                            handle: if r.need_notify { req } else { NO_HANDLE },
                            data: &[],
                        };
                        let n = C::emit_head(&h, &body, buf, l).ok()?;
                        if r.lent {
                            let segs = lent_for(req, lent)?;
                            gather(segs, o, &mut buf[n - l..n]);
                        } else {
                            buf[n - l..n].copy_from_slice(&r.data[o..o + l]);
                        }
                        n
                    }
                    SeqWhat::Rndv { req } => {
                        let r = self.req(req)?;
                        let body = Body::Rndv {
                            match_info: r.match_info,
                            msg_len: r.msg_len as u32,
                            handle: if C::REGIONS { r.region } else { req },
                        };
                        C::emit_head(&h, &body, buf, 0).ok()?
                    }
                    SeqWhat::Notify { handle, length } => {
                        C::emit_head(&h, &Body::Notify { handle, length }, buf, 0).ok()?
                    }
                };
                if !last {
                    self.txq.push_front(Tx::Seq {
                        peer,
                        seq,
                        frag: frag + 1,
                    });
                }
                if self.cfg.reliable_transport {
                    if last {
                        self.peers[peer as usize].rel.take(seq);
                        self.frame_done(what);
                        self.fill_window(peer);
                    }
                } else {
                    self.arm_peer(peer, now + self.cfg.resend_ns);
                }
                Some((peer, n))
            }
            Tx::Ack { peer } => {
                let p = &mut self.peers[peer as usize];
                p.rel.ack_sent();
                if p.their_index == NO_PEER {
                    return None;
                }
                self.stats.acks_sent += 1;
                let h = self.header(peer, 0);
                Some((peer, C::emit_head(&h, &Body::Ack, buf, 0).ok()?))
            }
            Tx::Connect { req } => {
                let r = self.req(req)?;
                if r.state != ReqState::Active {
                    return None;
                }
                let (peer, key) = (r.peer, r.key);
                let mut h = self.header(peer, 0);
                h.peer_index = NO_PEER;
                h.session = self.peers[peer as usize].my_session;
                let body = Body::Connect {
                    key,
                    index: peer,
                    request: req,
                };
                Some((peer, C::emit_head(&h, &body, buf, 0).ok()?))
            }
            Tx::ConnectReply {
                peer,
                status,
                request,
                echo,
            }
            | Tx::Refuse {
                peer,
                status,
                request,
                echo,
            } => {
                let mut h = self.header(peer, 0);
                h.peer_index = NO_PEER;
                h.session = self.peers[peer as usize].my_session;
                let body = Body::ConnectReply {
                    status,
                    index: peer,
                    request,
                    session: echo,
                };
                Some((peer, C::emit_head(&h, &body, buf, 0).ok()?))
            }
            Tx::Nack {
                peer,
                reason,
                seq,
                handle,
            } => {
                let mut h = self.header(peer, 0);
                h.peer_index = self.peers[peer as usize].last_index;
                self.stats.nacks_sent += 1;
                let body = Body::Nack {
                    reason,
                    seq,
                    handle,
                };
                Some((peer, C::emit_head(&h, &body, buf, 0).ok()?))
            }
            Tx::Pull { req, offset, len } => {
                let r = self.req(req)?;
                let pull = r.pull.as_ref()?;
                let peer = r.peer;
                let body = Body::Pull {
                    handle: pull.sender_handle,
                    recv_handle: req,
                    offset: offset as u32,
                    length: len as u32,
                    // The whole pull, as Open-MX's PULL carries it in `total_length`.
                    total: r.xfer_len as u32,
                };
                let h = self.header(peer, 0);
                Some((peer, C::emit_head(&h, &body, buf, 0).ok()?))
            }
            Tx::PullReply {
                peer,
                send,
                recv_handle,
                offset,
                end,
            } => {
                let room = Self::data_room(self.cfg.mtu.min(buf.len()), Kind::PullReply)
                    .min(C::PULL_REPLY_MAX)
                    .max(1);
                let n = if C::PULL_REPLY_GRID {
                    (end - offset).min(room - offset % room)
                } else {
                    (end - offset).min(room)
                };
                if offset + n < end {
                    self.txq.push_front(Tx::PullReply {
                        peer,
                        send,
                        recv_handle,
                        offset: offset + n,
                        end,
                    });
                }
                let h = self.header(peer, 0);
                let r = self.req(send)?;
                let lent_segs = if r.lent {
                    Some(lent_for(send, lent)?)
                } else if r.data.len() < end {
                    return None;
                } else {
                    None
                };
                let body = Body::PullReply {
                    recv_handle,
                    offset: offset as u32,
                    data: &[],
                };
                let len = C::emit_head(&h, &body, buf, n).ok()?;
                match lent_segs {
                    Some(segs) => gather(segs, offset, &mut buf[len - n..len]),
                    None => buf[len - n..len].copy_from_slice(&r.data[offset..offset + n]),
                }
                Some((peer, len))
            }
        }
    }
}
