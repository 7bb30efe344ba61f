//! The simulator's speed: one run on a generated irregular network, timed by the
//! thread's own CPU clock (`/proc/thread-self/stat`) with wall time beside it, and the
//! process's peak memory.
//!
//! Each run is single-threaded, so on a busy machine compare ratios within one run,
//! not absolute figures. This module measures; it never prints.

use crate::LabError;
use myrix_fabric::generate::{generate, Params};
use myrix_fabric::itb::{Policy, RouteTable};
use myrix_fabric::updown::{Root, UpDown};
use myrix_fabric::Topology;
use myrix_sim::{Config, Sim};
use std::time::Instant;

/// CPU seconds used by this thread so far (utime + stime from procfs, in clock ticks).
pub fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let (u, s): (f64, f64) = (f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?);
    Some((u + s) / 100.0)
}

/// Peak resident memory of the process, MiB.
pub fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The network of a speed run: irregular, `switches` switches, seed 1, with its
/// up*/down* OSUD routes.
pub fn network(switches: usize) -> Result<(Topology, RouteTable), LabError> {
    let t = generate(
        "irregular",
        &Params {
            switches,
            seed: 1,
            ..Params::default()
        },
    )
    .map_err(|e| LabError::Invalid(e.to_string()))?;
    let routes = RouteTable::new(&t, &UpDown::new(&t, Root::LowestId), Policy::Osud);
    Ok((t, routes))
}

/// One timed run.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeedRow {
    pub switches: usize,
    /// Offered load, flits/ns/switch.
    pub load: f64,
    pub accepted: f64,
    pub saturated: bool,
    pub flit_hops: u64,
    /// Flits of the packets delivered, as injected (route bytes included).
    pub wire_flits_delivered: u64,
    /// CPU seconds of the run (wall seconds when the CPU clock cannot be read).
    pub cpu_s: f64,
    pub wall_s: f64,
    /// Peak resident memory of the process after the run, MiB.
    pub peak_mib: Option<f64>,
}

/// Builds and runs `cfg` on `t`, timing the run (not the build).
pub fn measure(t: &Topology, routes: &RouteTable, cfg: Config) -> Result<SpeedRow, LabError> {
    let load = cfg.load;
    let sim = Sim::new(cfg, t, routes).map_err(|e| LabError::Invalid(e.to_string()))?;
    let (c0, w0) = (thread_cpu_seconds(), Instant::now());
    let r = sim.run();
    let wall = w0.elapsed().as_secs_f64();
    let cpu = match (c0, thread_cpu_seconds()) {
        (Some(a), Some(b)) if b > a => b - a,
        _ => wall,
    };
    Ok(SpeedRow {
        switches: t.num_switches(),
        load,
        accepted: r.accepted,
        saturated: r.saturated,
        flit_hops: r.flit_hops,
        wire_flits_delivered: r.wire_flits_delivered,
        cpu_s: cpu,
        wall_s: wall,
        peak_mib: peak_rss_mib(),
    })
}
