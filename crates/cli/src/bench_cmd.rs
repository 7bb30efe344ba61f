//! `myrix bench …`: speed measurements. Each run is single-threaded, so its CPU time is
//! read from the thread's own clock (`/proc/thread-self/stat`) and wall time is shown
//! beside it; on a busy machine compare ratios within one run, not absolute figures.

use crate::sim_cmd::parse_time;
use crate::CliError;
use clap::{Args, Subcommand};
use myrix_fabric::generate::{generate, Params};
use myrix_fabric::updown::{Root, UpDown};
use myrix_sim::{Config, Sim};
use std::time::Instant;

#[derive(Subcommand)]
pub enum BenchCmd {
    /// Simulator speed on irregular networks of several sizes.
    Sim(SimBenchArgs),
    /// MX ping-pong between two processes: one-way latency and bandwidth per length.
    Pingpong(crate::mxbench_cmd::MxBenchArgs),
    /// MX streaming between two processes: windows of messages, then an ack.
    Stream(crate::mxbench_cmd::MxBenchArgs),
    /// MX ping-pong between two hosts of a simulated Myrinet (simulated time).
    Fabric(crate::fabricbench_cmd::FabricBenchArgs),
}

#[derive(Args)]
pub struct SimBenchArgs {
    /// Network sizes (switches), comma-separated.
    #[arg(long, default_value = "16,32,64,256,1024")]
    sizes: String,
    /// Offered loads (payload flits/ns/switch), comma-separated.
    #[arg(long, default_value = "0.005,0.015")]
    loads: String,
    /// Measured simulated time per run, with a unit.
    #[arg(long, default_value = "200us")]
    sim_time: String,
    /// Simulated warm-up per run, with a unit.
    #[arg(long, default_value = "20us")]
    warmup: String,
    #[arg(long, default_value_t = 32)]
    msg_bytes: usize,
    /// Switch model, as `myrix sim --switch-model`.
    #[arg(long, default_value = "shared-unit")]
    switch_model: String,
    /// Channel release, as `myrix sim --channel-release`.
    #[arg(long, default_value = "drain")]
    channel_release: String,
}

fn list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>, CliError> {
    s.split(',')
        .map(|x| x.trim().parse::<T>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| {
            CliError::Input(format!(
                "{what} '{s}': expected a comma-separated list of numbers"
            ))
        })
}

/// CPU seconds used by this thread so far (utime + stime from procfs, in clock ticks).
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let (u, s): (f64, f64) = (f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?);
    Some((u + s) / 100.0)
}

/// Peak resident memory of the process, MiB.
fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

pub fn run(cmd: BenchCmd) -> Result<(), CliError> {
    let a = match cmd {
        BenchCmd::Sim(a) => a,
        BenchCmd::Pingpong(a) => {
            return crate::mxbench_cmd::run(crate::mxbench_cmd::Mode::Pingpong, a)
        }
        BenchCmd::Stream(a) => return crate::mxbench_cmd::run(crate::mxbench_cmd::Mode::Stream, a),
        BenchCmd::Fabric(a) => return crate::fabricbench_cmd::run(a),
    };
    let sizes: Vec<usize> = list(&a.sizes, "--sizes")?;
    let loads: Vec<f64> = list(&a.loads, "--loads")?;
    if sizes.iter().any(|&n| n == 0 || n > 4096) {
        return Err(CliError::Input("--sizes: each between 1 and 4096".into()));
    }
    let measure = parse_time(&a.sim_time)?;
    let (switch_model, channel_release) =
        crate::sim_cmd::parse_models(&a.switch_model, &a.channel_release)?;
    let warmup = parse_time(&a.warmup)?;
    outln!(
        "# myrix bench sim: irregular networks (seed 1), up*/down* OSUD, uniform traffic, {} B messages, {} ns measured + {} ns warm-up per run",
        a.msg_bytes,
        measure / 1000,
        warmup / 1000
    );
    outln!(
        "{:>8} {:>7} {:>9} {:>12} {:>8} {:>8} {:>16} {:>18} {:>9}",
        "switches",
        "load",
        "accepted",
        "flit-hops",
        "cpu s",
        "wall s",
        "flit-hops/cpu s",
        "delivered flits/s",
        "peak MiB"
    );
    for &n in &sizes {
        let t = generate(
            "irregular",
            &Params {
                switches: n,
                seed: 1,
                ..Params::default()
            },
        )
        .map_err(|e| CliError::Input(e.to_string()))?;
        let routes = myrix_fabric::itb::RouteTable::new(
            &t,
            &UpDown::new(&t, Root::LowestId),
            myrix_fabric::itb::Policy::Osud,
        );
        for &load in &loads {
            let cfg = Config {
                load,
                msg_bytes: a.msg_bytes,
                warmup,
                measure,
                switch_model,
                channel_release,
                ..Config::default()
            };
            let sim = Sim::new(cfg, &t, &routes).map_err(|e| CliError::Input(e.to_string()))?;
            let (c0, w0) = (thread_cpu_seconds(), Instant::now());
            let r = sim.run();
            let wall = w0.elapsed().as_secs_f64();
            let cpu = match (c0, thread_cpu_seconds()) {
                (Some(a), Some(b)) if b > a => b - a,
                _ => wall,
            };
            // Flits of the packets delivered, as injected (route bytes included).
            let delivered = r.wire_flits_delivered as f64;
            outln!(
                "{:>8} {:>7.4} {:>9.5} {:>12} {:>8.2} {:>8.2} {:>16.3e} {:>18.3e} {:>9.0}{}",
                n,
                load,
                r.accepted,
                r.flit_hops,
                cpu,
                wall,
                r.flit_hops as f64 / cpu,
                delivered / cpu,
                peak_rss_mib().unwrap_or(f64::NAN),
                if r.saturated { "  saturated" } else { "" }
            );
        }
    }
    Ok(())
}
