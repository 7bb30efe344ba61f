//! `myrix topo …`: generate, inspect and export network topologies.

use crate::CliError;
use clap::{Args, Subcommand, ValueEnum};
use myrix_fabric::format::{from_toml, to_anynet, to_dot, to_toml};
use myrix_fabric::generate::{generate, Generator, Params};
use myrix_fabric::updown::{Root, UpDown};
use myrix_fabric::Topology;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum TopoCmd {
    /// Generate a topology (irregular, mesh, torus, fattree) as a TOML file.
    Gen(GenArgs),
    /// Summarize a topology file: sizes, degrees, diameter, up*/down* routes.
    Show(ShowArgs),
    /// Export a topology file as Graphviz DOT, BookSim2 anynet, or TOML.
    Export(ExportArgs),
}

#[derive(Args)]
pub struct GenArgs {
    /// The generator: irregular, mesh, torus or fattree.
    #[arg(long, default_value = "irregular", value_parser = crate::parse::named::<Generator>())]
    kind: Generator,
    /// irregular: number of switches, 1 to 4096.
    #[arg(long, default_value_t = 16)]
    switches: usize,
    /// irregular: ports per switch.
    #[arg(long, default_value_t = 8)]
    ports: u8,
    /// Hosts per switch (fattree: per leaf).
    #[arg(long, default_value_t = 4)]
    hosts_per_switch: u8,
    /// mesh, torus: sizes per dimension, e.g. 4x4 or 8x8x8.
    #[arg(long, default_value = "4x4")]
    dims: String,
    /// fattree: leaf switches.
    #[arg(long, default_value_t = 8)]
    leaves: usize,
    /// fattree: spine switches.
    #[arg(long, default_value_t = 4)]
    spines: usize,
    /// Seed of the random choices (irregular).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Cable length of every link, metres.
    #[arg(long, default_value_t = 10.0)]
    cable_m: f64,
    /// Output file (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(Args)]
pub struct ShowArgs {
    /// The topology file (TOML).
    file: PathBuf,
    /// up*/down* root: lowest-id, center, or a switch id.
    #[arg(long, default_value = "lowest-id")]
    root: String,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExportFormat {
    Dot,
    Anynet,
    Toml,
}

#[derive(Args)]
pub struct ExportArgs {
    /// The topology file (TOML).
    file: PathBuf,
    #[arg(long, value_enum)]
    format: ExportFormat,
    /// anynet: the simulator cycle, ns (one 1-byte flit per 6.25 ns at 160 MB/s).
    #[arg(long, default_value_t = 6.25)]
    cycle_ns: f64,
    /// anynet: cable propagation delay, ns per metre (1.5 ns/ft = 4.92 ns/m).
    #[arg(long, default_value_t = 4.92)]
    ns_per_m: f64,
    /// Output file (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

pub fn load(path: &Path) -> Result<Topology, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
    from_toml(&text).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))
}

fn emit(text: &str, output: Option<&Path>) -> Result<(), CliError> {
    match output {
        Some(p) => {
            std::fs::write(p, text).map_err(|e| CliError::Input(format!("{}: {e}", p.display())))
        }
        None => crate::out(text),
    }
}

fn parse_dims(s: &str) -> Result<Vec<usize>, CliError> {
    s.split('x')
        .map(|k| k.trim().parse::<usize>().ok().filter(|&k| k > 0))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| CliError::Input(format!("--dims '{s}': expected sizes like 4x4 or 8x8x8")))
}

/// The network options `sim`, `routes` and `bench fabric` share.
#[derive(Args)]
pub struct NetworkArgs {
    /// Topology file (TOML); else an irregular network from --switches and --seed.
    #[arg(long)]
    pub topology: Option<PathBuf>,
    /// Switches of the generated irregular network.
    #[arg(long, default_value_t = 16)]
    pub switches: usize,
    /// Seed of the generated topology (commands that make traffic seed it too).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// up*/down* root: lowest-id, center, or a switch id.
    #[arg(long, default_value = "lowest-id")]
    pub root: String,
}

impl NetworkArgs {
    /// The network (at most 4096 switches, as every command takes) and its up*/down*
    /// orientation; a network without two hosts has nothing to carry and is refused.
    pub fn build(&self) -> Result<(Topology, myrix_fabric::updown::UpDown), CliError> {
        let max = myrix_fabric::generate::MAX_SWITCHES;
        let t = network(self.topology.as_deref(), self.switches, self.seed, max)?;
        if t.num_hosts() < 2 {
            return Err(CliError::Input(format!(
                "the network has {} host(s): at least 2 are needed",
                t.num_hosts()
            )));
        }
        let root = parse_root(&self.root)?
            .check(&t)
            .map_err(|e| CliError::Input(format!("--root: {e}")))?;
        let ud = UpDown::new(&t, root);
        Ok((t, ud))
    }
}

/// The network a command runs on: a topology file, or an irregular network of
/// `switches` (at most `max`) generated from `seed`.
pub fn network(
    file: Option<&Path>,
    switches: usize,
    seed: u64,
    max: usize,
) -> Result<Topology, CliError> {
    match file {
        Some(p) => load(p),
        None => {
            if switches == 0 || switches > max {
                return Err(CliError::Input(format!("--switches must be 1 to {max}")));
            }
            generate(
                "irregular",
                &Params {
                    switches,
                    seed,
                    ..Params::default()
                },
            )
            .map_err(|e| CliError::Input(e.to_string()))
        }
    }
}

pub fn parse_root(s: &str) -> Result<Root, CliError> {
    Root::parse(s).ok_or_else(|| {
        CliError::Input(format!(
            "--root '{s}': expected lowest-id, center or a switch id"
        ))
    })
}

pub fn run(cmd: TopoCmd) -> Result<(), CliError> {
    match cmd {
        TopoCmd::Gen(a) => {
            if !(a.cable_m.is_finite() && a.cable_m >= 0.0) {
                return Err(CliError::Input(
                    "--cable-m must be a length in metres".into(),
                ));
            }
            if a.switches > myrix_fabric::generate::MAX_SWITCHES {
                return Err(CliError::Input(format!(
                    "--switches: at most {}",
                    myrix_fabric::generate::MAX_SWITCHES
                )));
            }
            let p = Params {
                switches: a.switches,
                ports: a.ports,
                hosts_per_switch: a.hosts_per_switch,
                dims: parse_dims(&a.dims)?,
                leaves: a.leaves,
                spines: a.spines,
                seed: a.seed,
                cable_m: a.cable_m,
            };
            let t = a
                .kind
                .generate(&p)
                .map_err(|e| CliError::Input(e.to_string()))?;
            emit(&to_toml(&t), a.output.as_deref())
        }
        TopoCmd::Show(a) => {
            let t = load(&a.file)?;
            let root = parse_root(&a.root)?
                .check(&t)
                .map_err(|e| CliError::Input(format!("--root: {e}")))?;
            crate::out(&show(&t, root))?;
            Ok(())
        }
        TopoCmd::Export(a) => {
            let t = load(&a.file)?;
            if !(a.cycle_ns > 0.0 && a.ns_per_m >= 0.0) {
                return Err(CliError::Input(
                    "--cycle-ns must be positive, --ns-per-m not negative".into(),
                ));
            }
            let text = match a.format {
                ExportFormat::Dot => to_dot(&t),
                ExportFormat::Anynet => {
                    to_anynet(&t, |m| (m * a.ns_per_m / a.cycle_ns).ceil().min(1e6) as u32)
                }
                ExportFormat::Toml => to_toml(&t),
            };
            emit(&text, a.output.as_deref())
        }
    }
}

/// The report of `myrix topo show`.
pub fn show(t: &Topology, root: Root) -> String {
    let mut s = String::new();
    let n = t.num_switches();
    let mut degrees = std::collections::BTreeMap::new();
    for sw in 0..n as u32 {
        *degrees.entry(t.neighbours(sw).count()).or_insert(0) += 1;
    }
    let degrees: Vec<String> = degrees.iter().map(|(d, c)| format!("{c}x{d}")).collect();
    let _ = writeln!(s, "name        {}", t.name());
    let _ = writeln!(s, "switches    {n}");
    let _ = writeln!(s, "hosts       {}", t.num_hosts());
    let _ = writeln!(s, "links       {} (switch-to-switch)", t.links().len());
    let _ = writeln!(
        s,
        "degrees     {} (switches x links to other switches)",
        degrees.join(" ")
    );
    // One source switch at a time: the routes of every pair are never all held at once.
    let ud = UpDown::new(t, root);
    let sum = ud.osud_summary(t);
    let _ = writeln!(s, "diameter    {} hops", sum.diameter);
    let _ = writeln!(s, "up*/down*   root switch {}", ud.root());
    let _ = writeln!(
        s,
        "routes      mean {:.3} links (minimal {:.3}); {} of {} switch pairs longer than minimal",
        sum.mean_length,
        sum.minimal_mean_length,
        sum.longer_than_minimal,
        n * n - n
    );
    if let Some((hop, pairs)) = sum.busiest {
        let h = t.num_hosts() as u64;
        // 32-byte payloads, the mean route bytes plus type and CRC on the wire.
        let overhead = sum.mean_length + 1.0 + 2.0;
        let bound = myrix_fabric::route::uniform_bound_at(t, pairs, 0.16, 32.0, overhead);
        let _ = writeln!(
            s,
            "busiest     channel s{}.p{} carries {} of {} host pairs; uniform bound {:.4} flits/ns/switch (32 B, 160 MB/s)",
            hop.switch,
            hop.port,
            pairs,
            h * h.saturating_sub(1),
            bound
        );
    }
    match sum.deadlock {
        Ok(()) => {
            let _ = writeln!(
                s,
                "deadlock    none: the channel dependency graph has no cycle"
            );
        }
        Err(c) => {
            let _ = writeln!(s, "deadlock    POSSIBLE: {c}");
        }
    }
    s
}
