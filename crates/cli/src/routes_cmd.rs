//! `myrix routes`: every route alternative of a policy, for every host pair.

use crate::CliError;
use clap::{Args, ValueEnum};
use myrix_fabric::itb::{check, in_transit_host, AltRef, Policy, RouteTable};
use myrix_fabric::{HostId, Topology};
use serde::Serialize;
use std::io::Write;

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Json,
    Summary,
}

#[derive(Args)]
pub struct RoutesArgs {
    #[command(flatten)]
    net: crate::topo_cmd::NetworkArgs,
    /// The selection policy: osud, omit, rmit, rrmit, pit or rrmit-min.
    #[arg(long, default_value = "osud", value_parser = crate::parse::named::<Policy>())]
    routing: Policy,
    #[arg(long, value_enum, default_value = "summary")]
    format: Format,
}

/// One route as printed. These names are stable: other tools read them.
#[derive(Serialize)]
struct PathOut {
    /// Switches in the order crossed; one with an in-transit host appears twice (the
    /// packet leaves it for the host and comes back).
    switches: Vec<u32>,
    /// The output port taken at each of those crossings (the last leads to `dst`).
    ports: Vec<u8>,
    in_transit: Vec<HostId>,
}

#[derive(Serialize)]
struct PairOut {
    src: HostId,
    dst: HostId,
    paths: Vec<PathOut>,
}

fn describe(t: &Topology, a: AltRef, src: HostId, dst: HostId) -> PathOut {
    let a = a.to_alternative(t);
    let (mut switches, mut ports, mut in_transit) = (Vec::new(), Vec::new(), Vec::new());
    for (i, h) in a.hops.iter().enumerate() {
        if a.splits.contains(&(i as u16)) {
            let host =
                in_transit_host(t, h.switch, src, dst).expect("splits fall on switches with hosts");
            switches.push(h.switch);
            ports.push(t.hosts()[host as usize].port);
            in_transit.push(host);
        }
        switches.push(h.switch);
        ports.push(h.port);
    }
    let d = t.hosts()[dst as usize];
    switches.push(d.switch);
    ports.push(d.port);
    PathOut {
        switches,
        ports,
        in_transit,
    }
}

pub fn run(a: RoutesArgs) -> Result<(), CliError> {
    let policy = a.routing;
    let (t, ud) = a.net.build()?;
    let table = RouteTable::new(&t, &ud, policy);
    let verdict = check(&t, &ud, &table);
    let out = std::io::stdout();
    let mut w = std::io::BufWriter::new(out.lock());
    let io = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError::BrokenPipe
        } else {
            CliError::Input(format!("standard output: {e}"))
        }
    };
    match a.format {
        Format::Json => {
            writeln!(w, "[").map_err(io)?;
            let n = t.num_hosts() as HostId;
            let mut first = true;
            for src in 0..n {
                for dst in (0..n).filter(|&d| d != src) {
                    let (ss, ds) = (
                        t.hosts()[src as usize].switch,
                        t.hosts()[dst as usize].switch,
                    );
                    let paths = table
                        .alternatives(ss, ds)
                        .iter()
                        .chain(table.longer(ss, ds))
                        .map(|x| describe(&t, x, src, dst))
                        .collect();
                    if !first {
                        writeln!(w, ",").map_err(io)?;
                    }
                    first = false;
                    serde_json::to_writer(&mut w, &PairOut { src, dst, paths }).map_err(
                        |e| match e.io_error_kind() {
                            Some(k) => io(std::io::Error::from(k)),
                            None => CliError::Input(e.to_string()),
                        },
                    )?;
                }
            }
            writeln!(w, "\n]").map_err(io)?;
        }
        Format::Summary => {
            let n = t.num_switches() as u32;
            let (mut alts, mut links, mut pairs, mut maxalt) = (0usize, 0.0f64, 0usize, 0usize);
            for s in 0..n {
                for d in (0..n).filter(|&d| d != s) {
                    let a = table.alternatives(s, d);
                    alts += a.len();
                    maxalt = maxalt.max(a.len());
                    links += a.iter().map(|x| x.len()).sum::<usize>() as f64 / a.len() as f64;
                    pairs += 1;
                }
            }
            writeln!(
                w,
                "{} ({} switches, {} hosts), routing {}, up*/down* root {}\n\
                 alternatives per switch pair: mean {:.2}, max {}\n\
                 links per route: mean {:.3} (minimal {:.3}, up*/down* {:.3})\n\
                 in-transit hosts per route: mean {:.3}\n\
                 deadlock check: {}",
                t.name(),
                n,
                t.num_hosts(),
                policy.name(),
                ud.root(),
                alts as f64 / pairs.max(1) as f64,
                maxalt,
                links / pairs.max(1) as f64,
                myrix_fabric::updown::minimal_mean_length(&t),
                ud.osud(&t).mean_length(),
                table.mean_splits(),
                match &verdict {
                    Ok(()) => "every sub-route legal, no channel dependency cycle".to_string(),
                    Err(e) => format!("FAILED: {e}"),
                }
            )
            .map_err(io)?;
        }
    }
    w.flush().map_err(io)?;
    verdict.map_err(|e| CliError::Found(format!("route set fails the deadlock check: {e}")))
}
