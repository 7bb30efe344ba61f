//! A sender's one area per host of another node (seed 004 §3.1; session 31,
//! `hostnet`): what `peers`' handshake builds toward another node's ranks of the job.
//!
//! The first receiver R1 that S reaches on host H makes S's area for H: an RSM shm
//! segment on H (so H's other ranks can map it), queues for every job rank of H and
//! one pool, also exported on R1's network controller over the same memory; its
//! reply names both. A later request of S to R2 on H names the shm segment and R2's
//! queue: R2 maps it and exports the mapping through its own network endpoint. S
//! writes each receiver's queue and its blocks through that receiver's import, so no
//! process carries another's traffic, and the one-write cap, the postbox batching,
//! the staged acks and the flush at exit stay per import as before.
//!
//! R2 keeps a mapping, not R1: when R1 exits or dies, R2's pages stay (an unnamed
//! file lives with its last mapping, docs/rsm-shm.md), and R2 watches S's liveness
//! (its ack segment), not R1's. A receiver that cannot join the named segment any
//! more (R1 went before it was asked) makes a new area and says so; S's later
//! requests to H name that one. While the request that makes H's area is out, S's
//! first sends to H's other ranks wait, so they join it instead of making more.

use super::*;
use send::Place;

/// What S's request to a rank of another node names.
pub(super) enum Toward {
    /// The rank's host is reached per connection (other jobs, one rank per host).
    Alone,
    /// Another request makes the host's area: wait for its reply.
    Wait,
    /// Make the host's area (None) or join this one, at this queue.
    Area(Place, Option<Arc<RemoteArea>>),
}

impl RxChan {
    /// In a shared area toward another node, once a message that held pool blocks is
    /// taken the acks staged for the sender leave now, not at this rank's next idle
    /// progress or with its next message: the sender's one pool serves all
    /// the host's receivers in allocation order, so blocks this rank took and did
    /// not acknowledge would hold back its sends to the others for as long as this
    /// rank makes no progress (a rank that took its last message and computes, or
    /// waits outside MPI, makes none). Per connection the pool is the pair's and the
    /// acks may wait for the reply they ride with.
    #[inline]
    pub(super) fn acks_out(&mut self) {
        if let (Some(_), Some(a)) = (&self.net_export, &self.acks) {
            // Only blocks are shared: acks of inline postboxes free this rank's own
            // queue and may wait to ride with its next message, as per connection
            // (flushing them too cost a frame per message: 8 B 2.0x, 1 KiB 1.4x).
            if self.rx.take_pooled() {
                a.flush();
            }
        }
    }
}

impl ChannelFabric {
    /// What a request to `dest` (another node's rank) names; marks the host's area
    /// pending when it asks `dest` to make it.
    pub(super) fn toward(&mut self, dest: Rank) -> Toward {
        if dest >= self.job_size || !self.remote(dest) || self.net.is_none() {
            return Toward::Alone;
        }
        let host = self.node_of[dest as usize];
        let there = |r: &u32| self.node_of[*r as usize] == host;
        let place = Place {
            index: (0..dest).filter(there).count() as u32,
            queues: (0..self.job_size).filter(there).count() as u32,
        };
        if place.queues < 2 || place.queues > Place::MAX_QUEUES {
            return Toward::Alone;
        }
        let at = self.remote_areas.iter().position(|(h, _)| *h == host);
        match at.map(|i| &self.remote_areas[i].1) {
            Some(RemoteHost::Ready(a)) => return Toward::Area(place, Some(a.clone())),
            Some(RemoteHost::Pending(d)) if *d != dest && self.requested(*d) => {
                return Toward::Wait
            }
            _ => {}
        }
        let pending = (host, RemoteHost::Pending(dest));
        match at {
            Some(i) => self.remote_areas[i] = pending,
            None => self.remote_areas.push(pending),
        }
        Toward::Area(place, None)
    }

    /// Whether the request to `d` still waits for its reply.
    fn requested(&self, d: Rank) -> bool {
        matches!(
            self.peers[d as usize]
                .as_deref()
                .and_then(|p| p.tx.as_ref()),
            Some(TxChan {
                state: TxState::Requested { .. },
                ..
            })
        )
    }

    /// `dest` (another node's rank) accepted queue `place` of this rank's area for
    /// its host: the one the request named, or one it made (`rep.shm`).
    pub(super) fn link_remote(
        &mut self,
        dest: Rank,
        place: Place,
        rep: Reply,
    ) -> Result<(), FabricError> {
        let lost = |why: String| FabricError::PeerLost { rank: dest, why };
        let g = Geometry {
            queue: self.cfg.queue,
            pool_units: self.cfg.pool_units(),
            small: self.cfg.small_block,
            large: self.cfg.large_block,
        };
        let host = self.node_of[dest as usize];
        let Some(TxState::Requested { joined, .. }) = self
            .peers
            .get(dest as usize)
            .and_then(|p| p.as_deref())
            .and_then(|p| p.tx.as_ref())
            .map(|t| &t.state)
        else {
            return Err(lost("no request".into()));
        };
        let area = if rep.shm.0 != 0 {
            let a = Arc::new(RemoteArea {
                shm: rep.shm,
                pool: Arc::new(pool::Pool::new(g.pool_units)),
            });
            let ready = (host, RemoteHost::Ready(a.clone()));
            match self.remote_areas.iter().position(|(h, _)| *h == host) {
                Some(i) => self.remote_areas[i] = ready,
                None => self.remote_areas.push(ready),
            }
            a
        } else {
            joined
                .clone()
                .ok_or_else(|| lost("it joined no area of this rank's".into()))?
        };
        let node = self.peers[dest as usize]
            .as_deref()
            .and_then(|p| p.inbox.as_ref())
            .map_or(self.ctl.local_node(), |(i, _)| i.node());
        let (area_imp, _) = self
            .import_mapped(dest, node, rep.area)
            .map_err(|e| lost(format!("this rank's area for its host: {e}")))?;
        let acks = self.acks_to(dest);
        let tx = self.peer(dest).tx.as_mut().expect("requested above");
        let TxState::Requested { ack, .. } = std::mem::replace(
            &mut tx.state,
            TxState::Up {
                area: Some(area_imp.clone()),
            },
        ) else {
            unreachable!("requested above")
        };
        let mem = Mem::net_batch(area_imp.clone());
        let link =
            Link::new_in(g, mem, ack, place, area.pool.clone()).map_err(|c| lost(c.0.into()))?;
        tx.busy = Some(net::flush_at_exit(&area_imp));
        tx.flush = link.net_flush();
        if let (Some(f), Some(a)) = (&tx.flush, &acks) {
            f.carry_acks(a);
        }
        tx.tx.connect(link);
        Ok(())
    }

    /// The memory of `req`'s area for this host (another node's sender): the shm
    /// segment it names, mapped, or a new one if it names none or that one is gone;
    /// exported on this rank's network controller to the sender. Returns the memory,
    /// the network export, its id and the new shm segment's (0 if joined).
    pub(super) fn remote_area(
        &self,
        req: &Request,
        g: &Geometry,
    ) -> Result<(Mem, myrix_rsm::Export, SegmentId, SegmentId), String> {
        let n = self.net.as_ref().ok_or("no network controller")?;
        // The place is the sender's word: checked before it sizes anything.
        if !req.place.valid() || req.place.queues > self.job_size {
            return Err(format!(
                "it named a queue outside its area: {:?}",
                req.place
            ));
        }
        let len = req.place.area_len(g);
        let joined = (req.area.0 != 0)
            .then(|| {
                let i = self
                    .ctl
                    .import_connect(self.ctl.local_node(), req.area, Perm::RDWR)
                    .ok()?;
                i.map().ok()
            })
            .flatten()
            .filter(|m| m.len() >= len && m.len() % n.page == 0);
        let (mem, shm) = match joined {
            // The import goes; the mapping keeps the pages (and R1's liveness is not
            // this connection's).
            Some(m) => (Mem::mapping(m), SegmentId(0)),
            None => {
                let len = layout::round_up(len, self.page.max(n.page));
                let e = self
                    .ctl
                    .export_create(len, ExportFlags::default())
                    .map_err(|e| format!("area for the host: {e}"))?;
                let id = e
                    .publish(
                        None,
                        &[AccessEntry {
                            node: self.ctl.local_node(),
                            perm: Perm::RDWR,
                        }],
                    )
                    .map_err(|e| format!("area for the host: {e}"))?;
                (Mem::export(e), id)
            }
        };
        let ptr = mem.local_ptr().ok_or("the area is not here")?;
        // SAFETY: `mem` is mapped for `mem.len()` bytes and stays so while the
        // export lives: the caller keeps both in one `RxChan`, the export first, so it
        // is dropped first. The memory is shm pages the network path only copies into.
        let e = unsafe {
            n.ctl
                .export_create_at(ptr.as_ptr(), mem.len(), ExportFlags::default())
        }
        .map_err(|e| format!("area on the network: {e}"))?;
        let id = e
            .publish(
                None,
                &[AccessEntry {
                    node: req.node,
                    perm: Perm::RDWR,
                }],
            )
            .map_err(|e| format!("area on the network: {e}"))?;
        Ok((mem, e, id, shm))
    }
}
