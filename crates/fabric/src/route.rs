//! Source routes: paths through switches, and the route bytes a host prepends.

use crate::topology::{HostId, PortUse, SwitchId, Topology};
use myrix_wire::myrinet::route_byte;

/// One switch on a path and the port the packet leaves it by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hop {
    pub switch: SwitchId,
    pub port: u8,
}

/// One path for every ordered pair of switches, stored flat: `path(s, d)` is the hops
/// from switch `s` to switch `d` (empty when `s == d`), each leaving by a link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchRoutes {
    n: usize,
    offsets: Vec<u32>,
    hops: Vec<Hop>,
}

impl SwitchRoutes {
    /// From paths given in `(src, dst)` order for all `n * n` pairs.
    pub fn from_paths(n: usize, paths: impl IntoIterator<Item = Vec<Hop>>) -> SwitchRoutes {
        let mut offsets = Vec::with_capacity(n * n + 1);
        let mut hops = Vec::new();
        offsets.push(0);
        for p in paths {
            hops.extend_from_slice(&p);
            offsets.push(hops.len() as u32);
        }
        assert_eq!(offsets.len(), n * n + 1, "a path for every ordered pair");
        SwitchRoutes { n, offsets, hops }
    }

    pub fn num_switches(&self) -> usize {
        self.n
    }

    pub fn path(&self, src: SwitchId, dst: SwitchId) -> &[Hop] {
        let i = src as usize * self.n + dst as usize;
        &self.hops[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Every path, with its endpoints.
    pub fn iter(&self) -> impl Iterator<Item = (SwitchId, SwitchId, &[Hop])> + '_ {
        (0..self.n as SwitchId)
            .flat_map(move |s| (0..self.n as SwitchId).map(move |d| (s, d, self.path(s, d))))
    }

    /// Mean links crossed over ordered pairs of distinct switches.
    pub fn mean_length(&self) -> f64 {
        let pairs = (self.n * self.n - self.n).max(1);
        self.hops.len() as f64 / pairs as f64
    }

    /// The route bytes host `src` prepends to reach host `dst`: one per switch crossed,
    /// the last one naming the port of `dst`.
    pub fn host_route(&self, t: &Topology, src: HostId, dst: HostId) -> Vec<u8> {
        let (s, d) = (&t.hosts()[src as usize], &t.hosts()[dst as usize]);
        self.path(s.switch, d.switch)
            .iter()
            .map(|h| h.port)
            .chain([d.port])
            .map(|p| route_byte(p).expect("switch ports are below 128"))
            .collect()
    }
}

/// The switch a hop leads to.
pub fn next_switch(t: &Topology, h: Hop) -> Option<SwitchId> {
    match t.port(h.switch, h.port) {
        PortUse::Link { peer, .. } => Some(peer.switch),
        _ => None,
    }
}
