//! The mapper: discovers a network from the outcomes of the probes it sends, as a
//! Myrinet host interface does. Sans-IO: [`Mapper::poll_probe`] says what to send next,
//! [`Mapper::handle`] takes what became of it; the mapper never sees the topology.
//!
//! Switches have no identity on the wire, so they are known by routes: each discovered
//! switch `K` has a route `r_K` from the mapper (output ports from the mapper's switch)
//! and a return route `b_K` from `K` back to the mapper's own host port.
//!
//! * **Own port**: a loop probe `[q]` comes back only when `q` is the mapper's own port.
//! * **A port `p` of `K`** is looked at with up to three kinds of probe: a loop `r_K+[p]`
//!   comes back only from the mapper's switch; a host probe along `r_K+[p]` carrying
//!   `b_K` is answered by a host there with its address; a loop `r_K+[p, j]+b_K` comes
//!   back when a switch `Y` sits behind `p` and some way `j` out of `Y` reaches a switch
//!   from which `b_K` leads home (every `j` is tried: the real way back to `K` is always
//!   among them).
//! * **What `Y` is**: host probes on `Y`'s ports find its first host. A switch with a host
//!   is an *anchor*, known for certain by that host's address (the mapper's own switch by
//!   a loop through the mapper's port). A switch without hosts is *host-less*.
//! * **Host-less identity**: a host-less switch is known by its *profile*, what each of
//!   its ports leads to (nothing, a host, which anchor, a host-less switch), compared to
//!   [`IDENTITY_DEPTH`] levels deep through host-less neighbours. Switches whose profiles
//!   differ are certainly different. Switches whose profiles agree at every depth cannot
//!   be told apart by any probe; they are matched to link ends greedily, a new switch
//!   being made only when every look-alike already has the port in question taken, so
//!   their number is right and the map is indistinguishable from the network
//!   ([`Topology::indistinguishable_from`]).
//! * **Ways back**: from an anchor `K`, which ports of `Y` lead back to `K` is tested
//!   with host probes (certain). From a host-less `K`, a loop can also come back through
//!   a look-alike of `K`; when more than one `j` came back, each is kept only if the
//!   switch behind it has `K`'s profile.
//!
//! Route bytes carry absolute output ports, so which of several parallel links between
//! two switches pairs with which is not observable either: the map equals the network up
//! to that permutation and to the swaps of look-alike host-less switches above.
//!
//! The algorithm is ordinary sequential code run as a coroutine: it awaits each probe's
//! outcome, and [`Mapper::poll_probe`] resumes it. No threads, clocks or I/O.

use crate::topology::{End, Host, Link, Switch, Topology, TopologyError, DEFAULT_CABLE_M};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// How many levels of host-less neighbours two host-less switches' profiles are
/// compared through before they are taken to be look-alikes. Known limit: two different
/// switches that agree through this depth are taken for look-alikes (none did in the 1000
/// random networks of the tests). Deeper comparison is exact in principle but costs
/// probes exponentially in the depth (8 levels: over two million probes on a 30-switch
/// network), because the same switch reached by two routes is compared branch by branch.
pub const IDENTITY_DEPTH: u32 = 3;

/// A probe to send from the mapper's host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// Comes back to the mapper or is lost; hosts other than the mapper ignore it.
    Loop { route: Vec<u8> },
    /// A host it reaches replies with its address along `reply`.
    Host { route: Vec<u8>, reply: Vec<u8> },
}

impl Probe {
    pub fn route(&self) -> &[u8] {
        match self {
            Probe::Loop { route } | Probe::Host { route, .. } => route,
        }
    }
}

/// What became of a probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Returned,
    Reply { address: u64 },
    Lost,
}

/// Why a map could not be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MapError {
    #[error("the mapper's own port was not found (no loop probe came back)")]
    NoOwnPort,
    #[error("mapping has not finished")]
    Unfinished,
    #[error(transparent)]
    Topology(#[from] TopologyError),
}

/// What a port of a switch leads to, as probes see it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Look {
    Free,
    /// The mapper's own host (only on the mapper's switch).
    Mapper,
    Host(u64),
    /// A switch, with every port of it from which the probing switch's way home worked.
    Switch {
        backs: Vec<u8>,
        kind: Kind,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A switch with hosts, by its first host's address (the mapper's for its own switch)
    /// and that host's port.
    Anchor {
        address: u64,
        port: u8,
    },
    HostLess,
}

/// The same, without the ways back: what identity is compared on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    Free,
    Mapper,
    Host(u64),
    Anchor(u64),
    HostLess,
}

impl Look {
    fn seen(&self) -> Seen {
        match self {
            Look::Free => Seen::Free,
            Look::Mapper => Seen::Mapper,
            Look::Host(a) => Seen::Host(*a),
            Look::Switch {
                kind: Kind::Anchor { address, .. },
                ..
            } => Seen::Anchor(*address),
            Look::Switch {
                kind: Kind::HostLess,
                ..
            } => Seen::HostLess,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Port {
    Unknown,
    Free,
    Mapper,
    Host(u64),
    Link(usize, u8),
}

/// How a probe checks, for certain where it can, that a route reached a given switch.
#[derive(Clone, Copy, Debug)]
enum Home {
    /// The mapper's switch: a loop out of the mapper's own port.
    Mapper(u8),
    /// An anchor: its host on `port` answers with `address`.
    Host { port: u8, address: u64 },
    /// A host-less switch: only that its way home works.
    Route,
}

#[derive(Clone, Debug)]
struct Node {
    route: Vec<u8>,
    back: Vec<u8>,
    home: Home,
    anchor: Option<u64>,
    ports: Vec<Port>,
}

/// The channel between the coroutine and [`Mapper`].
#[derive(Default)]
struct Chan {
    want: Option<Probe>,
    in_flight: bool,
    got: Option<Outcome>,
    sent: u64,
}

#[derive(Clone)]
struct Prober(Rc<RefCell<Chan>>);

impl Prober {
    async fn send(&self, probe: Probe) -> Outcome {
        {
            let mut c = self.0.borrow_mut();
            c.want = Some(probe);
            c.got = None;
        }
        poll_fn(|_| match self.0.borrow_mut().got.take() {
            Some(o) => Poll::Ready(o),
            None => Poll::Pending,
        })
        .await
    }
}

struct Explored {
    map: Result<Topology, MapError>,
    routes: Vec<Vec<u8>>,
}

type Task = Pin<Box<dyn Future<Output = Explored>>>;

pub struct Mapper {
    chan: Rc<RefCell<Chan>>,
    task: Option<Task>,
    result: Option<Explored>,
}

impl Mapper {
    /// A mapper on the host with address `me`; switch ports are probed up to `max_ports`.
    pub fn new(me: u64, max_ports: u8) -> Mapper {
        let chan = Rc::new(RefCell::new(Chan::default()));
        let ex = Explorer {
            me,
            max: max_ports.clamp(1, 128),
            net: Prober(chan.clone()),
            own: 0,
            nodes: Vec::new(),
            profiles: HashMap::new(),
        };
        Mapper {
            chan,
            task: Some(Box::pin(ex.run())),
            result: None,
        }
    }

    /// For each discovered switch, its route from the mapper (output ports).
    pub fn switch_routes(&self) -> Vec<Vec<u8>> {
        self.result
            .as_ref()
            .map(|r| r.routes.clone())
            .unwrap_or_default()
    }

    /// Debug view of the mapper's position.
    pub fn debug_state(&self) -> String {
        let c = self.chan.borrow();
        format!(
            "{} probes sent, {}",
            c.sent,
            if self.result.is_some() {
                "done"
            } else {
                "exploring"
            }
        )
    }

    pub fn probes_sent(&self) -> u64 {
        self.chan.borrow().sent
    }

    pub fn is_done(&self) -> bool {
        self.result.is_some()
    }

    /// The next probe, if the mapper is not waiting for one or done.
    pub fn poll_probe(&mut self) -> Option<Probe> {
        if self.result.is_some() || self.chan.borrow().in_flight {
            return None;
        }
        let task = self.task.as_mut()?;
        let mut cx = Context::from_waker(Waker::noop());
        match task.as_mut().poll(&mut cx) {
            Poll::Ready(r) => {
                self.result = Some(r);
                self.task = None;
                None
            }
            Poll::Pending => {
                let mut c = self.chan.borrow_mut();
                let probe = c.want.take()?;
                c.in_flight = true;
                c.sent += 1;
                Some(probe)
            }
        }
    }

    /// What became of the last probe.
    pub fn handle(&mut self, outcome: Outcome) {
        let mut c = self.chan.borrow_mut();
        if c.in_flight {
            c.in_flight = false;
            c.got = Some(outcome);
        }
    }

    /// The network as discovered: switches in discovery order (the mapper's own switch
    /// is 0), each with as many ports as its highest port in use, hosts by address.
    pub fn map(&self) -> Result<Topology, MapError> {
        match &self.result {
            Some(r) => r.map.clone(),
            None => Err(MapError::Unfinished),
        }
    }
}

type Profile = Rc<Vec<Look>>;

struct Explorer {
    me: u64,
    max: u8,
    net: Prober,
    /// The mapper's own port on its switch.
    own: u8,
    nodes: Vec<Node>,
    /// Profiles already probed, by route, way home and whether the way back was tested
    /// for certain.
    profiles: HashMap<(Vec<u8>, Vec<u8>, bool), Profile>,
}

fn cat(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().chain(b).copied().collect()
}

impl Explorer {
    async fn run(mut self) -> Explored {
        let map = self.explore().await;
        Explored {
            map,
            routes: self.nodes.iter().map(|n| n.route.clone()).collect(),
        }
    }

    async fn loop_back(&self, route: Vec<u8>) -> bool {
        self.net.send(Probe::Loop { route }).await == Outcome::Returned
    }

    async fn explore(&mut self) -> Result<Topology, MapError> {
        let mut own = None;
        for q in 0..self.max {
            if self.loop_back(vec![q]).await {
                own = Some(q);
                break;
            }
        }
        let m = own.ok_or(MapError::NoOwnPort)?;
        self.own = m;
        self.nodes.push(Node {
            route: vec![],
            back: vec![m],
            home: Home::Mapper(m),
            anchor: Some(self.me),
            ports: vec![Port::Unknown; self.max as usize],
        });
        // Anchors first: ways back from them are certain.
        let mut anchors = VecDeque::from([0usize]);
        let mut hostless = VecDeque::new();
        while let Some(k) = anchors.pop_front().or_else(|| hostless.pop_front()) {
            let before = self.nodes.len();
            self.explore_node(k).await;
            for n in before..self.nodes.len() {
                if self.nodes[n].anchor.is_some() {
                    anchors.push_back(n);
                } else {
                    hostless.push_back(n);
                }
            }
        }
        Ok(self.build()?)
    }

    /// Every port of `k` not yet known.
    async fn explore_node(&mut self, k: usize) {
        let (route, back, home) = {
            let n = &self.nodes[k];
            (n.route.clone(), n.back.clone(), n.home)
        };
        let profile = self.profile(&route, &back, home).await;
        for (p, look) in profile.iter().enumerate() {
            if self.nodes[k].ports[p] != Port::Unknown {
                continue;
            }
            let port = match look {
                Look::Free => Port::Free,
                Look::Mapper => Port::Mapper,
                Look::Host(a) => Port::Host(*a),
                Look::Switch { backs, kind } => {
                    let w = cat(&route, &[p as u8]);
                    let backs = self.true_backs(k, &w, backs).await;
                    match self.identify(&w, &back, &backs, *kind, k).await {
                        Some((c, q)) => {
                            self.nodes[c].ports[q as usize] = Port::Link(k, p as u8);
                            Port::Link(c, q)
                        }
                        // No way back could be matched: leave the port for the far side.
                        None => continue,
                    }
                }
            };
            self.nodes[k].ports[p] = port;
        }
        // Ports still unknown lead to switches whose ends were all taken: impossible in
        // a consistent network; record them as free rather than loop.
        for p in self.nodes[k].ports.iter_mut() {
            if *p == Port::Unknown {
                *p = Port::Free;
            }
        }
    }

    /// Of the ports `backs` of the switch at `w` from which `k`'s way home worked, those
    /// that really lead back to `k` (all of them when `k` is an anchor, whose test is
    /// certain, or when there is only one).
    async fn true_backs(&mut self, k: usize, w: &[u8], backs: &[u8]) -> Vec<u8> {
        let n = &self.nodes[k];
        if backs.len() <= 1 || !matches!(n.home, Home::Route) {
            return backs.to_vec();
        }
        let (kr, kb) = (n.route.clone(), n.back.clone());
        let mut keep = Vec::new();
        for &j in backs {
            let x = cat(w, &[j]);
            if self.equal(&x, &kb, &kr, &kb, IDENTITY_DEPTH).await {
                keep.push(j);
            }
        }
        keep
    }

    /// Which known switch (and which of its ports, one of `backs`) the switch at `w`
    /// behind port `p` of `k` is; a new node if none. `None` when every matching port is
    /// already linked (the far side will show the link).
    async fn identify(
        &mut self,
        w: &[u8],
        kback: &[u8],
        backs: &[u8],
        kind: Kind,
        k: usize,
    ) -> Option<(usize, u8)> {
        let free_end = |n: &Node| {
            backs
                .iter()
                .copied()
                .find(|&q| n.ports.get(q as usize) == Some(&Port::Unknown))
        };
        let q0 = *backs.first()?;
        let wback = cat(&[q0], kback);
        match kind {
            Kind::Anchor { address, port } => {
                if let Some(c) = self.nodes.iter().position(|n| n.anchor == Some(address)) {
                    return free_end(&self.nodes[c]).map(|q| (c, q));
                }
                let home = if address == self.me {
                    Home::Mapper(port)
                } else {
                    Home::Host { port, address }
                };
                Some((self.add(w, wback, home, Some(address)), q0))
            }
            Kind::HostLess => {
                for c in 0..self.nodes.len() {
                    if c == k || self.nodes[c].anchor.is_some() {
                        continue;
                    }
                    let Some(q) = free_end(&self.nodes[c]) else {
                        continue;
                    };
                    let (cr, cb) = (self.nodes[c].route.clone(), self.nodes[c].back.clone());
                    if self.equal(w, &wback, &cr, &cb, IDENTITY_DEPTH).await {
                        return Some((c, q));
                    }
                }
                Some((self.add(w, wback, Home::Route, None), q0))
            }
        }
    }

    fn add(&mut self, route: &[u8], back: Vec<u8>, home: Home, anchor: Option<u64>) -> usize {
        self.nodes.push(Node {
            route: route.to_vec(),
            back,
            home,
            anchor,
            ports: vec![Port::Unknown; self.max as usize],
        });
        self.nodes.len() - 1
    }

    /// Whether the switches at routes `a` and `b` (with working ways home) show the same
    /// profile `depth` levels deep through their host-less neighbours.
    fn equal<'a>(
        &'a mut self,
        a: &'a [u8],
        ab: &'a [u8],
        b: &'a [u8],
        bb: &'a [u8],
        depth: u32,
    ) -> Pin<Box<dyn Future<Output = bool> + 'a>> {
        Box::pin(async move {
            if a == b {
                return true;
            }
            let pa = self.profile(a, ab, Home::Route).await;
            let pb = self.profile(b, bb, Home::Route).await;
            if pa.iter().map(Look::seen).ne(pb.iter().map(Look::seen)) {
                return false;
            }
            if depth <= 1 {
                return true;
            }
            for (i, (x, y)) in pa.iter().zip(pb.iter()).enumerate() {
                if let (
                    Look::Switch {
                        backs: xb,
                        kind: Kind::HostLess,
                    },
                    Look::Switch { backs: yb, .. },
                ) = (x, y)
                {
                    let (ra, rb) = (cat(a, &[i as u8]), cat(b, &[i as u8]));
                    let (wa, wb) = (cat(&xb[..1], ab), cat(&yb[..1], bb));
                    if !self.equal(&ra, &wa, &rb, &wb, depth - 1).await {
                        return false;
                    }
                }
            }
            true
        })
    }

    /// What every port of the switch at `route` leads to; `back` is a working way home
    /// from it, `home` how to check that a route came back to it.
    async fn profile(&mut self, route: &[u8], back: &[u8], home: Home) -> Profile {
        let key = (route.to_vec(), back.to_vec(), matches!(home, Home::Route));
        if let Some(p) = self.profiles.get(&key) {
            return p.clone();
        }
        let mut looks = Vec::with_capacity(self.max as usize);
        for i in 0..self.max {
            looks.push(self.look(route, back, home, i).await);
        }
        let p = Rc::new(looks);
        self.profiles.insert(key, p.clone());
        p
    }

    /// What port `i` of the switch at `w` leads to.
    async fn look(&mut self, w: &[u8], back: &[u8], home: Home, i: u8) -> Look {
        let wi = cat(w, &[i]);
        if self.loop_back(wi.clone()).await {
            return Look::Mapper;
        }
        let host = Probe::Host {
            route: wi.clone(),
            reply: back.to_vec(),
        };
        if let Outcome::Reply { address } = self.net.send(host).await {
            return Look::Host(address);
        }
        let mut backs = Vec::new();
        for j in 0..self.max {
            let there = cat(&wi, &[j]);
            let ok = match home {
                Home::Mapper(m) => self.loop_back(cat(&there, &[m])).await,
                Home::Host { port, address } => {
                    let probe = Probe::Host {
                        route: cat(&there, &[port]),
                        reply: back.to_vec(),
                    };
                    self.net.send(probe).await == Outcome::Reply { address }
                }
                Home::Route => self.loop_back(cat(&there, back)).await,
            };
            if ok {
                backs.push(j);
            }
        }
        let Some(&j) = backs.first() else {
            return Look::Free;
        };
        let kind = self.kind_of(&wi, &cat(&[j], back), j).await;
        Look::Switch { backs, kind }
    }

    /// Anchor or host-less: the switch at `w`, whose port `j` is a way home along `back`.
    async fn kind_of(&mut self, w: &[u8], back: &[u8], j: u8) -> Kind {
        if self.loop_back(cat(w, &[self.own])).await {
            return Kind::Anchor {
                address: self.me,
                port: self.own,
            };
        }
        for k in 0..self.max {
            if k == j {
                continue;
            }
            let probe = Probe::Host {
                route: cat(w, &[k]),
                reply: back.to_vec(),
            };
            if let Outcome::Reply { address } = self.net.send(probe).await {
                return Kind::Anchor { address, port: k };
            }
        }
        Kind::HostLess
    }

    fn build(&self) -> Result<Topology, TopologyError> {
        let mut switches = Vec::new();
        let mut hosts = Vec::new();
        let mut links = Vec::new();
        for (i, s) in self.nodes.iter().enumerate() {
            let used = s
                .ports
                .iter()
                .rposition(|p| !matches!(p, Port::Free | Port::Unknown))
                .map_or(1, |x| x + 1);
            switches.push(Switch { ports: used as u8 });
            for (p, port) in s.ports.iter().enumerate() {
                let host = |address| Host {
                    address,
                    switch: i as u32,
                    port: p as u8,
                    length_m: DEFAULT_CABLE_M,
                };
                match *port {
                    Port::Mapper => hosts.push(host(self.me)),
                    Port::Host(address) => hosts.push(host(address)),
                    Port::Link(o, op) if (o, op as usize) > (i, p) => links.push(Link {
                        a: End {
                            switch: i as u32,
                            port: p as u8,
                        },
                        b: End {
                            switch: o as u32,
                            port: op,
                        },
                        length_m: DEFAULT_CABLE_M,
                    }),
                    _ => {}
                }
            }
        }
        hosts.sort_by_key(|h| h.address);
        Topology::new("mapped", switches, hosts, links)
    }
}
