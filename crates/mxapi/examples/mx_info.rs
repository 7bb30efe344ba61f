//! Lists this host's MX boards and the peer table as the C interface sees them (what
//! Open-MX's `omx_info` shows): `cargo run -p myrix-mxapi --example mx_info`.
//! `MYRIX_MX_IFACES` and `MYRIX_MX_PEERS` apply as they do to MX programs.

use myriexpress::naming;

fn main() {
    println!("MX boards of this host (MYRIX_MX_IFACES, else every Ethernet interface but lo):");
    for (i, b) in naming::boards().iter().enumerate() {
        println!(
            "  board {i}: {:<10} {}  {}",
            b.iface,
            naming::format_mac(b.nic),
            b.hostname
        );
    }
    println!("Peer table (the local boards, then MYRIX_MX_PEERS):");
    for (i, p) in naming::peers().iter().enumerate() {
        println!("  {i:3}) {}  {}", naming::format_mac(p.nic), p.hostname);
    }
}
