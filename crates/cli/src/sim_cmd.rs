//! `myrix sim`: run the network model at one or more loads and report.

use crate::CliError;
use clap::{Args, ValueEnum};
use myrix_fabric::itb::{Policy, RouteTable};
use myrix_fabric::named::Named;
use myrix_fabric::Topology;
use myrix_sim::traffic::Traffic;
use myrix_sim::{ChannelRelease, Config, Results, Sim, SwitchModel};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
}

#[derive(Args)]
pub struct SimArgs {
    #[command(flatten)]
    net: crate::topo_cmd::NetworkArgs,
    /// Routing policies, comma-separated: osud (one shortest up*/down* route per pair, as
    /// Myrinet installs it), omit, rmit, rrmit, pit, rrmit-min (minimal routes with
    /// in-transit buffers). Each gets its own rows and curve.
    #[arg(long, default_value = "osud")]
    routing: String,
    /// Payload bytes per message: one size (32), several sizes mixed evenly (32,1024), or
    /// sizes with weights (32:0.8,1024:0.2).
    #[arg(long, default_value = "32")]
    msg_bytes: String,
    /// The host interface's own delay before a message's first byte enters the link,
    /// with a unit (0ns, 500ns, 1us).
    #[arg(long, default_value = "0ns")]
    send_overhead: String,
    /// Traffic pattern: uniform, bit-reversal, hotspot, local.
    #[arg(long, default_value = "uniform")]
    traffic: String,
    /// One offered load, payload flits/ns/switch.
    #[arg(long)]
    load: Option<f64>,
    /// Several loads, start:end:step (flits/ns/switch).
    #[arg(long)]
    loads: Option<String>,
    /// Sweep from low load until saturation.
    #[arg(long)]
    sweep: bool,
    /// Measured simulated time per point, with a unit: 2ms, 500us, 1250000ns.
    #[arg(long, default_value = "1ms")]
    sim_time: String,
    /// Simulated warm-up before measuring, with a unit.
    #[arg(long, default_value = "100us")]
    warmup: String,
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Write latency against accepted traffic to this file: .svg, or .png (needs a font).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// How switches spend the 150 ns of header processing: shared-unit (one routing
    /// unit per switch, the study's), route-then-request, hold-output (see the sim
    /// crate's SwitchModel).
    #[arg(long, default_value = "shared-unit")]
    switch_model: String,
    /// When a packet frees its output channel: drain (once its tail has left the buffer
    /// at the far end: one packet per channel, the classic wormhole model and the
    /// study's) or send (once its tail is sent, as Myrinet's byte-FIFO slack buffers
    /// allow).
    #[arg(long, default_value = "drain")]
    channel_release: String,
    /// Fail a component under load: link:S1-S2@TIME, switch:S@TIME or host:H@TIME (ids as
    /// in the topology, time from the start of the run with a unit, e.g. link:3-7@1ms).
    /// Needs --load; reports detection, remap, packets lost and throughput before and
    /// after.
    #[arg(long)]
    fail: Option<String>,
    /// A host joining under load: host:H@TIME. The host is off from the start (the
    /// routes do not know it) and switched on at TIME; needs --load; reports detection,
    /// remap and what it sent and received.
    #[arg(long, conflicts_with = "fail")]
    join: Option<String>,
    /// With --fail: how often the mapper checks every link and host, with a unit.
    #[arg(long, default_value = "100us")]
    monitor_interval: String,
}

/// What `--fail` names, before it is looked up in the topology.
enum FailSpec {
    Link(u32, u32),
    Switch(u32),
    Host(u32),
}

/// `link:S1-S2@TIME`, `switch:S@TIME`, `host:H@TIME`.
fn parse_fail(s: &str) -> Result<(FailSpec, u64), CliError> {
    let bad = || {
        CliError::Input(format!(
            "bad --fail '{s}': expected link:S1-S2@TIME, switch:S@TIME or host:H@TIME, e.g. link:3-7@1ms"
        ))
    };
    let (kind, rest) = s.trim().split_once(':').ok_or_else(bad)?;
    let (what, at) = rest.split_once('@').ok_or_else(bad)?;
    let id = |x: &str| x.trim().parse::<u32>().map_err(|_| bad());
    let spec = match kind {
        "link" => {
            let (a, b) = what.split_once('-').ok_or_else(bad)?;
            FailSpec::Link(id(a)?, id(b)?)
        }
        "switch" => FailSpec::Switch(id(what)?),
        "host" => FailSpec::Host(id(what)?),
        _ => return Err(bad()),
    };
    Ok((spec, parse_time(at.trim())?))
}

/// The report of a failure run: these JSON names are stable.
#[derive(Serialize)]
struct FailRow {
    routing: String,
    topology: String,
    /// "link 3-7", "switch 4", "host 12": what failed, or joined when `joined`.
    failed: String,
    joined: bool,
    offered_flits_ns_switch: f64,
    failed_at_ns: f64,
    detected_at_ns: f64,
    rerouted_at_ns: f64,
    remap_ns: f64,
    remap_probes: u64,
    mapper: u32,
    /// The failure took the mapper away and hosts elected a new one.
    elected: bool,
    map_switches: usize,
    map_hosts: usize,
    packets_lost: u64,
    /// Messages that were waiting in a failed host's memory.
    dropped: u64,
    /// Messages not sent after the reroute: their destination is off.
    refused: u64,
    /// Long-period time-outs (50 ms blocked) that dropped packets.
    timeouts: u64,
    /// A host failing or joining: messages from and to it that arrived.
    host_sent: u64,
    host_received: u64,
    accepted_before: Option<f64>,
    accepted_during: Option<f64>,
    accepted_after: Option<f64>,
    drained: bool,
}

fn fail_runs(
    t: &Topology,
    policies: &[Policy],
    cfg: Config,
    (spec, join): (&str, bool),
    interval: u64,
    format: Format,
) -> Result<(), CliError> {
    use myrix_sim::fault::{
        describe, run_with_failure, run_with_join, Component, Failure, FaultConfig,
    };
    let (spec, at) = parse_fail(spec)?;
    if join && !matches!(spec, FailSpec::Host(_)) {
        return Err(CliError::Input(
            "bad --join: expected host:H@TIME, e.g. host:5@1ms".into(),
        ));
    }
    let what = match spec {
        FailSpec::Link(a, b) => Component::Link(
            t.links()
                .iter()
                .position(|l| {
                    (l.a.switch, l.b.switch) == (a, b) || (l.a.switch, l.b.switch) == (b, a)
                })
                .ok_or_else(|| CliError::Input(format!("no link between switches {a} and {b}")))?,
        ),
        FailSpec::Switch(s) => Component::Switch(s),
        FailSpec::Host(h) => Component::Host(h),
    };
    let name = describe(t, what);
    let fc = FaultConfig {
        monitor_interval: interval,
        ..FaultConfig::default()
    };
    let fin = |x: f64| x.is_finite().then_some(x);
    let mut rows = Vec::new();
    for &policy in policies {
        let r = match what {
            Component::Host(h) if join => run_with_join(cfg.clone(), t, policy, h, at, &fc),
            _ => run_with_failure(cfg.clone(), t, policy, Failure { what, at }, &fc),
        }
        .map_err(|e| CliError::Input(e.to_string()))?;
        if !r.drained {
            eprintln!(
                "{}: messages still in the network {:.0} ns after traffic stopped, none arriving: stuck",
                policy.name(),
                r.drain_ns
            );
        }
        rows.push(FailRow {
            routing: policy.name().to_string(),
            topology: t.name().to_string(),
            failed: name.clone(),
            joined: join,
            offered_flits_ns_switch: cfg.load,
            failed_at_ns: r.failed_at_ns,
            detected_at_ns: r.detected_at_ns,
            rerouted_at_ns: r.rerouted_at_ns,
            remap_ns: r.remap_ns,
            remap_probes: r.remap_probes,
            mapper: r.mapper,
            elected: r.elected,
            map_switches: r.map_switches,
            map_hosts: r.map_hosts,
            packets_lost: r.lost,
            dropped: r.dropped,
            refused: r.refused,
            timeouts: r.timeouts,
            host_sent: r.host_sent,
            host_received: r.host_received,
            accepted_before: fin(r.accepted_before),
            accepted_during: fin(r.accepted_during),
            accepted_after: fin(r.accepted_after),
            drained: r.drained,
        });
    }
    let text = match format {
        Format::Json => {
            serde_json::to_string_pretty(&rows).map_err(|e| CliError::Input(e.to_string()))? + "\n"
        }
        _ => {
            let opt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.4}"));
            let mut out = format!(
                "# {name} {} at {:.1} us under {} flits/ns/switch; remapped by host {}{}; map: {} switches, {} hosts; accepted traffic in flits/ns/switch ('-': window not reached)\n",
                if join { "joins" } else { "fails" },
                at as f64 / 1e6,
                cfg.load,
                rows.first().map_or(0, |r| r.mapper),
                if rows.first().is_some_and(|r| r.elected) {
                    if join {
                        " (elected: the newcomer has the highest address)"
                    } else {
                        " (elected: the mapper was lost)"
                    }
                } else {
                    ""
                },
                rows.first().map_or(0, |r| r.map_switches),
                rows.first().map_or(0, |r| r.map_hosts),
            );
            let _ = writeln!(
                out,
                "{:>10} {:>12} {:>12} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7}",
                "routing",
                "detected_us",
                "rerouted_us",
                "remap_us",
                "probes",
                "lost",
                "dropped",
                "refused",
                "timeouts",
                "before",
                "during",
                "after",
                "drained"
            );
            for r in &rows {
                let _ = writeln!(
                    out,
                    "{:>10} {:>12.1} {:>12.1} {:>10.1} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7}",
                    r.routing,
                    r.detected_at_ns / 1e3,
                    r.rerouted_at_ns / 1e3,
                    r.remap_ns / 1e3,
                    r.remap_probes,
                    r.packets_lost,
                    r.dropped,
                    r.refused,
                    r.timeouts,
                    opt(r.accepted_before),
                    opt(r.accepted_during),
                    opt(r.accepted_after),
                    r.drained
                );
            }
            out
        }
    };
    crate::out(&text)?;
    if rows.iter().any(|r| !r.drained) {
        return Err(CliError::Input(
            "a run did not drain after the failure".into(),
        ));
    }
    Ok(())
}

/// One load point as printed: these JSON names are stable, other tools read them.
#[derive(Serialize)]
pub struct Row {
    pub routing: String,
    pub topology: String,
    pub switches: usize,
    pub hosts: usize,
    pub msg_bytes: usize,
    pub traffic: String,
    pub seed: u64,
    pub sim_time_ns: f64,
    pub offered_flits_ns_switch: f64,
    pub generated_flits_ns_switch: f64,
    pub accepted_flits_ns_switch: f64,
    pub accepted_batch_min: f64,
    pub accepted_batch_max: f64,
    pub avg_latency_ns: Option<f64>,
    pub p50_latency_ns: Option<f64>,
    pub p99_latency_ns: Option<f64>,
    pub latency_ci95_ns: Option<f64>,
    /// Fraction of the measured messages MSER-5 would discard as transient.
    pub mser_truncated: Option<f64>,
    pub messages_delivered: u64,
    pub link_utilization: f64,
    pub max_link_utilization: f64,
    pub saturated: bool,
    pub slack_overflows: u64,
    pub itbs_per_message: f64,
    pub itb_pool_peak: usize,
    pub switch_model: String,
    pub channel_release: String,
}

/// A point's state as the table prints it: saturated; transient (not saturated, but
/// MSER-5 cuts as far as it looks, 45 % or more of the messages: the warm-up was too
/// short or the point is on its way to saturation); or steady.
fn state(r: &Row) -> &'static str {
    if r.saturated {
        "SATURATED"
    } else if r.mser_truncated.is_some_and(|t| t >= 0.45) {
        "transient"
    } else {
        "steady"
    }
}

/// One printed row from a simulation result.
pub fn row(routing: &str, topology: &str, traffic: &str, measure: u64, r: &Results) -> Row {
    Row {
        routing: routing.to_string(),
        topology: topology.to_string(),
        switches: r.switches,
        hosts: r.hosts,
        msg_bytes: r.msg_bytes,
        traffic: traffic.to_string(),
        seed: r.seed,
        sim_time_ns: measure as f64 / 1000.0,
        offered_flits_ns_switch: r.offered,
        generated_flits_ns_switch: r.generated,
        accepted_flits_ns_switch: r.accepted,
        accepted_batch_min: r.accepted_batches.0,
        accepted_batch_max: r.accepted_batches.1,
        avg_latency_ns: r.avg_latency_ns.is_finite().then_some(r.avg_latency_ns),
        p50_latency_ns: r.p50_latency_ns.is_finite().then_some(r.p50_latency_ns),
        p99_latency_ns: r.p99_latency_ns.is_finite().then_some(r.p99_latency_ns),
        latency_ci95_ns: r.latency_ci95_ns.is_finite().then_some(r.latency_ci95_ns),
        mser_truncated: r.mser_truncated.is_finite().then_some(r.mser_truncated),
        messages_delivered: r.messages_delivered,
        link_utilization: r.link_utilization,
        max_link_utilization: r.max_link_utilization,
        saturated: r.saturated,
        slack_overflows: r.slack_overflows,
        itbs_per_message: r.itbs_per_message,
        itb_pool_peak: r.itb_pool_peak,
        switch_model: r.switch_model.name().to_string(),
        channel_release: r.channel_release.name().to_string(),
    }
}

/// `32`, `32,1024` (an even mix) or `32:0.8,1024:0.2` (weights) as (bytes, weight).
pub fn parse_mix(s: &str) -> Result<Vec<(usize, f64)>, CliError> {
    let bad = || {
        CliError::Input(format!(
            "--msg-bytes '{s}': expected sizes of 1 to 65536 bytes like 32, 32,1024 or 32:0.8,1024:0.2"
        ))
    };
    s.split(',')
        .map(|part| {
            let (b, w) = part.split_once(':').unwrap_or((part, "1"));
            let b: usize = b.trim().parse().map_err(|_| bad())?;
            let w: f64 = w.trim().parse().map_err(|_| bad())?;
            if b == 0 || b > 65536 || !(w > 0.0 && w.is_finite()) {
                return Err(bad());
            }
            Ok((b, w))
        })
        .collect()
}

/// `2ms`, `500us`, `1250000ns`, `1s` in picoseconds.
/// `--switch-model` and `--channel-release`, by name.
pub fn parse_models(
    switch_model: &str,
    release: &str,
) -> Result<(SwitchModel, ChannelRelease), CliError> {
    let m = SwitchModel::parse(switch_model).ok_or_else(|| {
        CliError::Input(format!(
            "unknown switch model '{switch_model}' (known: {})",
            SwitchModel::NAMES.join(", ")
        ))
    })?;
    let r = ChannelRelease::parse(release).ok_or_else(|| {
        CliError::Input(format!(
            "unknown channel release '{release}' (known: {})",
            ChannelRelease::NAMES.join(", ")
        ))
    })?;
    Ok((m, r))
}

pub fn parse_time(s: &str) -> Result<u64, CliError> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let scale = match unit {
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        _ => {
            return Err(CliError::Input(format!(
                "'{s}': a time needs a unit: ns, us, ms or s (e.g. 500us)"
            )))
        }
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v * scale < 1e16 => Ok((v * scale) as u64),
        _ => Err(CliError::Input(format!(
            "'{s}' is not a positive time below 10 000 s"
        ))),
    }
}

fn parse_loads(s: &str) -> Result<Vec<f64>, CliError> {
    let bad = || {
        CliError::Input(format!(
            "--loads '{s}': expected start:end:step with 0 < start <= end, step > 0"
        ))
    };
    let v: Vec<f64> = s
        .split(':')
        .map(|x| x.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    let [a, b, st] = v[..] else { return Err(bad()) };
    if !(a > 0.0 && b >= a && st > 0.0 && a.is_finite() && b.is_finite()) || (b - a) / st > 1000.0 {
        return Err(bad());
    }
    let n = ((b - a) / st + 1e-9).floor() as usize;
    Ok((0..=n).map(|i| a + st * i as f64).collect())
}

/// Runs every load on all cores; results in load order. A progress bar goes to
/// standard error, drawn only when that is a terminal.
fn run_points(
    t: &Topology,
    routes: &myrix_fabric::itb::RouteTable,
    cfgs: Vec<Config>,
) -> Vec<Results> {
    let bar = indicatif::ProgressBar::new(cfgs.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} load points {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out = std::sync::Mutex::new(vec![None; cfgs.len()]);
    std::thread::scope(|s| {
        for _ in 0..cores.min(cfgs.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(cfg) = cfgs.get(i) else { break };
                let r = Sim::new(cfg.clone(), t, routes)
                    .expect("checked before")
                    .run();
                bar.set_message(format!("(last: {:.4})", cfg.load));
                bar.inc(1);
                out.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    bar.finish_and_clear();
    out.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

pub fn run(a: SimArgs) -> Result<(), CliError> {
    let policies: Vec<Policy> = a
        .routing
        .split(',')
        .map(|r| {
            Policy::parse(r.trim()).ok_or_else(|| {
                CliError::Input(format!(
                    "unknown routing '{}' (known: {})",
                    r.trim(),
                    Policy::NAMES.join(", ")
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    if let Some(p) = &a.plot {
        crate::plot::check_path(p)?;
    }
    let traffic = Traffic::from_name(&a.traffic).map_err(|e| CliError::Input(e.to_string()))?;
    let mix = parse_mix(&a.msg_bytes)?;
    let mean_bytes = (mix.iter().map(|&(b, w)| b as f64 * w).sum::<f64>()
        / mix.iter().map(|m| m.1).sum::<f64>())
    .round() as usize;
    let send_overhead = match a.send_overhead.trim() {
        "0" | "0ns" => 0,
        x => parse_time(x)?,
    };
    let (t, ud) = a.net.build()?;
    let measure = parse_time(&a.sim_time)?;
    let warmup = parse_time(&a.warmup)?;
    let (switch_model, channel_release) = parse_models(&a.switch_model, &a.channel_release)?;
    let base = Config {
        msg_bytes: mean_bytes,
        msg_mix: if mix.len() > 1 {
            mix.clone()
        } else {
            Vec::new()
        },
        send_overhead,
        traffic,
        seed: a.net.seed,
        warmup,
        measure,
        switch_model,
        channel_release,
        ..Config::default()
    };
    let cfg_at = |load: f64| Config {
        load,
        ..base.clone()
    };
    let modes = [a.load.is_some(), a.loads.is_some(), a.sweep]
        .iter()
        .filter(|x| **x)
        .count();
    if modes > 1 {
        return Err(CliError::Input(
            "give one of --load, --loads, --sweep".into(),
        ));
    }
    let loads = match (&a.load, &a.loads) {
        (Some(l), _) => Some(vec![*l]),
        (_, Some(s)) => Some(parse_loads(s)?),
        _ => None,
    };
    if let Some((spec, join)) = a
        .fail
        .as_deref()
        .map(|s| (s, false))
        .or(a.join.as_deref().map(|s| (s, true)))
    {
        let Some(l) = a.load else {
            let flag = if join { "--join" } else { "--fail" };
            return Err(CliError::Input(format!("{flag} needs one --load")));
        };
        let interval = parse_time(&a.monitor_interval)?;
        Sim::new(cfg_at(l), &t, &RouteTable::new(&t, &ud, policies[0]))
            .map_err(|e| CliError::Input(e.to_string()))?;
        return fail_runs(&t, &policies, cfg_at(l), (spec, join), interval, a.format);
    }
    let mut results: Vec<(Policy, Results)> = Vec::new();
    for &policy in &policies {
        let routes = RouteTable::new(&t, &ud, policy);
        // Validate once, with a clear message, before spawning anything.
        let first = loads.as_ref().map_or(0.01, |l| l[0]);
        Sim::new(cfg_at(first), &t, &routes).map_err(|e| CliError::Input(e.to_string()))?;
        let r = match &loads {
            Some(l) => run_points(&t, &routes, l.iter().map(|&x| cfg_at(x)).collect()),
            None => sweep(&t, &routes, &cfg_at),
        };
        results.extend(r.into_iter().map(|r| (policy, r)));
    }
    let rows: Vec<Row> = results
        .iter()
        .map(|(policy, r)| row(policy.name(), t.name(), &a.traffic, measure, r))
        .collect();
    crate::out(&render(&rows, a.format))?;
    if let Some(p) = &a.plot {
        let title = format!(
            "{}: {} B messages, {} traffic, seed {}",
            t.name(),
            a.msg_bytes.trim(),
            a.traffic,
            a.net.seed
        );
        crate::plot::latency_vs_traffic(&rows, p, &title)?;
        eprintln!("plot written to {}", p.display());
    }
    Ok(())
}

/// Loads from 0.002 up in steps of 0.002 (flits/ns/switch), a batch of points per round
/// on all cores, until two points in a row saturate.
fn sweep(
    t: &Topology,
    routes: &myrix_fabric::itb::RouteTable,
    cfg_at: &dyn Fn(f64) -> Config,
) -> Vec<Results> {
    let cores = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .max(2);
    let mut all: Vec<Results> = Vec::new();
    let mut k = 1;
    loop {
        let loads: Vec<f64> = (k..k + cores).map(|i| 0.002 * i as f64).collect();
        k += cores;
        all.extend(run_points(
            t,
            routes,
            loads.into_iter().map(cfg_at).collect(),
        ));
        let n = all.len();
        if (n >= 2 && all[n - 1].saturated && all[n - 2].saturated) || k > 500 {
            return all;
        }
    }
}

pub fn render(rows: &[Row], f: Format) -> String {
    let mut s = String::new();
    match f {
        Format::Json => {
            s = serde_json::to_string_pretty(rows).expect("rows serialize");
            s.push('\n');
        }
        Format::Csv => {
            s.push_str("routing,switches,hosts,msg_bytes,seed,offered_flits_ns_switch,generated_flits_ns_switch,accepted_flits_ns_switch,avg_latency_ns,p50_latency_ns,p99_latency_ns,messages_delivered,saturated,switch_model,channel_release\n");
            for r in rows {
                let o = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.1}"));
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{:.4},{:.5},{:.5},{},{},{},{},{},{},{}",
                    r.routing,
                    r.switches,
                    r.hosts,
                    r.msg_bytes,
                    r.seed,
                    r.offered_flits_ns_switch,
                    r.generated_flits_ns_switch,
                    r.accepted_flits_ns_switch,
                    o(r.avg_latency_ns),
                    o(r.p50_latency_ns),
                    o(r.p99_latency_ns),
                    r.messages_delivered,
                    r.saturated,
                    r.switch_model,
                    r.channel_release
                );
            }
        }
        Format::Table => {
            let many = rows.iter().any(|r| r.routing != rows[0].routing);
            if let Some(r) = rows.first() {
                let routing = if many {
                    "several (first column)"
                } else {
                    r.routing.as_str()
                };
                let _ = writeln!(
                    s,
                    "# {} ({} switches, {} hosts), routing {}, {} B messages, {} traffic, seed {}, {} ns measured per point, switch model {}, channel release {}",
                    r.topology, r.switches, r.hosts, routing, r.msg_bytes, r.traffic, r.seed, r.sim_time_ns, r.switch_model, r.channel_release
                );
            }
            if many {
                s.push_str(&format!("{:<10}", "routing"));
            }
            let _ = writeln!(
                s,
                "{:>8} {:>9} {:>9} {:>17} {:>9} {:>9} {:>9} {:>9} {:>6}  state",
                "offered",
                "generated",
                "accepted",
                "batches min-max",
                "avg ns",
                "p50 ns",
                "p99 ns",
                "messages",
                "ITBs",
            );
            for r in rows {
                let o = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.0}"));
                if many {
                    s.push_str(&format!("{:<10}", r.routing));
                }
                let _ = writeln!(
                    s,
                    "{:>8.4} {:>9.5} {:>9.5} {:>8.5}-{:<8.5} {:>9} {:>9} {:>9} {:>9} {:>6.3}  {}",
                    r.offered_flits_ns_switch,
                    r.generated_flits_ns_switch,
                    r.accepted_flits_ns_switch,
                    r.accepted_batch_min,
                    r.accepted_batch_max,
                    o(r.avg_latency_ns),
                    o(r.p50_latency_ns),
                    o(r.p99_latency_ns),
                    r.messages_delivered,
                    r.itbs_per_message,
                    state(r)
                );
            }
        }
    }
    s
}
