//! `myrix mx info`: this host's MX boards and the peer table as `libmyriexpress`
//! sees them (what Open-MX's `omx_info` shows). Parsing and printing only; the
//! naming rules are `myriexpress::naming`'s.

use crate::CliError;
use myriexpress::naming;

#[derive(clap::Subcommand)]
pub enum MxCmd {
    /// List the boards (MYRIX_MX_IFACES, else every Ethernet interface but lo), their
    /// NIC ids (MACs) and host names, then the peer table (the local boards, then the
    /// file named by MYRIX_MX_PEERS).
    Info,
}

pub fn run(c: MxCmd) -> Result<(), CliError> {
    match c {
        MxCmd::Info => {
            let mut t = String::from(
                "MX boards of this host (MYRIX_MX_IFACES, else every Ethernet interface but lo):\n",
            );
            for (i, b) in naming::boards().iter().enumerate() {
                t += &format!(
                    "  board {i}: {:<10} {}  {}\n",
                    b.iface,
                    naming::format_mac(b.nic),
                    b.hostname
                );
            }
            t += "Peer table (the local boards, then MYRIX_MX_PEERS):\n";
            for (i, p) in naming::peers().iter().enumerate() {
                t += &format!("  {i:3}) {}  {}\n", naming::format_mac(p.nic), p.hostname);
            }
            crate::out(&t)?;
            // The library skips malformed lines quietly, as Open-MX does; say which.
            if let Some(path) = std::env::var_os("MYRIX_MX_PEERS") {
                if let Ok(text) = std::fs::read_to_string(&path) {
                    for (line, why) in naming::parse_peers_checked(&text).1 {
                        eprintln!("myrix: {}:{line}: skipped: {why}", path.to_string_lossy());
                    }
                }
            }
            Ok(())
        }
    }
}
