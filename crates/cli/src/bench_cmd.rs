//! `myrix bench …`: speed measurements. The measuring is `myrix_lab::speed`; each run
//! is single-threaded, timed by the thread's own CPU clock with wall time beside it: on
//! a busy machine compare ratios within one run, not absolute figures.

use crate::parse::{list, parse_time};
use crate::CliError;
use clap::{Args, Subcommand};
use myrix_lab::{report, speed};
use myrix_link::Nanos;
use myrix_sim::Config;

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
    /// Remote shared memory between two processes: put and get latency, put-based
    /// ping-pong, put bandwidth per length.
    Rsm(crate::rsmbench_cmd::RsmBenchArgs),
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
    /// Payload bytes per message, 1 to 65536.
    #[arg(long, default_value_t = 32)]
    msg_bytes: usize,
    #[command(flatten)]
    models: crate::parse::ModelArgs,
}

pub fn run(cmd: BenchCmd) -> Result<(), CliError> {
    let a = match cmd {
        BenchCmd::Sim(a) => a,
        BenchCmd::Pingpong(a) => {
            return crate::mxbench_cmd::run(myrix_lab::mxbench::Mode::Pingpong, a)
        }
        BenchCmd::Stream(a) => return crate::mxbench_cmd::run(myrix_lab::mxbench::Mode::Stream, a),
        BenchCmd::Fabric(a) => return crate::fabricbench_cmd::run(a),
        BenchCmd::Rsm(a) => return crate::rsmbench_cmd::run(a),
    };
    let sizes: Vec<usize> = list(&a.sizes, "--sizes")?;
    let loads: Vec<f64> = list(&a.loads, "--loads")?;
    for &l in &loads {
        crate::parse::check_load(l, "--loads:")?;
    }
    if a.msg_bytes == 0 || a.msg_bytes > 65536 {
        return Err(CliError::Input(
            "--msg-bytes: 1 to 65536 bytes, as myrix sim".into(),
        ));
    }
    let max = myrix_fabric::generate::MAX_SWITCHES;
    if sizes.iter().any(|&n| n == 0 || n > max) {
        return Err(CliError::Input(format!(
            "--sizes: each between 1 and {max}"
        )));
    }
    let measure = parse_time(&a.sim_time)?;
    let crate::parse::ModelArgs {
        switch_model,
        channel_release,
    } = a.models;
    let warmup = parse_time(&a.warmup)?;
    outln!(
        "# myrix bench sim: irregular networks (seed 1), up*/down* OSUD, uniform traffic, {} B messages, {} measured + {} warm-up per run",
        a.msg_bytes,
        Nanos::from(measure),
        Nanos::from(warmup)
    );
    crate::out(&report::speed_head())?;
    for &n in &sizes {
        let (t, routes) = speed::network(n)?;
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
            crate::out(&report::speed_row(&speed::measure(&t, &routes, cfg)?))?;
        }
    }
    Ok(())
}
