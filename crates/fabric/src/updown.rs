//! up*/down* routing as Myrinet uses it (Autonet's rule).
//!
//! A breadth-first spanning tree from a root switch gives every switch a level (its hop
//! count from the root). The **up** end of a link is the end closer to the root; between
//! two switches at the same level, the one with the lower id. Crossing a link towards its
//! up end goes *up*. A route is **legal** when it is zero or more up crossings followed by
//! zero or more down crossings: it never turns from down to up, so no cycle of channel
//! dependencies can close, and every legal route set is deadlock-free.
//!
//! The root: by default the switch with the lowest id, as Autonet picks the switch with
//! the lowest unique id ([`Root::LowestId`]); [`Root::Center`] picks the switch with the
//! least total hop count to all others (lowest id among equals). Least eccentricity would
//! be the textbook centre, but on random irregular networks nearly every switch shares
//! the smallest eccentricity, so it would not choose.
//!
//! **OSUD** ("one shortest up*/down*"): for every pair of switches, one shortest legal
//! path, found by a breadth-first search over (switch, phase) that visits ports in order,
//! so the choice is deterministic. That is what Myrinet installs.

use crate::named::Named;
use crate::route::{next_switch, Hop, SwitchRoutes};
use crate::topology::{SwitchId, Topology};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    LowestId,
    Center,
    Switch(SwitchId),
}

/// The roots chosen by a word; any other root is a switch number.
impl Named for Root {
    const WHAT: &'static str = "root";
    fn table() -> &'static [(&'static str, Root)] {
        &[("lowest-id", Root::LowestId), ("center", Root::Center)]
    }
}

impl Root {
    /// A root by its word ([`Named`]) or a switch number.
    pub fn parse(s: &str) -> Option<Root> {
        Root::from_name(s)
            .ok()
            .or_else(|| s.parse().ok().map(Root::Switch))
    }

    /// This root, if `t` has it: a numbered switch must exist (`UpDown::new` would
    /// otherwise fall back to switch 0 without a word).
    pub fn check(self, t: &Topology) -> Result<Root, NoSuchRoot> {
        match self {
            Root::Switch(s) if s as usize >= t.num_switches() => Err(NoSuchRoot {
                root: s,
                switches: t.num_switches(),
            }),
            r => Ok(r),
        }
    }
}

/// A `--root` switch beyond the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("root switch {root} does not exist: the network has switches 0 to {}", .switches.saturating_sub(1))]
pub struct NoSuchRoot {
    pub root: SwitchId,
    pub switches: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpDown {
    root: SwitchId,
    level: Vec<u32>,
}

impl UpDown {
    /// Orients every link of `t` from the chosen root. A `Root::Switch` beyond the
    /// topology falls back to switch 0.
    pub fn new(t: &Topology, root: Root) -> UpDown {
        let n = t.num_switches() as SwitchId;
        let root = match root {
            Root::LowestId => 0,
            Root::Switch(s) if s < n => s,
            Root::Switch(_) => 0,
            Root::Center => (0..n)
                .min_by_key(|&s| (t.hops_from(s).into_iter().map(u64::from).sum::<u64>(), s))
                .unwrap_or(0),
        };
        UpDown {
            root,
            level: t.hops_from(root),
        }
    }

    pub fn root(&self) -> SwitchId {
        self.root
    }

    pub fn level(&self, s: SwitchId) -> u32 {
        self.level[s as usize]
    }

    /// Crossing from switch `from` to its neighbour `to` goes up.
    pub fn goes_up(&self, from: SwitchId, to: SwitchId) -> bool {
        let (lf, lt) = (self.level[from as usize], self.level[to as usize]);
        lt < lf || (lt == lf && to < from)
    }

    /// The path (hops from its first switch) never goes up after going down.
    pub fn is_legal(&self, t: &Topology, path: &[Hop]) -> bool {
        let mut down = false;
        for h in path {
            let Some(to) = next_switch(t, *h) else {
                return false;
            };
            let up = self.goes_up(h.switch, to);
            if up && down {
                return false;
            }
            down |= !up;
        }
        true
    }

    /// One shortest legal path for every ordered pair of switches.
    pub fn osud(&self, t: &Topology) -> SwitchRoutes {
        let n = t.num_switches();
        let mut search = OsudSearch::new(n);
        let mut offsets = Vec::with_capacity(n * n + 1);
        let mut hops = Vec::new();
        offsets.push(0);
        for src in 0..n as SwitchId {
            search.search(self, t, src);
            for dst in 0..n as SwitchId {
                search.path_to(dst, &mut hops);
                offsets.push(hops.len() as u32);
            }
        }
        SwitchRoutes::from_flat(n, offsets, hops)
    }
}

/// What `myrix topo show` reports of the OSUD routes: [`UpDown::osud_summary`].
#[derive(Clone, Debug, PartialEq)]
pub struct OsudSummary {
    /// Mean links per route over ordered pairs of distinct switches
    /// ([`SwitchRoutes::mean_length`]).
    pub mean_length: f64,
    /// The same for shortest unrestricted paths ([`minimal_mean_length`]).
    pub minimal_mean_length: f64,
    /// The largest hop count between two switches ([`Topology::diameter`]).
    pub diameter: u32,
    /// Ordered switch pairs whose route is longer than their distance.
    pub longer_than_minimal: usize,
    /// The channel carrying the most host pairs under uniform traffic and how many (the
    /// first of [`crate::route::channel_loads`]); `None` when no host pair is routed.
    pub busiest: Option<(Hop, u64)>,
    /// The deadlock check of the route set ([`crate::deadlock::check`]).
    pub deadlock: Result<(), crate::deadlock::Cycle>,
}

impl UpDown {
    /// The figures of [`UpDown::osud`]'s routes, computed one source switch at a time:
    /// the same numbers as from the stored routes, in memory that grows with the
    /// switches and channels rather than with every path of every pair (4096 switches
    /// have 16.8 million).
    pub fn osud_summary(&self, t: &Topology) -> OsudSummary {
        let n = t.num_switches();
        let mut base = Vec::with_capacity(n);
        let mut channels = 0usize;
        for s in t.switches() {
            base.push(channels);
            channels += s.ports as usize;
        }
        let hosts: Vec<u64> = (0..n as SwitchId)
            .map(|s| t.hosts_on(s).count() as u64)
            .collect();
        let mut load = vec![0u64; channels];
        let mut deps = crate::deadlock::Dependencies::new(t);
        let mut search = OsudSearch::new(n);
        let mut path = Vec::new();
        let (mut links, mut minimal, mut diameter, mut longer) = (0u64, 0u64, 0u32, 0usize);
        for src in 0..n as SwitchId {
            let hops = t.hops_from(src);
            minimal += hops.iter().map(|&d| d as u64).sum::<u64>();
            diameter = diameter.max(hops.iter().copied().max().unwrap_or(0));
            search.search(self, t, src);
            for dst in 0..n as SwitchId {
                path.clear();
                search.path_to(dst, &mut path);
                links += path.len() as u64;
                if path.len() as u32 > hops[dst as usize] {
                    longer += 1;
                }
                let pairs = hosts[src as usize] * hosts[dst as usize];
                if pairs > 0 {
                    for h in &path {
                        load[base[h.switch as usize] + h.port as usize] += pairs;
                    }
                }
                deps.add_path(&path);
            }
        }
        // Busiest first, then the lowest (switch, port), as `channel_loads` sorts.
        let mut busiest: Option<(Hop, u64)> = None;
        for (sw, &b) in base.iter().enumerate() {
            for port in 0..t.switches()[sw].ports {
                let l = load[b + port as usize];
                if l > 0 && busiest.is_none_or(|(_, m)| l > m) {
                    let hop = Hop {
                        switch: sw as SwitchId,
                        port,
                    };
                    busiest = Some((hop, l));
                }
            }
        }
        let pairs = (n * n - n).max(1) as f64;
        OsudSummary {
            mean_length: links as f64 / pairs,
            minimal_mean_length: minimal as f64 / pairs,
            diameter,
            longer_than_minimal: longer,
            busiest,
            deadlock: deps.find_cycle().map_or(Ok(()), Err),
        }
    }
}

/// The breadth-first search behind [`UpDown::osud`], one source at a time, reusing its
/// arrays: callers that store routes their own way need not hold every path at once.
#[derive(Clone, Debug)]
pub struct OsudSearch {
    src: SwitchId,
    /// State index: switch * 2 + phase (0: may still go up, 1: has gone down).
    dist: Vec<u32>,
    parent: Vec<(u32, u8)>,
    q: VecDeque<usize>,
    rev: Vec<Hop>,
}

impl OsudSearch {
    pub fn new(n: usize) -> OsudSearch {
        OsudSearch {
            src: 0,
            dist: vec![u32::MAX; 2 * n],
            parent: vec![(u32::MAX, 0); 2 * n],
            q: VecDeque::new(),
            rev: Vec::new(),
        }
    }

    /// Searches every shortest legal path from `src`, visiting ports in order.
    pub fn search(&mut self, ud: &UpDown, t: &Topology, src: SwitchId) {
        self.src = src;
        let (dist, parent, q) = (&mut self.dist, &mut self.parent, &mut self.q);
        dist.fill(u32::MAX);
        let start = 2 * src as usize;
        dist[start] = 0;
        q.push_back(start);
        while let Some(st) = q.pop_front() {
            let (u, phase) = ((st / 2) as SwitchId, st % 2);
            for (port, _, peer) in t.neighbours(u) {
                let up = ud.goes_up(u, peer.switch);
                if up && phase == 1 {
                    continue;
                }
                let next = 2 * peer.switch as usize + usize::from(!up);
                if dist[next] == u32::MAX {
                    dist[next] = dist[st] + 1;
                    parent[next] = (st as u32, port);
                    q.push_back(next);
                }
            }
        }
    }

    /// Appends the path from the last source searched to `dst` to `out`.
    pub fn path_to(&mut self, dst: SwitchId, out: &mut Vec<Hop>) {
        let (a, b) = (2 * dst as usize, 2 * dst as usize + 1);
        let start = 2 * self.src as usize;
        let mut st = if self.dist[a] <= self.dist[b] { a } else { b };
        self.rev.clear();
        while st != start {
            let (prev, port) = self.parent[st];
            self.rev.push(Hop {
                switch: (prev / 2) as SwitchId,
                port,
            });
            st = prev as usize;
        }
        out.extend(self.rev.iter().rev());
    }
}

/// Shortest (unrestricted) hop counts between all pairs, for comparing route lengths.
pub fn minimal_mean_length(t: &Topology) -> f64 {
    let n = t.num_switches();
    let total: u64 = (0..n as SwitchId)
        .map(|s| t.hops_from(s).iter().map(|&d| d as u64).sum::<u64>())
        .sum();
    total as f64 / ((n * n - n).max(1)) as f64
}
