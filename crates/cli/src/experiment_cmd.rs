//! `myrix experiment minimal-routing`: the minimal-routing study's figures 1–7, run on
//! several random topologies, set beside the paper's values.

use crate::sim_cmd::{parse_time, Row};
use crate::CliError;
use clap::{Args, Subcommand};
use myrix_fabric::generate::{generate, Params};
use myrix_fabric::itb::{Policy, RouteTable};
use myrix_fabric::updown::{Root, UpDown};
use myrix_sim::{Config, Results, Sim};
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum ExperimentCmd {
    /// Figures 1–7 of "Using Minimal Routing in Myrinet Networks".
    MinimalRouting(MinimalArgs),
}

#[derive(Args)]
pub struct MinimalArgs {
    /// Random topologies per configuration (seeds 1..=N).
    #[arg(long, default_value_t = 3)]
    topologies: u64,
    /// Measured simulated time per load point, with a unit.
    #[arg(long, default_value = "1ms")]
    sim_time: String,
    /// Directory for the plots (one SVG per configuration, seed 1).
    #[arg(long, default_value = "minimal-routing")]
    out: PathBuf,
    /// Only the 16-switch configurations (a quicker run).
    #[arg(long)]
    quick: bool,
    /// Switch model, as `myrix sim --switch-model`.
    #[arg(long, default_value = "shared-unit")]
    switch_model: String,
    /// Channel release, as `myrix sim --channel-release`.
    #[arg(long, default_value = "drain")]
    channel_release: String,
}

const POLICIES: [Policy; 6] = Policy::ALL;

/// The paper's saturation throughputs (flits/ns/switch), where it states them.
fn paper_saturation(switches: usize, bytes: usize, p: Policy) -> Option<f64> {
    match (switches, bytes, p) {
        (16, 32, Policy::Osud) => Some(0.017),
        (16, 32, Policy::Rmit | Policy::Rrmit) => Some(0.032),
        (16, 32, Policy::Omit) => Some(0.030),
        (16, 32, Policy::Pit) => Some(0.026),
        (16, 32, Policy::RrmitMin) => Some(0.025),
        _ => None,
    }
}

/// The paper's ratio of a policy's saturation throughput to OSUD's, where stated.
fn paper_ratio(switches: usize, bytes: usize, p: Policy) -> Option<&'static str> {
    match (switches, bytes, p) {
        (32, 1024, Policy::RrmitMin) => Some("~1.66x"),
        (32, 1024, Policy::Rmit | Policy::Rrmit | Policy::Omit) => Some("~2x"),
        (64, 1024, p) if p != Policy::Osud => Some("~3x (best)"),
        _ => None,
    }
}

struct Sweep {
    policy: Policy,
    seed: u64,
    points: Vec<Results>,
}

fn sweep(t: &myrix_fabric::Topology, table: &RouteTable, base: &Config, step: f64) -> Vec<Results> {
    let mut pts: Vec<Results> = Vec::new();
    let mut k = 1;
    loop {
        let cfg = Config {
            load: step * k as f64,
            ..base.clone()
        };
        let r = Sim::new(cfg, t, table).expect("valid config").run();
        let sat = r.saturated;
        pts.push(r);
        let n = pts.len();
        if (sat && n >= 2 && pts[n - 2].saturated) || k >= 200 {
            return pts;
        }
        k += 1;
    }
}

pub fn run(cmd: ExperimentCmd) -> Result<(), CliError> {
    let ExperimentCmd::MinimalRouting(a) = cmd;
    if a.topologies == 0 || a.topologies > 50 {
        return Err(CliError::Input("--topologies must be 1 to 50".into()));
    }
    let measure = parse_time(&a.sim_time)?;
    let (switch_model, channel_release) =
        crate::sim_cmd::parse_models(&a.switch_model, &a.channel_release)?;
    std::fs::create_dir_all(&a.out)
        .map_err(|e| CliError::Input(format!("{}: {e}", a.out.display())))?;
    // (figure, switches, message bytes, load step)
    let mut configs = vec![
        (1, 16, 32, 0.004),
        (2, 16, 128, 0.004),
        (3, 16, 512, 0.004),
        (4, 16, 1024, 0.004),
    ];
    if !a.quick {
        configs.extend([(5, 32, 1024, 0.003), (6, 64, 1024, 0.002)]);
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut report = String::new();
    let _ = writeln!(
        report,
        "# myrix experiment minimal-routing: {} random irregular topologies per configuration (seeds 1..={}), {} ns measured per load point, uniform traffic, switch model {}, channel release {}",
        a.topologies,
        a.topologies,
        measure / 1000,
        switch_model.name(),
        channel_release.name()
    );
    let _ = writeln!(
        report,
        "{:>4} {:>8} {:>6} {:<10} {:>22} {:>10} {:>9} {:>14} {:>10}",
        "fig",
        "switches",
        "bytes",
        "policy",
        "saturation (min-max)",
        "vs OSUD",
        "paper",
        "lat@0.01 ns",
        "ITBs/msg"
    );
    for (fig, n, bytes, step) in configs {
        let mut jobs: Vec<(Policy, u64)> = Vec::new();
        for seed in 1..=a.topologies {
            for p in POLICIES {
                jobs.push((p, seed));
            }
        }
        let nets: Vec<(myrix_fabric::Topology, UpDown)> = (1..=a.topologies)
            .map(|seed| {
                let t = generate(
                    "irregular",
                    &Params {
                        switches: n,
                        seed,
                        ..Params::default()
                    },
                )
                .expect("valid parameters");
                let ud = UpDown::new(&t, Root::LowestId);
                (t, ud)
            })
            .collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let done = std::sync::Mutex::new(Vec::<Sweep>::new());
        std::thread::scope(|s| {
            for _ in 0..cores.min(jobs.len()) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(policy, seed)) = jobs.get(i) else {
                        break;
                    };
                    let (t, ud) = &nets[(seed - 1) as usize];
                    let table = RouteTable::new(t, ud, policy);
                    let base = Config {
                        msg_bytes: bytes,
                        seed,
                        warmup: 100_000_000,
                        measure,
                        switch_model,
                        channel_release,
                        ..Config::default()
                    };
                    let points = sweep(t, &table, &base, step);
                    done.lock().unwrap_or_else(|e| e.into_inner()).push(Sweep {
                        policy,
                        seed,
                        points,
                    });
                });
            }
        });
        let sweeps = done.into_inner().unwrap_or_else(|e| e.into_inner());
        let sat = |p: Policy, seed: u64| -> f64 {
            sweeps
                .iter()
                .find(|s| s.policy == p && s.seed == seed)
                .map_or(0.0, |s| {
                    s.points.iter().map(|r| r.accepted).fold(0.0, f64::max)
                })
        };
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let osud: Vec<f64> = (1..=a.topologies).map(|s| sat(Policy::Osud, s)).collect();
        for p in POLICIES {
            let v: Vec<f64> = (1..=a.topologies).map(|s| sat(p, s)).collect();
            let ratios: Vec<f64> = v.iter().zip(&osud).map(|(x, o)| x / o).collect();
            let (lo, hi) = (
                v.iter().copied().fold(f64::INFINITY, f64::min),
                v.iter().copied().fold(0.0, f64::max),
            );
            // Low-load latency: the point nearest 0.01 flits/ns/switch, averaged over seeds.
            let lat: Vec<f64> = sweeps
                .iter()
                .filter(|s| s.policy == p)
                .filter_map(|s| {
                    s.points
                        .iter()
                        .min_by(|a, b| {
                            (a.offered - 0.01)
                                .abs()
                                .total_cmp(&(b.offered - 0.01).abs())
                        })
                        .map(|r| r.avg_latency_ns)
                })
                .filter(|x| x.is_finite())
                .collect();
            let itbs: Vec<f64> = sweeps
                .iter()
                .filter(|s| s.policy == p)
                .filter_map(|s| s.points.first().map(|r| r.itbs_per_message))
                .collect();
            let paper = paper_saturation(n, bytes, p)
                .map(|x| format!("{x:.3}"))
                .or_else(|| paper_ratio(n, bytes, p).map(str::to_string))
                .unwrap_or_else(|| "-".into());
            let _ = writeln!(
                report,
                "{:>4} {:>8} {:>6} {:<10} {:>8.4} ({:.4}-{:.4}) {:>9.2}x {:>9} {:>14.0} {:>10.3}",
                fig,
                n,
                bytes,
                p.name(),
                mean(&v),
                lo,
                hi,
                mean(&ratios),
                paper,
                mean(&lat),
                mean(&itbs)
            );
        }
        // Plot of seed 1, one curve per policy.
        let rows: Vec<Row> = POLICIES
            .iter()
            .filter_map(|&p| sweeps.iter().find(|s| s.policy == p && s.seed == 1))
            .flat_map(|s| {
                s.points.iter().map(move |r| {
                    crate::sim_cmd::row(s.policy.name(), "irregular", "uniform", measure, r)
                })
            })
            .collect();
        let path = a.out.join(format!("fig{fig}-{n}sw-{bytes}B.svg"));
        crate::plot::latency_vs_traffic(
            &rows,
            &path,
            &format!("Fig. {fig}: {n} switches, {bytes} B messages (seed 1)"),
        )?;
        eprintln!("figure {fig} done: {}", path.display());
    }
    crate::out(&report)?;
    std::fs::write(a.out.join("table.txt"), &report)
        .map_err(|e| CliError::Input(format!("{}: {e}", a.out.display())))?;
    Ok(())
}
