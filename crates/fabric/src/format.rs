//! Topology files: the TOML format myrix reads and writes, and exports to Graphviz DOT
//! and BookSim2's `anynet` network file.
//!
//! # The TOML topology format
//!
//! ```toml
//! name = "ring-3"
//!
//! # Switch ids are their order in the file: the first [[switch]] is switch 0.
//! [[switch]]
//! ports = 8
//! [[switch]]
//! ports = 8
//! [[switch]]
//! ports = 8
//!
//! # Host ids are their order too. The address is 48 bits, written as a MAC address.
//! [[host]]
//! address = "02:00:00:00:00:00"
//! switch = 0
//! port = 0
//! length_m = 10.0        # optional, default 10 m
//!
//! # A full-duplex cable between two switch ports.
//! [[link]]
//! a = { switch = 0, port = 4 }
//! b = { switch = 1, port = 4 }
//! length_m = 10.0        # optional, default 10 m
//! [[link]]
//! a = { switch = 1, port = 5 }
//! b = { switch = 2, port = 4 }
//! [[link]]
//! a = { switch = 2, port = 5 }
//! b = { switch = 0, port = 5 }
//! ```
//!
//! Unknown keys are errors, so a typo cannot silently change a network.

use crate::topology::{End, Host, Link, Switch, Topology, TopologyError, DEFAULT_CABLE_M};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("malformed topology file: {0}")]
    Toml(String),
    #[error("host {0}: '{1}' is not a 48-bit address like 02:00:00:00:00:1f")]
    Address(usize, String),
    #[error(transparent)]
    Topology(#[from] TopologyError),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    name: String,
    #[serde(default, rename = "switch")]
    switches: Vec<FileSwitch>,
    #[serde(default, rename = "host")]
    hosts: Vec<FileHost>,
    #[serde(default, rename = "link")]
    links: Vec<FileLink>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSwitch {
    ports: u8,
}

fn default_length() -> f64 {
    DEFAULT_CABLE_M
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileHost {
    address: String,
    switch: u32,
    port: u8,
    #[serde(default = "default_length")]
    length_m: f64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEnd {
    switch: u32,
    port: u8,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLink {
    a: FileEnd,
    b: FileEnd,
    #[serde(default = "default_length")]
    length_m: f64,
}

/// `02:00:00:00:00:1f`.
pub fn format_address(a: u64) -> String {
    (0..6)
        .rev()
        .map(|i| format!("{:02x}", (a >> (8 * i)) & 0xff))
        .collect::<Vec<_>>()
        .join(":")
}

/// Parses `02:00:00:00:00:1f` (also with `-`).
pub fn parse_address(s: &str) -> Option<u64> {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    if parts.len() != 6 {
        return None;
    }
    parts.iter().try_fold(0u64, |acc, p| {
        (p.len() == 2).then_some(())?;
        Some(acc << 8 | u8::from_str_radix(p, 16).ok()? as u64)
    })
}

/// Reads a topology from TOML text, validating it.
pub fn from_toml(text: &str) -> Result<Topology, FormatError> {
    let f: File = toml::from_str(text).map_err(|e| {
        // toml renders a multi-line excerpt; one line is what a user reads.
        let line = e
            .span()
            .map(|r| text[..r.start.min(text.len())].lines().count().max(1));
        let msg: Vec<&str> = e
            .message()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect();
        FormatError::Toml(match line {
            Some(l) => format!("line {l}: {}", msg.join("; ")),
            None => msg.join("; "),
        })
    })?;
    let switches = f
        .switches
        .iter()
        .map(|s| Switch { ports: s.ports })
        .collect();
    let hosts = f
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            Ok(Host {
                address: parse_address(&h.address)
                    .ok_or_else(|| FormatError::Address(i, h.address.clone()))?,
                switch: h.switch,
                port: h.port,
                length_m: h.length_m,
            })
        })
        .collect::<Result<Vec<_>, FormatError>>()?;
    let links = f
        .links
        .iter()
        .map(|l| Link {
            a: End {
                switch: l.a.switch,
                port: l.a.port,
            },
            b: End {
                switch: l.b.switch,
                port: l.b.port,
            },
            length_m: l.length_m,
        })
        .collect();
    Ok(Topology::new(f.name, switches, hosts, links)?)
}

/// Writes a topology as TOML; [`from_toml`] reads it back identical.
pub fn to_toml(t: &Topology) -> String {
    let f = File {
        name: t.name().to_string(),
        switches: t
            .switches()
            .iter()
            .map(|s| FileSwitch { ports: s.ports })
            .collect(),
        hosts: t
            .hosts()
            .iter()
            .map(|h| FileHost {
                address: format_address(h.address),
                switch: h.switch,
                port: h.port,
                length_m: h.length_m,
            })
            .collect(),
        links: t
            .links()
            .iter()
            .map(|l| FileLink {
                a: FileEnd {
                    switch: l.a.switch,
                    port: l.a.port,
                },
                b: FileEnd {
                    switch: l.b.switch,
                    port: l.b.port,
                },
                length_m: l.length_m,
            })
            .collect(),
    };
    toml::to_string(&f).expect("a topology always serializes")
}

/// Graphviz DOT: switches as boxes, hosts as ellipses, port numbers on the link ends.
pub fn to_dot(t: &Topology) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "graph \"{}\" {{", t.name().replace('"', "'"));
    let _ = writeln!(s, "  node [shape=box];");
    for i in 0..t.num_switches() {
        let _ = writeln!(s, "  s{i};");
    }
    let _ = writeln!(s, "  node [shape=ellipse, fontsize=9];");
    for (i, h) in t.hosts().iter().enumerate() {
        let _ = writeln!(
            s,
            "  h{i} [label=\"h{i}\\n{}\"];",
            format_address(h.address)
        );
    }
    for l in t.links() {
        let _ = writeln!(
            s,
            "  s{} -- s{} [taillabel=\"{}\", headlabel=\"{}\"];",
            l.a.switch, l.b.switch, l.a.port, l.b.port
        );
    }
    for (i, h) in t.hosts().iter().enumerate() {
        let _ = writeln!(s, "  h{i} -- s{} [headlabel=\"{}\"];", h.switch, h.port);
    }
    s.push_str("}\n");
    s
}

/// BookSim2's `anynet` network file: one line per switch (a BookSim router) listing its
/// hosts (BookSim nodes) and every neighbouring switch with the channel latency in cycles
/// for that direction, `latency(length_m)`. Host and switch ids are kept.
pub fn to_anynet(t: &Topology, latency: impl Fn(f64) -> u32) -> String {
    let mut s = String::new();
    for r in 0..t.num_switches() as u32 {
        let _ = write!(s, "router {r}");
        for h in t.hosts_on(r) {
            let _ = write!(s, " node {h}");
        }
        for (_, link, peer) in t.neighbours(r) {
            let len = t.links()[link as usize].length_m;
            let _ = write!(s, " router {} {}", peer.switch, latency(len).max(1));
        }
        s.push('\n');
    }
    s
}
