//! `myrix`: a thin front end. It parses arguments, calls the crates and prints; any
//! logic worth testing lives in the crates. Every failure is one `myrix: error:` line
//! on standard error and a non-zero exit (2 for bad input, 1 for a stream with errors).

#![forbid(unsafe_code)]

/// `println!` that returns [`CliError::BrokenPipe`] instead of panicking when standard
/// output is closed early; usable in functions returning `Result<_, CliError>`.
macro_rules! outln {
    () => {
        $crate::out("\n")?
    };
    ($($a:tt)*) => {
        $crate::out(&format!("{}\n", format_args!($($a)*)))?
    };
}

mod bench_cmd;
mod experiment_cmd;
mod fabricbench_cmd;
mod link_cmd;
mod map_cmd;
mod mpi_cmd;
mod mx_cmd;
mod mxbench_cmd;
mod packet_cmd;
mod parse;
mod progress;
mod proxy_cmd;
mod routes_cmd;
mod rsmbench_cmd;
mod sim_cmd;
mod topo_cmd;
mod tour;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "myrix",
    version,
    about = "A Myrinet-style system area network, from the serial link up",
    after_help = "With no command, myrix runs the main job, `myrix sim --sweep --plot myrix-sweep.svg`: a sweep to saturation of a 16-switch network under up*/down*, printed as a table and drawn to myrix-sweep.svg in the current directory."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// A tour of the link layer and the packet format, with built-in defaults.
    Tour,
    /// Myrinet-2000 serial link: 8b/10b code-group streams and slack-buffer sizing.
    #[command(subcommand)]
    Link(link_cmd::LinkCmd),
    /// Myrinet packets: build one with its route and CRC, or parse one.
    #[command(subcommand)]
    Packet(packet_cmd::PacketCmd),
    /// Network topologies: generate, show (with up*/down* routes), export.
    #[command(subcommand)]
    Topo(topo_cmd::TopoCmd),
    /// Map a network from one host with probes, as Myrinet's mapper does.
    Map(map_cmd::MapArgs),
    /// Route alternatives of a routing policy (osud, omit, rmit, rrmit, pit, rrmit-min).
    Routes(routes_cmd::RoutesArgs),
    /// Simulate a Myrinet network flit by flit: one load, several, or a sweep to saturation.
    Sim(sim_cmd::SimArgs),
    /// Experiments that reproduce the source papers' figures.
    #[command(subcommand)]
    Experiment(experiment_cmd::ExperimentCmd),
    /// Speed measurements.
    #[command(subcommand)]
    Bench(bench_cmd::BenchCmd),
    /// Start an MPI program's ranks on this host or across hosts: `myrix mpiexec -n N prog args...`.
    Mpiexec(mpi_cmd::MpiexecArgs),
    /// The per-host proxy `myrix mpiexec --hosts` starts over ssh (not for direct use).
    #[command(hide = true)]
    MpiexecProxy,
    /// Compile and link a C MPI program against myrix's libmpi_abi (`-show` prints the command).
    Mpicc(mpi_cmd::MpiccArgs),
    /// Compile and link a C++ MPI program against myrix's libmpi_abi (`-show` prints the command).
    Mpicxx(mpi_cmd::MpiccArgs),
    /// Compile and link a Fortran MPI program against myrix's libmpi_abi (`mpif.h`, `use mpi`).
    #[command(visible_aliases = ["mpif77", "mpif90"])]
    Mpifort(mpi_cmd::MpiccArgs),
    /// MX as C programs see it: `myrix mx info` lists boards, NIC ids and the peer table.
    #[command(subcommand)]
    Mx(mx_cmd::MxCmd),
}

/// What went wrong, and which exit code says so.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The input could not be read or understood.
    #[error("{0}")]
    Input(String),
    /// The input was understood and holds errors (reported above this line).
    #[error("{0}")]
    Found(String),
    /// Standard output was closed early (`myrix … | head`): stop quietly.
    #[error("standard output closed")]
    BrokenPipe,
}

/// An experiment's error as the command reports it: refused parameters and plots are
/// bad input (exit 2), a run that failed is exit 1.
impl From<myrix_lab::LabError> for CliError {
    fn from(e: myrix_lab::LabError) -> CliError {
        match e {
            myrix_lab::LabError::Invalid(m) => CliError::Input(m),
            e @ myrix_lab::LabError::Plot { .. } => CliError::Input(format!("--plot {e}")),
            myrix_lab::LabError::Failed(m) => CliError::Found(m),
        }
    }
}

impl CliError {
    fn code(&self) -> u8 {
        match self {
            CliError::Input(_) => 2,
            CliError::Found(_) => 1,
            CliError::BrokenPipe => 0,
        }
    }
}

/// The main job with built-in defaults, run by `myrix` with no command: a sweep to
/// saturation on a 16-switch irregular network under up*/down*, table and plot.
const MAIN_JOB: [&str; 5] = ["myrix", "sim", "--sweep", "--plot", "myrix-sweep.svg"];

/// clap's own errors in myrix's form: one `myrix: error:` line (clap's first line and its
/// tip, if any), exit 2. Help and version go out as clap writes them.
fn parse_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(2);
        }
        _ => {}
    }
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("bad arguments");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let tip = lines
        .find_map(|l| l.strip_prefix("tip: "))
        .map(|t| format!("; {t}"))
        .unwrap_or_default();
    eprintln!("myrix: error: {first}{tip} (see --help)");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return parse_error(e),
    };
    if cli.cmd.is_none() {
        eprintln!(
            "myrix: no command given; running the main job: {}",
            MAIN_JOB[1..].join(" ")
        );
        cli = Cli::parse_from(MAIN_JOB);
    }
    let res = match cli.cmd.unwrap_or(Cmd::Tour) {
        Cmd::Tour => tour::run().map(|()| ExitCode::SUCCESS),
        Cmd::Link(c) => link_cmd::run(c).map(|()| ExitCode::SUCCESS),
        Cmd::Packet(c) => packet_cmd::run(c).map(|()| ExitCode::SUCCESS),
        Cmd::Topo(c) => topo_cmd::run(c).map(|()| ExitCode::SUCCESS),
        Cmd::Routes(a) => routes_cmd::run(a).map(|()| ExitCode::SUCCESS),
        Cmd::Map(a) => map_cmd::run(a).map(|()| ExitCode::SUCCESS),
        Cmd::Sim(a) => sim_cmd::run(a).map(|()| ExitCode::SUCCESS),
        Cmd::Bench(c) => bench_cmd::run(c).map(|()| ExitCode::SUCCESS),
        Cmd::Experiment(c) => experiment_cmd::run(c).map(|()| ExitCode::SUCCESS),
        Cmd::Mpiexec(a) => mpi_cmd::mpiexec(a),
        Cmd::MpiexecProxy => proxy_cmd::run(),
        Cmd::Mpicc(a) => mpi_cmd::mpicc(a, myrix_mpi::wrapper::Lang::C),
        Cmd::Mpicxx(a) => mpi_cmd::mpicc(a, myrix_mpi::wrapper::Lang::Cxx),
        Cmd::Mpifort(a) => mpi_cmd::mpicc(a, myrix_mpi::wrapper::Lang::Fortran),
        Cmd::Mx(c) => mx_cmd::run(c).map(|()| ExitCode::SUCCESS),
    };
    match res {
        Ok(code) => code,
        Err(CliError::BrokenPipe) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("myrix: error: {e}");
            ExitCode::from(e.code())
        }
    }
}

/// Writes to standard output. A closed pipe (`myrix … | head`) is not an error worth a
/// message: it ends the command quietly.
pub fn out(s: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    o.write_all(s.as_bytes())
        .and_then(|()| o.flush())
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                CliError::BrokenPipe
            } else {
                CliError::Input(format!("standard output: {e}"))
            }
        })
}

/// Reads `--hex`, else `--file`, else standard input, as bytes.
pub fn input_bytes(hex: Option<&str>, file: Option<&std::path::Path>) -> Result<Vec<u8>, CliError> {
    if let Some(h) = hex {
        return parse_hex(h);
    }
    read_input(file)
}

pub fn read_input(file: Option<&std::path::Path>) -> Result<Vec<u8>, CliError> {
    use std::io::Read;
    let mut v = Vec::new();
    match file {
        Some(p) => {
            v = std::fs::read(p).map_err(|e| CliError::Input(format!("{}: {e}", p.display())))?
        }
        None => {
            std::io::stdin()
                .read_to_end(&mut v)
                .map_err(|e| CliError::Input(format!("standard input: {e}")))?;
        }
    }
    Ok(v)
}

/// Hex digits, optionally with `0x`, spaces, `:` or `-` between bytes.
pub fn parse_hex(s: &str) -> Result<Vec<u8>, CliError> {
    let s = s.trim();
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    let digits: Vec<char> = s
        .chars()
        .filter(|c| !matches!(c, ' ' | ':' | '-' | '_' | '\n' | '\t'))
        .collect();
    if let Some(c) = digits.iter().find(|c| !c.is_ascii_hexdigit()) {
        return Err(CliError::Input(format!(
            "malformed hex: '{c}' is not a hex digit"
        )));
    }
    if digits.len() % 2 == 1 {
        return Err(CliError::Input(format!(
            "malformed hex: {} digits, not whole bytes",
            digits.len()
        )));
    }
    Ok(digits
        .chunks(2)
        .map(|p| (p[0].to_digit(16).unwrap_or(0) * 16 + p[1].to_digit(16).unwrap_or(0)) as u8)
        .collect())
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn hex_round_trips(bytes in prop::collection::vec(any::<u8>(), 0..100)) {
            prop_assert_eq!(parse_hex(&hex(&bytes)).unwrap(), bytes.clone());
            let spaced: Vec<String> = bytes.iter().map(|b| format!("{b:02X}")).collect();
            prop_assert_eq!(parse_hex(&format!("0x{}", spaced.join(" "))).unwrap(), bytes);
        }

        #[test]
        fn any_text_is_hex_or_an_error(s in "\\PC{0,40}") {
            let _ = parse_hex(&s);
            let _ = link_cmd::parse_stream(&s);
        }

        #[test]
        fn encoded_streams_parse_and_decode_back(bytes in prop::collection::vec(any::<u8>(), 1..200)) {
            let text = link_cmd::encode(&bytes, false, true).unwrap();
            let cgs = link_cmd::parse_stream(&text).unwrap();
            let (out, errors) = link_cmd::decode(&cgs, false);
            prop_assert_eq!(errors, 0);
            prop_assert_eq!(out, format!("packet 1 at code-group 0: {} ({} bytes)\n", hex(&bytes), bytes.len()));
        }
    }
}
