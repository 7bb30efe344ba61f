//! `myrix sim`: run the network model at one or more loads and report. The runs, the
//! sweep, the rows and the plot are `myrix-lab`'s; this file parses and prints.

use crate::parse::{check_load, parse_loads, parse_mix, parse_time};
use crate::CliError;
use clap::{Args, ValueEnum};
use myrix_fabric::itb::{Policy, RouteTable};
use myrix_fabric::named::Named;
use myrix_lab::failure::Target;
use myrix_lab::report::{self, Row};
use myrix_lab::saturation::Search;
use myrix_lab::{failure, plot, ranks, runner};
use myrix_link::Picos;
use myrix_sim::fault::FaultConfig;
use myrix_sim::traffic::Traffic;
use myrix_sim::{Config, Results, Sim};
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
}

impl From<Format> for report::Format {
    fn from(f: Format) -> report::Format {
        match f {
            Format::Table => report::Format::Table,
            Format::Json => report::Format::Json,
            Format::Csv => report::Format::Csv,
        }
    }
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
    #[arg(long, default_value = "uniform", value_parser = crate::parse::named::<Traffic>())]
    traffic: Traffic,
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
    #[command(flatten)]
    models: crate::parse::ModelArgs,
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

/// `link:S1-S2@TIME`, `switch:S@TIME`, `host:H@TIME`.
fn parse_fail(s: &str) -> Result<(Target, Picos), CliError> {
    let bad = || {
        CliError::Input(format!(
            "bad --fail '{s}': expected link:S1-S2@TIME, switch:S@TIME or host:H@TIME, e.g. link:3-7@1ms"
        ))
    };
    let (kind, rest) = s.trim().split_once(':').ok_or_else(bad)?;
    let (what, at) = rest.split_once('@').ok_or_else(bad)?;
    let id = |x: &str| x.trim().parse::<u32>().map_err(|_| bad());
    let target = match kind {
        "link" => {
            let (a, b) = what.split_once('-').ok_or_else(bad)?;
            Target::Link(id(a)?, id(b)?)
        }
        "switch" => Target::Switch(id(what)?),
        "host" => Target::Host(id(what)?),
        _ => return Err(bad()),
    };
    Ok((target, parse_time(at.trim())?))
}

pub fn run(a: SimArgs) -> Result<(), CliError> {
    let policies: Vec<Policy> = a
        .routing
        .split(',')
        .map(|r| Policy::from_name(r.trim()).map_err(|e| CliError::Input(e.to_string())))
        .collect::<Result<_, _>>()?;
    if let Some(p) = &a.plot {
        plot::check_path(p)?;
    }
    let traffic = a.traffic;
    let mix = parse_mix(&a.msg_bytes)?;
    let mean_bytes = (mix.iter().map(|&(b, w)| b as f64 * w).sum::<f64>()
        / mix.iter().map(|m| m.1).sum::<f64>())
    .round() as usize;
    let send_overhead = match a.send_overhead.trim() {
        "0" | "0ns" => Picos::ZERO,
        x => parse_time(x)?,
    };
    let (t, ud) = a.net.build()?;
    let measure = parse_time(&a.sim_time)?;
    let warmup = parse_time(&a.warmup)?;
    let crate::parse::ModelArgs {
        switch_model,
        channel_release,
    } = a.models;
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
        (Some(l), _) => Some(vec![check_load(*l, "--load")?]),
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
        if interval >= measure {
            return Err(CliError::Input(format!(
                "--monitor-interval {} is not shorter than --sim-time {}: nothing would be detected",
                a.monitor_interval, a.sim_time
            )));
        }
        Sim::new(cfg_at(l), &t, &RouteTable::new(&t, &ud, policies[0]))
            .map_err(|e| CliError::Input(e.to_string()))?;
        let (target, at) = parse_fail(spec)?;
        if join && !matches!(target, Target::Host(_)) {
            return Err(CliError::Input(
                "bad --join: expected host:H@TIME, e.g. host:5@1ms".into(),
            ));
        }
        let what = failure::component(&t, target)?;
        let fc = FaultConfig {
            monitor_interval: interval,
            ..FaultConfig::default()
        };
        let f = failure::run(&t, &policies, &cfg_at(l), what, at, join, &fc)?;
        for r in f.rows.iter().filter(|r| !r.drained) {
            eprintln!(
                "{}: messages still in the network {:.0} ns after traffic stopped, none arriving: stuck",
                r.routing, r.drain_ns
            );
        }
        crate::out(&report::failures(&f, a.format.into())?)?;
        if f.rows.iter().any(|r| !r.drained) {
            return Err(CliError::Input(
                "a run did not drain after the failure".into(),
            ));
        }
        return Ok(());
    }
    // Under an MPI launcher (`mpiexec -n 4 myrix sim --sweep`) the ranks share the load
    // points and rank 0 prints what one process prints; alone, a job of one.
    let mut job = ranks::join()?;
    let (split, rank0) = (job.size > 1, job.rank == 0);
    let mut results: Vec<(Policy, Results)> = Vec::new();
    for (k, &policy) in policies.iter().enumerate() {
        let routes = RouteTable::new(&t, &ud, policy);
        // Validate once, with a clear message, before spawning anything.
        let first = loads.as_ref().map_or(0.01, |l| l[0]);
        Sim::new(cfg_at(first), &t, &routes).map_err(|e| CliError::Input(e.to_string()))?;
        // Progress on standard error while the points run, if that is a terminal (rank
        // 0's only).
        let progress = crate::progress::SimProgress::new(
            loads.as_ref().map(Vec::len),
            warmup + measure,
            rank0,
        );
        let watch = runner::Watch {
            done: &|cfg: &Config| progress.point_done(cfg.load),
            advanced: &|p| progress.advanced(p),
        };
        let cfgs: Option<Vec<Config>> = loads
            .as_ref()
            .map(|l| l.iter().map(|&x| cfg_at(x)).collect());
        let tag = format!("sim{k}");
        let r = match (&cfgs, split) {
            (Some(c), false) => runner::load_points_watched(&t, &routes, c, &watch).map(Some),
            (None, false) => Search::sweep()
                .run_sim_watched(&t, &routes, &cfg_at, &watch)
                .map(Some),
            (Some(c), true) => ranks::load_points(&mut job, &tag, &t, &routes, c, &watch),
            (None, true) => ranks::sweep(
                &mut job,
                &tag,
                &Search::sweep(),
                &t,
                &routes,
                &cfg_at,
                &watch,
            ),
        };
        progress.finish();
        if let Some(r) = r? {
            results.extend(r.into_iter().map(|r| (policy, r)));
        }
    }
    if !rank0 {
        job.finalize().map_err(|e| CliError::Found(e.to_string()))?;
        return Ok(());
    }
    let rows: Vec<Row> = results
        .iter()
        .map(|(policy, r)| report::row(policy.name(), t.name(), a.traffic.name(), measure, r))
        .collect();
    crate::out(&report::render(&rows, a.format.into()))?;
    if let Some(p) = &a.plot {
        let title = format!(
            "{}: {} B messages, {} traffic, seed {}",
            t.name(),
            a.msg_bytes.trim(),
            a.traffic.name(),
            a.net.seed
        );
        plot::write(&report::latency_plot(&rows, &title), p)?;
        eprintln!("plot written to {}", p.display());
    }
    job.finalize().map_err(|e| CliError::Found(e.to_string()))?;
    Ok(())
}
