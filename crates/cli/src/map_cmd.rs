//! `myrix map`: run the mapper over a simulated network and print what it found.

use crate::CliError;
use clap::{Args, ValueEnum};
use myrix_fabric::format::{format_address, to_dot, to_toml};
use myrix_sim::mapping::{elect, map_payload_len, run_mapper, MapConfig, Outage};
use serde::Serialize;
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Toml,
    Dot,
    Json,
}

#[derive(Args)]
pub struct MapArgs {
    /// The network to map (TOML); the mapper sees only its probes' outcomes.
    #[arg(long)]
    topology: PathBuf,
    /// The host (id in the topology file) that maps, chosen by hand. Without it every
    /// host starts mapping and the election leaves one: the highest address.
    #[arg(long)]
    mapper: Option<u32>,
    /// Switch ports probed.
    #[arg(long, default_value_t = 16)]
    max_ports: u8,
    #[arg(long, value_enum, default_value = "toml")]
    format: Format,
}

#[derive(Serialize)]
struct HostOut {
    address: String,
    switch: u32,
    port: u8,
}

#[derive(Serialize)]
struct EndOut {
    switch: u32,
    port: u8,
}

#[derive(Serialize)]
struct LinkOut {
    a: EndOut,
    b: EndOut,
}

#[derive(Serialize)]
struct MapOut {
    mapper: u32,
    /// Whether the mapper was elected (else chosen with --mapper).
    elected: bool,
    /// Hosts that started mapping, and the probes of all of them.
    candidates: usize,
    all_probes: u64,
    probes: u64,
    sim_time_ns: f64,
    /// When the last host had the map (the mapping time when chosen by hand).
    distributed_ns: f64,
    /// The map packet's payload, bytes (`sim::mapping::map_payload_len`).
    map_bytes: usize,
    switches: usize,
    hosts: Vec<HostOut>,
    links: Vec<LinkOut>,
}

pub fn run(a: MapArgs) -> Result<(), CliError> {
    let t = crate::topo_cmd::load(&a.topology)?;
    if t.num_hosts() == 0 {
        return Err(CliError::Input(
            "the network has 0 host(s): a mapper runs on a host".into(),
        ));
    }
    if let Some(m) = a.mapper {
        if m as usize >= t.num_hosts() {
            return Err(CliError::Input(format!(
                "--mapper {m}: the network has {} hosts",
                t.num_hosts()
            )));
        }
    }
    if a.max_ports == 0 || a.max_ports > 128 {
        return Err(CliError::Input("--max-ports must be 1 to 128".into()));
    }
    let cfg = MapConfig {
        max_ports: a.max_ports,
        ..MapConfig::default()
    };
    let (run, candidates, all_probes, distributed) = match a.mapper {
        Some(m) => {
            let run = run_mapper(&t, m, &cfg);
            let (p, time) = (run.probes, run.time);
            (run, 1, p, time)
        }
        None => {
            let e = elect(&t, &Outage::default(), &cfg);
            let Some(part) = e.parts.into_iter().next() else {
                return Err(CliError::Found(
                    "mapping failed: no mapper finished (probe limit reached)".into(),
                ));
            };
            (part.run, e.candidates, e.probes, part.distributed_at)
        }
    };
    let mapper = run.mapper;
    let map = run
        .map
        .map_err(|e| CliError::Found(format!("mapping failed: {e}")))?;
    let ns = run.time.as_nanos_f64();
    let how = if a.mapper.is_some() {
        "chosen".to_string()
    } else {
        format!(
            "elected among {candidates} hosts ({all_probes} probes by all), map at every host by {:.1} us",
            distributed.as_micros_f64()
        )
    };
    // The network is connected and nothing fails here: a map short of hosts or links
    // missed ports (a switch with more than --max-ports).
    if map.num_hosts() < t.num_hosts() || map.links().len() < t.links().len() {
        let widest = t.switches().iter().map(|s| s.ports).max().unwrap_or(0);
        return Err(CliError::Found(format!(
            "the map is incomplete: {} of {} hosts and {} of {} links found (--max-ports {}, switches have up to {widest} ports)",
            map.num_hosts(),
            t.num_hosts(),
            map.links().len(),
            t.links().len(),
            a.max_ports
        )));
    }
    let map_bytes = map_payload_len(&map);
    eprintln!(
        "mapper host {} ({}) {how}: {} switches, {} hosts, {} links found with {} probes in {:.1} us simulated; map {map_bytes} bytes",
        mapper,
        format_address(t.hosts()[mapper as usize].address),
        map.num_switches(),
        map.num_hosts(),
        map.links().len(),
        run.probes,
        ns / 1000.0
    );
    let text = match a.format {
        Format::Toml => to_toml(&map),
        Format::Dot => to_dot(&map),
        Format::Json => {
            let out = MapOut {
                mapper,
                elected: a.mapper.is_none(),
                candidates,
                all_probes,
                probes: run.probes,
                sim_time_ns: ns,
                distributed_ns: distributed.as_nanos_f64(),
                map_bytes,
                switches: map.num_switches(),
                hosts: map
                    .hosts()
                    .iter()
                    .map(|h| HostOut {
                        address: format_address(h.address),
                        switch: h.switch,
                        port: h.port,
                    })
                    .collect(),
                links: map
                    .links()
                    .iter()
                    .map(|l| LinkOut {
                        a: EndOut {
                            switch: l.a.switch,
                            port: l.a.port,
                        },
                        b: EndOut {
                            switch: l.b.switch,
                            port: l.b.port,
                        },
                    })
                    .collect(),
            };
            serde_json::to_string_pretty(&out).map_err(|e| CliError::Input(e.to_string()))? + "\n"
        }
    };
    crate::out(&text)
}
