//! Peers, connect and sessions: who a peer is, where it is, the session both sides
//! present, and what a restart, a disconnect or a death does to its requests.

use super::*;

pub(super) struct Peer<L> {
    pub(super) loc: L,
    pub(super) nic: u64,
    pub(super) endpoint: u8,
    /// Their session; 0 until known.
    pub(super) session: u32,
    /// The session we present to them: ours, changed at each disconnect so that the
    /// next connect starts both sides afresh. Only its top 8 bits change: the low
    /// [`INSTANCE_BITS`] stay the endpoint's, so a connect can tell this endpoint from
    /// another opened later with the same id ([`Engine::iconnect_session`]).
    pub(super) my_session: u32,
    /// The index they gave us; `NO_PEER` until connected.
    pub(super) their_index: u16,
    /// The last index they gave us, kept after a disconnect: NACKs to their frames of
    /// the old session are addressed with it.
    pub(super) last_index: u16,
    /// Sequence numbers, acks, resends: one item per sequenced frame.
    pub(super) rel: Session<SeqWhat>,
    /// Sends waiting for room in the send window.
    pub(super) waiting: VecDeque<u32>,
    /// The message whose later fragments are arriving.
    pub(super) rx_current: Option<RxCurrent>,
    /// The earliest deadline this peer has on the timer heap.
    pub(super) armed: Option<u64>,
    /// How many pull blocks may be in flight from this peer.
    pub(super) flow: Flow,
    /// The wire numbers of our sequence number 0 to them (the start they announced at
    /// connect) and of theirs to us (the start we announce): the codec's numbers may be
    /// narrower than `rel`'s ([`Codec::SEQ_BITS`], `myrix_wire::codec::seq`).
    pub(super) tx_base: u16,
    pub(super) rx_base: u16,
}

impl<L> Peer<L> {
    pub(super) fn new(
        loc: L,
        nic: u64,
        endpoint: u8,
        my_session: u32,
        window: u32,
        rx_base: u16,
    ) -> Peer<L> {
        Peer {
            loc,
            nic,
            endpoint,
            session: 0,
            my_session,
            their_index: NO_PEER,
            last_index: NO_PEER,
            rel: Session::default(),
            waiting: VecDeque::new(),
            rx_current: None,
            armed: None,
            flow: Flow::new(window),
            tx_base: 0,
            rx_base,
        }
    }
    /// Wire number of our sequence number `s` to this peer.
    #[inline(always)]
    pub(super) fn tx_wire<C: Codec>(&self, s: u16) -> u16 {
        seq::to_wire(self.tx_base, s, C::SEQ_BITS)
    }
    /// Wire number of the next sequence number we expect from this peer (our ack).
    #[inline(always)]
    pub(super) fn ack_wire<C: Codec>(&self) -> u16 {
        seq::to_wire(self.rx_base, self.rel.ack(), C::SEQ_BITS)
    }
    /// Our number of a sequence number of theirs on the wire; `None` for another
    /// session's.
    #[inline(always)]
    pub(super) fn rx_from_wire<C: Codec>(&self, w: u16) -> Option<u16> {
        seq::from_wire(self.rx_base, w, self.rel.ack(), C::SEQ_BITS)
    }
    /// Our number of one of our sequence numbers they send back (an ack, a NACK).
    #[inline(always)]
    pub(super) fn tx_from_wire<C: Codec>(&self, w: u16) -> Option<u16> {
        seq::from_wire(self.tx_base, w, self.rel.next_seq(), C::SEQ_BITS)
    }
    pub(super) fn reset_session(&mut self) {
        self.rel.reset();
        self.waiting.clear();
        self.rx_current = None;
    }
}

/// The bits of a session that name the endpoint's instance (the session of its
/// address, chosen when it opened); the bits above count its disconnects from one peer.
pub const INSTANCE_BITS: u32 = 0x00ff_ffff;

impl<L: Clone + PartialEq, C: Codec> Engine<L, C> {
    /// Starts connecting to the endpoint `(nic, endpoint)` at `loc`. Completes with the
    /// peer's id in [`Status::source`], or [`Code::BadKey`] / [`Code::Unreachable`].
    pub fn iconnect(
        &mut self,
        now: u64,
        loc: L,
        nic: u64,
        endpoint: u8,
        key: u32,
        context: u64,
    ) -> Result<Request, Error> {
        self.iconnect_session(now, loc, nic, endpoint, key, 0, context)
    }

    /// [`Engine::iconnect`] to one instance of the endpoint: the one whose address
    /// carries `session` (0: any). A reply from another instance (the endpoint closed
    /// and another process opened the same id with the same key) ends the connect with
    /// [`Code::NoEndpoint`] and binds nothing. The reply's session is the one the peer
    /// presents to us, which its disconnects from us change above [`INSTANCE_BITS`]:
    /// those bits are compared (a new instance with the same low 24 bits, one chance in
    /// 2^24, would pass).
    #[allow(clippy::too_many_arguments)]
    pub fn iconnect_session(
        &mut self,
        now: u64,
        loc: L,
        nic: u64,
        endpoint: u8,
        key: u32,
        session: u32,
        context: u64,
    ) -> Result<Request, Error> {
        let idx = self.peer_slot(loc, nic, endpoint)?;
        let h = self.alloc(ReqKind::Connect, context)?;
        let r = self.req_mut(h).expect("just allocated");
        r.peer = idx;
        r.key = key;
        r.expect_session = session;
        r.started = now;
        r.last_try = now;
        r.state = ReqState::Active;
        self.txq.push_back(Tx::Connect { req: h });
        self.arm_req(h, now + self.cfg.resend_ns);
        Ok(Request(h))
    }

    pub(super) fn peer_slot(&mut self, loc: L, nic: u64, endpoint: u8) -> Result<u16, Error> {
        if let Some(i) = self
            .peers
            .iter()
            .position(|p| p.nic == nic && p.endpoint == endpoint)
        {
            self.peers[i].loc = loc;
            return Ok(i as u16);
        }
        if self.peers.len() >= NO_PEER as usize {
            return Err(Error::TooManyPeers);
        }
        let window = self.cfg.pull_window.clamp(1, flow::MAX_WINDOW as usize) as u32;
        self.peers.push(Peer::new(
            loc,
            nic,
            endpoint,
            self.session,
            window,
            C::SEQ_START,
        ));
        Ok((self.peers.len() - 1) as u16)
    }
    pub(super) fn check_peer(&self, peer: PeerId) -> Result<(), Error> {
        let p = self
            .peers
            .get(peer.0 as usize)
            .ok_or(Error::UnknownPeer(peer))?;
        if p.their_index == NO_PEER {
            return Err(Error::NotConnected(peer));
        }
        Ok(())
    }
    pub(super) fn on_connect(&mut self, from: &L, h: &Header, key: u32, index: u16, request: u32) {
        let status = if key != self.key {
            CONNECT_BAD_KEY
        } else {
            CONNECT_OK
        };
        let Ok(pi) = self.peer_slot(from.clone(), h.nic, h.src_endpoint) else {
            self.stats.stale_frames += 1;
            return;
        };
        if status != CONNECT_OK {
            // Reply without binding the peer: it learns nothing but the refusal.
            self.txq.push_back(Tx::Refuse {
                peer: pi,
                status,
                request,
                echo: h.session,
            });
            let p = &mut self.peers[pi as usize];
            if p.session == 0 {
                p.their_index = NO_PEER;
            }
            return;
        }
        self.bind_session(pi, h.session, h.ack);
        self.peers[pi as usize].their_index = index;
        self.peers[pi as usize].last_index = index;
        self.txq.push_back(Tx::ConnectReply {
            peer: pi,
            status,
            request,
            echo: h.session,
        });
    }

    /// The connect request a reply answers: the reply's `request` is the whole handle,
    /// or (where the layout keeps only its low bits, [`Codec::CONNECT_REQUEST_MASK`])
    /// the active connect to the replier whose handle has those bits.
    fn connect_of_reply(&self, h: &Header, request: u32) -> Option<u32> {
        let mask = C::CONNECT_REQUEST_MASK;
        if mask == u32::MAX {
            return Some(request);
        }
        self.reqs.iter().enumerate().find_map(|(i, r)| {
            let raw = Request::new(i, r.gen).raw();
            let p = self.peers.get(r.peer as usize)?;
            (r.kind == ReqKind::Connect
                && r.state == ReqState::Active
                && raw & mask == request & mask
                && p.nic == h.nic
                && p.endpoint == h.src_endpoint)
                .then_some(raw)
        })
    }

    /// Records the peer's session; a different one means it restarted. `start` is the
    /// wire number the peer announced it expects next (the connect's header `ack`,
    /// Open-MX's `target_recv_seqnum_start`): a new session sends from there, as
    /// Open-MX's library resets `next_send_seq` to it.
    pub(super) fn bind_session(&mut self, pi: u16, session: u32, start: u16) {
        let p = &mut self.peers[pi as usize];
        if p.session == session {
            return;
        }
        let restarted = p.session != 0;
        p.session = session;
        if C::SEQ_BITS < 16 {
            // What we announced (our ack on the wire) stays what we expect: our
            // numbering restarts at 0 there.
            p.rx_base = p.ack_wire::<C>();
            p.tx_base = start;
        }
        p.reset_session();
        if restarted {
            self.fail_peer(pi, Code::PeerReset, false);
        }
    }

    /// Disconnects from a peer, as `mx_disconnect` does: every unfinished request
    /// involving it (sends, receives it is filling, a connect in progress) completes
    /// with [`Code::Disconnected`], its half-arrived unexpected messages are dropped
    /// (whole ones stay, to be received), sends to it are refused with
    /// [`Error::NotConnected`] and its frames are dropped until one side connects
    /// again. The peer is not told; when we connect again it sees a new session, as
    /// after a restart, and its own requests to us end with [`Code::PeerReset`].
    pub fn disconnect(&mut self, peer: PeerId) -> Result<(), Error> {
        let pi = peer.0;
        if pi as usize >= self.peers.len() {
            return Err(Error::UnknownPeer(peer));
        }
        self.fail_peer(pi, Code::Disconnected, true);
        let p = &mut self.peers[pi as usize];
        if C::SEQ_BITS < 16 {
            // A new session number in the bits above the sequence number, as Open-MX's
            // partner cleanup does: frames of the old session are told apart.
            let m = (1u16 << C::SEQ_BITS) - 1;
            p.rx_base = ((p.rx_base & !m).wrapping_add(m).wrapping_add(1)) | C::SEQ_START;
        }
        p.reset_session();
        p.session = 0;
        p.their_index = NO_PEER;
        // The instance bits stay (see `iconnect_session`); 0 means "unknown".
        let step = INSTANCE_BITS + 1;
        let next = p.my_session.wrapping_add(step);
        p.my_session = if next == 0 { step } else { next };
        Ok(())
    }

    /// The transport says the peer at `loc` is gone (its process died): its requests in
    /// progress complete with [`Code::Unreachable`], and so do new sends to it until it
    /// connects again.
    pub fn peer_gone(&mut self, loc: &L) {
        for pi in 0..self.peers.len() {
            if self.peers[pi].loc == *loc && self.peers[pi].their_index != NO_PEER {
                self.fail_peer(pi as u16, Code::Unreachable, false);
                self.peers[pi].rel.set_unreachable();
            }
        }
    }

    /// Ends every unfinished request that involves a peer (connects in progress only when
    /// `connects_too`: a restart or a death is learnt while a connect may be answering).
    pub(super) fn fail_peer(&mut self, pi: u16, code: Code, connects_too: bool) {
        let hs: Vec<u32> = (0..self.reqs.len())
            .filter_map(|i| {
                let r = &self.reqs[i];
                let live = matches!(r.state, ReqState::Active)
                    && r.peer == pi
                    && (connects_too || r.kind != ReqKind::Connect);
                live.then(|| Request::new(i, r.gen).raw())
            })
            .collect();
        for h in hs {
            self.complete(h, code);
        }
        let p = &mut self.peers[pi as usize];
        p.rel.drop_unacked();
        p.waiting.clear();
        p.rx_current = None;
        self.txq.retain(|t| match *t {
            Tx::Seq { peer, .. } | Tx::Ack { peer } | Tx::PullReply { peer, .. } => peer != pi,
            _ => true,
        });
        // Unexpected messages of the old session can no longer be pulled or finished.
        let mut bytes = 0;
        self.unexpected.retain(|u| {
            let keep = u.peer != pi || (!u.rndv && u.received == u.msg_len);
            if !keep {
                bytes += u.data.len();
            }
            keep
        });
        self.unexpected_bytes -= bytes;
        // Its pulls ended above: nothing is in flight from it any more.
        let window = self.cfg.pull_window.clamp(1, flow::MAX_WINDOW as usize) as u32;
        self.peers[pi as usize].flow.reset(window);
    }

    pub(super) fn on_connect_reply(
        &mut self,
        h: &Header,
        status: u8,
        index: u16,
        request: u32,
        echo: u32,
    ) {
        let Some(request) = self.connect_of_reply(h, request) else {
            self.stats.stale_frames += 1;
            return;
        };
        let Some(r) = self.req(request) else {
            self.stats.stale_frames += 1;
            return;
        };
        if r.kind != ReqKind::Connect || r.state != ReqState::Active {
            self.stats.stale_frames += 1;
            return;
        }
        let pi = r.peer;
        let p = &self.peers[pi as usize];
        // The echoed session tells a reply to this instance of us (and of this peer
        // slot) from one to an earlier connect, as Open-MX checks `src_session_id`.
        if p.nic != h.nic || p.endpoint != h.src_endpoint || echo != p.my_session {
            self.stats.stale_frames += 1;
            return;
        }
        let code = match status {
            CONNECT_OK => Code::Success,
            CONNECT_BAD_KEY => Code::BadKey,
            _ => Code::NoEndpoint,
        };
        // Another instance of the endpoint than the address named: not the peer asked
        // for, whatever it answered; and the instance named is gone, so what we held
        // of it is dropped too (its requests end, sends to the slot are refused until
        // a connect succeeds).
        let want = r.expect_session;
        if want != 0 && (want ^ h.session) & INSTANCE_BITS != 0 {
            self.stats.stale_frames += 1;
            self.complete(request, Code::NoEndpoint);
            self.fail_peer(pi, Code::NoEndpoint, false);
            let p = &mut self.peers[pi as usize];
            p.reset_session();
            p.session = 0;
            p.their_index = NO_PEER;
            return;
        }
        if code == Code::Success {
            self.bind_session(pi, h.session, h.ack);
            self.peers[pi as usize].their_index = index;
            self.peers[pi as usize].last_index = index;
        }
        self.complete(request, code);
    }
}
