//! The topology: switches, hosts and links, checked once so that everything downstream
//! can index without fear.

use std::collections::HashSet;

pub type SwitchId = u32;
pub type HostId = u32;

/// Default cable length, the minimal-routing study's 10 m LAN cable.
pub const DEFAULT_CABLE_M: f64 = 10.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Switch {
    /// Number of ports, numbered from 0.
    pub ports: u8,
}

/// A network interface: a 48-bit address, plugged into one switch port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Host {
    pub address: u64,
    pub switch: SwitchId,
    pub port: u8,
    pub length_m: f64,
}

/// One end of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct End {
    pub switch: SwitchId,
    pub port: u8,
}

/// A full-duplex cable between two switch ports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    pub a: End,
    pub b: End,
    pub length_m: f64,
}

/// What is plugged into a switch port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortUse {
    Free,
    Host(HostId),
    /// A link (index into [`Topology::links`]) to `peer`.
    Link {
        link: u32,
        peer: End,
    },
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TopologyError {
    #[error("the topology has no switches")]
    NoSwitches,
    #[error("switch {0} has {1} ports; a switch has 1 to 128")]
    BadPortCount(SwitchId, u32),
    #[error("{what} names switch {switch}, but there are only {count} switches")]
    UnknownSwitch {
        what: String,
        switch: SwitchId,
        count: usize,
    },
    #[error("{what} uses port {port} of switch {switch}, which has only {ports} ports")]
    NoSuchPort {
        what: String,
        switch: SwitchId,
        port: u8,
        ports: u8,
    },
    #[error("port {port} of switch {switch} is used twice ({first} and {second})")]
    PortTwice {
        switch: SwitchId,
        port: u8,
        first: String,
        second: String,
    },
    #[error("link {0} connects switch {1} to itself")]
    SelfLink(u32, SwitchId),
    #[error("hosts {0} and {1} share the address {2:012x}")]
    DuplicateAddress(HostId, HostId, u64),
    #[error("host {0} has address {1:#x}, wider than 48 bits")]
    AddressTooWide(HostId, u64),
    #[error("{what} has cable length {length} m; lengths are finite and not negative")]
    BadLength { what: String, length: f64 },
    #[error("the network is disconnected: switch {0} cannot reach switch {1}")]
    Disconnected(SwitchId, SwitchId),
}

/// A validated topology. Build one with [`Topology::new`]; its parts are read-only.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    name: String,
    switches: Vec<Switch>,
    hosts: Vec<Host>,
    links: Vec<Link>,
    /// `ports[s][p]`: what switch `s` port `p` is connected to.
    ports: Vec<Vec<PortUse>>,
}

impl Topology {
    /// Checks and indexes a topology: every port exists and is used once, addresses are
    /// unique 48-bit values, no link loops back to its own switch, and every switch can
    /// reach every other.
    pub fn new(
        name: impl Into<String>,
        switches: Vec<Switch>,
        hosts: Vec<Host>,
        links: Vec<Link>,
    ) -> Result<Topology, TopologyError> {
        if switches.is_empty() {
            return Err(TopologyError::NoSwitches);
        }
        for (i, s) in switches.iter().enumerate() {
            if s.ports == 0 || s.ports > 128 {
                return Err(TopologyError::BadPortCount(i as SwitchId, s.ports as u32));
            }
        }
        let mut ports: Vec<Vec<PortUse>> = switches
            .iter()
            .map(|s| vec![PortUse::Free; s.ports as usize])
            .collect();
        let describe = |u: &PortUse| match u {
            PortUse::Free => "nothing".to_string(),
            PortUse::Host(h) => format!("host {h}"),
            PortUse::Link { link, .. } => format!("link {link}"),
        };
        let mut claim = |what: String, e: End, u: PortUse| -> Result<(), TopologyError> {
            let count = ports.len();
            let row = ports
                .get_mut(e.switch as usize)
                .ok_or(TopologyError::UnknownSwitch {
                    what: what.clone(),
                    switch: e.switch,
                    count,
                })?;
            let n = row.len() as u8;
            let slot = row
                .get_mut(e.port as usize)
                .ok_or(TopologyError::NoSuchPort {
                    what,
                    switch: e.switch,
                    port: e.port,
                    ports: n,
                })?;
            if *slot != PortUse::Free {
                return Err(TopologyError::PortTwice {
                    switch: e.switch,
                    port: e.port,
                    first: describe(slot),
                    second: describe(&u),
                });
            }
            *slot = u;
            Ok(())
        };
        let mut seen = std::collections::HashMap::new();
        for (i, h) in hosts.iter().enumerate() {
            let id = i as HostId;
            if h.address >> 48 != 0 {
                return Err(TopologyError::AddressTooWide(id, h.address));
            }
            if let Some(&other) = seen.get(&h.address) {
                return Err(TopologyError::DuplicateAddress(other, id, h.address));
            }
            seen.insert(h.address, id);
            check_length(format!("host {id}"), h.length_m)?;
            claim(
                format!("host {id}"),
                End {
                    switch: h.switch,
                    port: h.port,
                },
                PortUse::Host(id),
            )?;
        }
        for (i, l) in links.iter().enumerate() {
            let id = i as u32;
            if l.a.switch == l.b.switch {
                return Err(TopologyError::SelfLink(id, l.a.switch));
            }
            check_length(format!("link {id}"), l.length_m)?;
            claim(
                format!("link {id}"),
                l.a,
                PortUse::Link {
                    link: id,
                    peer: l.b,
                },
            )?;
            claim(
                format!("link {id}"),
                l.b,
                PortUse::Link {
                    link: id,
                    peer: l.a,
                },
            )?;
        }
        let t = Topology {
            name: name.into(),
            switches,
            hosts,
            links,
            ports,
        };
        t.check_connected()?;
        Ok(t)
    }

    fn check_connected(&self) -> Result<(), TopologyError> {
        let dist = self.hops_from(0);
        match dist.iter().position(|d| *d == u32::MAX) {
            Some(s) => Err(TopologyError::Disconnected(0, s as SwitchId)),
            None => Ok(()),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn switches(&self) -> &[Switch] {
        &self.switches
    }
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }
    pub fn links(&self) -> &[Link] {
        &self.links
    }
    pub fn num_switches(&self) -> usize {
        self.switches.len()
    }
    pub fn num_hosts(&self) -> usize {
        self.hosts.len()
    }

    /// What switch `s` port `p` connects to.
    pub fn port(&self, s: SwitchId, p: u8) -> PortUse {
        self.ports[s as usize][p as usize]
    }

    /// The ports of switch `s`, in port order.
    pub fn ports_of(&self, s: SwitchId) -> &[PortUse] {
        &self.ports[s as usize]
    }

    /// Switch neighbours of `s` as (out port, link index, peer end), in port order.
    pub fn neighbours(&self, s: SwitchId) -> impl Iterator<Item = (u8, u32, End)> + '_ {
        self.ports[s as usize]
            .iter()
            .enumerate()
            .filter_map(|(p, u)| match *u {
                PortUse::Link { link, peer } => Some((p as u8, link, peer)),
                _ => None,
            })
    }

    /// Hosts on switch `s`.
    pub fn hosts_on(&self, s: SwitchId) -> impl Iterator<Item = HostId> + '_ {
        self.ports[s as usize].iter().filter_map(|u| match *u {
            PortUse::Host(h) => Some(h),
            _ => None,
        })
    }

    /// Hop counts from switch `from` to every switch (`u32::MAX` if unreachable).
    pub fn hops_from(&self, from: SwitchId) -> Vec<u32> {
        let mut dist = vec![u32::MAX; self.switches.len()];
        let mut q = std::collections::VecDeque::from([from]);
        dist[from as usize] = 0;
        while let Some(u) = q.pop_front() {
            for (_, _, e) in self.neighbours(u) {
                if dist[e.switch as usize] == u32::MAX {
                    dist[e.switch as usize] = dist[u as usize] + 1;
                    q.push_back(e.switch);
                }
            }
        }
        dist
    }

    /// The largest hop count between two switches.
    pub fn diameter(&self) -> u32 {
        (0..self.switches.len() as SwitchId)
            .map(|s| self.hops_from(s).into_iter().max().unwrap_or(0))
            .max()
            .unwrap_or(0)
    }

    /// Distinct pairs of switches joined by more than one link.
    pub fn parallel_links(&self) -> usize {
        let mut pairs = HashSet::new();
        let mut dup = 0;
        for l in &self.links {
            let k = (l.a.switch.min(l.b.switch), l.a.switch.max(l.b.switch));
            if !pairs.insert(k) {
                dup += 1;
            }
        }
        dup
    }
}

impl Topology {
    /// Whether every route sent from the host with address `from` meets the same fate in
    /// both networks (reaches the same host, the same free port, or runs out at a
    /// switch), and both have as many switches and the same hosts. This is all a mapper
    /// can observe: switches have no identity on the wire, and two host-less switches
    /// whose ports lead to the same kinds of places at every depth can swap their links
    /// without any probe telling. Checked as a bisimulation from `from`'s switch.
    pub fn indistinguishable_from(&self, other: &Topology, from: u64) -> Result<(), String> {
        if self.num_switches() != other.num_switches() {
            return Err(format!(
                "{} switches against {}",
                self.num_switches(),
                other.num_switches()
            ));
        }
        let addrs = |t: &Topology| {
            let mut a: Vec<u64> = t.hosts.iter().map(|h| h.address).collect();
            a.sort_unstable();
            a
        };
        if addrs(self) != addrs(other) {
            return Err("the hosts differ".into());
        }
        let start = |t: &Topology| {
            t.hosts
                .iter()
                .find(|h| h.address == from)
                .map(|h| h.switch)
                .ok_or_else(|| format!("no host {from:#x}"))
        };
        let (a0, b0) = (start(self)?, start(other)?);
        let mut seen = HashSet::new();
        let mut todo = vec![(a0, b0)];
        seen.insert((a0, b0));
        while let Some((a, b)) = todo.pop() {
            let (pa, pb) = (self.ports_of(a), other.ports_of(b));
            for p in 0..pa.len().max(pb.len()) {
                let x = pa.get(p).copied().unwrap_or(PortUse::Free);
                let y = pb.get(p).copied().unwrap_or(PortUse::Free);
                match (x, y) {
                    (PortUse::Free, PortUse::Free) => {}
                    (PortUse::Host(h), PortUse::Host(g))
                        if self.hosts[h as usize].address == other.hosts[g as usize].address => {}
                    (PortUse::Link { peer: m, .. }, PortUse::Link { peer: n, .. }) => {
                        if seen.insert((m.switch, n.switch)) {
                            todo.push((m.switch, n.switch));
                        }
                    }
                    _ => {
                        return Err(format!(
                            "port {p} of switch {a} leads to {x:?}, of its match {b} to {y:?}"
                        ))
                    }
                }
            }
        }
        Ok(())
    }
}

fn check_length(what: String, length: f64) -> Result<(), TopologyError> {
    if length.is_finite() && length >= 0.0 {
        Ok(())
    } else {
        Err(TopologyError::BadLength { what, length })
    }
}

/// The address the generators give host `id`: a locally administered MAC, 02:00:…
pub const fn host_address(id: HostId) -> u64 {
    0x0200_0000_0000 | id as u64
}
