//! `myrix mpiexec` and `myrix mpicc`: argument parsing and printing over
//! `myrix_mpi::launch` and `myrix_mpi::wrapper`.

use crate::CliError;
use myrix_mpi::launch::{self, App, LaunchSpec};
use myrix_mpi::wrapper;
use std::ffi::OsString;
use std::process::{Command, ExitCode};

#[derive(clap::Args)]
#[command(after_help = HOSTS_HELP)]
pub struct MpiexecArgs {
    /// Number of ranks to start (1 to 4096).
    #[arg(short = 'n', long = "np", value_name = "N")]
    n: u64,
    /// Network namespaces (names as `ip netns list` shows them): rank i runs in the
    /// (i mod k)-th; ranks in different namespaces count as different hosts.
    #[arg(long, value_name = "NS,NS...", value_delimiter = ',', conflicts_with_all = ["hosts", "hostfile"])]
    netns: Vec<String>,
    /// Hosts to run the ranks on, as MPICH's `-hosts`: `host[:slots]`, slots 1 to 4096
    /// (default 1). Ranks fill each host's slots in order and wrap round the list.
    #[arg(
        long,
        visible_alias = "host",
        value_name = "HOST[:N],...",
        conflicts_with = "hostfile"
    )]
    hosts: Option<String>,
    /// A file of hosts, as MPICH's `-f`: one `host[:slots]` a line, `#` comments.
    #[arg(long, short = 'f', visible_alias = "machinefile", value_name = "FILE")]
    hostfile: Option<std::path::PathBuf>,
    /// Working directory of the ranks (of the first program; later ones take their
    /// own `-wdir DIR` after `:`).
    #[arg(long, visible_alias = "wd", value_name = "DIR")]
    wdir: Option<std::path::PathBuf>,
    /// End the job (every rank killed, exit status 124) if it is still running after
    /// this many seconds (1 to 31536000). Default: `MPIEXEC_TIMEOUT` from the
    /// environment, as MPICH's hydra reads it; else none.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u32).range(1..=MAX_TIMEOUT))]
    timeout: Option<u32>,
    /// The program and its arguments; ` : -n M prog2 args…` adds more programs to the
    /// job (MPMD: one MPI_COMM_WORLD, MPI_APPNUM numbers the programs).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM [ARGS]..."
    )]
    command: Vec<OsString>,
}

#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct MpiccArgs {
    /// Arguments for the C compiler, as for cc. `-show` prints the command instead of
    /// running it.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0.., value_name = "CC ARGS")]
    args: Vec<String>,
}

const HOSTS_HELP: &str = "\
Across hosts (--hosts, --hostfile): rank i runs on slot i mod S of the list expanded to its
S slots (`a:2,b` is a a b; `-n 4 --hosts a,b` puts ranks 0, 2 on a and 1, 3 on b), as
MPICH's hydra places them. A host that is this machine (localhost, its name, an address of
this namespace) runs its ranks directly; each other host is reached with
`ssh -o BatchMode=yes -o ConnectTimeout=10 -x -T HOST` (MYRIX_SSH replaces `ssh`, e.g.
MYRIX_SSH=\"ssh -p 2222 -i key\") and runs `myrix mpiexec-proxy` from this same path,
which starts its ranks and kills them when the job ends. Its ranks reach the launcher's
PMI port at the source address of the route toward the host (MYRIX_PMI_ADDR sets it).
They run in this directory (or -wdir) with MYRIX_*, OMP_*, LC_*, PATH, LD_LIBRARY_PATH,
LANG, TZ and TMPDIR from here; their output comes here; rank 0 reads standard input
only when it runs here. Any end of the job (a rank failing, MPI_Abort, --timeout,
SIGINT, SIGTERM or SIGHUP of mpiexec) ends every rank on every host.";

/// The longest `--timeout` / `MPIEXEC_TIMEOUT`: a year, in seconds.
const MAX_TIMEOUT: i64 = 31_536_000;

/// The job's time limit: `--timeout`, else `MPIEXEC_TIMEOUT` (refused unless a whole
/// number of seconds in range), else none.
fn time_limit(arg: Option<u32>) -> Result<Option<std::time::Duration>, CliError> {
    let secs = match (arg, std::env::var_os("MPIEXEC_TIMEOUT")) {
        (Some(s), _) => u64::from(s),
        (None, None) => return Ok(None),
        (None, Some(v)) => v
            .to_str()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&s| (1..=MAX_TIMEOUT as u64).contains(&s))
            .ok_or_else(|| {
                CliError::Input(format!(
                    "mpiexec: MPIEXEC_TIMEOUT={}: not a number of seconds between 1 and {MAX_TIMEOUT}",
                    v.to_string_lossy()
                ))
            })?,
    };
    Ok(Some(std::time::Duration::from_secs(secs)))
}

fn code(c: i32) -> ExitCode {
    ExitCode::from(launch::exit_status(c))
}

/// Runs the job; the exit status is the job's.
pub fn mpiexec(a: MpiexecArgs) -> Result<ExitCode, CliError> {
    let apps = apps(a.n, a.wdir, a.command)?;
    let total: u64 = apps.iter().map(|a| u64::from(a.ranks)).sum();
    launch::check_ranks(total).map_err(|e| CliError::Input(format!("mpiexec: {e}")))?;
    let spec = LaunchSpec {
        apps,
        // MPI_Comm_spawn starts its children with this same binary.
        env: std::env::current_exe()
            .map(|exe| vec![("MYRIX_MPIEXEC".into(), exe.into_os_string())])
            .unwrap_or_default(),
        netns: a.netns,
        timeout: time_limit(a.timeout)?,
    };
    let bad = |e: launch::hosts::HostsError| CliError::Input(format!("mpiexec: {e}"));
    let entries = match (a.hosts, a.hostfile) {
        (Some(list), _) => Some(launch::hosts::parse_list(&list).map_err(bad)?),
        (None, Some(f)) => Some(launch::hosts::read_file(&f).map_err(bad)?),
        (None, None) => None,
    };
    let place = entries.map(|e| launch::hosts::Placement::new(&e, total as u32));
    let outcome = launch::run_on(&spec, place.as_ref())
        .map_err(|e| CliError::Found(format!("mpiexec: {e}")))?;
    if let Some(why) = &outcome.reason {
        eprintln!("myrix mpiexec: {why}");
    }
    Ok(code(outcome.code))
}

/// The job's programs: the first from `-n` and the command, then one per
/// ` : [-n N] [-wdir DIR] prog args…` segment of the command (hydra's MPMD form;
/// `-np`/`--np` and `--wdir`/`-wd` too). Each needs its own `-n`.
fn apps(
    n: u64,
    wdir: Option<std::path::PathBuf>,
    command: Vec<OsString>,
) -> Result<Vec<App>, CliError> {
    let bad = |m: String| CliError::Input(format!("mpiexec: {m}"));
    let count = |n: u64| launch::check_ranks(n).map_err(|e| bad(e.to_string()));
    let mut segments = command.split(|a| a == ":");
    let first = segments.next().unwrap_or(&[]);
    let (program, args) = first
        .split_first()
        .ok_or_else(|| bad("no program given".into()))?;
    let mut apps = vec![App {
        ranks: count(n)?,
        program: program.clone(),
        args: args.to_vec(),
        wdir,
    }];
    for (i, seg) in segments.enumerate() {
        let which = i + 2;
        let mut it = seg.iter().peekable();
        let (mut ranks, mut wdir) = (None, None);
        while let Some(opt) = it.peek().and_then(|a| a.to_str()) {
            let value = match opt {
                "-n" | "-np" | "--np" | "-wdir" | "--wdir" | "-wd" => {
                    it.next();
                    it.next()
                        .ok_or_else(|| bad(format!("program {which}: {opt} needs a value")))?
                }
                _ => break,
            };
            if opt.ends_with("wdir") || opt == "-wd" {
                wdir = Some(std::path::PathBuf::from(value));
            } else {
                let v = value
                    .to_str()
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or_else(|| {
                        bad(format!(
                            "program {which}: {opt} {}: not a number",
                            value.to_string_lossy()
                        ))
                    })?;
                ranks = Some(count(v)?);
            }
        }
        let ranks = ranks.ok_or_else(|| bad(format!("program {which} (after ':') needs -n N")))?;
        let program = it
            .next()
            .ok_or_else(|| bad(format!("program {which} (after ':'): no program given")))?;
        apps.push(App {
            ranks,
            program: program.clone(),
            args: it.cloned().collect(),
            wdir,
        });
    }
    Ok(apps)
}

/// Compiles and links against libmpi_abi.so (or prints the command with `-show`);
/// `lang` picks the C or the C++ compiler (`myrix mpicc`, `myrix mpicxx`).
pub fn mpicc(a: MpiccArgs, lang: wrapper::Lang) -> Result<ExitCode, CliError> {
    let (me, lang_name, compiler_vars) = match lang {
        wrapper::Lang::C => ("mpicc", "C", "MYRIX_MPICC_CC or CC"),
        wrapper::Lang::Cxx => ("mpicxx", "C++", "MYRIX_MPICXX_CXX or CXX"),
        wrapper::Lang::Fortran => ("mpifort", "Fortran", "MYRIX_MPIFORT_FC or FC"),
    };
    let env = |k: &str| std::env::var(k).ok();
    let mut show = false;
    let mut args = Vec::new();
    for arg in a.args {
        match arg.as_str() {
            "-show" | "--show" => show = true,
            "--help" | "-help" => {
                crate::out(&format!(
                    "Usage: myrix {me} [-show] COMPILER ARGS...\n\
                     Compiles and links a {lang_name} program against myrix's headers and libmpi_abi.so\n\
                     (with an rpath: no LD_LIBRARY_PATH needed). -show prints the command.\n\
                     Environment: {compiler_vars} (the compiler), MYRIX_MPI_INCLUDE, MYRIX_MPI_LIBDIR{}.\n",
                    if lang == wrapper::Lang::Fortran { ", MYRIX_MPI_MODCACHE (where the mpi module is compiled)" } else { "" },
                ))?;
                return Ok(ExitCode::SUCCESS);
            }
            _ => args.push(arg),
        }
    }
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Input(format!("{me}: where is myrix? {e}")))?;
    let dir = exe
        .parent()
        .ok_or_else(|| CliError::Input(format!("{me}: the executable has no directory")))?;
    let loc = wrapper::locate(dir, &env).map_err(|e| CliError::Input(format!("{me}: {e}")))?;
    let compiler = wrapper::compiler(&env, lang);
    let mut line = wrapper::command_line(&compiler, &loc, &args);
    if lang == wrapper::Lang::Fortran {
        // `use mpi` needs mpi.mod, which only this compiler version reads.
        let dir = wrapper::fortran_module(&compiler, &loc.include, &env)
            .map_err(|e| CliError::Input(format!("{me}: {e}")))?;
        line.insert(compiler.len() + 1, format!("-I{}", dir.display()));
        // Without explicit interfaces a choice buffer is passed as INTEGER here and
        // REAL there, which gfortran 10+ refuses unless told (as MPICH's wrapper does).
        if compiler.iter().any(|w| w.contains("gfortran")) {
            line.insert(compiler.len(), "-fallow-argument-mismatch".to_string());
        }
    }
    if show {
        crate::out(&format!("{}\n", wrapper::shell_words(&line)))?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.is_empty() {
        return Err(CliError::Input(format!(
            "{me}: no input files (see myrix {me} --help)"
        )));
    }
    let status = Command::new(&line[0])
        .args(&line[1..])
        .status()
        .map_err(|e| CliError::Input(format!("{me}: running {}: {e}", line[0])))?;
    Ok(match status.code() {
        Some(c) => code(c),
        None => ExitCode::from(1),
    })
}
