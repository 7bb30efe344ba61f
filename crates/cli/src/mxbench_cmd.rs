//! `myrix bench pingpong|stream`: MX between two processes, OSU-style.
//!
//! `--server` opens an endpoint and prints its address as the first line of standard
//! output; `--client ADDR` connects to it, sends the plan (lengths, iterations, …) as a
//! control message, runs it and prints the results. With neither flag the command spawns
//! the server itself. Lengths above 64 KiB run a tenth of the iterations (as OSU does).
//! The protocol is `myrix_lab::mxbench`; this file parses, spawns the server and prints.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use clap::{Args, ValueEnum};
use myrix_lab::mxbench::{self, Mode, Plan};
use myrix_lab::report;
use myrix_mx::engine::Codec;
use myrix_mx::{Endpoint, PeerId};

use crate::CliError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Args, Clone)]
pub struct MxBenchArgs {
    /// Open an endpoint, print its address, and serve one client.
    #[arg(long, conflicts_with = "client")]
    server: bool,
    /// (Internal) the server stops when its standard input ends: set by a client that
    /// starts its own server.
    #[arg(long, requires = "server", hide = true)]
    lifeline: bool,
    /// Where the server listens (udp: HOST:PORT; default 127.0.0.1, any port).
    #[arg(long, requires = "server")]
    listen: Option<String>,
    /// The server's address (the first line it printed).
    #[arg(long)]
    client: Option<String>,
    /// `eth`: raw Ethernet in myrix's frames; `omx`: raw Ethernet in Open-MX's frames.
    #[arg(long, default_value = "shm", value_parser = ["shm", "udp", "eth", "omx"])]
    transport: String,
    /// The network interface of `--transport eth|omx` (raw Ethernet, needs root), on
    /// this side: server or client.
    #[arg(long, default_value = "lo")]
    interface: String,
    /// Open-MX's wire mode for `--transport omx`: `default` (8 KiB medium fragments) or
    /// `mx` (MX-compatible: 4 KiB fragments, 4144-byte frames; as `MYRIX_OMX_WIRE=mx`).
    /// Both sides must use the same.
    #[arg(long, default_value = "default", value_parser = ["default", "mx"])]
    omx_wire: String,
    /// First message length, bytes.
    #[arg(long, default_value_t = 1)]
    start: usize,
    /// Last message length, bytes.
    #[arg(long, default_value_t = 1 << 20)]
    end: usize,
    /// Next length = length × this (default 2).
    #[arg(long, conflicts_with = "increment")]
    multiplier: Option<usize>,
    /// Next length = length + this.
    #[arg(long)]
    increment: Option<usize>,
    /// Timed round trips (pingpong) or windows (stream) per length.
    #[arg(long, default_value_t = 1000)]
    iterations: usize,
    /// Untimed ones before them.
    #[arg(long, default_value_t = 100)]
    warmup: usize,
    /// Messages in flight per window (stream).
    #[arg(long, default_value_t = 64)]
    window: usize,
    /// Check every byte of every message (slower: not for timing).
    #[arg(long)]
    verify: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Pin to CPUs: `A,B` puts the server on A and the client on B.
    #[arg(long)]
    cpu: Option<String>,
    /// At the end, print the endpoint's protocol counters on standard error (frames,
    /// resends, duplicates dropped, frames that arrived early and were held).
    #[arg(long)]
    stats: bool,
    /// Write every frame this side's endpoint sends and receives to a pcap file
    /// (Ethernet frames for eth; USER0 with myrix's pseudo-header for shm and udp).
    /// The client's endpoint sees both directions; a server started by the client
    /// captures nothing.
    #[arg(long, value_name = "FILE")]
    pcap: Option<std::path::PathBuf>,
}

pub(crate) fn parse_cpus(s: &str) -> Result<(usize, usize), CliError> {
    let bad = || CliError::Input(format!("--cpu '{s}': expected SERVER,CLIENT core numbers"));
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    let (a, b): (usize, usize) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    // Checked here, before a server is spawned: one error, not the server's and ours.
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if let Some(c) = [a, b].into_iter().find(|&c| c >= n) {
        return Err(CliError::Input(format!(
            "--cpu {c}: this machine has CPUs 0 to {}",
            n - 1
        )));
    }
    Ok((a, b))
}

pub(crate) fn pin(cpu: usize) -> Result<(), CliError> {
    myrix_mx::pin_to_cpu(cpu).map_err(|e| CliError::Input(format!("--cpu {cpu}: {e}")))
}

pub fn run(mode: Mode, a: MxBenchArgs) -> Result<(), CliError> {
    let cpus = a.cpu.as_deref().map(parse_cpus).transpose()?;
    if a.transport == "eth" || a.transport == "omx" {
        let name = &a.interface;
        let plain = !name.is_empty() && !name.contains('/') && !name.starts_with('.');
        if !plain || !std::path::Path::new("/sys/class/net").join(name).exists() {
            return Err(CliError::Input(format!(
                "--interface: no network interface '{name}'"
            )));
        }
    }
    if a.omx_wire == "mx" && a.transport != "omx" {
        return Err(CliError::Input(
            "--omx-wire mx: Open-MX's wire modes are for --transport omx".into(),
        ));
    }
    if let Some(p) = &a.pcap {
        // Before any thread starts: every endpoint this process opens captures.
        std::env::set_var(myrix_mx::capture::ENV, p);
    }
    if a.server {
        if let Some((s, _)) = cpus {
            pin(s)?;
        }
        return serve(&a);
    }
    let plan = Plan {
        mode,
        lengths: mxbench::lengths(a.start, a.end, a.increment, a.multiplier)?,
        iterations: a.iterations,
        warmup: a.warmup,
        window: a.window.clamp(1, 1024),
        verify: a.verify,
    };
    // The server checks the plan against the same bounds: refused here, not by a
    // server the client would then wait for.
    let most = mxbench::MAX_ITERATIONS;
    if a.iterations == 0 || a.iterations > most {
        return Err(CliError::Input(format!("--iterations must be 1 to {most}")));
    }
    if a.warmup > most {
        return Err(CliError::Input(format!("--warmup must be at most {most}")));
    }
    if a.window == 0 || a.window > 1024 {
        return Err(CliError::Input("--window: 1 to 1024".into()));
    }
    let (addr, child) = match &a.client {
        Some(addr) => (addr.clone(), None),
        None => spawn_server(&a, mode)?,
    };
    let result = (|| {
        if let Some((_, c)) = cpus {
            pin(c)?;
        }
        if a.transport == "omx" && a.omx_wire == "mx" {
            let (ep, peer) = mxbench::connect_omx_mx(&addr, &a.interface)?;
            return measure(&a, mode, &plan, ep, peer);
        }
        if a.transport == "omx" {
            let (ep, peer) = mxbench::connect_omx(&addr, &a.interface)?;
            return measure(&a, mode, &plan, ep, peer);
        }
        let (ep, peer) = mxbench::connect(&addr, &a.interface)?;
        measure(&a, mode, &plan, ep, peer)
    })();
    if let Some(c) = child {
        end_self_server(c, result.is_err());
    }
    result
}

/// The client's side: runs the plan and prints the results.
fn measure<C: Codec>(
    a: &MxBenchArgs,
    mode: Mode,
    plan: &Plan,
    mut ep: Endpoint<C>,
    peer: PeerId,
) -> Result<(), CliError> {
    {
        let json = matches!(a.format, Format::Json);
        if !json {
            crate::out(&report::mx_head(
                mode,
                &a.transport,
                plan.iterations,
                plan.warmup,
                plan.verify,
            ))?;
        }
        // Table rows go out as each length completes; JSON is one array at the end.
        let mut printed = Ok(());
        let rows = mxbench::client(&mut ep, peer, plan, &mut |r| {
            if !json && printed.is_ok() {
                printed = crate::out(&report::mx_row(r));
            }
        })?;
        printed?;
        if a.stats {
            print_stats("client", &ep);
        }
        if json {
            crate::out(&report::mx_rows(
                &rows,
                mode,
                &a.transport,
                plan.iterations,
                plan.warmup,
                plan.verify,
                report::Format::Json,
            ))?;
        }
        Ok(())
    }
}

fn spawn_server(a: &MxBenchArgs, mode: Mode) -> Result<(String, Option<Child>), CliError> {
    let mut args: Vec<String> = vec!["bench".into(), mode.name().into(), "--server".into()];
    args.extend(["--transport".into(), a.transport.clone()]);
    args.extend(["--interface".into(), a.interface.clone()]);
    args.extend(["--omx-wire".into(), a.omx_wire.clone()]);
    if let Some(c) = &a.cpu {
        args.extend(["--cpu".into(), c.clone()]);
    }
    if a.stats {
        args.push("--stats".into());
    }
    let (line, child) = spawn_self_server(&args)?;
    Ok((line, Some(child)))
}

/// Starts this executable with `args` (a benchmark's `--server` command line) and
/// reads the address it prints as its first line. The server gets `--lifeline`: its
/// standard input is a pipe we never write, which ends when we do, even by SIGKILL, and
/// the server then stops instead of waiting for a client that is gone. It captures no
/// frames (`MYRIX_PCAP` is the client's alone).
pub(crate) fn spawn_self_server(args: &[String]) -> Result<(String, Child), CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Found(format!("cannot find my own executable: {e}")))?;
    let mut child = Command::new(exe)
        .args(args)
        .arg("--lifeline")
        .env_remove(myrix_mx::capture::ENV)
        .stdout(Stdio::piped())
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| CliError::Found(format!("cannot start the server: {e}")))?;
    let mut line = String::new();
    let out = child.stdout.take().expect("piped");
    BufReader::new(out)
        .read_line(&mut line)
        .map_err(|e| CliError::Found(format!("server: {e}")))?;
    if line.trim().is_empty() {
        let _ = child.wait();
        return Err(CliError::Found("the server printed no address".into()));
    }
    Ok((line.trim().to_string(), child))
}

/// Waits for a server [`spawn_self_server`] started, killing it if the client failed.
pub(crate) fn end_self_server(mut c: Child, failed: bool) {
    if failed {
        let _ = c.kill();
    }
    // `wait` would close the server's standard input first: the server takes that
    // for our death while it may still be saying goodbye.
    let lifeline = c.stdin.take();
    let _ = c.wait();
    drop(lifeline);
}

/// Makes a server end when the client that started it is gone (its standard input,
/// the lifeline, ends).
pub(crate) fn watch_lifeline() {
    std::thread::spawn(|| {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        eprintln!("myrix: error: the client that started this server is gone");
        std::process::exit(1);
    });
}

fn serve(a: &MxBenchArgs) -> Result<(), CliError> {
    if a.lifeline {
        watch_lifeline();
    }
    let board = mxbench::server_board(&a.transport, a.listen.as_deref(), &a.interface)?;
    if a.transport == "omx" && a.omx_wire == "mx" {
        return serve_on(a, mxbench::open_omx_mx(&board)?);
    }
    if a.transport == "omx" {
        return serve_on(a, mxbench::open_omx(&board)?);
    }
    serve_on(a, mxbench::open(&board)?)
}

fn serve_on<C: Codec>(a: &MxBenchArgs, mut ep: Endpoint<C>) -> Result<(), CliError> {
    outln!("{}", ep.addr());
    mxbench::serve(&mut ep)?;
    if a.stats {
        print_stats("server", &ep);
    }
    Ok(())
}

/// One line of counters on standard error, in one write, so the server's line and the
/// client's do not interleave.
fn print_stats<C: Codec>(side: &str, ep: &Endpoint<C>) {
    let line = report::mx_stats(side, &ep.stats());
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}
