//! `myrix experiment minimal-routing`: the minimal-routing study's figures 1–7, run on
//! several random topologies, set beside the paper's values. The experiment is
//! `myrix_lab::experiment`; this file parses, prints and writes the files.

use crate::parse::parse_time;
use crate::CliError;
use clap::{Args, Subcommand};
use myrix_lab::experiment::{self, Setup};
use myrix_lab::{plot, report};
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
    #[command(flatten)]
    models: crate::parse::ModelArgs,
}

pub fn run(cmd: ExperimentCmd) -> Result<(), CliError> {
    let ExperimentCmd::MinimalRouting(a) = cmd;
    if a.topologies == 0 || a.topologies > 50 {
        return Err(CliError::Input("--topologies must be 1 to 50".into()));
    }
    let measure = parse_time(&a.sim_time)?;
    let crate::parse::ModelArgs {
        switch_model,
        channel_release,
    } = a.models;
    if a.out.exists() && !a.out.is_dir() {
        return Err(CliError::Input(format!(
            "--out {}: exists and is not a directory",
            a.out.display()
        )));
    }
    std::fs::create_dir_all(&a.out)
        .map_err(|e| CliError::Input(format!("--out {}: {e}", a.out.display())))?;
    let setup = Setup {
        topologies: a.topologies,
        measure,
        switch_model,
        channel_release,
    };
    let mut table = report::experiment_header(&setup);
    for fig in experiment::figures(a.quick) {
        let r = experiment::run_figure(&setup, &fig)?;
        table.extend(r.lines.iter().map(report::experiment_line));
        let path = a.out.join(fig.file_name());
        plot::write(&r.plot, &path)?;
        eprintln!("figure {} done: {}", fig.number, path.display());
    }
    crate::out(&table)?;
    std::fs::write(a.out.join("table.txt"), &table)
        .map_err(|e| CliError::Input(format!("{}: {e}", a.out.display())))?;
    Ok(())
}
