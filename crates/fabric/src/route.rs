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

    /// From `offsets` (`n * n + 1`, pair `s * n + d` at `offsets[i]..offsets[i + 1]`)
    /// into `hops`.
    pub fn from_flat(n: usize, offsets: Vec<u32>, hops: Vec<Hop>) -> SwitchRoutes {
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

/// How many ordered host pairs each channel (one direction of a switch-to-switch link,
/// named by the switch it leaves and the port) carries when every host talks to every
/// other host along `routes`, largest first. Under uniform traffic the busiest channel
/// bounds the network's throughput.
pub fn channel_loads(t: &Topology, routes: &SwitchRoutes) -> Vec<(Hop, u64)> {
    let hosts: Vec<u64> = (0..t.num_switches() as SwitchId)
        .map(|s| t.hosts_on(s).count() as u64)
        .collect();
    let mut load = std::collections::HashMap::<Hop, u64>::new();
    for (s, d, path) in routes.iter() {
        let pairs = hosts[s as usize] * hosts[d as usize];
        if pairs == 0 {
            continue;
        }
        for h in path {
            *load.entry(*h).or_default() += pairs;
        }
    }
    let mut v: Vec<(Hop, u64)> = load.into_iter().collect();
    v.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then((a.0.switch, a.0.port).cmp(&(b.0.switch, b.0.port)))
    });
    v
}

/// The uniform-traffic saturation bound of a route set, in payload flits per ns per
/// switch: the load at which the busiest channel would carry `link_flits_per_ns`, when a
/// message of `payload` bytes occupies `payload + overhead` bytes of each channel.
pub fn uniform_bound(
    t: &Topology,
    routes: &SwitchRoutes,
    link_flits_per_ns: f64,
    payload: f64,
    overhead: f64,
) -> Option<f64> {
    let max = channel_loads(t, routes).first()?.1;
    Some(uniform_bound_at(
        t,
        max,
        link_flits_per_ns,
        payload,
        overhead,
    ))
}

/// [`uniform_bound`] when the busiest channel is known to carry `max_pairs` host pairs.
pub fn uniform_bound_at(
    t: &Topology,
    max_pairs: u64,
    link_flits_per_ns: f64,
    payload: f64,
    overhead: f64,
) -> f64 {
    let max = max_pairs as f64;
    let h = t.num_hosts() as f64;
    let n = t.num_switches() as f64;
    // Per-pair rate at load L (payload flits/ns/switch): L n / (h (h - 1)).
    link_flits_per_ns * h * (h - 1.0) / (n * max) * payload / (payload + overhead)
}
