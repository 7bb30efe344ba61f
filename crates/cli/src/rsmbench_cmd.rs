//! `myrix bench rsm`: remote shared memory between two processes: put latency, get
//! latency, the put-based ping-pong and put bandwidth per length.
//!
//! Same conventions as `bench pingpong`: `--server` exports a segment and prints its
//! address (`CONTROLLER:NODE:SEGID`) as the first line of standard output; `--client
//! ADDR` measures against it; with neither the command starts the server itself. The
//! protocol is `myrix_lab::rsmbench`; this file parses, spawns the server and prints.

use clap::Args;
use myrix_lab::report;
use myrix_lab::rsmbench::{self, Address, Plan};

use crate::mxbench_cmd::{
    end_self_server, parse_cpus, pin, spawn_self_server, watch_lifeline, Format,
};
use crate::CliError;

#[derive(Args)]
pub struct RsmBenchArgs {
    /// Export a segment, print its address, and serve one client.
    #[arg(long, conflicts_with = "client")]
    server: bool,
    /// (Internal) the server stops when its standard input ends.
    #[arg(long, requires = "server", hide = true)]
    lifeline: bool,
    /// The server's address (the first line it printed).
    #[arg(long)]
    client: Option<String>,
    /// The RSM controller: shm (this host); udp (nodes from the table named by
    /// MYRIX_RSM_NODES, this process's node MYRIX_RSM_NODE; when neither is set and the
    /// command starts its own server, a table of two loopback nodes is made for the
    /// run); eth (raw Ethernet, root: the same table with `eth:IFACE@MAC` boards; several
    /// boards on a node's line are its rails); or sim (two hosts of a simulated
    /// Myrinet, simulated time: no server process, at most 10 rounds per figure since
    /// simulated time is exact).
    #[arg(long, default_value = "shm", value_parser = ["shm", "loopback", "udp", "eth", "sim"])]
    transport: String,
    /// The simulated network (`--transport sim`).
    #[command(flatten)]
    net: crate::topo_cmd::NetworkArgs,
    /// First message length, bytes.
    #[arg(long, default_value_t = 8)]
    start: usize,
    /// Last message length, bytes (at most 16 MiB).
    #[arg(long, default_value_t = 1 << 20)]
    end: usize,
    /// Next length = length × this (default 2).
    #[arg(long, conflicts_with = "increment")]
    multiplier: Option<usize>,
    /// Next length = length + this.
    #[arg(long)]
    increment: Option<usize>,
    /// Timed operations per length and measurement (a tenth above 64 KiB).
    #[arg(long, default_value_t = 1000)]
    iterations: usize,
    /// Untimed ones before them.
    #[arg(long, default_value_t = 100)]
    warmup: usize,
    /// Check the bytes of every get and every pong (slower: not for timing).
    #[arg(long)]
    verify: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Pin to CPUs: `A,B` puts the server on A and the client on B.
    #[arg(long)]
    cpu: Option<String>,
}

pub fn run(a: RsmBenchArgs) -> Result<(), CliError> {
    let cpus = a.cpu.as_deref().map(parse_cpus).transpose()?;
    if a.server {
        if a.lifeline {
            watch_lifeline();
        }
        if let Some((s, _)) = cpus {
            pin(s)?;
        }
        let server = rsmbench::Server::open(&a.transport)?;
        outln!("{}", server.address);
        return Ok(server.serve(a.verify)?);
    }
    let most = rsmbench::MAX_ITERATIONS;
    if a.iterations == 0 || a.iterations > most {
        return Err(CliError::Input(format!("--iterations must be 1 to {most}")));
    }
    if a.warmup > most {
        return Err(CliError::Input(format!("--warmup must be at most {most}")));
    }
    if a.end > rsmbench::MAX_LEN {
        return Err(CliError::Input(format!(
            "--end {}: at most {} bytes",
            a.end,
            rsmbench::MAX_LEN
        )));
    }
    if a.transport == "sim" {
        return run_sim(&a);
    }
    let plan = Plan {
        lengths: myrix_lab::mxbench::lengths(a.start, a.end, a.increment, a.multiplier)?,
        iterations: a.iterations,
        warmup: a.warmup,
        verify: a.verify,
    };
    let (addr, child) = match &a.client {
        Some(s) => (Address::parse(s)?, None),
        None => {
            let mut args: Vec<String> = ["bench", "rsm", "--server", "--transport"]
                .map(String::from)
                .to_vec();
            args.push(a.transport.clone());
            if let Some(c) = &a.cpu {
                args.extend(["--cpu".into(), c.clone()]);
            }
            if a.verify {
                args.push("--verify".into());
            }
            if a.transport == "udp" && std::env::var_os("MYRIX_RSM_NODES").is_none() {
                loopback_nodes()?;
            }
            let (line, child) = spawn_self_server(&args)?;
            if a.transport == "udp" && std::env::var_os(SELF_MADE).is_some() {
                // The server has read the table as node 1; this process is node 2.
                std::env::set_var("MYRIX_RSM_NODE", "2");
            }
            (Address::parse(&line)?, Some(child))
        }
    };
    let result = (|| {
        if let Some((_, c)) = cpus {
            pin(c)?;
        }
        let json = matches!(a.format, Format::Json);
        if !json {
            crate::out(&report::rsm_head(
                &addr.controller,
                plan.iterations,
                plan.warmup,
                plan.verify,
            ))?;
        }
        let mut printed = Ok(());
        let rows = rsmbench::client(&addr, &plan, &mut |r| {
            if !json && printed.is_ok() {
                printed = crate::out(&report::rsm_row(r));
            }
        })?;
        printed?;
        if json {
            crate::out(&report::rsm_json(&rows))?;
        }
        Ok(())
    })();
    if let Some(c) = child {
        end_self_server(c, result.is_err());
    }
    if let Some(table) = std::env::var_os(SELF_MADE) {
        let _ = std::fs::remove_file(table);
    }
    result
}

/// `--transport sim`: hosts 0 and the last of the simulated network, in simulated time.
fn run_sim(a: &RsmBenchArgs) -> Result<(), CliError> {
    if a.server || a.client.is_some() {
        return Err(CliError::Input(
            "--transport sim runs both hosts in this process: no --server or --client".into(),
        ));
    }
    let lengths = myrix_lab::mxbench::lengths(a.start, a.end, a.increment, a.multiplier)?;
    let (t, ud) = a.net.build()?;
    let hosts = t.num_hosts();
    if hosts < 2 {
        return Err(CliError::Input("the network needs two hosts".into()));
    }
    let routes = myrix_lab::fabricbench::routes(&t, &ud);
    let iters = a.iterations.min(10);
    let cfg = myrix_sim::Config::default();
    let setup = myrix_lab::fabricbench::Setup {
        from: 0,
        to: hosts - 1,
        iters: iters as u32,
        load: None,
        seed: a.net.seed,
        switch_model: cfg.switch_model,
        channel_release: cfg.channel_release,
    };
    let json = matches!(a.format, Format::Json);
    if !json {
        outln!(
            "# myrix bench rsm: RSM between hosts 0 and {} of {} (simulated time), {iters} rounds per figure",
            hosts - 1,
            t.name()
        );
        crate::out(&report::rsm_columns())?;
    }
    let mut bench = myrix_lab::rsmsim::RsmSimBench::new(
        &t,
        &routes,
        &setup,
        lengths.iter().copied().max().unwrap_or(1),
    )?;
    let mut rows = Vec::with_capacity(lengths.len());
    for &len in &lengths {
        let row = bench.measure(len)?;
        if !json {
            crate::out(&report::rsm_row(&row))?;
        }
        rows.push(row);
    }
    if json {
        crate::out(&report::rsm_json(&rows))?;
    }
    Ok(())
}

/// Marks a node table this command made for its own run.
const SELF_MADE: &str = "MYRIX_RSM_BENCH_TABLE";

/// A table of two nodes on loopback UDP ports that were free a moment ago, in a file
/// under the temporary directory named by `MYRIX_RSM_NODES`; the server started next
/// inherits it as node 1.
fn loopback_nodes() -> Result<(), CliError> {
    let free = || -> Result<u16, CliError> {
        let s = std::net::UdpSocket::bind("127.0.0.1:0")
            .map_err(|e| CliError::Found(format!("no free UDP port on 127.0.0.1: {e}")))?;
        Ok(s.local_addr()
            .map_err(|e| CliError::Found(e.to_string()))?
            .port())
    };
    let (p1, mut p2) = (free()?, free()?);
    while p2 == p1 {
        p2 = free()?;
    }
    let path = std::env::temp_dir().join(format!("myrix-rsm-bench-{}.nodes", std::process::id()));
    std::fs::write(
        &path,
        format!(
            "# made by myrix bench rsm for one run\n1 udp:127.0.0.1:{p1}\n2 udp:127.0.0.1:{p2}\n"
        ),
    )
    .map_err(|e| CliError::Found(format!("{}: {e}", path.display())))?;
    std::env::set_var("MYRIX_RSM_NODES", &path);
    std::env::set_var("MYRIX_RSM_NODE", "1");
    std::env::set_var(SELF_MADE, &path);
    Ok(())
}
