//! Topology generators, chosen by name (`irregular`, `mesh`, `torus`, `fattree`).
//!
//! Adding one is a function and a line in [`Generator`]'s table. Every random
//! choice comes from one ChaCha stream seeded by [`Params::seed`]: the same parameters
//! give the same network, byte for byte.

use crate::named::{Named, UnknownName};
use crate::topology::{
    host_address, End, Host, Link, Switch, SwitchId, Topology, TopologyError, DEFAULT_CABLE_M,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The most switches a generator makes: the largest network the simulator and route
/// builder are sized for (seconds and well under a GiB of routes), and a bound on the
/// irregular generator's candidate-pair list (n²/2 pairs).
pub const MAX_SWITCHES: usize = 4096;

/// A topology generator, chosen by name (`irregular`, `mesh`, `torus`, `fattree`).
#[derive(Clone, Copy)]
pub struct Generator(fn(&Params) -> Result<Topology, GenError>);

impl Named for Generator {
    const WHAT: &'static str = "topology kind";
    fn table() -> &'static [(&'static str, Generator)] {
        &[
            ("irregular", Generator(irregular)),
            ("mesh", Generator(|p| grid(p, false))),
            ("torus", Generator(|p| grid(p, true))),
            ("fattree", Generator(fattree)),
        ]
    }
}

impl Generator {
    pub fn generate(self, p: &Params) -> Result<Topology, GenError> {
        (self.0)(p)
    }
}

/// Parameters; each generator reads the ones it needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// `irregular`: number of switches.
    pub switches: usize,
    /// `irregular`: ports per switch (8 in the study).
    pub ports: u8,
    /// Hosts on each switch (`fattree`: on each leaf). 4 in the study.
    pub hosts_per_switch: u8,
    /// `mesh`, `torus`: size in each dimension, e.g. `[4, 4]`.
    pub dims: Vec<usize>,
    /// `fattree`: leaf and spine switches.
    pub leaves: usize,
    pub spines: usize,
    pub seed: u64,
    pub cable_m: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            switches: 16,
            ports: 8,
            hosts_per_switch: 4,
            dims: vec![4, 4],
            leaves: 8,
            spines: 4,
            seed: 1,
            cable_m: DEFAULT_CABLE_M,
        }
    }
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GenError {
    #[error(transparent)]
    UnknownKind(#[from] UnknownName),
    #[error("{0}")]
    Params(String),
    #[error(transparent)]
    Topology(#[from] TopologyError),
}

/// Builds a topology of the named kind.
pub fn generate(kind: &str, p: &Params) -> Result<Topology, GenError> {
    Generator::from_name(kind)?.generate(p)
}

struct Builder {
    switches: Vec<Switch>,
    hosts: Vec<Host>,
    links: Vec<Link>,
    next_port: Vec<u8>,
    cable_m: f64,
}

impl Builder {
    fn new(n: usize, ports: u8, cable_m: f64) -> Builder {
        Builder {
            switches: vec![Switch { ports }; n],
            hosts: Vec::new(),
            links: Vec::new(),
            next_port: vec![0; n],
            cable_m,
        }
    }
    fn port(&mut self, s: usize) -> u8 {
        let p = self.next_port[s];
        self.next_port[s] += 1;
        p
    }
    fn host(&mut self, s: usize) {
        let port = self.port(s);
        let id = self.hosts.len() as u32;
        self.hosts.push(Host {
            address: host_address(id),
            switch: s as SwitchId,
            port,
            length_m: self.cable_m,
        });
    }
    fn link(&mut self, a: usize, b: usize) {
        let (pa, pb) = (self.port(a), self.port(b));
        self.links.push(Link {
            a: End {
                switch: a as SwitchId,
                port: pa,
            },
            b: End {
                switch: b as SwitchId,
                port: pb,
            },
            length_m: self.cable_m,
        });
    }
    fn build(self, name: String) -> Result<Topology, GenError> {
        Ok(Topology::new(name, self.switches, self.hosts, self.links)?)
    }
}

/// The minimal-routing study's irregular networks: all switches alike, `hosts_per_switch`
/// hosts each, the remaining ports for switch-to-switch links, at most one link between
/// two switches, connected.
///
/// A random spanning tree (each switch joins a random earlier switch with a free port)
/// makes it connected; then random extra links are added between switches with free ports
/// until no pair of unlinked switches both have one. Most switches end up using all their
/// ports, as in a cabled machine room.
pub fn irregular(p: &Params) -> Result<Topology, GenError> {
    let n = p.switches;
    if n == 0 || n > MAX_SWITCHES {
        return Err(GenError::Params(format!(
            "--switches must be 1 to {MAX_SWITCHES}"
        )));
    }
    if p.hosts_per_switch >= p.ports && n > 1 {
        return Err(GenError::Params(format!(
            "{} ports with {} hosts each leave no port for switch links",
            p.ports, p.hosts_per_switch
        )));
    }
    let free = (p.ports - p.hosts_per_switch.min(p.ports)) as usize;
    if free < 2 && n > 2 {
        return Err(GenError::Params(
            "an irregular network of more than 2 switches needs at least 2 link ports per switch"
                .into(),
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let mut b = Builder::new(n, p.ports, p.cable_m);
    for s in 0..n {
        for _ in 0..p.hosts_per_switch {
            b.host(s);
        }
    }
    let mut degree = vec![0usize; n];
    let mut linked = std::collections::HashSet::new();
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut rng);
    for i in 1..n {
        let open: Vec<usize> = order[..i]
            .iter()
            .copied()
            .filter(|&s| degree[s] < free)
            .collect();
        // A tree with degrees capped at >= 2 always has an open node (its leaves).
        let a = open[rng.gen_range(0..open.len())];
        let c = order[i];
        b.link(a, c);
        degree[a] += 1;
        degree[c] += 1;
        linked.insert((a.min(c), a.max(c)));
    }
    let mut pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |c| (a, c)))
        .filter(|k| !linked.contains(k))
        .collect();
    pairs.shuffle(&mut rng);
    for (a, c) in pairs {
        if degree[a] < free && degree[c] < free {
            b.link(a, c);
            degree[a] += 1;
            degree[c] += 1;
        }
    }
    b.build(format!("irregular-{n}-seed{}", p.seed))
}

/// A k-ary n-dimensional mesh or torus: hosts on ports `0..h`, then for each dimension
/// `d` the port to the lower neighbour (`h + 2d`) and to the upper one (`h + 2d + 1`).
fn grid(p: &Params, torus: bool) -> Result<Topology, GenError> {
    if p.dims.is_empty() || p.dims.contains(&0) {
        return Err(GenError::Params(
            "--dims needs one or more sizes of at least 1, e.g. 4x4".into(),
        ));
    }
    if torus && p.dims.iter().any(|&k| k < 3) {
        return Err(GenError::Params(
            "a torus needs every dimension of at least 3 (2 would link the same pair twice)".into(),
        ));
    }
    // Checked: sizes like 100000x100000x100000x100000 overflow a usize.
    let n = p
        .dims
        .iter()
        .try_fold(1usize, |n, &k| n.checked_mul(k))
        .filter(|&n| n <= MAX_SWITCHES)
        .ok_or_else(|| {
            GenError::Params(format!(
                "--dims would make more than {MAX_SWITCHES} switches"
            ))
        })?;
    let ports = p.hosts_per_switch as usize + 2 * p.dims.len();
    if ports > 128 {
        return Err(GenError::Params(
            "too many ports per switch (max 128)".into(),
        ));
    }
    let mut b = Builder::new(n, ports as u8, p.cable_m);
    for s in 0..n {
        for _ in 0..p.hosts_per_switch {
            b.host(s);
        }
    }
    // Fixed port layout: place links explicitly rather than in creation order.
    let h = p.hosts_per_switch as usize;
    let mut stride = 1;
    for (d, &k) in p.dims.iter().enumerate() {
        for s in 0..n {
            let x = (s / stride) % k;
            let up = if x + 1 < k {
                Some(s + stride)
            } else if torus {
                Some(s - (k - 1) * stride)
            } else {
                None
            };
            if let Some(t) = up {
                b.links.push(Link {
                    a: End {
                        switch: s as SwitchId,
                        port: (h + 2 * d + 1) as u8,
                    },
                    b: End {
                        switch: t as SwitchId,
                        port: (h + 2 * d) as u8,
                    },
                    length_m: p.cable_m,
                });
            }
        }
        stride *= k;
    }
    let dims: Vec<String> = p.dims.iter().map(|k| k.to_string()).collect();
    b.build(format!(
        "{}-{}",
        if torus { "torus" } else { "mesh" },
        dims.join("x")
    ))
}

/// A two-level folded Clos: `leaves` leaf switches with `hosts_per_switch` hosts and one
/// link to each of `spines` spine switches. Leaves are switches `0..leaves`.
fn fattree(p: &Params) -> Result<Topology, GenError> {
    if p.leaves == 0 || p.spines == 0 {
        return Err(GenError::Params(
            "--leaves and --spines must be at least 1".into(),
        ));
    }
    if p.leaves.saturating_add(p.spines) > MAX_SWITCHES {
        return Err(GenError::Params(format!(
            "--leaves plus --spines must be at most {MAX_SWITCHES}"
        )));
    }
    let leaf_ports = p.hosts_per_switch as usize + p.spines;
    if leaf_ports > 128 || p.leaves > 128 {
        return Err(GenError::Params(
            "a switch would need more than 128 ports".into(),
        ));
    }
    let mut b = Builder::new(p.leaves + p.spines, leaf_ports as u8, p.cable_m);
    for s in p.leaves..p.leaves + p.spines {
        b.switches[s] = Switch {
            ports: p.leaves as u8,
        };
    }
    for l in 0..p.leaves {
        for _ in 0..p.hosts_per_switch {
            b.host(l);
        }
    }
    for l in 0..p.leaves {
        for s in 0..p.spines {
            b.link(l, p.leaves + s);
        }
    }
    b.build(format!("fattree-{}x{}", p.leaves, p.spines))
}
