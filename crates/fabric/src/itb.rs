//! Minimal routing with in-transit buffers (Flich et al., seed 001), and the route
//! selection policies the study compares.
//!
//! up*/down* forbids a route to turn from down to up, which makes many minimal paths
//! illegal. An **in-transit buffer** (ITB) lifts the rule: at the switch where the turn
//! would happen, the packet is ejected into a host on that switch (the **in-transit
//! host**), held in its interface's memory, and re-injected along the rest of the path.
//! Each piece (**sub-route**) is a legal up*/down* route, and because the in-transit host
//! absorbs the whole packet, channel dependencies end there: the route set stays
//! deadlock-free. Every down-to-up turn must therefore fall on a switch with a host;
//! minimal paths whose turns do not are left out.
//!
//! Policies (by name, [`Policy::parse`]):
//! * `osud`: one shortest legal up*/down* path, as Myrinet installs it; never an ITB.
//! * `omit`: one minimal path (the first found), split as needed.
//! * `rmit`: any of up to 10 minimal paths, at random per message.
//! * `rrmit`: the same alternatives in round-robin order.
//! * `pit`: 80 % as `rmit`, 20 % at random among paths one link longer than minimal.
//! * `rrmit-min`: round-robin among the paths of least cost, where a path costs its links
//!   plus one per in-transit host (re-injection crosses the switch again); legal
//!   up*/down* paths compete too, so ITBs are used only where they pay.
//!
//! This module computes the alternatives; choosing among them per message is the
//! simulator's job. No notion of time.

use crate::route::{next_switch, Hop, SwitchRoutes};
use crate::topology::{HostId, SwitchId, Topology};
use crate::updown::UpDown;

/// The most alternatives kept per switch pair, as in the study.
pub const MAX_ALTERNATIVES: usize = 10;

/// The most candidate paths enumerated per switch pair before filtering: bounds the
/// work on large networks, where shortest paths can be very many.
const ENUMERATE: usize = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    Osud,
    Omit,
    Rmit,
    Rrmit,
    Pit,
    RrmitMin,
}

impl Policy {
    pub const ALL: [Policy; 6] = [
        Policy::Osud,
        Policy::Omit,
        Policy::Rmit,
        Policy::Rrmit,
        Policy::Pit,
        Policy::RrmitMin,
    ];
    pub const NAMES: [&'static str; 6] = ["osud", "omit", "rmit", "rrmit", "pit", "rrmit-min"];

    pub fn parse(s: &str) -> Option<Policy> {
        Some(match s {
            "osud" => Policy::Osud,
            "omit" => Policy::Omit,
            "rmit" => Policy::Rmit,
            "rrmit" => Policy::Rrmit,
            "pit" => Policy::Pit,
            "rrmit-min" => Policy::RrmitMin,
            _ => return None,
        })
    }

    pub const fn name(self) -> &'static str {
        match self {
            Policy::Osud => "osud",
            Policy::Omit => "omit",
            Policy::Rmit => "rmit",
            Policy::Rrmit => "rrmit",
            Policy::Pit => "pit",
            Policy::RrmitMin => "rrmit-min",
        }
    }
}

/// One route alternative between two switches: its hops, and where it is split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alternative {
    /// Switch-to-switch hops from the source switch to the destination switch.
    pub hops: Vec<Hop>,
    /// Indices into `hops` at which a sub-route ends: the packet reaches the switch that
    /// `hops[i]` leaves, is ejected into an in-transit host there, and re-enters to take
    /// `hops[i]`. Increasing.
    pub splits: Vec<u16>,
}

impl Alternative {
    /// Links crossed plus one per in-transit host: the `rrmit-min` cost.
    pub fn cost(&self) -> usize {
        self.hops.len() + self.splits.len()
    }

    /// The legal up*/down* pieces.
    pub fn sub_routes(&self) -> impl Iterator<Item = &[Hop]> + '_ {
        let mut cuts: Vec<usize> = Vec::with_capacity(self.splits.len() + 2);
        cuts.push(0);
        cuts.extend(self.splits.iter().map(|&i| i as usize));
        cuts.push(self.hops.len());
        (0..cuts.len() - 1).map(move |k| &self.hops[cuts[k]..cuts[k + 1]])
    }

    /// The switches at which the packet is ejected into an in-transit host.
    pub fn split_switches(&self) -> impl Iterator<Item = SwitchId> + '_ {
        self.splits.iter().map(|&i| self.hops[i as usize].switch)
    }
}

/// Splits `hops` into legal up*/down* sub-routes at every down-to-up turn. `None` if a
/// turn falls on a switch without a host.
pub fn split(t: &Topology, ud: &UpDown, hops: &[Hop]) -> Option<Vec<u16>> {
    let mut splits = Vec::new();
    let mut down = false;
    for (i, h) in hops.iter().enumerate() {
        let to = next_switch(t, *h)?;
        let up = ud.goes_up(h.switch, to);
        if up && down {
            t.hosts_on(h.switch).next()?;
            splits.push(i as u16);
            down = false;
        }
        down |= !up;
    }
    Some(splits)
}

/// Up to `limit` simple paths of exactly `len` links from `s` to `d`, in port order.
pub fn paths_of_length(
    t: &Topology,
    s: SwitchId,
    d: SwitchId,
    len: usize,
    limit: usize,
) -> Vec<Vec<Hop>> {
    let mut search = PathSearch {
        t,
        d,
        dist_to_d: t.hops_from(d),
        limit,
        path: Vec::with_capacity(len),
        on_path: vec![false; t.num_switches()],
        out: Vec::new(),
    };
    search.on_path[s as usize] = true;
    search.dfs(s, len);
    search.out
}

/// Depth-first enumeration of simple paths of a given length.
struct PathSearch<'a> {
    t: &'a Topology,
    d: SwitchId,
    dist_to_d: Vec<u32>,
    limit: usize,
    path: Vec<Hop>,
    on_path: Vec<bool>,
    out: Vec<Vec<Hop>>,
}

impl PathSearch<'_> {
    fn dfs(&mut self, at: SwitchId, left: usize) {
        if self.out.len() >= self.limit {
            return;
        }
        if left == 0 {
            if at == self.d {
                self.out.push(self.path.clone());
            }
            return;
        }
        let t = self.t;
        for (port, _, e) in t.neighbours(at) {
            let v = e.switch as usize;
            // Prune: v must still be able to reach d in the links left.
            if self.on_path[v] || self.dist_to_d[v] as usize > left - 1 {
                continue;
            }
            self.on_path[v] = true;
            self.path.push(Hop { switch: at, port });
            self.dfs(e.switch, left - 1);
            self.path.pop();
            self.on_path[v] = false;
        }
    }
}

/// Every shortest legal up*/down* path from `s` to `d`, up to `limit`, in port order.
fn legal_shortest(
    t: &Topology,
    ud: &UpDown,
    s: SwitchId,
    d: SwitchId,
    len: usize,
    limit: usize,
) -> Vec<Vec<Hop>> {
    paths_of_length(t, s, d, len, ENUMERATE)
        .into_iter()
        .filter(|p| ud.is_legal(t, p))
        .take(limit)
        .collect()
}

/// The alternatives of one policy for every ordered switch pair.
#[derive(Clone, Debug)]
pub struct RouteTable {
    pub policy: Policy,
    n: usize,
    /// `alts[s * n + d]`: the alternatives the policy chooses among.
    alts: Vec<Vec<Alternative>>,
    /// `pit` only: paths one link longer than minimal, for its 20 % share.
    longer: Vec<Vec<Alternative>>,
}

impl RouteTable {
    /// Computes the alternatives of `policy` on `t` with the up*/down* orientation `ud`.
    pub fn new(t: &Topology, ud: &UpDown, policy: Policy) -> RouteTable {
        let n = t.num_switches();
        let osud: SwitchRoutes = ud.osud(t);
        let mut alts = Vec::with_capacity(n * n);
        let mut longer = Vec::new();
        for s in 0..n as SwitchId {
            let dist = t.hops_from(s);
            for d in 0..n as SwitchId {
                let legal = |hops: Vec<Hop>| {
                    let splits = split(t, ud, &hops)?;
                    Some(Alternative { hops, splits })
                };
                let min = dist[d as usize] as usize;
                let minimal = || -> Vec<Alternative> {
                    paths_of_length(t, s, d, min, ENUMERATE)
                        .into_iter()
                        .filter_map(legal)
                        .take(MAX_ALTERNATIVES)
                        .collect()
                };
                let osud_alt = Alternative {
                    hops: osud.path(s, d).to_vec(),
                    splits: vec![],
                };
                let mut a = match policy {
                    Policy::Osud => vec![osud_alt.clone()],
                    Policy::Omit => minimal().into_iter().take(1).collect(),
                    Policy::Rmit | Policy::Rrmit | Policy::Pit => minimal(),
                    Policy::RrmitMin => {
                        let mut c = minimal();
                        let ol = osud_alt.hops.len();
                        c.extend(
                            legal_shortest(t, ud, s, d, ol, MAX_ALTERNATIVES)
                                .into_iter()
                                .map(|hops| Alternative {
                                    hops,
                                    splits: vec![],
                                }),
                        );
                        let best = c.iter().map(Alternative::cost).min().unwrap_or(0);
                        let mut seen = std::collections::HashSet::new();
                        c.retain(|x| x.cost() == best && seen.insert(x.hops.clone()));
                        c.truncate(MAX_ALTERNATIVES);
                        c
                    }
                };
                // A minimal path always exists with ITBs unless some turn switch has no
                // host; fall back to the legal up*/down* path then.
                if a.is_empty() {
                    a.push(osud_alt);
                }
                alts.push(a);
                if policy == Policy::Pit {
                    longer.push(
                        paths_of_length(t, s, d, min + 1, ENUMERATE)
                            .into_iter()
                            .filter_map(legal)
                            .take(MAX_ALTERNATIVES)
                            .collect(),
                    );
                }
            }
        }
        RouteTable {
            policy,
            n,
            alts,
            longer,
        }
    }

    pub fn num_switches(&self) -> usize {
        self.n
    }

    /// A table of one's own: `alts[s * n + d]` are the alternatives from switch `s` to
    /// switch `d` (a routing to try, or a deliberately bad one). Nothing is checked
    /// beyond the count: run [`check`] on it to know whether it can deadlock.
    pub fn from_alternatives(
        policy: Policy,
        n: usize,
        alts: Vec<Vec<Alternative>>,
    ) -> Option<RouteTable> {
        (alts.len() == n * n).then_some(RouteTable {
            policy,
            n,
            alts,
            longer: Vec::new(),
        })
    }

    /// This table, computed on a network of survivors, renamed into the switch ids of
    /// the whole network: `old_of_new[i]` is survivor `i`'s id among `n` switches. Pairs
    /// involving a switch that is not among the survivors have no alternatives.
    pub fn lift(&self, old_of_new: &[SwitchId], n: usize) -> RouteTable {
        assert_eq!(old_of_new.len(), self.n, "one id per switch of the table");
        let rename = |a: &Alternative| Alternative {
            hops: a
                .hops
                .iter()
                .map(|h| Hop {
                    switch: old_of_new[h.switch as usize],
                    port: h.port,
                })
                .collect(),
            splits: a.splits.clone(),
        };
        let mut alts = vec![Vec::new(); n * n];
        let mut longer = if self.longer.is_empty() {
            Vec::new()
        } else {
            vec![Vec::new(); n * n]
        };
        for s in 0..self.n {
            for d in 0..self.n {
                let to = old_of_new[s] as usize * n + old_of_new[d] as usize;
                alts[to] = self.alts[s * self.n + d].iter().map(rename).collect();
                if let Some(l) = self.longer.get(s * self.n + d) {
                    longer[to] = l.iter().map(rename).collect();
                }
            }
        }
        RouteTable {
            policy: self.policy,
            n,
            alts,
            longer,
        }
    }

    /// The alternatives between switches `s` and `d`.
    pub fn alternatives(&self, s: SwitchId, d: SwitchId) -> &[Alternative] {
        &self.alts[s as usize * self.n + d as usize]
    }

    /// `pit`'s one-link-longer alternatives (empty for other policies).
    pub fn longer(&self, s: SwitchId, d: SwitchId) -> &[Alternative] {
        self.longer
            .get(s as usize * self.n + d as usize)
            .map_or(&[], |v| v.as_slice())
    }

    /// Every alternative of every pair, longer ones included.
    pub fn all(&self) -> impl Iterator<Item = &Alternative> + '_ {
        self.alts.iter().chain(self.longer.iter()).flatten()
    }

    /// Mean in-transit hosts per alternative, over all pairs (each pair's alternatives
    /// weighted equally).
    pub fn mean_splits(&self) -> f64 {
        let (mut sum, mut pairs) = (0.0, 0usize);
        for a in self.alts.iter().filter(|a| !a[0].hops.is_empty()) {
            sum += a.iter().map(|x| x.splits.len() as f64).sum::<f64>() / a.len() as f64;
            pairs += 1;
        }
        sum / pairs.max(1) as f64
    }
}

/// The in-transit host used at `switch` for a packet from host `src` to host `dst`:
/// spread over the switch's hosts by the pair, so that no one interface takes all the
/// in-transit traffic of a switch.
pub fn in_transit_host(t: &Topology, switch: SwitchId, src: HostId, dst: HostId) -> Option<HostId> {
    let hosts: Vec<HostId> = t.hosts_on(switch).collect();
    if hosts.is_empty() {
        return None;
    }
    Some(hosts[(src as usize + dst as usize) % hosts.len()])
}

/// Checks a route table: every sub-route legal, and no channel dependency cycle when
/// each sub-route is its own chain (ejection into an in-transit buffer ends a chain).
pub fn check(t: &Topology, ud: &UpDown, table: &RouteTable) -> Result<(), String> {
    let mut deps = crate::deadlock::Dependencies::new(t);
    for a in table.all() {
        for sub in a.sub_routes() {
            if !ud.is_legal(t, sub) {
                return Err(format!("illegal sub-route {sub:?}"));
            }
            deps.add_path(sub);
        }
    }
    match deps.find_cycle() {
        Some(c) => Err(c.to_string()),
        None => Ok(()),
    }
}
