//! A link failure under load: the link fails at a simulated time while traffic runs, the
//! mapper's monitoring notices, the network is remapped by the mapper's own probes,
//! routes are recomputed on the map and installed in every host, and traffic goes on.
//!
//! What is simulated and what is computed:
//! * the failure and the traffic around it are simulated flit by flit ([`Sim::fail_link`]:
//!   the worm crossing the link finishes, then everything sent into the link is lost);
//! * detection is computed: the mapper checks every link once per `monitor_interval`
//!   (a loop probe round) and calls a link dead when its probe does not come back within
//!   the mapper's probe timeout, so the failure is seen at the first round after it plus
//!   that timeout;
//! * the remap is the real mapper ([`crate::mapping::remap`]) run on the network without
//!   the link by the mapper in place (the host with the highest address, which the
//!   election leaves on an intact network, unless chosen); its probes are timed but do
//!   not share the links with the traffic; it then sends the map to every host;
//! * new routes are computed with the same policy on the discovered map and installed at
//!   the time the last host has the map; messages generated before keep their old routes
//!   (and are lost if those cross the failed link).
//!
//! This module never changes the engine's model; it only drives it.

use crate::engine::{Config, ConfigError, Sim};
use crate::mapping::{remap, MapConfig, Outage};
use myrix_fabric::itb::{Policy, RouteTable};
use myrix_fabric::topology::{HostId, Topology};
use myrix_fabric::updown::{Root, UpDown};
use myrix_link::Time;

/// Which link fails, and when (simulated time from the start of the run, warm-up
/// included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    pub link: usize,
    pub at: Time,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FaultConfig {
    /// How often the mapper checks every link.
    pub monitor_interval: Time,
    pub map: MapConfig,
    /// The mapper's host; `None`: the elected one, the highest address.
    pub mapper: Option<HostId>,
    /// After the measurement, traffic stops; the run must then drain within this time,
    /// else it is reported as stuck (a deadlock).
    pub drain_limit: Time,
}

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig {
            monitor_interval: 100 * myrix_link::US,
            map: MapConfig::default(),
            mapper: None,
            drain_limit: 50 * myrix_link::MS,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FaultError {
    #[error("the topology has {0} links; link {1} does not exist")]
    NoSuchLink(usize, usize),
    #[error("without link {0} the network falls apart; remapping a split network is not modelled")]
    Splits(usize),
    #[error(
        "the failure at {at_ns} ns is outside the run (warm-up + measurement end at {end_ns} ns)"
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
    pub failed_at_ns: f64,
    /// When monitoring noticed the failure.
    pub detected_at_ns: f64,
    /// When the new routes were installed (the last host has the new map).
    pub rerouted_at_ns: f64,
    /// The remap's own simulated time and probes, and the mapper.
    pub remap_ns: f64,
    pub remap_probes: u64,
    pub mapper: HostId,
    /// Switches and links in the map after the failure.
    pub map_switches: usize,
    pub map_links: usize,
    /// Packets lost in the failed link.
    pub lost: u64,
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

/// Runs `cfg` on `topo` with `policy`, failing `failure.link` at `failure.at`.
pub fn run_with_failure(
    cfg: Config,
    topo: &Topology,
    policy: Policy,
    failure: Failure,
    fc: &FaultConfig,
) -> Result<FaultReport, FaultError> {
    let links = topo.links();
    if failure.link >= links.len() {
        return Err(FaultError::NoSuchLink(links.len(), failure.link));
    }
    let end = cfg.warmup + cfg.measure;
    if failure.at >= end {
        return Err(FaultError::Outside {
            at_ns: failure.at as f64 / 1e3,
            end_ns: end as f64 / 1e3,
        });
    }
    let mut rest = links.to_vec();
    rest.remove(failure.link);
    let after = Topology::new(
        format!("{} without link {}", topo.name(), failure.link),
        topo.switches().to_vec(),
        topo.hosts().to_vec(),
        rest,
    )
    .map_err(|_| FaultError::Splits(failure.link))?;
    // The remap: the mapper's own probes through the damaged network, then the map to
    // every host.
    let mapper = fc.mapper.unwrap_or_else(|| {
        (0..topo.num_hosts() as HostId)
            .max_by_key(|&h| topo.hosts()[h as usize].address)
            .unwrap_or(0)
    });
    let outage = Outage {
        links_down: vec![failure.link],
        ..Outage::default()
    };
    let part = remap(topo, &outage, mapper, &fc.map);
    let run = &part.run;
    let map = run
        .map
        .as_ref()
        .map_err(|e| FaultError::Map(e.to_string()))?;
    let (map_switches, map_links) = (map.num_switches(), map.links().len());
    // Routes on the map. The map names switches in discovery order; the simulator's
    // tables index the real switch ids, so the same computation runs on the real
    // network without the link, which the map equals up to renaming (mapping tests).
    let before = RouteTable::new(topo, &UpDown::new(topo, Root::LowestId), policy);
    let rerouted = RouteTable::new(&after, &UpDown::new(&after, Root::LowestId), policy);

    let mut sim = Sim::new(cfg, topo, &before)?;
    let tick = sim.tick();
    let (from, to) = sim.measure_window();
    let fail_tick = failure.at.div_ceil(tick);
    let interval = fc.monitor_interval.max(1);
    let detected = (failure.at / interval + 1) * interval + fc.map.timeout;
    let installed = detected + part.distributed_at;
    let install_tick = installed.div_ceil(tick);

    // Payload delivered at each window edge.
    let mut marks: Vec<(u64, u64)> = Vec::new();
    let mut edges = [from, fail_tick.max(from), install_tick.max(from), to];
    for e in edges.iter_mut() {
        *e = (*e).clamp(from, to);
    }
    let mut failed = false;
    let mut switched = false;
    let mut next_edge = 0;
    while sim.now_ticks() < to {
        let now = sim.now_ticks();
        if !failed && now >= fail_tick {
            sim.fail_link(failure.link);
            failed = true;
        }
        if !switched && now >= install_tick {
            sim.set_routes(&rerouted)?;
            switched = true;
        }
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
    let limit = fc.drain_limit.div_ceil(tick);
    while sim.in_flight() > 0 && sim.now_ticks() - drain_from < limit {
        if !failed && sim.now_ticks() >= fail_tick {
            sim.fail_link(failure.link);
            failed = true;
        }
        if !switched && sim.now_ticks() >= install_tick {
            sim.set_routes(&rerouted)?;
            switched = true;
        }
        sim.step();
    }
    let ns = |ticks: u64| ticks as f64 * tick as f64 / 1e3;
    let n = topo.num_switches() as f64;
    let rate = |a: (u64, u64), b: (u64, u64)| {
        if b.0 > a.0 {
            (b.1 - a.1) as f64 / ns(b.0 - a.0) / n
        } else {
            f64::NAN
        }
    };
    Ok(FaultReport {
        failed_at_ns: failure.at as f64 / 1e3,
        detected_at_ns: detected as f64 / 1e3,
        rerouted_at_ns: installed as f64 / 1e3,
        remap_ns: run.time as f64 / 1e3,
        remap_probes: run.probes,
        mapper,
        map_switches,
        map_links,
        lost: sim.lost(),
        accepted_before: rate(marks[0], marks[1]),
        accepted_during: rate(marks[1], marks[2]),
        accepted_after: rate(marks[2], marks[3]),
        drained: sim.in_flight() == 0,
        drain_ns: ns(sim.now_ticks() - drain_from),
    })
}
