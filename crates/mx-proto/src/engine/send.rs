//! Starting sends: copying or taking or borrowing the message, the send window, and
//! the send fast path of lossless transports.

use super::*;

impl<L: Clone + PartialEq, C: Codec> Engine<L, C> {
    /// Sends the concatenation of `segments`, copied at once (the caller may reuse them).
    /// With `synchronous`, completes only when the receiver has matched it.
    pub fn isend(
        &mut self,
        _now: u64,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        context: u64,
        synchronous: bool,
    ) -> Result<Request, Error> {
        let len: usize = segments.iter().map(|s| s.len()).sum();
        self.check_send(peer, len)?;
        let h = self.alloc(ReqKind::Send, context)?;
        concat_into(&mut self.reqs[Request(h).index()].data, segments, len);
        Ok(self.start_send(h, peer, match_info, synchronous))
    }

    /// [`Engine::isend`] with the fast path of lossless transports: when nothing is
    /// queued for the peer and the message fits one frame, the frame is written into
    /// `buf` at once and returned for the caller to hand to the transport, and the send
    /// is complete (a lossless transport completes sends on emission). Otherwise the
    /// message takes the ordinary path and comes out of [`Engine::poll_transmit`].
    #[allow(clippy::too_many_arguments)]
    pub fn isend_into(
        &mut self,
        now: u64,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        context: u64,
        synchronous: bool,
        buf: &mut [u8],
    ) -> Result<(Request, Option<(L, usize)>), Error> {
        if synchronous {
            let r = self.isend(now, peer, segments, match_info, context, synchronous)?;
            return Ok((r, None));
        }
        match self.fast_frame(peer, segments, match_info, buf) {
            Some((loc, n)) => {
                let r = self.fast_sent(peer, segments, match_info, context)?;
                Ok((r, Some((loc, n))))
            }
            None => {
                let r = self.isend(now, peer, segments, match_info, context, false)?;
                Ok((r, None))
            }
        }
    }

    /// The send fast path, first half: when the transport is lossless, nothing is queued
    /// for the peer, the message fits one frame and a request is free, writes the
    /// message's frame into `buf`, counts it sent and returns where it goes and its
    /// length. The caller
    /// hands the frame to the transport and then calls [`Engine::fast_sent`] with the
    /// same arguments; nothing else may happen in between. `None`, having changed
    /// nothing, when the message must take [`Engine::isend`].
    ///
    /// Split in two so the frame leaves before the request's bookkeeping is done: that
    /// bookkeeping is off the latency path.
    #[inline(always)]
    pub fn fast_frame(
        &mut self,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        buf: &mut [u8],
    ) -> Option<(L, usize)> {
        if !C::FAST_PATHS || !self.cfg.reliable_transport || !self.txq.is_empty() {
            return None;
        }
        let len: usize = segments.iter().map(|s| s.len()).sum();
        let room = self.free_reqs.len() + MAX_REQS.saturating_sub(self.reqs.len());
        if len > self.eager_frag() || len > self.cfg.medium_max || room == 0 {
            return None;
        }
        let kind = self.eager_kind(len);
        let p = self.peers.get(peer.0 as usize)?;
        if p.their_index == NO_PEER
            || p.rel.is_unreachable()
            || !p.waiting.is_empty()
            || !p.rel.all_acked()
        {
            return None;
        }
        let head = self.header(peer.0, p.rel.next_seq());
        let n = Self::write_whole_eager(&head, kind, match_info, segments, len, buf)?;
        let p = &mut self.peers[peer.0 as usize];
        p.rel.push_untracked();
        self.stats.frames_out += 1;
        self.stats.fast_sends += 1;
        Some((p.loc.clone(), n))
    }

    /// The send fast path, second half: the request of the message whose frame
    /// [`Engine::fast_frame`] just wrote, already complete. (It cannot run out of
    /// requests: `fast_frame` checked that one is free.)
    #[inline(always)]
    pub fn fast_sent(
        &mut self,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        context: u64,
    ) -> Result<Request, Error> {
        let len: usize = segments.iter().map(|s| s.len()).sum();
        let h = self.alloc(ReqKind::Send, context)?;
        let r = &mut self.reqs[Request(h).index()];
        r.peer = peer.0;
        r.match_info = match_info;
        r.msg_len = len;
        r.xfer_len = len;
        r.state = ReqState::Done;
        self.completed.push_back(h);
        Ok(Request(h))
    }

    /// Sends `data`, taking it (no copy); the completion hands it back, as the buffer of
    /// its [`Engine::test`].
    pub fn isend_vec(
        &mut self,
        _now: u64,
        peer: PeerId,
        data: Vec<u8>,
        match_info: u64,
        context: u64,
        synchronous: bool,
    ) -> Result<Request, Error> {
        self.check_send(peer, data.len())?;
        let h = self.alloc(ReqKind::Send, context)?;
        let r = &mut self.reqs[Request(h).index()];
        r.data = data;
        r.give_back = true;
        Ok(self.start_send(h, peer, match_info, synchronous))
    }

    /// Starts sending a message of `len` bytes that the caller keeps: no copy is taken.
    /// Every call that may emit its bytes ([`Engine::transmit_front`],
    /// [`Engine::poll_transmit_lent`]) must be given it as [`Lent`] until the request
    /// completes or [`Engine::unlend`] copies it in; a frame that needs the bytes and
    /// does not get them is not sent (a caller's bug, caught by a debug assertion).
    pub fn isend_lent(
        &mut self,
        _now: u64,
        peer: PeerId,
        len: usize,
        match_info: u64,
        context: u64,
        synchronous: bool,
    ) -> Result<Request, Error> {
        self.check_send(peer, len)?;
        let h = self.alloc(ReqKind::Send, context)?;
        self.reqs[Request(h).index()].lent = true;
        Ok(self.start_send_len(h, peer, match_info, synchronous, len))
    }

    /// The caller stops lending a send's message: what is still needed is copied in.
    pub fn unlend(&mut self, req: Request, segments: &[&[u8]]) {
        let Some(r) = self.req_mut(req.raw()) else {
            return;
        };
        if r.lent {
            r.lent = false;
            if r.state != ReqState::Done {
                let len = r.msg_len;
                concat_into(&mut r.data, segments, len);
            }
        }
    }

    pub(super) fn check_send(&self, peer: PeerId, len: usize) -> Result<(), Error> {
        let max = self.cfg.max_message.min(u32::MAX as usize);
        if len > max {
            return Err(Error::TooLarge { len, max });
        }
        self.check_peer(peer)
    }

    /// Queues the message now in request `h`'s vector.
    pub(super) fn start_send(
        &mut self,
        h: u32,
        peer: PeerId,
        match_info: u64,
        synchronous: bool,
    ) -> Request {
        let len = self.reqs[Request(h).index()].data.len();
        self.start_send_len(h, peer, match_info, synchronous, len)
    }

    /// Queues the message of `len` bytes of request `h` (in its vector, or lent).
    pub(super) fn start_send_len(
        &mut self,
        h: u32,
        peer: PeerId,
        match_info: u64,
        synchronous: bool,
        len: usize,
    ) -> Request {
        let large = self.cfg.medium_max;
        let r = &mut self.reqs[Request(h).index()];
        r.peer = peer.0;
        r.match_info = match_info;
        r.msg_len = len;
        r.xfer_len = len;
        r.state = ReqState::Active;
        r.need_notify = synchronous || len > large;
        if self.peers[peer.0 as usize].rel.is_unreachable() {
            self.complete(h, Code::Unreachable);
            return Request(h);
        }
        self.peers[peer.0 as usize].waiting.push_back(h);
        self.fill_window(peer.0);
        Request(h)
    }

    /// The message class of an eager message of `len` bytes.
    pub(super) fn eager_kind(&self, len: usize) -> Kind {
        if len <= self.cfg.tiny_max {
            Kind::Tiny
        } else if len <= self.cfg.small_max {
            Kind::Small
        } else {
            Kind::Medium
        }
    }

    pub(super) fn eager_frag(&self) -> usize {
        let room = Self::data_room(self.cfg.mtu, Kind::Medium);
        self.cfg.medium_frag.min(room).max(1)
    }

    /// Moves waiting messages into the send window as sequenced frames.
    pub(super) fn fill_window(&mut self, peer: u16) {
        let frag = self.eager_frag();
        loop {
            let p = &self.peers[peer as usize];
            let Some(&h) = p.waiting.front() else { return };
            let Some(r) = self.req(h) else {
                self.peers[peer as usize].waiting.pop_front();
                continue;
            };
            let len = r.msg_len;
            // A layout without a notify handle in eager frames sends synchronous
            // messages by rendezvous.
            let large = len > self.cfg.medium_max || (r.need_notify && !C::EAGER_NOTIFY);
            // One sequenced item per frame, or (Open-MX) one per message, its fragments
            // sharing the number.
            let items = if large || C::MESSAGE_SEQ {
                1
            } else {
                len.div_ceil(frag).max(1)
            };
            if !p.rel.has_room(items, &self.reliability) {
                return;
            }
            // Where the layout names large sends by region, one must be free; without,
            // this send and those behind it wait for one.
            if C::REGIONS && large && r.region == NO_HANDLE {
                match self.regions.alloc(h) {
                    Some(name) => self.reqs[Request(h).index()].region = name,
                    None => {
                        if !self.regions.blocked.contains(&peer) {
                            self.regions.blocked.push_back(peer);
                        }
                        return;
                    }
                }
            }
            let kind = self.eager_kind(len);
            let p = &mut self.peers[peer as usize];
            p.waiting.pop_front();
            for i in 0..items {
                let what = if large {
                    SeqWhat::Rndv { req: h }
                } else {
                    let off = i * frag;
                    SeqWhat::Eager {
                        req: h,
                        kind,
                        offset: off as u32,
                        // A message item covers the message (its frames are cut at
                        // emission).
                        len: if C::MESSAGE_SEQ {
                            len
                        } else {
                            (len - off).min(frag)
                        } as u32,
                    }
                };
                let seq = p.rel.push(what);
                self.txq.push_back(Tx::Seq { peer, seq, frag: 0 });
            }
            self.reqs[Request(h).index()].outstanding = items as u32;
        }
    }
}
