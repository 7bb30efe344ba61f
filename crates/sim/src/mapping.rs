//! Running the mapper over the simulated network.
//!
//! Probes are real Myrinet packets (route bytes, the mapping type, a payload, CRC-8)
//! walked through the network switch by switch with `wire`'s forwarding: a switch reads
//! and strips the leading route byte and drops a packet whose leading byte is a to-host
//! byte, as the seed describes; a host answers host probes with its address. This runs on
//! an idle network at packet level (no contention), with time accumulated per probe:
//! cables, 150 ns per switch, serialization, or a timeout when a probe is lost. The
//! mapper itself ([`myrix_fabric::mapper`]) only ever sees the outcomes.
//!
//! [`elect`] runs the election as Myrinet does it without a network manager: every host
//! that is on starts mapping at once, a mapper gives way as soon as a host it reaches has
//! a higher address or has been probed by a mapper with one (replies carry both), so in
//! every connected part of the network exactly one mapper, the highest-addressed host
//! that is on, finishes; it then sends its map to every host in it. The candidates'
//! probes are interleaved in simulated time; they do not contend for links (tiny packets
//! on an idle network).

use myrix_fabric::mapper::{MapError, Mapper, Outcome, Probe};
use myrix_fabric::{HostId, PortUse, Topology};
use myrix_link::{Picos, NS, US};
use myrix_wire::myrinet::{forward, route_byte, Packet, PacketRepr, PacketType};

#[derive(Clone, Debug, PartialEq)]
pub struct MapConfig {
    /// Ports probed per switch.
    pub max_ports: u8,
    /// How long the mapper waits for a probe before calling it lost.
    pub timeout: Picos,
    pub flit: Picos,
    pub ns_per_m: f64,
    pub switch_latency: Picos,
    /// The mapper gives up after this many probes.
    pub max_probes: u64,
}

impl Default for MapConfig {
    fn default() -> Self {
        MapConfig {
            max_ports: 16,
            timeout: 10 * US,
            flit: Picos(6_250),
            ns_per_m: 1.5 / 0.3048,
            switch_latency: 150 * NS,
            max_probes: 2_000_000,
        }
    }
}

pub struct MapRun {
    pub map: Result<Topology, MapError>,
    pub mapper: HostId,
    pub probes: u64,
    /// Simulated time from the first probe to the last outcome.
    pub time: Picos,
    /// Each discovered switch's route from the mapper (output ports).
    pub switch_routes: Vec<Vec<u8>>,
    /// The mapper's state when it stopped (for diagnosing a run that gave up).
    pub last_state: String,
}

const LOOP: u8 = 0;
const HOST: u8 = 1;
const REPLY: u8 = 2;
const MAP: u8 = 3;

/// What is out of service: hosts switched off, links down.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outage {
    pub hosts_off: Vec<HostId>,
    pub links_down: Vec<usize>,
}

/// The same, indexed.
struct Out {
    host: Vec<bool>,
    link: Vec<bool>,
}

impl Out {
    fn new(t: &Topology, o: &Outage) -> Out {
        let mut host = vec![false; t.num_hosts()];
        let mut link = vec![false; t.links().len()];
        for &h in &o.hosts_off {
            if let Some(x) = host.get_mut(h as usize) {
                *x = true;
            }
        }
        for &l in &o.links_down {
            if let Some(x) = link.get_mut(l) {
                *x = true;
            }
        }
        Out { host, link }
    }
}

/// Who is on, and what each host has heard of mappers.
struct Hosts<'a> {
    off: &'a Out,
    /// The highest mapper address each host has been probed by.
    heard: Vec<u64>,
}

/// Sends `payload` from host `from` along `route`; the host it reaches, the packet as
/// it arrives there, and the time taken, or `None` and the time to where it was lost.
fn walk(
    t: &Topology,
    cfg: &MapConfig,
    off: &Out,
    from: HostId,
    route: &[u8],
    payload: &[u8],
) -> (Option<(HostId, Vec<u8>)>, Picos) {
    let cable = |m: f64| Picos((m * cfg.ns_per_m * NS.0 as f64) as u64);
    let bytes: Option<Vec<u8>> = route.iter().map(|&p| route_byte(p).ok()).collect();
    let Some(route) = bytes else {
        return (None, Picos::ZERO);
    };
    let repr = PacketRepr {
        route: &route,
        packet_type: PacketType::Mapping,
        payload,
    };
    let Ok(mut buf) = repr.to_vec() else {
        return (None, Picos::ZERO);
    };
    let serialization = buf.len() as u64 * cfg.flit;
    let h = t.hosts()[from as usize];
    let (mut sw, mut time, mut len) = (h.switch, cable(h.length_m), buf.len());
    loop {
        let Ok((port, n)) = forward(&mut buf, len) else {
            return (None, time);
        };
        len = n;
        time += cfg.switch_latency;
        if port >= t.switches()[sw as usize].ports {
            return (None, time);
        }
        match t.port(sw, port) {
            PortUse::Link { link, .. } if off.link[link as usize] => return (None, time),
            PortUse::Link { link, peer } => {
                time += cable(t.links()[link as usize].length_m);
                sw = peer.switch;
            }
            // A switched-off interface takes nothing in.
            PortUse::Host(x) if off.host[x as usize] => return (None, time),
            PortUse::Host(x) => {
                time += cable(t.hosts()[x as usize].length_m) + serialization;
                buf.truncate(len);
                return (Some((x, buf)), time);
            }
            PortUse::Free => return (None, time),
        }
    }
}

/// What host `at` does with a mapping packet from `mapper`, and what the mapper learns:
/// the outcome, its time, and for a host probe answered, the highest address the
/// answering host knows of (its own or a mapper's that probed it).
fn outcome(
    t: &Topology,
    cfg: &MapConfig,
    hosts: &mut Hosts,
    mapper: HostId,
    at: HostId,
    pkt: &[u8],
) -> (Outcome, Picos, u64) {
    let Ok(p) = Packet::new_checked(pkt) else {
        return (Outcome::Lost, Picos::ZERO, 0);
    };
    // A packet still led by route bytes reached a host by mistake: dropped.
    if !p.route().is_empty() || !p.verify_crc() || p.packet_type() != PacketType::Mapping {
        return (Outcome::Lost, Picos::ZERO, 0);
    }
    match p.payload() {
        [LOOP, ..] if at == mapper => (Outcome::Returned, Picos::ZERO, 0),
        [HOST, reply @ ..] if at != mapper => {
            let me = t.hosts()[mapper as usize].address;
            let heard = &mut hosts.heard[at as usize];
            *heard = (*heard).max(me);
            let address = t.hosts()[at as usize].address;
            let leader = address.max(*heard);
            let mut payload = vec![REPLY];
            payload.extend_from_slice(&address.to_be_bytes()[2..]);
            payload.extend_from_slice(&leader.to_be_bytes()[2..]);
            let field = |b: &[u8]| b.iter().fold(0u64, |acc, &x| acc << 8 | x as u64);
            match walk(t, cfg, hosts.off, at, reply, &payload) {
                (Some((x, back)), dt) if x == mapper => match Packet::new_checked(&back[..]) {
                    Ok(b) if b.payload().len() == 13 && b.payload()[0] == REPLY => {
                        let a = field(&b.payload()[1..7]);
                        (Outcome::Reply { address: a }, dt, field(&b.payload()[7..]))
                    }
                    _ => (Outcome::Lost, dt, 0),
                },
                (_, dt) => (Outcome::Lost, dt, 0),
            }
        }
        _ => (Outcome::Lost, Picos::ZERO, 0),
    }
}

/// Sends `probe` from `mapper`: the outcome, the time it took (the timeout when lost)
/// and the leader address a reply carried (0 otherwise).
fn execute(
    t: &Topology,
    cfg: &MapConfig,
    hosts: &mut Hosts,
    mapper: HostId,
    probe: &Probe,
) -> (Outcome, Picos, u64) {
    let payload: Vec<u8> = match probe {
        Probe::Loop { .. } => vec![LOOP],
        Probe::Host { reply, .. } => std::iter::once(HOST).chain(reply.iter().copied()).collect(),
    };
    let (o, dt, leader) = match walk(t, cfg, hosts.off, mapper, probe.route(), &payload) {
        (Some((at, pkt)), dt) => {
            let (o, back, leader) = outcome(t, cfg, hosts, mapper, at, &pkt);
            (o, dt + back, leader)
        }
        (None, _) => (Outcome::Lost, Picos::ZERO, 0),
    };
    let time = if o == Outcome::Lost { cfg.timeout } else { dt };
    (o, time, leader)
}

/// Maps `t` from host `mapper` (chosen by hand, as a network manager may).
pub fn run_mapper(t: &Topology, mapper: HostId, cfg: &MapConfig) -> MapRun {
    run_mapper_in(t, &Out::new(t, &Outage::default()), mapper, cfg)
}

/// The mapper in place maps again after an `outage` (it keeps its role: no election
/// unless it is gone) and sends the new map to every host it finds.
pub fn remap(t: &Topology, outage: &Outage, mapper: HostId, cfg: &MapConfig) -> Part {
    let out = Out::new(t, outage);
    let run = run_mapper_in(t, &out, mapper, cfg);
    let (informed, distributed_at, map_bytes) = match run.map.as_ref() {
        Ok(m) => distribute(t, cfg, &out, mapper, m, run.time),
        Err(_) => (vec![mapper], run.time, 0),
    };
    Part {
        run,
        informed,
        distributed_at,
        map_bytes,
    }
}

fn run_mapper_in(t: &Topology, off: &Out, mapper: HostId, cfg: &MapConfig) -> MapRun {
    let mut hosts = Hosts {
        off,
        heard: vec![0; t.num_hosts()],
    };
    let me = t.hosts()[mapper as usize].address;
    let mut m = Mapper::new(me, cfg.max_ports);
    let mut time = Picos::ZERO;
    while let Some(probe) = m.poll_probe() {
        if m.probes_sent() > cfg.max_probes {
            break;
        }
        let (result, dt, _) = execute(t, cfg, &mut hosts, mapper, &probe);
        time += dt;
        m.handle(result);
    }
    MapRun::of(&m, mapper, time)
}

impl MapRun {
    /// What mapper `m` on host `mapper` found, after `time` of probing.
    fn of(m: &Mapper, mapper: HostId, time: Picos) -> MapRun {
        MapRun {
            map: m.map(),
            mapper,
            probes: m.probes_sent(),
            time,
            switch_routes: m.switch_routes(),
            last_state: m.debug_state(),
        }
    }
}

/// One connected part of the network after an election.
pub struct Part {
    /// The elected mapper and its own mapping run (time from the election's start).
    pub run: MapRun,
    /// Hosts that received the map (the mapper's included), by id in the topology.
    pub informed: Vec<HostId>,
    /// When the last of them had it.
    pub distributed_at: Picos,
    /// Bytes of the map packet's payload (see [`map_payload_len`]).
    pub map_bytes: usize,
}

/// The outcome of an election.
pub struct Elected {
    /// One per connected part holding hosts that are on, in order of their mappers.
    pub parts: Vec<Part>,
    /// Probes sent by all candidates, those that gave way included.
    pub probes: u64,
    /// Hosts that started mapping.
    pub candidates: usize,
}

/// The map packet's payload: type byte, switch count (2), each switch's port count (1),
/// host count (2), each host's address (6), switch (2) and port (1), link count (2),
/// each link's two ends (3 each). The simulation counts these bytes on the wire; hosts
/// take the map itself from the mapper's memory.
pub fn map_payload_len(map: &Topology) -> usize {
    1 + 2 + map.num_switches() + 2 + 9 * map.num_hosts() + 2 + 6 * map.links().len()
}

/// Elects a mapper in every connected part of `t` left by the `outage`, among the hosts
/// that are on; each maps its part and distributes its map.
pub fn elect(t: &Topology, outage: &Outage, cfg: &MapConfig) -> Elected {
    let out = Out::new(t, outage);
    let mut hosts = Hosts {
        off: &out,
        heard: vec![0; t.num_hosts()],
    };
    struct Cand {
        host: HostId,
        address: u64,
        m: Mapper,
        clock: Picos,
        running: bool,
    }
    let mut cands: Vec<Cand> = (0..t.num_hosts() as HostId)
        .filter(|&h| !out.host[h as usize])
        .map(|h| {
            let address = t.hosts()[h as usize].address;
            Cand {
                host: h,
                address,
                m: Mapper::new(address, cfg.max_ports),
                clock: Picos::ZERO,
                running: true,
            }
        })
        .collect();
    let candidates = cands.len();
    let mut probes = 0u64;
    let mut winners = Vec::new();
    // The running candidate furthest behind in time goes next.
    while let Some(i) = (0..cands.len())
        .filter(|&i| cands[i].running)
        .min_by_key(|&i| (cands[i].clock, cands[i].host))
    {
        let c = &mut cands[i];
        let Some(probe) = c.m.poll_probe() else {
            c.running = false;
            winners.push(i);
            continue;
        };
        probes += 1;
        if c.m.probes_sent() > cfg.max_probes {
            c.running = false;
            continue;
        }
        let (host, address) = (c.host, c.address);
        let (result, dt, leader) = execute(t, cfg, &mut hosts, host, &probe);
        let c = &mut cands[i];
        c.clock += dt;
        c.m.handle(result);
        if leader > address {
            c.running = false;
        }
        // Candidates that have now been probed by a higher mapper give way.
        for d in cands.iter_mut().filter(|d| d.running) {
            if hosts.heard[d.host as usize] > d.address {
                d.running = false;
            }
        }
    }
    let mut parts: Vec<Part> = Vec::new();
    for i in winners {
        let c = &cands[i];
        let run = MapRun::of(&c.m, c.host, c.clock);
        let Ok(m) = run.map.as_ref() else {
            continue;
        };
        let (informed, distributed_at, map_bytes) = distribute(t, cfg, &out, c.host, m, c.clock);
        parts.push(Part {
            run,
            informed,
            distributed_at,
            map_bytes,
        });
    }
    parts.sort_by_key(|p| p.run.mapper);
    Elected {
        parts,
        probes,
        candidates,
    }
}

/// Sends the map from `mapper` (done at `from`) to every host in it, one packet after
/// another along shortest paths in the map; returns who got it and when the last did.
fn distribute(
    t: &Topology,
    cfg: &MapConfig,
    out: &Out,
    mapper: HostId,
    map: &Topology,
    from: Picos,
) -> (Vec<HostId>, Picos, usize) {
    let bytes = map_payload_len(map);
    let mut payload = vec![0u8; bytes];
    payload[0] = MAP;
    let me = t.hosts()[mapper as usize].address;
    let Some(home) = map
        .hosts()
        .iter()
        .find(|h| h.address == me)
        .map(|h| h.switch)
    else {
        return (vec![mapper], from, bytes);
    };
    // Breadth-first routes in the map from the mapper's switch.
    let n = map.num_switches();
    let mut route: Vec<Option<Vec<u8>>> = vec![None; n];
    route[home as usize] = Some(vec![]);
    let mut queue = std::collections::VecDeque::from([home]);
    while let Some(s) = queue.pop_front() {
        let r = route[s as usize].clone().unwrap_or_default();
        for (p, _, peer) in map.neighbours(s) {
            if route[peer.switch as usize].is_none() {
                let mut x = r.clone();
                x.push(p);
                route[peer.switch as usize] = Some(x);
                queue.push_back(peer.switch);
            }
        }
    }
    let by_address: std::collections::HashMap<u64, HostId> = t
        .hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| (h.address, i as HostId))
        .collect();
    let mut informed = vec![mapper];
    let (mut clock, mut last) = (from, from);
    for h in map.hosts() {
        if h.address == me {
            continue;
        }
        let Some(mut r) = route[h.switch as usize].clone() else {
            continue;
        };
        r.push(h.port);
        // The interface sends the copies back to back.
        let start = clock;
        clock += (bytes as u64 + r.len() as u64 + 2) * cfg.flit;
        if let (Some((at, _)), dt) = walk(t, cfg, out, mapper, &r, &payload) {
            if Some(&at) == by_address.get(&h.address) {
                informed.push(at);
                last = last.max(start + dt);
            }
        }
    }
    informed.sort_unstable();
    (informed, last, bytes)
}
