//! The per-message path of a [`ChannelFabric`]: the [`Fabric`] implementation (send,
//! the postbox fast path of `send_eager`, `recv_now`, `take`) and one progress call
//! (`poll_all`: the inboxes, every receive channel, every send channel's pump, the
//! idle flush of acks toward other nodes, the liveness check). The structure it works
//! on and its opening are in the module root; the connections are `peers`'.

use super::*;
use crate::p2p::Layout;

impl ChannelFabric {
    /// `send_eager`'s path through the queue (kept out of line, so the postbox path
    /// stays small): the send is queued and pumped; done when written whole.
    ///
    /// # Safety
    /// As `Fabric::send_eager`.
    #[inline(never)]
    unsafe fn send_eager_queued(
        &mut self,
        dest: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<Option<SendId>, FabricError> {
        // SAFETY: the caller's contract, forwarded.
        let id = unsafe { self.send(dest, env, data) }?;
        // `send` pumps at once: a message written whole (nothing queued ahead of it)
        // reported its SendDone last.
        if matches!(self.pending.last(), Some(Event::SendDone { send }) if *send == id) {
            self.pending.pop();
            return Ok(None);
        }
        Ok(Some(id))
    }

    /// `Fabric::send` of a buffer, flat or a layout.
    #[inline]
    fn send_src(&mut self, dest: Rank, env: Envelope, src: SrcBuf) -> Result<SendId, FabricError> {
        if dest >= self.size {
            return Err(FabricError::NoSuchRank(dest));
        }
        let id = SendId(self.next_send);
        if dest == self.rank {
            self.next_send += 1;
            self.selfq.push_back(SelfMsg {
                seq: self.self_seq,
                id,
                env,
                src,
                announced: false,
            });
            self.self_new = true;
            self.self_seq += 1;
            return Ok(id);
        }
        let (mut short, eager) = (self.cfg.short, self.cfg.eager);
        if self.remote(dest) {
            let Some(n) = &self.net else {
                return Err(FabricError::Other(format!(
                    "rank {dest} runs on node {} and this one on node {}: no network \
                     controller open (a fabric made without PMI is shm only)",
                    self.node_of[dest as usize], self.node_of[self.rank as usize]
                )));
            };
            short = n.short;
        }
        if self.peer(dest).lost {
            return Err(FabricError::PeerLost {
                rank: dest,
                why: "lost earlier".into(),
            });
        }
        self.next_send += 1;
        let p = self.peers[dest as usize].get_or_insert_with(Box::default);
        let fresh = p.tx.is_none();
        let tx = p.tx.get_or_insert_with(|| TxChan {
            tx: Tx::new(short, eager),
            state: TxState::Fresh,
            busy: None,
            flush: None,
        });
        tx.tx.push(id, env, src);
        if tx.tx.is_connected() {
            let r = tx.tx.pump(&mut self.pending);
            tx.note_busy();
            if let Err(c) = r {
                let mut ev = std::mem::take(&mut self.pending);
                self.lose(dest, c.0.into(), &mut ev);
                self.pending = ev;
            }
        } else if fresh {
            if let Err(e) = self.connect_step(dest) {
                self.peer(dest).tx = None;
                return Err(e);
            }
        }
        if !self.tx_active.contains(&dest) {
            self.tx_active.push(dest);
        }
        Ok(id)
    }

    /// `Fabric::take` into a buffer, flat or a layout.
    fn take_dst(&mut self, token: MsgToken, dst: DstBuf) -> Result<bool, FabricError> {
        if token.src == self.rank {
            return self.take_self(token.seq, dst);
        }
        let Some(i) = self
            .peers
            .get(token.src as usize)
            .and_then(|p| p.as_deref())
            .and_then(|p| p.rx)
        else {
            return Err(FabricError::UnknownMessage(token));
        };
        match self.rx_active[i].rx.take(token.seq, dst) {
            Ok(Taken::Done) => {
                self.rx_active[i].acks_out();
                Ok(true)
            }
            Ok(Taken::Later) => Ok(false),
            Ok(Taken::Unknown) => Err(FabricError::UnknownMessage(token)),
            Err(c) => {
                let mut ev = std::mem::take(&mut self.pending);
                self.lose(token.src, c.0.into(), &mut ev);
                self.pending = ev;
                Err(FabricError::PeerLost {
                    rank: token.src,
                    why: c.0.into(),
                })
            }
        }
    }

    /// The channel to `dest` broke while a send wrote to it: the peer is lost.
    #[cold]
    fn lost_on_send(&mut self, dest: Rank, c: Corrupt) -> FabricError {
        let mut ev = std::mem::take(&mut self.pending);
        self.lose(dest, c.0.into(), &mut ev);
        self.pending = ev;
        FabricError::PeerLost {
            rank: dest,
            why: c.0.into(),
        }
    }
}

impl Fabric for ChannelFabric {
    fn rank(&self) -> Rank {
        self.rank
    }

    fn size(&self) -> Rank {
        self.size
    }

    fn eager_limit(&self) -> usize {
        self.cfg.eager
    }

    unsafe fn send(
        &mut self,
        dest: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<SendId, FabricError> {
        // SAFETY: the caller promises `data` is readable for `env.len` bytes until
        // `SendDone`, which is as long as the fabric keeps the `SrcBuf`.
        let src = unsafe { SrcBuf::new(data, env.len) };
        self.send_src(dest, env, src)
    }

    fn layouts(&self) -> bool {
        true
    }

    unsafe fn send_layout(
        &mut self,
        dest: Rank,
        env: Envelope,
        lay: *const Layout,
    ) -> Result<SendId, FabricError> {
        // SAFETY: the caller promises `lay` readable until `SendDone`, which is as
        // long as the fabric keeps the `SrcBuf`.
        let src = unsafe { SrcBuf::layout(lay) };
        if src.len() != env.len {
            return Err(FabricError::Other("a layout of another length".into()));
        }
        self.send_src(dest, env, src)
    }

    unsafe fn take_layout(
        &mut self,
        token: MsgToken,
        lay: *const Layout,
        cap: usize,
    ) -> Result<bool, FabricError> {
        // SAFETY: the caller promises `lay` writable until the data is reported
        // received, which is as long as the fabric keeps the `DstBuf`; `cap` is cut
        // to the layout's length.
        let dst = unsafe { DstBuf::layout(lay, cap.min((*lay).len())) };
        self.take_dst(token, dst)
    }

    unsafe fn send_eager(
        &mut self,
        dest: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<Option<SendId>, FabricError> {
        // A short message on a channel that is up with nothing queued: straight into
        // the postbox.
        if let Some(
            ch @ TxChan {
                state: TxState::Up { .. },
                ..
            },
        ) = self
            .peers
            .get_mut(dest as usize)
            .and_then(|p| p.as_deref_mut())
            .and_then(|p| p.tx.as_mut())
        {
            // SAFETY: the caller promises `data` is readable for `env.len` bytes; it is
            // read only inside this call.
            let src = unsafe { SrcBuf::new(data, env.len) };
            match ch.tx.send_short_now(env, src) {
                Ok(true) => {
                    // Toward another node the postbox was staged: put it now.
                    ch.note_sent();
                    return Ok(None);
                }
                Ok(false) => {}
                Err(c) => return Err(self.lost_on_send(dest, c)),
            }
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { self.send_eager_queued(dest, env, data) }
    }

    unsafe fn recv_now(
        &mut self,
        src: Rank,
        accept: &mut dyn FnMut(&Envelope) -> bool,
        buf: *mut u8,
        cap: usize,
    ) -> Result<Option<Envelope>, FabricError> {
        let Some(i) = self
            .peers
            .get(src as usize)
            .and_then(|p| p.as_deref())
            .and_then(|p| p.rx)
        else {
            return Ok(None);
        };
        if let Some(n) = self.net.as_deref().filter(|_| self.remote(src)) {
            // A peer on another node writes this memory only through the network
            // controller, whose frames come in when this process polls it: a direct
            // receive (the engine's blocking receive, which runs the whole progress
            // only every 16 of these calls) would otherwise see a message up to a
            // progress cycle after its frame came (docs/mpi-net.md, session 25).
            n.inbox.poll_net();
        }
        // SAFETY: the caller promises `buf` is writable for `cap` bytes during the call.
        let dst = unsafe { DstBuf::new(buf, cap) };
        match self.rx_active[i].rx.recv_now(accept, dst) {
            Ok(r) => {
                if r.is_some() {
                    self.rx_active[i].acks_out();
                }
                if let Some(n) = self.net.as_deref_mut().filter(|_| r.is_some()) {
                    // A message taken: this rank is not idle (its staged acks wait).
                    n.idle_since = None;
                }
                Ok(r)
            }
            Err(c) => {
                let mut ev = std::mem::take(&mut self.pending);
                self.lose(src, c.0.into(), &mut ev);
                self.pending = ev;
                Err(FabricError::PeerLost {
                    rank: src,
                    why: c.0.into(),
                })
            }
        }
    }

    unsafe fn take(
        &mut self,
        token: MsgToken,
        buf: *mut u8,
        cap: usize,
    ) -> Result<bool, FabricError> {
        // SAFETY: the caller promises `buf` is writable for `cap` bytes until the data
        // is reported received, which is as long as the fabric keeps the `DstBuf`.
        let dst = unsafe { DstBuf::new(buf, cap) };
        self.take_dst(token, dst)
    }

    fn progress(&mut self, events: &mut Vec<Event>) -> Result<bool, FabricError> {
        self.poll_all(events, None)
    }

    fn progress_claiming(
        &mut self,
        events: &mut Vec<Event>,
        claim: &mut dyn Claim,
    ) -> Result<bool, FabricError> {
        self.poll_all(events, Some(claim))
    }

    fn card(&self) -> Option<String> {
        Some(self.dyn_card())
    }

    fn add_peers(&mut self, peers: &[crate::p2p::fabric::NewPeer]) -> Result<Rank, FabricError> {
        self.dyn_add(peers)
    }

    fn retire(&mut self, r: Rank) {
        self.dyn_retire(r)
    }
}

/// The engine's posted receives as a receive channel's [`recv::Sink`].
struct ClaimSink<'a>(&'a mut dyn Claim);

impl recv::Sink for ClaimSink<'_> {
    #[inline]
    fn claim(&mut self, src: Rank, env: &Envelope) -> Option<DstBuf> {
        let (ptr, cap) = self.0.claim(src, env)?;
        // SAFETY: `Claim::claim` promises the buffer writable for `cap` bytes until
        // `claimed`, which the channel calls before it lets go of the `DstBuf`.
        Some(unsafe { DstBuf::new(ptr, cap) })
    }

    #[inline]
    fn claimed(&mut self, ok: bool) {
        self.0.claimed(ok);
    }
}

impl ChannelFabric {
    /// One progress call: `claim`, when given, is offered the new messages that are
    /// whole here ([`Fabric::progress_claiming`]).
    fn poll_all(
        &mut self,
        events: &mut Vec<Event>,
        claim: Option<&mut dyn Claim>,
    ) -> Result<bool, FabricError> {
        // The receive side first; an empty poll reads each postbox flag it waits on
        // and a few words of this process's own memory, nothing else.
        let mut moved = false;
        if !self.pending.is_empty() {
            moved = true;
            events.append(&mut self.pending);
        }
        if self.self_new {
            self.self_new = false;
            for m in self.selfq.iter_mut().filter(|m| !m.announced) {
                m.announced = true;
                moved = true;
                events.push(Event::Arrived {
                    token: MsgToken {
                        src: self.rank,
                        seq: m.seq,
                    },
                    env: m.env,
                });
            }
        }
        let mut changed = false;
        if let Some(n) = &self.net {
            n.inbox.poll_net();
            changed = connect::take_changed(&n.inbox);
        }
        if connect::take_changed(&self.inbox) || changed {
            moved = true;
            self.scan_inbox(events);
        }
        // The sink is a concrete type, so the channel's calls to it inline.
        let mut cs = claim.map(ClaimSink);
        let mut i = 0;
        while i < self.rx_active.len() {
            match self.rx_active[i].rx.poll_into(events, cs.as_mut()) {
                Ok(m) => {
                    if m {
                        self.rx_active[i].acks_out();
                    }
                    moved |= m
                }
                Err(c) => {
                    let src = self.rx_active[i].src;
                    self.lose(src, c.0.into(), events);
                    continue;
                }
            }
            i += 1;
        }
        let mut i = 0;
        while i < self.tx_active.len() {
            let dest = self.tx_active[i];
            let Some(tx) = self.peers[dest as usize]
                .as_deref_mut()
                .and_then(|p| p.tx.as_mut())
            else {
                self.tx_active.swap_remove(i);
                continue;
            };
            if tx.tx.idle() && matches!(tx.state, TxState::Up { .. }) {
                i += 1;
                continue;
            }
            let r = tx.tx.pump(events);
            tx.note_busy();
            match r {
                Ok(m) => moved |= m,
                Err(c) => {
                    self.lose(dest, c.0.into(), events);
                    continue;
                }
            }
            if let TxState::Fresh = tx.state {
                if let Err(e) = self.connect_step(dest) {
                    self.lose(dest, e.to_string(), events);
                    continue;
                }
            }
            i += 1;
        }
        // (Every pool's flag is taken: no short circuit.)
        let starved = self.remote_areas.iter().fold(
            self.host_area
                .as_ref()
                .is_some_and(|h| h.pool.take_starved()),
            |s, (_, h)| s | matches!(h, RemoteHost::Ready(a) if a.pool.take_starved()),
        );
        if starved {
            // A send waits for the shared pool: take back what every receiver of the
            // host has acknowledged (a link idle toward its receiver reads no acks).
            for &d in &self.tx_active {
                if let Some(t) = self.peers[d as usize]
                    .as_deref_mut()
                    .and_then(|p| p.tx.as_mut())
                {
                    moved |= t.tx.reclaim();
                }
            }
        }
        if let Some(n) = self.net.as_deref_mut() {
            // Idle long enough: the acks staged for other nodes leave (after any reply
            // the program sent meanwhile; see `window`'s lazy windows).
            if moved {
                n.idle_since = None;
            } else {
                let now = std::time::Instant::now();
                let since = *n.idle_since.get_or_insert(now);
                if now.duration_since(since) >= n.ack_idle {
                    n.idle_since = None;
                    for c in &self.rx_active {
                        if let Some(f) = &c.acks {
                            f.flush();
                        }
                    }
                }
            }
        }
        self.polls = self.polls.wrapping_add(1);
        if self.polls % LIVENESS_EVERY == 0 {
            self.watch(events);
        }
        Ok(moved)
    }
}
