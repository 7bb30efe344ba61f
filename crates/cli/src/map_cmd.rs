//! `myrix map`: run the mapper over a simulated network and print what it found.

use crate::CliError;
use clap::{Args, ValueEnum};
use myrix_fabric::format::{format_address, to_dot, to_toml};
use myrix_sim::mapping::{run_mapper, MapConfig};
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
    /// The host (id in the topology file) that maps.
    #[arg(long, default_value_t = 0)]
    mapper: u32,
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
    probes: u64,
    sim_time_ns: f64,
    switches: usize,
    hosts: Vec<HostOut>,
    links: Vec<LinkOut>,
}

pub fn run(a: MapArgs) -> Result<(), CliError> {
    let t = crate::topo_cmd::load(&a.topology)?;
    if a.mapper as usize >= t.num_hosts() {
        return Err(CliError::Input(format!(
            "--mapper {}: the network has {} hosts",
            a.mapper,
            t.num_hosts()
        )));
    }
    if a.max_ports == 0 || a.max_ports > 128 {
        return Err(CliError::Input("--max-ports must be 1 to 128".into()));
    }
    let run = run_mapper(
        &t,
        a.mapper,
        &MapConfig {
            max_ports: a.max_ports,
            ..MapConfig::default()
        },
    );
    let map = run
        .map
        .map_err(|e| CliError::Found(format!("mapping failed: {e}")))?;
    let ns = run.time as f64 / 1000.0;
    eprintln!(
        "mapper host {} ({}): {} switches, {} hosts, {} links found with {} probes in {:.1} us simulated",
        a.mapper,
        format_address(t.hosts()[a.mapper as usize].address),
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
                mapper: a.mapper,
                probes: run.probes,
                sim_time_ns: ns,
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
