//! The minimal-routing experiment: figures 1–7 of "Using Minimal Routing in Myrinet
//! Networks", each configuration run on several random irregular topologies under the
//! six routing policies, and set beside the values the paper states.
//!
//! It owns the configurations, the paper's reference values and how a figure's table
//! lines and plot are computed from the saturation searches. It never prints and
//! writes no file: the caller renders [`Line`]s with
//! [`report::experiment_line`](crate::report::experiment_line) and writes the plot.

use crate::plot::{extent, Plot, Series};
use crate::runner;
use crate::saturation::Search;
use crate::LabError;
use myrix_fabric::generate::{generate, Params};
use myrix_fabric::itb::{Policy, RouteTable};
use myrix_fabric::updown::{Root, UpDown};
use myrix_fabric::Topology;
use myrix_link::{Picos, US};
use myrix_sim::{ChannelRelease, Config, Results, SwitchModel};

/// The policies compared, in the table's order.
pub const POLICIES: [Policy; 6] = Policy::ALL;

/// One configuration: a figure of the paper.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figure {
    pub number: u32,
    pub switches: usize,
    pub bytes: usize,
    /// Distance between the loads of the saturation search, flits/ns/switch.
    pub step: f64,
}

impl Figure {
    /// The plot's file name, e.g. `fig1-16sw-32B.svg`.
    pub fn file_name(&self) -> String {
        format!("fig{}-{}sw-{}B.svg", self.number, self.switches, self.bytes)
    }
}

/// Figures 1–4 (16 switches), and unless `quick` figures 5 and 6 (32 and 64 switches).
pub fn figures(quick: bool) -> Vec<Figure> {
    let f = |number, switches, bytes, step| Figure {
        number,
        switches,
        bytes,
        step,
    };
    let mut v = vec![
        f(1, 16, 32, 0.004),
        f(2, 16, 128, 0.004),
        f(3, 16, 512, 0.004),
        f(4, 16, 1024, 0.004),
    ];
    if !quick {
        v.extend([f(5, 32, 1024, 0.003), f(6, 64, 1024, 0.002)]);
    }
    v
}

/// The paper's saturation throughputs (flits/ns/switch), where it states them.
pub fn paper_saturation(switches: usize, bytes: usize, p: Policy) -> Option<f64> {
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
pub fn paper_ratio(switches: usize, bytes: usize, p: Policy) -> Option<&'static str> {
    match (switches, bytes, p) {
        (32, 1024, Policy::RrmitMin) => Some("~1.66x"),
        (32, 1024, Policy::Rmit | Policy::Rrmit | Policy::Omit) => Some("~2x"),
        (64, 1024, p) if p != Policy::Osud => Some("~3x (best)"),
        _ => None,
    }
}

/// The paper's column: its saturation throughput, else its ratio to OSUD, else `-`.
pub fn paper(switches: usize, bytes: usize, p: Policy) -> String {
    paper_saturation(switches, bytes, p)
        .map(|x| format!("{x:.3}"))
        .or_else(|| paper_ratio(switches, bytes, p).map(str::to_string))
        .unwrap_or_else(|| "-".into())
}

/// What every figure shares.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// Random topologies per configuration, seeds 1..=topologies.
    pub topologies: u64,
    /// Measured simulated time per load point.
    pub measure: Picos,
    pub switch_model: SwitchModel,
    pub channel_release: ChannelRelease,
}

/// One policy's line of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub figure: u32,
    pub switches: usize,
    pub bytes: usize,
    pub policy: Policy,
    /// Saturation throughput (the highest accepted traffic), mean over the topologies,
    /// and its range.
    pub saturation: f64,
    pub saturation_min: f64,
    pub saturation_max: f64,
    /// Mean over the topologies of the ratio to OSUD's on the same topology.
    pub vs_osud: f64,
    /// The paper's value ([`paper`]).
    pub paper: String,
    /// Latency at the point nearest 0.01 flits/ns/switch, mean over the topologies.
    pub latency_ns: f64,
    /// In-transit buffers per message at the lowest load, mean over the topologies.
    pub itbs_per_message: f64,
}

/// A figure's outcome: a line per policy, and the plot of seed 1.
pub struct FigureResult {
    pub lines: Vec<Line>,
    pub plot: Plot,
}

/// What the table and the plot read of a load point.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Point {
    offered: f64,
    accepted: f64,
    avg_latency_ns: f64,
    saturated: bool,
    itbs_per_message: f64,
}

impl From<&Results> for Point {
    fn from(r: &Results) -> Point {
        Point {
            offered: r.offered,
            accepted: r.accepted,
            avg_latency_ns: r.avg_latency_ns,
            saturated: r.saturated,
            itbs_per_message: r.itbs_per_message,
        }
    }
}

/// One policy's saturation search on one topology.
struct Sweep {
    policy: Policy,
    seed: u64,
    points: Vec<Point>,
}

/// Runs a figure: every (topology, policy) search as one job, the jobs on all cores.
pub fn run_figure(s: &Setup, fig: &Figure) -> Result<FigureResult, LabError> {
    let nets = (1..=s.topologies)
        .map(|seed| {
            let t = generate(
                "irregular",
                &Params {
                    switches: fig.switches,
                    seed,
                    ..Params::default()
                },
            )
            .map_err(|e| LabError::Invalid(e.to_string()))?;
            let ud = UpDown::new(&t, Root::LowestId);
            Ok((t, ud))
        })
        .collect::<Result<Vec<(Topology, UpDown)>, LabError>>()?;
    let jobs: Vec<(Policy, u64)> = (1..=s.topologies)
        .flat_map(|seed| POLICIES.map(|p| (p, seed)))
        .collect();
    let sweeps = runner::run_all(
        &jobs,
        |&(policy, seed)| {
            let (t, ud) = &nets[(seed - 1) as usize];
            let table = RouteTable::new(t, ud, policy);
            let base = Config {
                msg_bytes: fig.bytes,
                seed,
                warmup: 100 * US,
                measure: s.measure,
                switch_model: s.switch_model,
                channel_release: s.channel_release,
                ..Config::default()
            };
            let cfg_at = |load| Config {
                load,
                ..base.clone()
            };
            let points = Search::one_by_one(fig.step).run_sim(t, &table, &cfg_at, &|_| {})?;
            let points = points.iter().map(Point::from).collect();
            Ok(Sweep {
                policy,
                seed,
                points,
            })
        },
        |_, _| {},
    )
    .into_iter()
    .collect::<Result<Vec<Sweep>, LabError>>()?;
    Ok(FigureResult {
        lines: lines(s.topologies, fig, &sweeps),
        plot: plot(fig, &sweeps),
    })
}

fn lines(topologies: u64, fig: &Figure, sweeps: &[Sweep]) -> Vec<Line> {
    let sat = |p: Policy, seed: u64| -> f64 {
        sweeps
            .iter()
            .find(|s| s.policy == p && s.seed == seed)
            .map_or(0.0, |s| {
                s.points.iter().map(|r| r.accepted).fold(0.0, f64::max)
            })
    };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let osud: Vec<f64> = (1..=topologies).map(|s| sat(Policy::Osud, s)).collect();
    POLICIES
        .iter()
        .map(|&p| {
            let v: Vec<f64> = (1..=topologies).map(|s| sat(p, s)).collect();
            let ratios: Vec<f64> = v.iter().zip(&osud).map(|(x, o)| x / o).collect();
            // Low-load latency: the point nearest 0.01 flits/ns/switch.
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
            Line {
                figure: fig.number,
                switches: fig.switches,
                bytes: fig.bytes,
                policy: p,
                saturation: mean(&v),
                saturation_min: v.iter().copied().fold(f64::INFINITY, f64::min),
                saturation_max: v.iter().copied().fold(0.0, f64::max),
                vs_osud: mean(&ratios),
                paper: paper(fig.switches, fig.bytes, p),
                latency_ns: mean(&lat),
                itbs_per_message: mean(&itbs),
            }
        })
        .collect()
}

/// Seed 1's latency against accepted traffic, one curve per policy (steady points).
fn plot(fig: &Figure, sweeps: &[Sweep]) -> Plot {
    let seed1: Vec<&Sweep> = POLICIES
        .iter()
        .filter_map(|&p| sweeps.iter().find(|s| s.policy == p && s.seed == 1))
        .collect();
    let steady = |r: &&Point| !r.saturated && r.avg_latency_ns.is_finite();
    let all = || seed1.iter().flat_map(|s| s.points.iter());
    Plot {
        title: format!(
            "Fig. {}: {} switches, {} B messages (seed 1)",
            fig.number, fig.switches, fig.bytes
        ),
        x_label: "accepted traffic (flits/ns/switch)".into(),
        y_label: "average latency (ns)".into(),
        x_max: extent(all().map(|r| r.accepted), 1e-3),
        y_max: extent(all().filter(steady).map(|r| r.avg_latency_ns), 1.0),
        series: seed1
            .iter()
            .map(|s| Series {
                name: s.policy.name().to_string(),
                points: s
                    .points
                    .iter()
                    .filter(steady)
                    .map(|r| (r.accepted, r.avg_latency_ns))
                    .collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_column_beside_each_configuration() {
        let col = |n, b| POLICIES.map(|p| paper(n, b, p));
        assert_eq!(
            col(16, 32),
            ["0.017", "0.030", "0.032", "0.032", "0.026", "0.025"].map(String::from),
            "figure 1, in the order osud, omit, rmit, rrmit, pit, rrmit-min"
        );
        assert_eq!(
            POLICIES.map(|p| p.name()),
            ["osud", "omit", "rmit", "rrmit", "pit", "rrmit-min"]
        );
        for b in [128, 512, 1024] {
            assert!(
                col(16, b).iter().all(|x| x == "-"),
                "figures 2-4 state no values"
            );
        }
        assert_eq!(
            col(32, 1024),
            ["-", "~2x", "~2x", "~2x", "-", "~1.66x"].map(String::from)
        );
        assert_eq!(
            col(64, 1024),
            [
                "-",
                "~3x (best)",
                "~3x (best)",
                "~3x (best)",
                "~3x (best)",
                "~3x (best)"
            ]
            .map(String::from)
        );
    }

    #[test]
    fn figures_and_their_files() {
        let quick = figures(true);
        assert_eq!(
            quick.iter().map(|f| f.bytes).collect::<Vec<_>>(),
            [32, 128, 512, 1024]
        );
        assert!(quick.iter().all(|f| f.switches == 16 && f.step == 0.004));
        let all = figures(false);
        assert_eq!(all.len(), 6);
        assert_eq!(
            all[5],
            Figure {
                number: 6,
                switches: 64,
                bytes: 1024,
                step: 0.002
            }
        );
        assert_eq!(all[0].file_name(), "fig1-16sw-32B.svg");
        assert_eq!(all[4].file_name(), "fig5-32sw-1024B.svg");
    }

    fn point(offered: f64, accepted: f64, lat: f64, saturated: bool) -> Point {
        Point {
            offered,
            accepted,
            avg_latency_ns: lat,
            saturated,
            itbs_per_message: offered * 10.0,
        }
    }

    #[test]
    fn lines_average_over_topologies_and_compare_with_osud() {
        let fig = figures(true)[0];
        let sweeps: Vec<Sweep> = [
            (Policy::Osud, 1, 0.02),
            (Policy::Osud, 2, 0.01),
            (Policy::Rmit, 1, 0.03),
            (Policy::Rmit, 2, 0.03),
        ]
        .into_iter()
        .map(|(policy, seed, top)| Sweep {
            policy,
            seed,
            points: vec![
                point(0.004, 0.004, 100.0 * seed as f64, false),
                point(0.02, top, f64::NAN, true),
            ],
        })
        .collect();
        let l = lines(2, &fig, &sweeps);
        assert_eq!(l.len(), 6);
        let (osud, rmit) = (&l[0], &l[2]);
        assert_eq!((osud.saturation_min, osud.saturation_max), (0.01, 0.02));
        assert!((osud.saturation - 0.015).abs() < 1e-12);
        assert!((rmit.vs_osud - (1.5 + 3.0) / 2.0).abs() < 1e-12);
        assert_eq!(rmit.latency_ns, 150.0, "the point nearest 0.01, averaged");
        assert!((rmit.itbs_per_message - 0.04).abs() < 1e-12);
        assert_eq!(rmit.paper, "0.032");
        // A policy without sweeps: zero throughput, no latency.
        assert_eq!(l[1].saturation, 0.0);
        let p = plot(&fig, &sweeps);
        assert_eq!(
            p.series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["osud", "rmit"]
        );
        assert_eq!(
            p.series[0].points,
            [(0.004, 100.0)],
            "saturated points are left out"
        );
        assert_eq!(p.x_max, 0.03 * 1.1);
    }
}
