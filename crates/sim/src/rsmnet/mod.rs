//! Remote shared memory over the simulated fabric: one RSM engine
//! (`myrix_rsm_proto::engine`, the sans-IO engine the IO crate's controllers drive) at
//! every host interface, with a memory of its own, its frames carried as Myrinet packets
//! through the flit-level model: a put is a write frame crossing the switches as one
//! packet, and its timing is the network's.
//!
//! The carrying is [`crate::hostnet`]'s, as for MX ([`crate::mxnet`]): a frame is the
//! payload of one packet (route bytes, type byte and CRC added on the wire), the engines'
//! clock is the simulator's ([`RsmNet::clock`]), the interface adds no delay of its own
//! (unless the simulator's `Config::send_overhead` is set), and the simulator's own
//! generated traffic runs alongside unless [`Sim::quiet`] is called.
//!
//! Host `h` is node `h` ([`RsmNet::node`]); every engine knows every other host's node by
//! its address (the driver's node table), and every program runs as [`USER`]. Each host's
//! exported memory is a vector per segment ([`RsmHost::mem`]): "polling" a flag is
//! reading it between steps.
//!
//! The blocking helpers ([`RsmNet::connect`], [`RsmNet::get`], [`RsmNet::flush`], …)
//! step the network until their event arrives or a limit of simulated time passes
//! ([`RsmError::Timeout`]); other events are kept for later ([`RsmHost::take_event`]).

use std::collections::{HashMap, VecDeque};

use myrix_link::Nanos;
use myrix_rsm_proto::engine::{
    Config as RsmConfig, Engine, Event, FlushId, GetId, Import, SignalTarget,
};
use myrix_rsm_proto::{Acl, Credentials, NodeId, Perm, RsmError, SegmentId};

use crate::hostnet::{HostEngine, HostNet};
use crate::Sim;

#[cfg(test)]
mod tests;

/// The user and group every simulated program runs as.
pub const USER: Credentials = Credentials {
    uid: 1000,
    gid: 1000,
};

/// One simulated host: its RSM engine, its exported memory and the engine's events not
/// yet claimed.
pub struct RsmHost {
    pub engine: Engine<u32>,
    /// Segments this host backs, by id.
    pub mem: HashMap<SegmentId, Vec<u8>>,
    events: VecDeque<Event<u32>>,
}

impl RsmHost {
    /// The oldest event (the engine's, in order) that `want` accepts.
    pub fn take_event(&mut self, mut want: impl FnMut(&Event<u32>) -> bool) -> Option<Event<u32>> {
        while let Some(e) = self.engine.poll_event() {
            self.events.push_back(e);
        }
        let i = self.events.iter().position(&mut want)?;
        self.events.remove(i)
    }
}

impl HostEngine for RsmHost {
    fn poll_transmit(&mut self, now: u64, buf: &mut [u8]) -> Option<(u32, usize)> {
        self.engine.poll_transmit(now, buf)
    }
    fn handle_frame(&mut self, now: u64, src: u32, frame: &[u8]) {
        // A dropped frame (malformed, stale) is the engine's to count.
        let _ = self.engine.handle_frame(now, &src, frame, &mut self.mem);
    }
    fn poll_timeout(&self) -> Option<u64> {
        self.engine.poll_timeout()
    }
    fn handle_timeout(&mut self, now: u64) {
        self.engine.handle_timeout(now)
    }
}

/// RSM engines on the simulated hosts; see the module docs.
pub type RsmNet<'a> = HostNet<'a, RsmHost>;

impl<'a> RsmNet<'a> {
    /// An RSM engine with `cfg` at each of the `hosts` hosts of `sim`'s topology; host
    /// `h` is node `h` and every engine's node table says so.
    pub fn new(sim: Sim<'a>, hosts: usize, cfg: &RsmConfig) -> RsmNet<'a> {
        let engines = (0..hosts)
            .map(|h| {
                let mut engine = Engine::new(cfg.clone(), Self::node(h), 1);
                for p in 0..hosts {
                    engine.add_node(p as u32, Self::node(p));
                }
                RsmHost {
                    engine,
                    mem: HashMap::new(),
                    events: VecDeque::new(),
                }
            })
            .collect();
        HostNet::with_engines(sim, engines, cfg.mtu)
    }

    /// Host `h`'s node id.
    pub fn node(h: usize) -> NodeId {
        NodeId(h as u32)
    }

    /// Host `h` backs segment `seg` with `len` zero bytes and publishes it with `acl`.
    pub fn publish(
        &mut self,
        h: usize,
        seg: SegmentId,
        len: usize,
        acl: Acl,
    ) -> Result<(), RsmError> {
        let host = &mut self.engines[h];
        host.engine.publish(seg, acl, USER)?;
        host.mem.insert(seg, vec![0; len]);
        Ok(())
    }

    /// Host `h`'s segment `seg` as it is now (empty if `h` backs no such segment).
    pub fn memory(&self, h: usize, seg: SegmentId) -> &[u8] {
        self.engines[h].mem.get(&seg).map_or(&[], |v| v.as_slice())
    }

    /// Steps until host `h` has an event `want` accepts, or `limit` passes.
    pub fn wait_event(
        &mut self,
        h: usize,
        limit: Nanos,
        mut want: impl FnMut(&Event<u32>) -> bool,
    ) -> Result<Event<u32>, RsmError> {
        let mut got = None;
        self.run_until(limit, |n| {
            got = n.engines[h].take_event(&mut want);
            got.is_some()
        });
        got.ok_or(RsmError::Timeout)
    }

    /// Host `a` imports segment `seg` of host `b` with `perm`; its import once
    /// connected.
    pub fn connect(
        &mut self,
        a: usize,
        b: usize,
        seg: SegmentId,
        perm: Perm,
        limit: Nanos,
    ) -> Result<Import, RsmError> {
        let imp = self.engines[a]
            .engine
            .connect(b as u32, Self::node(b), seg, perm, USER)?;
        let e = self.wait_event(
            a,
            limit,
            |e| matches!(e, Event::Connected { import, .. } if *import == imp),
        )?;
        match e {
            Event::Connected { result, .. } => result.map(|_| imp),
            _ => unreachable!("matched"),
        }
    }

    /// Host `a` writes `data` at `offset` of its import `imp` (queued; see
    /// [`Self::flush`]).
    pub fn put(&mut self, a: usize, imp: Import, offset: u64, data: &[u8]) -> Result<(), RsmError> {
        self.engines[a].engine.put(imp, offset, data)
    }

    /// Host `a` reads `len` bytes at `offset` of its import `imp`.
    pub fn get(
        &mut self,
        a: usize,
        imp: Import,
        offset: u64,
        len: u64,
        limit: Nanos,
    ) -> Result<Vec<u8>, RsmError> {
        let id = self.engines[a].engine.get(imp, offset, len)?;
        self.wait_get(a, id, limit)
    }

    /// Steps until host `a`'s get `id` completes.
    pub fn wait_get(&mut self, a: usize, id: GetId, limit: Nanos) -> Result<Vec<u8>, RsmError> {
        match self.wait_event(
            a,
            limit,
            |e| matches!(e, Event::GetDone { get, .. } if *get == id),
        )? {
            Event::GetDone { result, .. } => result,
            _ => unreachable!("matched"),
        }
    }

    /// Host `a` flushes its import `imp`: every write queued before is in remote
    /// memory when this returns `Ok`.
    pub fn flush(&mut self, a: usize, imp: Import, limit: Nanos) -> Result<(), RsmError> {
        let id = self.engines[a].engine.flush(imp)?;
        self.wait_flush(a, id, limit)
    }

    /// Host `a` closes the barrier it opened on `imp` (`engine.open_barrier`): the
    /// scope's first failure, once every write of it is in remote memory.
    pub fn close_barrier(&mut self, a: usize, imp: Import, limit: Nanos) -> Result<(), RsmError> {
        let id = self.engines[a].engine.close_barrier(imp)?;
        self.wait_flush(a, id, limit)
    }

    /// Steps until host `a`'s flush `id` completes.
    pub fn wait_flush(&mut self, a: usize, id: FlushId, limit: Nanos) -> Result<(), RsmError> {
        let e = self.wait_event(
            a,
            limit,
            |e| matches!(e, Event::BarrierDone { flush, .. } if *flush == id),
        )?;
        match e {
            Event::BarrierDone { result, .. } => result,
            _ => unreachable!("matched"),
        }
    }

    /// Steps until host `h` receives a signal: for what, and from which node.
    pub fn wait_signal(
        &mut self,
        h: usize,
        limit: Nanos,
    ) -> Result<(SignalTarget, NodeId), RsmError> {
        match self.wait_event(h, limit, |e| matches!(e, Event::Signal { .. }))? {
            Event::Signal { target, from } => Ok((target, from)),
            _ => unreachable!("matched"),
        }
    }

    /// Steps until every engine is idle and no frame is in the network (delayed acks
    /// included), or `limit` passes; whether it got there.
    pub fn settle(&mut self, limit: Nanos) -> bool {
        self.run_until(limit, |n| {
            n.in_flight() == 0 && n.engines.iter().all(|h| h.engine.idle())
        })
    }
}
