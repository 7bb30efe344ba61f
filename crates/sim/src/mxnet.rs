//! MX over the simulated fabric: one MX engine (`myrix_mx_proto::engine`, the same sans-IO
//! engine the real transports drive) at every host interface, its frames carried as
//! Myrinet packets through the flit-level model, so a message-passing program runs on a
//! simulated Myrinet and its timings are the network's.
//!
//! The carrying is [`crate::hostnet`]'s (shared with RSM, [`crate::rsmnet`]): a frame is
//! the payload of one packet, the engines' clock is the simulator's ([`MxNet::clock`]),
//! the interface adds no delay of its own, and the simulator's own generated traffic
//! runs alongside unless [`crate::Sim::quiet`] is called.

use myrix_mx_proto::engine::{Code, Config as MxConfig, Engine, PeerId};

use crate::hostnet::{HostEngine, HostNet};
use crate::Sim;
use myrix_link::Nanos;

/// MX engines on the simulated hosts: `engines[h]` is host `h`'s, addressing its peers
/// by host index.
pub type MxNet<'a> = HostNet<'a, Engine<u32>>;

impl HostEngine for Engine<u32> {
    fn has_transmit(&self) -> bool {
        Engine::has_transmit(self)
    }
    fn poll_transmit(&mut self, now: u64, buf: &mut [u8]) -> Option<(u32, usize)> {
        Engine::poll_transmit(self, now, buf)
    }
    fn handle_frame(&mut self, now: u64, src: u32, frame: &[u8]) {
        // A busy receiver drops the frame; the sender resends it, as over UDP.
        let _ = Engine::handle_frame(self, now, &src, frame);
    }
    fn poll_timeout(&self) -> Option<u64> {
        Engine::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: u64) {
        Engine::handle_timeout(self, now)
    }
}

impl<'a> MxNet<'a> {
    /// An engine per host of `sim`'s topology, all with `cfg` and the same `key`; engine
    /// `h`'s NIC id is host `h`'s address, its endpoint 0.
    pub fn new(sim: Sim<'a>, hosts: &[u64], cfg: &MxConfig, key: u32) -> MxNet<'a> {
        let engines = hosts
            .iter()
            .enumerate()
            .map(|(h, &addr)| Engine::new(cfg.clone(), addr, 0, key, h as u32 + 1))
            .collect();
        HostNet::with_engines(sim, engines, cfg.mtu)
    }

    /// Connects host `a`'s engine to host `b`'s (NIC id `nic`, endpoint 0), stepping the
    /// network until the connection completes or `limit` passes; `a`'s id for the
    /// peer, or why not.
    pub fn connect(
        &mut self,
        a: usize,
        b: usize,
        nic: u64,
        key: u32,
        limit: Nanos,
    ) -> Result<PeerId, String> {
        self.connect_unless(a, b, nic, key, limit, |_| false)
    }

    /// [`Self::connect`], giving up as soon as `stop` holds (a caller that knows the
    /// wait is hopeless, e.g. background traffic past saturation).
    pub fn connect_unless(
        &mut self,
        a: usize,
        b: usize,
        nic: u64,
        key: u32,
        limit: Nanos,
        mut stop: impl FnMut(&Self) -> bool,
    ) -> Result<PeerId, String> {
        let now = self.now_ns();
        let r = self.engines[a]
            .iconnect(now, b as u32, nic, 0, key, 0)
            .map_err(|e| e.to_string())?;
        if !self.run_until(limit, |n| n.engines[a].ready(r) || stop(n)) || !self.engines[a].ready(r)
        {
            return Err(format!("host {a} to {b}: no connection within {limit}"));
        }
        match self.engines[a].test(r) {
            Ok(Some((st, _))) if st.code == Code::Success => Ok(st.source),
            Ok(Some((st, _))) => Err(format!("host {a} to {b}: {}", st.code)),
            Ok(None) => unreachable!("ready"),
            Err(e) => Err(e.to_string()),
        }
    }
}
