//! A failure under load: a link, a switch or a host fails (or a host joins) at a
//! simulated time while traffic runs, the mapper's monitoring notices, the network is
//! remapped by the mapper's own probes, routes are recomputed on the map and installed
//! in every host, and traffic goes on.
//!
//! What is simulated and what is computed:
//! * the failure and the traffic around it are simulated flit by flit
//!   ([`Sim::fail_link`], [`Sim::fail_switch`], [`Sim::fail_host`]: the worm crossing a
//!   failed link finishes, then everything sent into it is lost; a host switched off
//!   finishes the packet it is sending and loses what waits in its memory and its
//!   in-transit buffer);
//! * detection is computed: the mapper checks every link and host once per
//!   `monitor_interval` (a probe round) and calls a component dead when its probe does
//!   not come back within the probe timeout, so the failure is seen at the first round
//!   after it plus that timeout. When the failure takes the mapper itself away, the
//!   other hosts notice that its round does not come (one interval after the round it
//!   missed) and elect a new mapper ([`crate::mapping::elect`]);
//! * the remap is the real mapper ([`crate::mapping::remap`]) run on the network with
//!   the component out of service by the mapper in place (the host with the highest
//!   address, which the election leaves on an intact network, unless chosen); its
//!   probes are timed but do not share the links with the traffic; it then sends the
//!   map to every host;
//! * new routes are computed with the same policy on the surviving network and installed
//!   at the time the last host has the map; messages generated before keep their old
//!   routes (and are lost if those cross what failed); from then on nobody sends to a
//!   host that is off.
//!
//! A failure that splits the network (besides the hosts of a failed switch) is refused:
//! routes across parts that cannot reach each other are not modelled.
//!
//! This module never changes the engine's model; it only drives it.

use crate::engine::{Config, ConfigError, Sim};
use crate::mapping::{elect, remap, MapConfig, Outage};
use crate::Ticks;
use myrix_fabric::itb::{Policy, RouteTable};
use myrix_fabric::topology::{End, HostId, Link, PortUse, SwitchId, Topology};
use myrix_fabric::updown::{Root, UpDown};
use myrix_link::{Picos, MS, US};

/// What fails: a link (index into the topology's links), a switch, a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    Link(usize),
    Switch(SwitchId),
    Host(HostId),
}

/// What fails, and when (simulated time from the start of the run, warm-up included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    pub what: Component,
    pub at: Picos,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FaultConfig {
    /// How often the mapper checks every link.
    pub monitor_interval: Picos,
    pub map: MapConfig,
    /// The mapper's host; `None`: the elected one, the highest address.
    pub mapper: Option<HostId>,
    /// After the measurement, traffic stops and the run drains; it is reported stuck (a
    /// deadlock) when no message arrives or is lost for this long. Longer than the
    /// links' long-period time-out, which breaks deadlocks as in Myrinet.
    pub drain_limit: Picos,
}

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig {
            monitor_interval: 100 * US,
            map: MapConfig::default(),
            mapper: None,
            drain_limit: 200 * MS,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FaultError {
    #[error("the topology has {0} links; link {1} does not exist")]
    NoSuchLink(usize, usize),
    #[error("the topology has {0} switches; switch {1} does not exist")]
    NoSuchSwitch(usize, SwitchId),
    #[error("the topology has {0} hosts; host {1} does not exist")]
    NoSuchHost(usize, HostId),
    #[error("without {0} the network falls apart; remapping a split network is not modelled")]
    Splits(String),
    #[error("without {0} fewer than 2 hosts are left to exchange messages")]
    TooFewHosts(String),
    #[error(
        "the failure or join at {at_ns} ns is outside the run (warm-up + measurement end at {end_ns} ns)"
    )]
    Outside { at_ns: f64, end_ns: f64 },
    #[error("the mapper could not map the network after the failure: {0}")]
    Map(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// What happened.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultReport {
    /// When the component failed (or the host joined).
    pub failed_at_ns: f64,
    /// When monitoring noticed the change.
    pub detected_at_ns: f64,
    /// When the new routes were installed (the last host has the new map).
    pub rerouted_at_ns: f64,
    /// The remap's own simulated time and probes (all candidates' when a new mapper was
    /// elected), and the mapper.
    pub remap_ns: f64,
    pub remap_probes: u64,
    pub mapper: HostId,
    /// A new mapper was elected: the failure took the mapper away, or a host with a
    /// higher address joined.
    pub elected: bool,
    /// Switches, hosts and links in the map after the failure.
    pub map_switches: usize,
    pub map_hosts: usize,
    pub map_links: usize,
    /// Packets lost in the network (failed links, in-transit buffers of hosts off).
    pub lost: u64,
    /// Messages lost in the memory of hosts switched off before they left.
    pub dropped: u64,
    /// Messages not sent after the reroute because their destination is off.
    pub refused: u64,
    /// Long-period time-outs that dropped blocked packets (deadlocks broken, e.g. while
    /// old and new routes mixed).
    pub timeouts: u64,
    /// For a host failing or joining: messages from it and to it that arrived, over the
    /// whole run (0 for links and switches).
    pub host_sent: u64,
    pub host_received: u64,
    /// Accepted traffic, payload flits/ns/switch, in three windows of the measurement:
    /// before the failure, between the failure and the new routes, after them.
    pub accepted_before: f64,
    pub accepted_during: f64,
    pub accepted_after: f64,
    /// Every message left when traffic stopped arrived or was lost within the drain
    /// limit: no deadlock.
    pub drained: bool,
    pub drain_ns: f64,
}

/// The network without what failed: the survivors, each surviving switch's id in the
/// whole network, and the outage as the mapper meets it.
pub fn survivors(
    topo: &Topology,
    what: Component,
) -> Result<(Topology, Vec<SwitchId>, Outage), FaultError> {
    let links = topo.links();
    let name = describe(topo, what);
    let mut outage = Outage::default();
    let mut gone = vec![false; topo.num_switches()];
    match what {
        Component::Link(l) if l >= links.len() => {
            return Err(FaultError::NoSuchLink(links.len(), l))
        }
        Component::Link(l) => outage.links_down.push(l),
        Component::Switch(s) if s as usize >= topo.num_switches() => {
            return Err(FaultError::NoSuchSwitch(topo.num_switches(), s))
        }
        Component::Switch(s) => {
            gone[s as usize] = true;
            for u in topo.ports_of(s) {
                match *u {
                    PortUse::Link { link, .. } => outage.links_down.push(link as usize),
                    PortUse::Host(h) => outage.hosts_off.push(h),
                    PortUse::Free => {}
                }
            }
            outage.links_down.sort_unstable();
            outage.links_down.dedup();
        }
        Component::Host(h) if h as usize >= topo.num_hosts() => {
            return Err(FaultError::NoSuchHost(topo.num_hosts(), h))
        }
        Component::Host(h) => outage.hosts_off.push(h),
    }
    let old_of_new: Vec<SwitchId> = (0..topo.num_switches() as SwitchId)
        .filter(|&s| !gone[s as usize])
        .collect();
    let mut new_of_old = vec![SwitchId::MAX; topo.num_switches()];
    for (n, &o) in old_of_new.iter().enumerate() {
        new_of_old[o as usize] = n as SwitchId;
    }
    let end = |e: End| End {
        switch: new_of_old[e.switch as usize],
        port: e.port,
    };
    let rest_links: Vec<Link> = links
        .iter()
        .enumerate()
        .filter(|(i, _)| !outage.links_down.contains(i))
        .map(|(_, l)| Link {
            a: end(l.a),
            b: end(l.b),
            ..*l
        })
        .collect();
    let rest_hosts: Vec<_> = topo
        .hosts()
        .iter()
        .enumerate()
        .filter(|(h, _)| !outage.hosts_off.contains(&(*h as HostId)))
        .map(|(_, h)| myrix_fabric::topology::Host {
            switch: new_of_old[h.switch as usize],
            ..*h
        })
        .collect();
    if rest_hosts.len() < 2 {
        return Err(FaultError::TooFewHosts(name));
    }
    let switches = old_of_new
        .iter()
        .map(|&s| topo.switches()[s as usize])
        .collect();
    let after = Topology::new(
        format!("{} without {name}", topo.name()),
        switches,
        rest_hosts,
        rest_links,
    )
    .map_err(|_| FaultError::Splits(name))?;
    Ok((after, old_of_new, outage))
}

/// "link 3-7", "switch 4", "host 12".
pub fn describe(topo: &Topology, what: Component) -> String {
    match what {
        Component::Link(l) => match topo.links().get(l) {
            Some(k) => format!("link {}-{}", k.a.switch, k.b.switch),
            None => format!("link #{l}"),
        },
        Component::Switch(s) => format!("switch {s}"),
        Component::Host(h) => format!("host {h}"),
    }
}

/// Runs `cfg` on `topo` with `policy`, failing `failure.what` at `failure.at`.
pub fn run_with_failure(
    cfg: Config,
    topo: &Topology,
    policy: Policy,
    failure: Failure,
    fc: &FaultConfig,
) -> Result<FaultReport, FaultError> {
    run_change(
        cfg,
        topo,
        policy,
        Change::Fail(failure.what),
        failure.at,
        fc,
    )
}

/// Runs `cfg` on `topo` with `policy`, host `host` off from the start and joining at
/// `at`: the mapper's next round finds it, the network is remapped, and once every host
/// has the map the new host sends and receives like the others. Before, the routes are
/// those of the network without it.
pub fn run_with_join(
    cfg: Config,
    topo: &Topology,
    policy: Policy,
    host: HostId,
    at: Picos,
    fc: &FaultConfig,
) -> Result<FaultReport, FaultError> {
    run_change(cfg, topo, policy, Change::Join(host), at, fc)
}

#[derive(Clone, Copy, Debug)]
enum Change {
    Fail(Component),
    Join(HostId),
}

fn run_change(
    cfg: Config,
    topo: &Topology,
    policy: Policy,
    change: Change,
    at: Picos,
    fc: &FaultConfig,
) -> Result<FaultReport, FaultError> {
    let end = cfg.warmup + cfg.measure;
    if at >= end {
        return Err(FaultError::Outside {
            at_ns: at.as_nanos_f64(),
            end_ns: end.as_nanos_f64(),
        });
    }
    let what = match change {
        Change::Fail(c) => c,
        Change::Join(h) => Component::Host(h),
    };
    // `small` is the network with the component out of service; it comes after a
    // failure and before a join.
    let (small, old_of_new, outage) = survivors(topo, what)?;
    let interval = fc.monitor_interval.max(Picos(1));
    let next_round = (at / interval + 1) * interval;
    // The mapper in place: the elected one, the highest address among the hosts on
    // before the change, unless chosen.
    let joining = match change {
        Change::Join(h) => Some(h),
        Change::Fail(_) => None,
    };
    let highest = |except: Option<HostId>| {
        (0..topo.num_hosts() as HostId)
            .filter(|&h| Some(h) != except)
            .max_by_key(|&h| topo.hosts()[h as usize].address)
            .unwrap_or(0)
    };
    let mapper = fc.mapper.unwrap_or_else(|| highest(joining));
    let after_outage = match change {
        Change::Fail(_) => outage.clone(),
        Change::Join(_) => Outage::default(),
    };
    let mapper_lost = matches!(change, Change::Fail(_)) && outage.hosts_off.contains(&mapper);
    // A host joining with a higher address than the mapper's takes the mapper role
    // over by the same election.
    let outranked = joining.is_some_and(|h| fc.mapper.is_none() && highest(None) == h);
    let (part, detected, probes, elected) = if mapper_lost || outranked {
        // Mapper lost: its round does not come, and one interval later the hosts
        // elect. Outranked: the newcomer starts mapping at the next round.
        let detected = if mapper_lost {
            next_round + interval
        } else {
            next_round + fc.map.timeout
        };
        let mut e = elect(topo, &after_outage, &fc.map);
        if e.parts.len() != 1 {
            return Err(FaultError::Splits(describe(topo, what)));
        }
        (e.parts.remove(0), detected, e.probes, true)
    } else {
        let part = remap(topo, &after_outage, mapper, &fc.map);
        let probes = part.run.probes;
        (part, next_round + fc.map.timeout, probes, false)
    };
    let run = &part.run;
    let map = run
        .map
        .as_ref()
        .map_err(|e| FaultError::Map(e.to_string()))?;
    let (map_switches, map_hosts, map_links) =
        (map.num_switches(), map.num_hosts(), map.links().len());
    // Routes on the map. The map names switches in discovery order; the simulator's
    // tables index the real switch ids, so the same computation runs on the real
    // surviving network, which the map equals up to renaming (mapping tests).
    let whole = RouteTable::new(topo, &UpDown::new(topo, Root::LowestId), policy);
    let part_table = RouteTable::new(&small, &UpDown::new(&small, Root::LowestId), policy)
        .lift(&old_of_new, topo.num_switches());
    let (before, rerouted) = match change {
        Change::Fail(_) => (&whole, &part_table),
        Change::Join(_) => (&part_table, &whole),
    };

    let mut sim = Sim::new(cfg, topo, before)?;
    if let Some(h) = joining {
        sim.start_off(h);
    }
    let tick = sim.tick();
    let (from, to) = sim.measure_window();
    let fail_tick = Ticks::covering(at, tick);
    let installed = detected + part.distributed_at;
    let install_tick = Ticks::covering(installed, tick);

    // Payload delivered at each window edge.
    let mut marks: Vec<(Ticks, u64)> = Vec::new();
    let mut edges = [from, fail_tick.max(from), install_tick.max(from), to];
    for e in edges.iter_mut() {
        *e = (*e).clamp(from, to);
    }
    let mut script = Script {
        change,
        fail_tick,
        install_tick,
        rerouted,
        failed: false,
        switched: false,
    };
    let mut next_edge = 0;
    while sim.now_ticks() < to {
        let now = sim.now_ticks();
        script.apply(&mut sim, now)?;
        while next_edge < edges.len() && now >= edges[next_edge] {
            marks.push((now, sim.delivered_payload()));
            next_edge += 1;
        }
        sim.step();
    }
    while next_edge < edges.len() {
        marks.push((sim.now_ticks(), sim.delivered_payload()));
        next_edge += 1;
    }
    // Drain: stop the traffic; whatever is left must arrive or be lost.
    sim.quiet();
    let drain_from = sim.now_ticks();
    let limit = Ticks::covering(fc.drain_limit, tick);
    let (mut left, mut moved) = (sim.in_flight(), drain_from);
    while left > 0 && sim.now_ticks() - moved < limit {
        let now = sim.now_ticks();
        script.apply(&mut sim, now)?;
        sim.step();
        if sim.in_flight() != left {
            left = sim.in_flight();
            moved = sim.now_ticks();
        }
    }
    let ns = |ticks: Ticks| ticks.as_nanos_f64(tick);
    let n = topo.num_switches() as f64;
    let rate = |a: (Ticks, u64), b: (Ticks, u64)| {
        if b.0 > a.0 {
            (b.1 - a.1) as f64 / ns(b.0 - a.0) / n
        } else {
            f64::NAN
        }
    };
    Ok(FaultReport {
        failed_at_ns: at.as_nanos_f64(),
        detected_at_ns: detected.as_nanos_f64(),
        rerouted_at_ns: installed.as_nanos_f64(),
        remap_ns: run.time.as_nanos_f64(),
        remap_probes: probes,
        mapper: run.mapper,
        elected,
        map_switches,
        map_hosts,
        map_links,
        lost: sim.lost(),
        dropped: sim.dropped(),
        refused: sim.refused(),
        timeouts: sim.timeouts(),
        host_sent: match what {
            Component::Host(h) => sim.delivered_by_source()[h as usize],
            _ => 0,
        },
        host_received: match what {
            Component::Host(h) => sim.delivered_by_destination()[h as usize],
            _ => 0,
        },
        accepted_before: rate(marks[0], marks[1]),
        accepted_during: rate(marks[1], marks[2]),
        accepted_after: rate(marks[2], marks[3]),
        drained: sim.in_flight() == 0,
        drain_ns: ns(sim.now_ticks() - drain_from),
    })
}

/// The failure and the new routes, each applied once when its time comes.
struct Script<'a> {
    change: Change,
    fail_tick: Ticks,
    install_tick: Ticks,
    rerouted: &'a RouteTable,
    failed: bool,
    switched: bool,
}

impl<'a> Script<'a> {
    fn apply(&mut self, sim: &mut Sim<'a>, now: Ticks) -> Result<(), FaultError> {
        if !self.failed && now >= self.fail_tick {
            match self.change {
                Change::Fail(Component::Link(l)) => sim.fail_link(l),
                Change::Fail(Component::Switch(s)) => sim.fail_switch(s),
                Change::Fail(Component::Host(h)) => sim.fail_host(h),
                Change::Join(h) => sim.join_host(h),
            }
            self.failed = true;
        }
        if !self.switched && now >= self.install_tick {
            sim.set_routes(self.rerouted)?;
            self.switched = true;
        }
        Ok(())
    }
}
