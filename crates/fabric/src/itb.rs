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
//! Policies (by name, [`Policy`]'s [`Named`] table):
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

use crate::named::{name_of, Named};
use crate::route::{next_switch, Hop};
use crate::topology::{HostId, SwitchId, Topology};
use crate::updown::{OsudSearch, UpDown};

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

impl Named for Policy {
    const WHAT: &'static str = "routing";
    fn table() -> &'static [(&'static str, Policy)] {
        &[
            ("osud", Policy::Osud),
            ("omit", Policy::Omit),
            ("rmit", Policy::Rmit),
            ("rrmit", Policy::Rrmit),
            ("pit", Policy::Pit),
            ("rrmit-min", Policy::RrmitMin),
        ]
    }
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

    pub fn name(self) -> &'static str {
        name_of(&self)
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

/// Alternatives stored flat (compressed sparse rows): a pair's range of alternatives,
/// each alternative's range of ports and of splits. Only ports are kept: a hop's switch
/// follows from the topology, and a path's ports are all the simulator reads. No `Vec`
/// per pair, so 4096 switches' tables fit in a few hundred MB.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct AltSet {
    /// `pair[i]..pair[i + 1]`: the alternatives of pair `i = s * n + d` (empty: unused).
    pair: Vec<u32>,
    /// `port[a]..port[a + 1]`: alternative `a`'s ports in `ports`.
    port: Vec<u32>,
    /// `split[a]..split[a + 1]`: alternative `a`'s splits in `splits`.
    split: Vec<u32>,
    ports: Vec<u8>,
    splits: Vec<u16>,
}

fn index(len: usize) -> u32 {
    u32::try_from(len).expect("a route table of fewer than 2^32 entries")
}

impl AltSet {
    fn with_pairs(pairs: usize) -> AltSet {
        let mut a = AltSet {
            pair: Vec::with_capacity(pairs + 1),
            port: Vec::with_capacity(pairs + 1),
            split: Vec::with_capacity(pairs + 1),
            ..AltSet::default()
        };
        a.pair.push(0);
        a.port.push(0);
        a.split.push(0);
        a
    }

    fn push(&mut self, ports: impl IntoIterator<Item = u8>, splits: &[u16]) {
        self.ports.extend(ports);
        self.splits.extend_from_slice(splits);
        self.port.push(index(self.ports.len()));
        self.split.push(index(self.splits.len()));
    }

    fn end_pair(&mut self) {
        self.pair.push(index(self.port.len() - 1));
    }

    /// Appends pair `i` of `from` as this set's next pair.
    fn copy_pair(&mut self, from: &AltSet, i: usize) {
        for a in from.pair[i] as usize..from.pair[i + 1] as usize {
            let (p, q) = (from.port[a] as usize, from.port[a + 1] as usize);
            let (x, y) = (from.split[a] as usize, from.split[a + 1] as usize);
            self.push(from.ports[p..q].iter().copied(), &from.splits[x..y]);
        }
        self.end_pair();
    }

    fn pair(&self, src: SwitchId, i: usize) -> Alternatives<'_> {
        let (first, end) = match self.pair.get(i + 1) {
            Some(&e) => (self.pair[i] as usize, e as usize),
            None => (0, 0),
        };
        Alternatives {
            set: self,
            src,
            first,
            end,
        }
    }

    #[inline]
    fn get(&self, src: SwitchId, a: usize) -> AltRef<'_> {
        AltRef {
            src,
            ports: &self.ports[self.port[a] as usize..self.port[a + 1] as usize],
            splits: &self.splits[self.split[a] as usize..self.split[a + 1] as usize],
        }
    }
}

/// The alternatives of one switch pair, as stored in a [`RouteTable`].
#[derive(Clone, Copy, Debug)]
pub struct Alternatives<'a> {
    set: &'a AltSet,
    src: SwitchId,
    first: usize,
    end: usize,
}

impl<'a> Alternatives<'a> {
    #[inline]
    pub fn len(&self) -> usize {
        self.end - self.first
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.end == self.first
    }

    /// Alternative `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<AltRef<'a>> {
        (i < self.len()).then(|| self.set.get(self.src, self.first + i))
    }

    /// Alternative `i`; panics beyond [`Self::len`].
    #[inline]
    pub fn at(&self, i: usize) -> AltRef<'a> {
        assert!(i < self.len(), "alternative {i} of {}", self.len());
        self.set.get(self.src, self.first + i)
    }

    pub fn iter(&self) -> AltIter<'a> {
        AltIter {
            set: self.set,
            src: self.src,
            next: self.first,
            end: self.end,
        }
    }

    /// Owned copies, hops and all.
    pub fn to_vec(&self, t: &Topology) -> Vec<Alternative> {
        self.iter().map(|a| a.to_alternative(t)).collect()
    }
}

impl<'a> IntoIterator for Alternatives<'a> {
    type Item = AltRef<'a>;
    type IntoIter = AltIter<'a>;
    fn into_iter(self) -> AltIter<'a> {
        self.iter()
    }
}

/// The alternatives of a pair, in order.
#[derive(Clone, Debug)]
pub struct AltIter<'a> {
    set: &'a AltSet,
    src: SwitchId,
    next: usize,
    end: usize,
}

impl<'a> Iterator for AltIter<'a> {
    type Item = AltRef<'a>;
    #[inline]
    fn next(&mut self) -> Option<AltRef<'a>> {
        (self.next < self.end).then(|| {
            self.next += 1;
            self.set.get(self.src, self.next - 1)
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.end - self.next, Some(self.end - self.next))
    }
}

impl ExactSizeIterator for AltIter<'_> {}

impl PartialEq for Alternatives<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

/// One stored alternative: the ports it leaves its switches by, from switch `src`, and
/// its splits (as in [`Alternative`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AltRef<'a> {
    pub src: SwitchId,
    pub ports: &'a [u8],
    pub splits: &'a [u16],
}

impl<'a> AltRef<'a> {
    /// Links crossed.
    #[inline]
    pub fn len(&self) -> usize {
        self.ports.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }

    /// Links crossed plus one per in-transit host: the `rrmit-min` cost.
    pub fn cost(&self) -> usize {
        self.ports.len() + self.splits.len()
    }

    /// The hops, switches found by following the ports through `t`. A port that leads to
    /// no switch (only in a table made by hand) leaves the rest at that switch.
    pub fn hops<'b>(&self, t: &'b Topology) -> impl Iterator<Item = Hop> + 'b
    where
        'a: 'b,
    {
        let mut at = self.src;
        self.ports.iter().map(move |&port| {
            let h = Hop { switch: at, port };
            at = next_switch(t, h).unwrap_or(at);
            h
        })
    }

    pub fn to_alternative(&self, t: &Topology) -> Alternative {
        Alternative {
            hops: self.hops(t).collect(),
            splits: self.splits.to_vec(),
        }
    }
}

/// The alternatives of one policy for every ordered switch pair.
#[derive(Clone, Debug)]
pub struct RouteTable {
    pub policy: Policy,
    n: usize,
    /// Pair `s * n + d`: the alternatives the policy chooses among.
    alts: AltSet,
    /// `pit` only: paths one link longer than minimal, for its 20 % share.
    longer: AltSet,
}

impl RouteTable {
    /// Computes the alternatives of `policy` on `t` with the up*/down* orientation `ud`.
    pub fn new(t: &Topology, ud: &UpDown, policy: Policy) -> RouteTable {
        let n = t.num_switches();
        let mut alts = AltSet::with_pairs(n * n);
        let mut longer = if policy == Policy::Pit {
            AltSet::with_pairs(n * n)
        } else {
            AltSet::default()
        };
        let mut search = OsudSearch::new(n);
        let mut osud = Vec::new();
        for s in 0..n as SwitchId {
            search.search(ud, t, s);
            let dist = if policy == Policy::Osud {
                Vec::new()
            } else {
                t.hops_from(s)
            };
            for d in 0..n as SwitchId {
                osud.clear();
                search.path_to(d, &mut osud);
                if policy == Policy::Osud {
                    alts.push(osud.iter().map(|h| h.port), &[]);
                    alts.end_pair();
                    continue;
                }
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
                let osud_alt = || Alternative {
                    hops: osud.clone(),
                    splits: vec![],
                };
                let mut a = match policy {
                    Policy::Osud => unreachable!("stored above"),
                    Policy::Omit => minimal().into_iter().take(1).collect(),
                    Policy::Rmit | Policy::Rrmit | Policy::Pit => minimal(),
                    Policy::RrmitMin => {
                        let mut c = minimal();
                        let ol = osud.len();
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
                    a.push(osud_alt());
                }
                for x in &a {
                    alts.push(x.hops.iter().map(|h| h.port), &x.splits);
                }
                alts.end_pair();
                if policy == Policy::Pit {
                    for x in paths_of_length(t, s, d, min + 1, ENUMERATE)
                        .into_iter()
                        .filter_map(legal)
                        .take(MAX_ALTERNATIVES)
                    {
                        longer.push(x.hops.iter().map(|h| h.port), &x.splits);
                    }
                    longer.end_pair();
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
    /// beyond the count: run [`check`] on it to know whether it can deadlock. Only the
    /// ports of the hops are kept.
    pub fn from_alternatives(
        policy: Policy,
        n: usize,
        alts: Vec<Vec<Alternative>>,
    ) -> Option<RouteTable> {
        if alts.len() != n * n {
            return None;
        }
        let mut set = AltSet::with_pairs(n * n);
        for pair in &alts {
            for x in pair {
                set.push(x.hops.iter().map(|h| h.port), &x.splits);
            }
            set.end_pair();
        }
        Some(RouteTable {
            policy,
            n,
            alts: set,
            longer: AltSet::default(),
        })
    }

    /// This table, computed on a network of survivors, renamed into the switch ids of
    /// the whole network: `old_of_new[i]` is survivor `i`'s id among `n` switches. Pairs
    /// involving a switch that is not among the survivors have no alternatives. (Ports
    /// keep their numbers among survivors, so only pairs move.)
    pub fn lift(&self, old_of_new: &[SwitchId], n: usize) -> RouteTable {
        assert_eq!(old_of_new.len(), self.n, "one id per switch of the table");
        let mut new_of_old = vec![usize::MAX; n];
        for (i, &o) in old_of_new.iter().enumerate() {
            new_of_old[o as usize] = i;
        }
        let lift = |from: &AltSet| {
            if from.pair.is_empty() {
                return AltSet::default();
            }
            let mut to = AltSet::with_pairs(n * n);
            for s in 0..n {
                for d in 0..n {
                    match (new_of_old[s], new_of_old[d]) {
                        (a, b) if a != usize::MAX && b != usize::MAX => {
                            to.copy_pair(from, a * self.n + b)
                        }
                        _ => to.end_pair(),
                    }
                }
            }
            to
        };
        RouteTable {
            policy: self.policy,
            n,
            alts: lift(&self.alts),
            longer: lift(&self.longer),
        }
    }

    /// The alternatives between switches `s` and `d`.
    #[inline]
    pub fn alternatives(&self, s: SwitchId, d: SwitchId) -> Alternatives<'_> {
        self.alts.pair(s, s as usize * self.n + d as usize)
    }

    /// `pit`'s one-link-longer alternatives (empty for other policies).
    #[inline]
    pub fn longer(&self, s: SwitchId, d: SwitchId) -> Alternatives<'_> {
        self.longer.pair(s, s as usize * self.n + d as usize)
    }

    /// Every alternative of every pair, longer ones included.
    pub fn all(&self) -> impl Iterator<Item = AltRef<'_>> + '_ {
        all_of(&self.alts, self.n).chain(all_of(&self.longer, self.n))
    }

    /// Mean in-transit hosts per alternative, over all pairs (each pair's alternatives
    /// weighted equally).
    pub fn mean_splits(&self) -> f64 {
        let (mut sum, mut pairs) = (0.0, 0usize);
        let n = self.n as SwitchId;
        for s in 0..n {
            for d in 0..n {
                let a = self.alternatives(s, d);
                if a.get(0).is_none_or(|x| x.is_empty()) {
                    continue;
                }
                sum += a.iter().map(|x| x.splits.len() as f64).sum::<f64>() / a.len() as f64;
                pairs += 1;
            }
        }
        sum / pairs.max(1) as f64
    }
}

fn all_of(set: &AltSet, n: usize) -> impl Iterator<Item = AltRef<'_>> + '_ {
    let pairs = if set.pair.is_empty() { 0 } else { n * n };
    (0..pairs).flat_map(move |i| set.pair((i / n) as SwitchId, i).iter())
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
        let a = a.to_alternative(t);
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
