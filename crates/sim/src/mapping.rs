//! Running the mapper over the simulated network.
//!
//! Probes are real Myrinet packets (route bytes, the mapping type, a payload, CRC-8)
//! walked through the network switch by switch with `wire`'s forwarding: a switch reads
//! and strips the leading route byte and drops a packet whose leading byte is a to-host
//! byte, as the seed describes; a host answers host probes with its address. This runs on
//! an idle network at packet level (no contention), with time accumulated per probe:
//! cables, 150 ns per switch, serialization, or a timeout when a probe is lost. The
//! mapper itself ([`myrix_fabric::mapper`]) only ever sees the outcomes.

use myrix_fabric::mapper::{MapError, Mapper, Outcome, Probe};
use myrix_fabric::{HostId, PortUse, Topology};
use myrix_link::Time;
use myrix_wire::myrinet::{forward, route_byte, Packet, PacketRepr, PacketType};

#[derive(Clone, Debug, PartialEq)]
pub struct MapConfig {
    /// Ports probed per switch.
    pub max_ports: u8,
    /// How long the mapper waits for a probe before calling it lost.
    pub timeout: Time,
    pub flit: Time,
    pub ns_per_m: f64,
    pub switch_latency: Time,
    /// The mapper gives up after this many probes.
    pub max_probes: u64,
}

impl Default for MapConfig {
    fn default() -> Self {
        MapConfig {
            max_ports: 16,
            timeout: 10_000_000,
            flit: 6_250,
            ns_per_m: 1.5 / 0.3048,
            switch_latency: 150_000,
            max_probes: 2_000_000,
        }
    }
}

pub struct MapRun {
    pub map: Result<Topology, MapError>,
    pub mapper: HostId,
    pub probes: u64,
    /// Simulated time from the first probe to the last outcome.
    pub time: Time,
    /// Each discovered switch's route from the mapper (output ports).
    pub switch_routes: Vec<Vec<u8>>,
    /// The mapper's state when it stopped (for diagnosing a run that gave up).
    pub last_state: String,
}

const LOOP: u8 = 0;
const HOST: u8 = 1;
const REPLY: u8 = 2;

/// Sends `payload` from host `from` along `route`; the host it reaches, the packet as
/// it arrives there, and the time taken, or `None` and the time to where it was lost.
fn walk(
    t: &Topology,
    cfg: &MapConfig,
    from: HostId,
    route: &[u8],
    payload: &[u8],
) -> (Option<(HostId, Vec<u8>)>, Time) {
    let cable = |m: f64| (m * cfg.ns_per_m * 1000.0) as Time;
    let bytes: Option<Vec<u8>> = route.iter().map(|&p| route_byte(p).ok()).collect();
    let Some(route) = bytes else { return (None, 0) };
    let repr = PacketRepr {
        route: &route,
        packet_type: PacketType::Mapping,
        payload,
    };
    let Ok(mut buf) = repr.to_vec() else {
        return (None, 0);
    };
    let serialization = buf.len() as Time * cfg.flit;
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
            PortUse::Link { link, peer } => {
                time += cable(t.links()[link as usize].length_m);
                sw = peer.switch;
            }
            PortUse::Host(x) => {
                time += cable(t.hosts()[x as usize].length_m) + serialization;
                buf.truncate(len);
                return (Some((x, buf)), time);
            }
            PortUse::Free => return (None, time),
        }
    }
}

/// What host `at` does with a mapping packet, and what the mapper learns.
fn outcome(
    t: &Topology,
    cfg: &MapConfig,
    mapper: HostId,
    at: HostId,
    pkt: &[u8],
) -> (Outcome, Time) {
    let Ok(p) = Packet::new_checked(pkt) else {
        return (Outcome::Lost, 0);
    };
    // A packet still led by route bytes reached a host by mistake: dropped.
    if !p.route().is_empty() || !p.verify_crc() || p.packet_type() != PacketType::Mapping {
        return (Outcome::Lost, 0);
    }
    match p.payload() {
        [LOOP, ..] if at == mapper => (Outcome::Returned, 0),
        [HOST, reply @ ..] if at != mapper => {
            let address = t.hosts()[at as usize].address;
            let mut payload = vec![REPLY];
            payload.extend_from_slice(&address.to_be_bytes()[2..]);
            match walk(t, cfg, at, reply, &payload) {
                (Some((x, back)), dt) if x == mapper => match Packet::new_checked(&back[..]) {
                    Ok(b) if b.payload().len() == 7 && b.payload()[0] == REPLY => {
                        let a = b.payload()[1..]
                            .iter()
                            .fold(0u64, |acc, &x| acc << 8 | x as u64);
                        (Outcome::Reply { address: a }, dt)
                    }
                    _ => (Outcome::Lost, dt),
                },
                (_, dt) => (Outcome::Lost, dt),
            }
        }
        _ => (Outcome::Lost, 0),
    }
}

/// Maps `t` from host `mapper`.
pub fn run_mapper(t: &Topology, mapper: HostId, cfg: &MapConfig) -> MapRun {
    let me = t.hosts()[mapper as usize].address;
    let mut m = Mapper::new(me, cfg.max_ports);
    let mut time: Time = 0;
    while let Some(probe) = m.poll_probe() {
        if m.probes_sent() > cfg.max_probes {
            break;
        }
        let payload: Vec<u8> = match &probe {
            Probe::Loop { .. } => vec![LOOP],
            Probe::Host { reply, .. } => {
                std::iter::once(HOST).chain(reply.iter().copied()).collect()
            }
        };
        let (result, dt) = match walk(t, cfg, mapper, probe.route(), &payload) {
            (Some((at, pkt)), dt) => {
                let (o, back) = outcome(t, cfg, mapper, at, &pkt);
                (o, dt + back)
            }
            (None, _) => (Outcome::Lost, 0),
        };
        time += if result == Outcome::Lost {
            cfg.timeout
        } else {
            dt
        };
        m.handle(result);
    }
    MapRun {
        map: m.map(),
        mapper,
        probes: m.probes_sent(),
        time,
        switch_routes: m.switch_routes(),
        last_state: m.debug_state(),
    }
}
