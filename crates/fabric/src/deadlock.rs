//! Deadlock checking: the channel dependency graph of a route set, and its cycles.
//!
//! A **channel** is one direction of a link: the output port of a switch leading to
//! another switch. A route that crosses channel `a` and then channel `b` makes `b` a
//! dependency of `a`: in a wormhole network without virtual channels, a packet holding
//! `a` waits for `b`. A route set can deadlock only if these dependencies form a cycle
//! (Dally and Seitz); with none, it cannot. Host injection and ejection channels never
//! lie on a cycle, so they are left out.

use crate::route::Hop;
use crate::topology::{SwitchId, Topology};
use petgraph::graphmap::DiGraphMap;
use std::fmt;

/// One direction of a link: leaving `switch` by `port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Channel {
    pub switch: SwitchId,
    pub port: u8,
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s{}.p{}", self.switch, self.port)
    }
}

/// A cycle of channel dependencies: each channel waits for the next, the last for the first.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Cycle {
    pub channels: Vec<Channel>,
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "channel dependency cycle: ")?;
        for c in &self.channels {
            write!(f, "{c} -> ")?;
        }
        match self.channels.first() {
            Some(c) => write!(f, "{c}"),
            None => Ok(()),
        }
    }
}

/// The dependency graph, built path by path.
pub struct Dependencies {
    base: Vec<u32>,
    g: DiGraphMap<u32, ()>,
    /// Dependencies already in `g`, one bit per (channel, next switch's port), so the
    /// millions of paths of a large network hash only their distinct dependencies;
    /// `next[c]` is the switch those ports are on (`u32::MAX`: none seen yet).
    seen: Vec<u64>,
    next: Vec<u32>,
}

impl Dependencies {
    pub fn new(t: &Topology) -> Dependencies {
        let mut base = Vec::with_capacity(t.num_switches());
        let mut acc = 0;
        for s in t.switches() {
            base.push(acc);
            acc += s.ports as u32;
        }
        Dependencies {
            base,
            g: DiGraphMap::new(),
            seen: vec![0; (acc as usize * 256).div_ceil(64)],
            next: vec![u32::MAX; acc as usize],
        }
    }

    fn id(&self, h: Hop) -> u32 {
        self.base[h.switch as usize] + h.port as u32
    }

    fn channel(&self, id: u32) -> Channel {
        let s = self.base.partition_point(|&b| b <= id) - 1;
        Channel {
            switch: s as SwitchId,
            port: (id - self.base[s]) as u8,
        }
    }

    /// Adds the dependencies of one path (hops through switch-to-switch channels). A path
    /// split at in-transit hosts is added one sub-route at a time: the dependency chain
    /// ends where the packet is ejected into a buffer.
    pub fn add_path(&mut self, hops: &[Hop]) {
        for w in hops.windows(2) {
            let (a, b) = (self.id(w[0]), self.id(w[1]));
            let next = &mut self.next[a as usize];
            if *next == u32::MAX {
                *next = w[1].switch;
            }
            if *next == w[1].switch {
                let k = a as usize * 256 + w[1].port as usize;
                if self.seen[k / 64] & (1 << (k % 64)) != 0 {
                    continue;
                }
                self.seen[k / 64] |= 1 << (k % 64);
            }
            // (A path whose hops do not follow the links is still added as given.)
            self.g.add_edge(a, b, ());
        }
        if let [only] = hops {
            self.g.add_node(self.id(*only));
        }
    }

    pub fn num_dependencies(&self) -> usize {
        self.g.edge_count()
    }

    /// A cycle if there is one.
    pub fn find_cycle(&self) -> Option<Cycle> {
        for scc in petgraph::algo::tarjan_scc(&self.g) {
            let start = scc[0];
            if scc.len() == 1 && !self.g.contains_edge(start, start) {
                continue;
            }
            // Breadth-first inside the component from `start` back to `start`.
            let inside: std::collections::HashSet<u32> = scc.iter().copied().collect();
            let mut prev = std::collections::HashMap::new();
            let mut q = std::collections::VecDeque::from([start]);
            'search: while let Some(u) = q.pop_front() {
                for v in self.g.neighbors(u) {
                    if !inside.contains(&v) {
                        continue;
                    }
                    if v == start {
                        prev.insert(start, u);
                        break 'search;
                    }
                    if let std::collections::hash_map::Entry::Vacant(e) = prev.entry(v) {
                        e.insert(u);
                        q.push_back(v);
                    }
                }
            }
            let mut cycle = vec![start];
            let mut at = prev[&start];
            while at != start {
                cycle.push(at);
                at = prev[&at];
            }
            cycle.reverse();
            cycle.rotate_right(1);
            return Some(Cycle {
                channels: cycle.into_iter().map(|c| self.channel(c)).collect(),
            });
        }
        None
    }
}

/// Checks a route set: `Err` with a cycle if it can deadlock.
pub fn check<'a>(t: &Topology, paths: impl IntoIterator<Item = &'a [Hop]>) -> Result<(), Cycle> {
    let mut d = Dependencies::new(t);
    for p in paths {
        d.add_path(p);
    }
    d.find_cycle().map_or(Ok(()), Err)
}
