//! The connections of a [`ChannelFabric`]: the deferred half-duplex handshake
//! through the inboxes (the sender's side in `connect_step`, the receiver's in
//! `scan_inbox`/`accept`), the segments each side exports or imports for it, and
//! losing a peer (`lose`, `watch`). What the handshake slots hold is `connect`'s.

use super::*;
use send::Place;

impl ChannelFabric {
    /// Imports segment `id` of `node` on the controller toward `peer`: mapped on shm,
    /// a network window otherwise.
    pub(super) fn import_mapped(
        &self,
        peer: Rank,
        node: NodeId,
        id: SegmentId,
    ) -> Result<(Arc<Import>, Mem), RsmError> {
        if let Some(n) = self.net.as_ref().filter(|_| self.remote(peer)) {
            let i = Arc::new(n.ctl.import_connect(node, id, Perm::RDWR)?);
            return Ok((i.clone(), Mem::net(i)));
        }
        let i = self.ctl.import_connect(node, id, Perm::RDWR)?;
        let m = i.map()?;
        Ok((Arc::new(i), Mem::mapping(m)))
    }

    /// Exports `len` bytes for `peer` (on its controller), open to `to` only.
    pub(super) fn export(
        &self,
        peer: Rank,
        len: usize,
        to: NodeId,
    ) -> Result<(Mem, SegmentId), RsmError> {
        let (ctl, page) = match self.net.as_ref().filter(|_| self.remote(peer)) {
            Some(n) => (&n.ctl, n.page),
            None => (&self.ctl, self.page),
        };
        let len = layout::round_up(len, page);
        let e = ctl.export_create(len, ExportFlags::default())?;
        let id = e.publish(
            None,
            &[AccessEntry {
                node: to,
                perm: Perm::RDWR,
            }],
        )?;
        Ok((Mem::export(e), id))
    }

    /// Moves the connection to `dest` on as far as it goes now.
    pub(super) fn connect_step(&mut self, dest: Rank) -> Result<(), FabricError> {
        let Some(p) = self.peers[dest as usize].as_deref() else {
            return Ok(());
        };
        match &p.tx {
            Some(TxChan {
                state: TxState::Fresh,
                ..
            }) => {
                let card = if let Some(d) = self.dyn_peer(dest) {
                    d.card
                } else if self.net.is_some() && self.remote(dest) {
                    Card {
                        node: net::node_of_rank(dest),
                        inbox: net::NET_INBOX,
                    }
                } else {
                    let Some(card) = self.dir.lookup(dest)? else {
                        return Ok(());
                    };
                    card
                };
                // Toward another node: the host's area, or wait for it.
                let toward = match self.toward(dest) {
                    hostnet::Toward::Wait => return Ok(()),
                    t => t,
                };
                if self.peer(dest).inbox.is_none() {
                    let inbox = self
                        .import_mapped(dest, card.node, card.inbox)
                        .map_err(|e| rsm(&format!("inbox of rank {dest}"), e))?;
                    self.peer(dest).inbox = Some(inbox);
                }
                let (ack, ack_id) = self
                    .export(dest, layout::ack::len(self.cfg.queue), card.node)
                    .map_err(|e| rsm("ack segment", e))?;
                let (node, inbox_id) = match self.net.as_ref().filter(|_| self.remote(dest)) {
                    Some(n) => (n.ctl.local_node(), net::NET_INBOX),
                    None => (self.ctl.local_node(), self.inbox_id),
                };
                let mut req = Request::from_config(node, ack_id, inbox_id, &self.cfg);
                let mut shared = self.host_place(dest);
                let mut joined = None;
                if let Some(place) = shared {
                    req = req.in_area(self.host_area()?, place);
                } else if let hostnet::Toward::Area(place, j) = toward {
                    req = req.in_area(j.as_ref().map_or(SegmentId(0), |a| a.shm), place);
                    (shared, joined) = (Some(place), j);
                }
                let slot = self.slot_there(dest);
                let p = self.peer(dest);
                let (_, inbox) = p.inbox.as_ref().expect("imported above");
                req.write(inbox, slot)
                    .map_err(|_| FabricError::Other(format!("inbox of rank {dest} too short")))?;
                p.tx.as_mut().expect("tx exists").state = TxState::Requested {
                    ack,
                    shared,
                    joined,
                };
                Ok(())
            }
            Some(TxChan {
                state: TxState::Requested { shared, .. },
                ..
            }) => {
                let Ok(Some(rep)) = Reply::read(self.inbox_for(dest), dest) else {
                    return Ok(());
                };
                if rep.status != 0 {
                    return Err(FabricError::PeerLost {
                        rank: dest,
                        why: "it refused the channel's geometry".into(),
                    });
                }
                if let Some(place) = *shared {
                    if self.remote(dest) {
                        return self.link_remote(dest, place, rep);
                    }
                    return self.link_shared(dest, place);
                }
                let node = p
                    .inbox
                    .as_ref()
                    .map_or(self.ctl.local_node(), |(i, _)| i.node());
                let (area_imp, area) = self
                    .import_mapped(dest, node, rep.area)
                    .map_err(|e| rsm(&format!("channel area of rank {dest}"), e))?;
                let g = Geometry {
                    queue: self.cfg.queue,
                    pool_units: self.cfg.pool_units(),
                    small: self.cfg.small_block,
                    large: self.cfg.large_block,
                };
                let remote = self.net.is_some() && self.remote(dest);
                let area = if remote {
                    Mem::net_batch(area_imp.clone())
                } else {
                    area
                };
                // The acks owed to `dest` ride with the postboxes to it (if it sends here).
                let acks = self.acks_to(dest);
                let tx = self.peer(dest).tx.as_mut().expect("tx exists");
                if remote {
                    tx.busy = Some(net::flush_at_exit(&area_imp));
                    tx.flush = area.net_flush();
                    if let (Some(f), Some(a)) = (&tx.flush, &acks) {
                        f.carry_acks(a);
                    }
                }
                let TxState::Requested { ack, .. } = std::mem::replace(
                    &mut tx.state,
                    TxState::Up {
                        area: Some(area_imp),
                    },
                ) else {
                    unreachable!("matched above")
                };
                let link = Link::new(g, area, ack).map_err(|c| FabricError::PeerLost {
                    rank: dest,
                    why: c.0.into(),
                })?;
                tx.tx.connect(link);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// `dest`'s queue in this rank's area for its host, if `dest` is reached through
    /// it: a rank of this job on this host (other jobs' processes and other nodes'
    /// ranks get an area per connection).
    fn host_place(&self, dest: Rank) -> Option<send::Place> {
        let me = self.node_of[self.rank as usize];
        if dest >= self.job_size || self.node_of[dest as usize] != me || self.remote(dest) {
            return None;
        }
        let here = |r: &u32| self.node_of[*r as usize] == me;
        Some(send::Place {
            index: (0..dest).filter(here).count() as u32,
            queues: (0..self.job_size).filter(here).count() as u32,
        })
    }

    /// This rank's area for its host, exported at the first call: a queue per rank of
    /// the host and one pool, open to this node (the host's ranks) only.
    fn host_area(&mut self) -> Result<SegmentId, FabricError> {
        if let Some(h) = &self.host_area {
            return Ok(h.id);
        }
        let g = Geometry {
            queue: self.cfg.queue,
            pool_units: self.cfg.pool_units(),
            small: self.cfg.small_block,
            large: self.cfg.large_block,
        };
        let queues = self
            .host_place(self.rank)
            .map_or(1, |p| p.queues)
            .min(send::Place::MAX_QUEUES);
        let len = send::Place { index: 0, queues }.area_len(&g);
        let (mem, id) = self
            .export(self.rank, len, self.ctl.local_node())
            .map_err(|e| rsm("shared channel area", e))?;
        self.host_area = Some(HostArea {
            mem: mem.into_shared(),
            id,
            pool: Arc::new(pool::Pool::new(g.pool_units)),
            g,
        });
        Ok(id)
    }

    /// `dest` accepted queue `place` of this rank's shared area: the link is up.
    fn link_shared(&mut self, dest: Rank, place: send::Place) -> Result<(), FabricError> {
        let lost = |why: &str| FabricError::PeerLost {
            rank: dest,
            why: why.into(),
        };
        let h = self
            .host_area
            .as_ref()
            .ok_or_else(|| lost("no shared area"))?;
        let area = h
            .mem
            .share()
            .ok_or_else(|| lost("the shared area is not shared"))?;
        let (g, pool) = (h.g, h.pool.clone());
        let tx = self.peer(dest).tx.as_mut().expect("tx exists");
        let TxState::Requested { ack, .. } =
            std::mem::replace(&mut tx.state, TxState::Up { area: None })
        else {
            unreachable!("requested")
        };
        let link = Link::new_in(g, area, ack, place, pool).map_err(|c| lost(c.0))?;
        tx.tx.connect(link);
        Ok(())
    }

    /// Answers the requests in this rank's inbox.
    pub(super) fn scan_inbox(&mut self, ev: &mut Vec<Event>) {
        for src in 0..self.size {
            if src == self.rank {
                continue;
            }
            let Ok(Some(req)) = Request::read(self.inbox_for(src), src) else {
                continue;
            };
            let p = self.peers[src as usize].as_deref();
            if p.is_some_and(|p| p.rx.is_some() || p.lost) {
                continue;
            }
            if let Err(why) = self.accept(src, req) {
                self.lose(src, why, ev);
            }
        }
        // Replies to this rank's requests.
        for i in 0..self.tx_active.len() {
            let dest = self.tx_active[i];
            if let Err(e) = self.connect_step(dest) {
                self.lose(dest, e.to_string(), ev);
            }
        }
    }

    pub(super) fn accept(&mut self, src: Rank, req: Request) -> Result<(), String> {
        if self.peer(src).inbox.is_none() {
            let inbox = self
                .import_mapped(src, req.node, req.inbox)
                .map_err(|e| format!("its inbox: {e}"))?;
            self.peer(src).inbox = Some(inbox);
        }
        let me = self.slot_there(src);
        let Some(g) = req.geometry() else {
            let (_, inbox) = self.peer(src).inbox.as_ref().expect("imported above");
            let _ = Reply {
                area: SegmentId(0),
                shm: SegmentId(0),
                status: layout::REFUSED,
            }
            .write(inbox, me);
            return Err(format!("it asked for a bad channel geometry: {req:?}"));
        };
        let (ack_imp, mut acks) = self
            .import_mapped(src, req.node, req.ack)
            .map_err(|e| format!("its ack segment: {e}"))?;
        let lazy = if self.net.is_some() && self.remote(src) {
            acks = Mem::net_lazy(ack_imp.clone());
            acks.net_flush().inspect(net::flush_acks_at_exit)
        } else {
            None
        };
        let (rx, area_id, shared, bound, shm) = if lazy.is_some() && req.place != Place::ALONE {
            // Another node's sender's area for this host: joined or made here, and
            // exported on this rank's network endpoint.
            let (area, bound, id, shm) = self.remote_area(&req, &g)?;
            let rx = Rx::new_in(src, g, area, acks, req.place).map_err(|c| c.0.to_string())?;
            (rx, id, None, Some(bound), shm)
        } else if req.area.0 != 0 {
            // The sender's area for this host: mapped, this rank's queue in it.
            if lazy.is_some() {
                return Err("it named a shared area from another node".into());
            }
            let (imp, area) = self
                .import_mapped(src, req.node, req.area)
                .map_err(|e| format!("its shared area: {e}"))?;
            let rx = Rx::new_in(src, g, area, acks, req.place).map_err(|c| c.0.to_string())?;
            (rx, req.area, Some(imp), None, SegmentId(0))
        } else {
            let (area, area_id) = self
                .export(src, layout::area::len(g.queue, g.pool_bytes()), req.node)
                .map_err(|e| format!("channel area: {e}"))?;
            let rx = Rx::new(src, g, area, acks).map_err(|c| c.0.to_string())?;
            (rx, area_id, None, None, SegmentId(0))
        };
        self.rx_active.push(RxChan {
            net_export: bound,
            src,
            rx,
            ack: ack_imp,
            area: shared,
            acks: lazy.clone(),
        });
        let idx = self.rx_active.len() - 1;
        let p = self.peer(src);
        p.rx = Some(idx);
        if let (Some(a), Some(f)) = (&lazy, p.tx.as_ref().and_then(|t| t.flush.as_ref())) {
            f.carry_acks(a);
        }
        let (_, inbox) = p.inbox.as_ref().expect("imported above");
        Reply {
            area: area_id,
            status: 0,
            shm,
        }
        .write(inbox, me)
        .map_err(|_| "its inbox is too short".to_string())
    }

    /// The lazy window of the acks this rank owes `src` (another node's rank that
    /// sends here), if its channel is up.
    pub(super) fn acks_to(&mut self, src: Rank) -> Option<window::NetFlush> {
        let i = self.peer(src).rx?;
        self.rx_active.get(i)?.acks.clone()
    }

    /// Forgets a peer and reports it lost (once).
    pub(super) fn lose(&mut self, r: Rank, why: String, ev: &mut Vec<Event>) {
        let Some(p) = self.peers[r as usize].as_deref_mut() else {
            return;
        };
        if p.lost {
            return;
        }
        p.lost = true;
        p.tx = None;
        p.inbox = None;
        if let Some(i) = p.rx.take() {
            self.rx_active.swap_remove(i);
            if let Some(moved) = self.rx_active.get(i) {
                let s = moved.src;
                self.peer(s).rx = Some(i);
            }
        }
        self.tx_active.retain(|&d| d != r);
        if !self.dyn_peer(r).is_some_and(|d| d.retired) {
            ev.push(Event::PeerLost { rank: r, why });
        }
    }

    /// Checks one peer's imports (round robin).
    pub(super) fn watch(&mut self, ev: &mut Vec<Event>) {
        let n = self.peers.len();
        for _ in 0..n {
            let r = self.watch_next % n;
            self.watch_next = (r + 1) % n;
            let Some(p) = self.peers[r].as_deref() else {
                continue;
            };
            if p.lost {
                continue;
            }
            let mut bad = None;
            if let Some((i, _)) = &p.inbox {
                bad = i.check().err();
            }
            if let Some(TxChan {
                state: TxState::Up { area: Some(area) },
                ..
            }) = &p.tx
            {
                bad = bad.or(area.check().err());
            }
            if let Some(i) = p.rx {
                let c = &self.rx_active[i];
                bad = bad.or(c.ack.check().err());
                bad = bad.or(c.area.as_ref().and_then(|a| a.check().err()));
            }
            if let Some(e) = bad {
                self.lose(r as Rank, format!("its segments are gone ({e})"), ev);
            }
            return;
        }
    }
}
