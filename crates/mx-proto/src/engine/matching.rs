//! Matching: the posted receives, the unexpected queue and the unexpected-message
//! handler; eager and rendezvous arrivals; the lossless receive fast paths.
//!
//! Must never look at sequence numbers or acks: frames reach it in order.

use super::*;

/// The message being received from a peer: its later fragments follow in sequence.
#[derive(Clone, Copy, Debug)]
pub(super) enum RxTarget {
    Recv(u32),
    Unexpected(u64),
}

#[derive(Clone, Copy, Debug)]
pub(super) struct RxCurrent {
    pub(super) target: RxTarget,
    pub(super) next_offset: usize,
    pub(super) msg_len: usize,
}

pub(super) struct Unexpected {
    pub(super) id: u64,
    pub(super) peer: u16,
    pub(super) match_info: u64,
    pub(super) msg_len: usize,
    /// Eager data so far (empty for a rendezvous).
    pub(super) data: Vec<u8>,
    pub(super) received: usize,
    /// Sender handle of a rendezvous, or of a synchronous eager send.
    pub(super) handle: u32,
    pub(super) rndv: bool,
}

impl<L: Clone + PartialEq, C: Codec> Engine<L, C> {
    /// Posts a receive for a message with `(message_match & mask) == match_info`.
    pub fn irecv(
        &mut self,
        now: u64,
        buf: RecvBuf,
        match_info: u64,
        mask: u64,
        context: u64,
    ) -> Result<Request, Error> {
        if match_info & !mask != 0 {
            return Err(Error::BadMatchMask { match_info, mask });
        }
        let h = self.alloc(ReqKind::Recv, context)?;
        {
            let r = &mut self.reqs[Request(h).index()];
            r.match_info = match_info;
            r.mask = mask;
            r.recv = Some(buf);
        }
        // Unexpected messages first, oldest first.
        if let Some(pos) = self
            .unexpected
            .iter()
            .position(|u| u.match_info & mask == match_info)
        {
            let u = self.unexpected.remove(pos).expect("position found");
            self.unexpected_bytes -= u.data.len();
            self.take_unexpected(now, h, u);
        } else {
            self.posted.push_back(h);
        }
        Ok(Request(h))
    }

    /// A receive matched an unexpected message.
    pub(super) fn take_unexpected(&mut self, now: u64, h: u32, u: Unexpected) {
        let idx = Request(h).index();
        self.bind_match(h, u.peer, u.match_info, u.msg_len);
        if u.rndv {
            self.start_pull(now, h, u.handle);
            return;
        }
        let r = &mut self.reqs[idx];
        let buf = r.recv.as_mut().expect("receive has a buffer");
        r.xfer_len = u.msg_len.min(buf.len());
        let xfer = r.xfer_len;
        buf.write_at(0, &u.data[..u.received]);
        if u.handle != NO_HANDLE {
            self.queue_notify(u.peer, u.handle, xfer);
        }
        let mut data = u.data;
        data.clear();
        if self.keep(&data) {
            self.pool.push(data);
        }
        if u.received == u.msg_len {
            self.finish_recv(h);
        } else if let Some(cur) = self.peers[u.peer as usize].rx_current.as_mut() {
            // Still arriving: the rest goes straight to the receive.
            if matches!(cur.target, RxTarget::Unexpected(id) if id == u.id) {
                cur.target = RxTarget::Recv(h);
            }
        }
    }

    /// A receive matched a message: it takes the message's source, match info and length.
    pub(super) fn bind_match(
        &mut self,
        h: u32,
        peer: u16,
        match_info: u64,
        msg_len: usize,
    ) -> &mut Req {
        let r = &mut self.reqs[Request(h).index()];
        r.state = ReqState::Active;
        r.peer = peer;
        r.match_info = match_info;
        r.msg_len = msg_len;
        r
    }

    #[inline(always)]
    pub(super) fn finish_recv(&mut self, h: u32) {
        let r = &self.reqs[Request(h).index()];
        let code = Code::of_receive(r.xfer_len, r.msg_len);
        self.complete(h, code);
    }

    #[inline(always)]
    pub(super) fn find_posted(&mut self, match_info: u64) -> Option<u32> {
        let &first = self.posted.front()?;
        let r = &self.reqs[Request(first).index()];
        if match_info & r.mask == r.match_info {
            return self.posted.pop_front();
        }
        let pos = self.posted.iter().position(|&h| {
            let r = &self.reqs[Request(h).index()];
            match_info & r.mask == r.match_info
        })?;
        self.posted.remove(pos)
    }
    /// Status of the first unexpected message matching, without receiving it.
    pub fn iprobe(&self, match_info: u64, mask: u64) -> Result<Option<Status>, Error> {
        if match_info & !mask != 0 {
            return Err(Error::BadMatchMask { match_info, mask });
        }
        Ok(self
            .unexpected
            .iter()
            .find(|u| u.match_info & mask == match_info)
            .map(|u| Status {
                code: Code::Success,
                source: PeerId(u.peer),
                match_info: u.match_info,
                msg_len: u.msg_len,
                xfer_len: 0,
                context: 0,
            }))
    }

    /// A whole message in one frame from a connected peer with nothing half-received,
    /// wanting no notify: what the lossless receive fast paths may take straight from
    /// the frame bytes. With the peer's index.
    #[inline(always)]
    pub(super) fn whole_eager_in_order<'b>(
        &self,
        bytes: &'b [u8],
    ) -> Option<(WholeEager<'b>, usize)> {
        if !C::FAST_PATHS {
            return None;
        }
        let m = Self::read_whole_eager(bytes)?;
        let hd = &m.header;
        let pi = hd.peer_index as usize;
        let known = self.peers.get(pi).is_some_and(|p| {
            p.nic == hd.nic
                && p.endpoint == hd.src_endpoint
                && hd.session
                    == if C::RECEIVER_SESSION {
                        p.my_session
                    } else {
                        p.session
                    }
                && p.rx_current.is_none()
        });
        if !known || hd.dst_endpoint != self.endpoint || m.handle != NO_HANDLE {
            return None;
        }
        Some((m, pi))
    }

    /// The receive fast path of lossless transports: a whole message in one frame, from
    /// a connected peer with nothing half-received, for a posted receive and with no
    /// notify wanted. Returns false, having changed nothing, for any other frame.
    pub(super) fn whole_eager_fast(&mut self, bytes: &[u8]) -> bool {
        let Some((m, pi)) = self.whole_eager_in_order(bytes) else {
            return false;
        };
        let Some(h) = self.find_posted(m.match_info) else {
            return false;
        };
        let len = m.data.len();
        let r = self.bind_match(h, pi as u16, m.match_info, len);
        if let Some(buf) = r.recv.as_mut() {
            r.xfer_len = len.min(buf.len());
            buf.write_at(0, m.data);
        }
        let p = &mut self.peers[pi];
        p.rel.delivered_untracked();
        self.stats.fast_recvs += 1;
        self.finish_recv(h);
        true
    }

    /// Whether a blocking receive may wait through [`Engine::handle_frame_direct`]
    /// instead of a posted request: the transport is lossless, no receive is posted
    /// (it would come first), no unexpected message matches (it would be taken first)
    /// and no unexpected-message handler is set (it must not see a message that a
    /// posted receive would have taken).
    #[inline]
    pub fn direct_ok(&self, match_info: u64, mask: u64) -> bool {
        self.cfg.reliable_transport
            && self.posted.is_empty()
            && self.handler.is_none()
            && !self
                .unexpected
                .iter()
                .any(|u| u.match_info & mask == match_info)
    }

    /// [`Engine::handle_frame`] while a blocking receive waits without a request (see
    /// [`Engine::direct_ok`]): a whole single-frame message that matches it goes
    /// straight into its buffer, as a posted receive's would. Any frame that takes the
    /// general path sets [`DirectRecv::slow`]: it may have left a matching message in
    /// the unexpected queue, so the caller must look there (and post a receive) before
    /// taking another frame directly, or messages would be matched out of order.
    #[inline(always)]
    pub fn handle_frame_direct(
        &mut self,
        now: u64,
        from: &L,
        bytes: &[u8],
        d: &mut DirectRecv,
    ) -> Handled {
        // Only where frames cannot be lost or reordered: no sequence check here.
        if self.cfg.reliable_transport && d.done.is_none() && !d.slow {
            if let Some((m, pi)) = self.whole_eager_in_order(bytes) {
                if m.match_info & d.mask == d.match_info {
                    let len = m.data.len();
                    let xfer = len.min(d.buf.len());
                    d.buf.write_at(0, m.data);
                    let p = &mut self.peers[pi];
                    p.rel.delivered_untracked();
                    self.stats.frames_in += 1;
                    self.stats.fast_recvs += 1;
                    d.done = Some(Status {
                        code: Code::of_receive(xfer, len),
                        source: PeerId(pi as u16),
                        match_info: m.match_info,
                        msg_len: len,
                        xfer_len: xfer,
                        context: 0,
                    });
                    return Handled::Accepted;
                }
            }
            d.slow = true;
        }
        self.handle_frame(now, from, bytes)
    }
    pub(super) fn unexpected_full(&self, extra: usize) -> bool {
        self.unexpected.len() >= self.cfg.unexpected_max
            || self.unexpected_bytes + extra > self.cfg.unexpected_max_bytes
    }

    /// Finds the receive for a new message: posted, the handler's, or none.
    pub(super) fn match_new(&mut self, peer: u16, match_info: u64, msg_len: usize) -> Option<u32> {
        if let Some(h) = self.find_posted(match_info) {
            return Some(h);
        }
        let mut handler = self.handler.take()?;
        let info = UnexpectedInfo {
            source: PeerId(peer),
            match_info,
            msg_len,
        };
        let action = handler(&info);
        self.handler = Some(handler);
        match action {
            HandlerAction::Continue => None,
            HandlerAction::Receive { buf, context } => {
                let h = self.alloc(ReqKind::Recv, context).ok()?;
                let r = &mut self.reqs[Request(h).index()];
                r.match_info = match_info;
                r.mask = u64::MAX;
                r.recv = Some(buf);
                Some(h)
            }
        }
    }

    pub(super) fn on_eager(
        &mut self,
        peer: u16,
        match_info: u64,
        msg_len: usize,
        offset: usize,
        handle: u32,
        data: &[u8],
    ) -> Handled {
        let cur = self.peers[peer as usize].rx_current;
        let target = match cur {
            Some(c) => {
                if offset != c.next_offset || msg_len != c.msg_len {
                    self.stats.bad_frames += 1;
                    return Handled::Accepted;
                }
                c.target
            }
            None => {
                if offset != 0 {
                    self.stats.bad_frames += 1;
                    return Handled::Accepted;
                }
                match self.match_new(peer, match_info, msg_len) {
                    Some(h) => {
                        let r = self.bind_match(h, peer, match_info, msg_len);
                        r.xfer_len = msg_len.min(r.recv.as_ref().map_or(0, |b| b.len()));
                        let xfer = r.xfer_len;
                        if handle != NO_HANDLE {
                            self.queue_notify(peer, handle, xfer);
                        }
                        RxTarget::Recv(h)
                    }
                    None => {
                        if self.unexpected_full(msg_len) {
                            return Handled::Busy;
                        }
                        let id = self.next_unexpected_id;
                        self.next_unexpected_id += 1;
                        let mut buf = self.pool.pop().unwrap_or_default();
                        buf.clear();
                        buf.resize(msg_len, 0);
                        self.unexpected_bytes += msg_len;
                        self.unexpected.push_back(Unexpected {
                            id,
                            peer,
                            match_info,
                            msg_len,
                            data: buf,
                            received: 0,
                            handle,
                            rndv: false,
                        });
                        RxTarget::Unexpected(id)
                    }
                }
            }
        };
        let end = offset + data.len();
        match target {
            RxTarget::Recv(h) => {
                if let Some(buf) = self.reqs[Request(h).index()].recv.as_mut() {
                    buf.write_at(offset, data);
                }
            }
            RxTarget::Unexpected(id) => {
                if let Some(u) = self.unexpected.iter_mut().find(|u| u.id == id) {
                    u.data[offset..end].copy_from_slice(data);
                    u.received = end;
                }
            }
        }
        if end >= msg_len {
            self.peers[peer as usize].rx_current = None;
            if let RxTarget::Recv(h) = target {
                self.finish_recv(h);
            }
        } else {
            self.peers[peer as usize].rx_current = Some(RxCurrent {
                target,
                next_offset: end,
                msg_len,
            });
        }
        Handled::Accepted
    }

    pub(super) fn on_rndv(
        &mut self,
        now: u64,
        peer: u16,
        match_info: u64,
        msg_len: usize,
        handle: u32,
    ) -> Handled {
        if self.peers[peer as usize].rx_current.is_some() {
            self.stats.bad_frames += 1;
            return Handled::Accepted;
        }
        match self.match_new(peer, match_info, msg_len) {
            Some(h) => {
                self.bind_match(h, peer, match_info, msg_len);
                self.start_pull(now, h, handle);
            }
            None => {
                if self.unexpected_full(0) {
                    return Handled::Busy;
                }
                let id = self.next_unexpected_id;
                self.next_unexpected_id += 1;
                self.unexpected.push_back(Unexpected {
                    id,
                    peer,
                    match_info,
                    msg_len,
                    data: Vec::new(),
                    received: 0,
                    handle,
                    rndv: true,
                });
            }
        }
        Handled::Accepted
    }
}
