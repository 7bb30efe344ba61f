//! `myrix packet …`: Myrinet packets with their route bytes and CRC-8 trailer.

use crate::{hex, parse_hex, CliError};
use clap::{Args, Subcommand};
use myrix_wire::myrinet::{forward, route_byte, Packet, PacketRepr, PacketType, TO_SWITCH};
use std::fmt::Write as _;

#[derive(Subcommand)]
pub enum PacketCmd {
    /// Build a packet: route bytes, type, payload, CRC-8; prints it in hex.
    Build(BuildArgs),
    /// Parse a packet given in hex and check its CRC; `--hops` walks it through switches.
    Parse(ParseArgs),
}

#[derive(Args)]
pub struct BuildArgs {
    /// Switch output ports, comma-separated (e.g. 3,0,7); empty for a direct link.
    #[arg(long, default_value = "")]
    route: String,
    /// mapping, management, ip, data, or a number below 128.
    #[arg(long = "type", default_value = "data")]
    ptype: String,
    /// Payload in hex.
    #[arg(long, default_value = "")]
    payload_hex: String,
}

#[derive(Args)]
pub struct ParseArgs {
    /// The packet in hex, route bytes first, CRC last.
    packet_hex: String,
    /// Strip the route bytes one switch at a time, showing each link's packet.
    #[arg(long)]
    hops: bool,
}

fn parse_type(s: &str) -> Result<PacketType, CliError> {
    Ok(match s {
        "mapping" => PacketType::Mapping,
        "management" => PacketType::Management,
        "ip" => PacketType::Ip,
        "data" => PacketType::Data,
        n => match n.parse::<u8>() {
            Ok(v) if v < 0x80 => PacketType::from_byte(v),
            _ => {
                return Err(CliError::Input(format!(
                    "--type '{n}': expected mapping, management, ip, data or a number below 128"
                )))
            }
        },
    })
}

pub fn run(cmd: PacketCmd) -> Result<(), CliError> {
    match cmd {
        PacketCmd::Build(a) => {
            let mut route = Vec::new();
            for p in a.route.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let port: u8 = p
                    .parse()
                    .map_err(|_| CliError::Input(format!("--route: '{p}' is not a port number")))?;
                route.push(route_byte(port).map_err(|e| CliError::Input(format!("--route: {e}")))?);
            }
            let payload = parse_hex(&a.payload_hex)?;
            let repr = PacketRepr {
                route: &route,
                packet_type: parse_type(&a.ptype)?,
                payload: &payload,
            };
            let bytes = repr.to_vec().map_err(|e| CliError::Input(e.to_string()))?;
            crate::out(&format!("{}\n", hex(&bytes)))?;
            Ok(())
        }
        PacketCmd::Parse(a) => {
            let mut bytes = parse_hex(&a.packet_hex)?;
            let mut out = String::new();
            let mut len = bytes.len();
            let mut link = 1;
            loop {
                describe(&mut out, link, &bytes[..len])?;
                if !a.hops || bytes.first().is_none_or(|b| b & TO_SWITCH == 0) {
                    break;
                }
                match forward(&mut bytes, len) {
                    Ok((port, n)) => {
                        let _ = writeln!(
                            out,
                            "  switch: out of port {port}, route byte stripped, CRC recomputed"
                        );
                        len = n;
                        link += 1;
                    }
                    Err(e) => {
                        let _ = writeln!(out, "  switch drops it: {e}");
                        break;
                    }
                }
            }
            crate::out(&out)?;
            let p =
                Packet::new_checked(&bytes[..len]).map_err(|e| CliError::Input(e.to_string()))?;
            if !p.verify_crc() {
                return Err(CliError::Found("CRC mismatch".into()));
            }
            Ok(())
        }
    }
}

fn describe(out: &mut String, link: usize, b: &[u8]) -> Result<(), CliError> {
    let p = Packet::new_checked(b).map_err(|e| CliError::Input(e.to_string()))?;
    let ports: Vec<String> = p.ports().map(|x| x.to_string()).collect();
    let _ = writeln!(
        out,
        "link {link}: {}\n  route [{}] type {} payload {} ({} B) crc {:02x} {}",
        hex(b),
        ports.join(","),
        p.packet_type(),
        hex(p.payload()),
        p.payload().len(),
        p.crc(),
        if p.verify_crc() { "ok" } else { "BAD" }
    );
    Ok(())
}
