//! Boards, NIC ids, host names and the peer table, as Open-MX names things.
//!
//! * Boards are the host's Ethernet interfaces other than loopback, in the kernel's
//!   order (interface index), or those named in `MYRIX_MX_IFACES` (comma-separated,
//!   in that order). When there is none, board 0 is a board for processes on this
//!   host alone, with the pseudo NIC id `02:4d:58:xx:xx:xx` (locally administered;
//!   "MX", then 24 bits of a hash of the node name).
//! * A board's NIC id is its interface's 48-bit MAC address; its host name is
//!   `nodename:board` (the `uname` node name and the board number).
//! * The peer table holds the local boards, then the lines of the file named by
//!   `MYRIX_MX_PEERS` in Open-MX's peers format: `MAC hostname:board` per line (`#`
//!   starts a comment). Every process of a host reading the same file shares one table.
//!   Names are looked up exactly; a bare `host` also finds `host:0`.

use std::ffi::{c_char, CStr};
use std::sync::Mutex;

use crate::init::{fail, guard, lock, need_init};
use crate::types::*;

/// One board of this host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    /// The interface's name, or `local` for the host-only board.
    pub iface: String,
    pub nic: u64,
    pub hostname: String,
}

/// One entry of the peer table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    pub nic: u64,
    pub hostname: String,
}

#[derive(Default)]
struct Names {
    boards: Vec<Board>,
    peers: Vec<Peer>,
}

static NAMES: Mutex<Option<Names>> = Mutex::new(None);

/// The `uname` node name.
pub fn nodename() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// A MAC address `aa:bb:cc:dd:ee:ff` as a NIC id.
pub fn parse_mac(s: &str) -> Option<u64> {
    let parts: Vec<&str> = s.trim().split(':').collect();
    if parts.len() != 6 {
        return None;
    }
    let mut v = 0u64;
    for p in parts {
        if p.is_empty() || p.len() > 2 {
            return None;
        }
        v = (v << 8) | u64::from_str_radix(p, 16).ok()?;
    }
    Some(v)
}

/// A NIC id as a MAC address.
pub fn format_mac(nic: u64) -> String {
    let b = nic.to_be_bytes();
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        b[2], b[3], b[4], b[5], b[6], b[7]
    )
}

/// The host-only board's NIC id: `02:4d:58` and 24 bits of FNV-1a of the node name.
pub fn local_nic(node: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in node.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    0x024d_5800_0000 | ((h ^ (h >> 24) ^ (h >> 48)) & 0xff_ffff)
}

fn sys(iface: &str, what: &str) -> Option<String> {
    std::fs::read_to_string(format!("/sys/class/net/{iface}/{what}"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// This host's boards (see the module's documentation).
pub fn discover_boards(chosen: Option<&str>) -> Vec<Board> {
    let node = nodename();
    let mut ifaces: Vec<(u32, String)> = Vec::new();
    if let Some(list) = chosen.filter(|l| !l.trim().is_empty()) {
        for (i, name) in list.split(',').map(str::trim).enumerate() {
            if !name.is_empty() && sys(name, "address").is_some() {
                ifaces.push((i as u32, name.to_string()));
            }
        }
    } else if let Ok(dir) = std::fs::read_dir("/sys/class/net") {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // ARPHRD_ETHER is 1; loopback is 772.
            if name == "lo" || sys(&name, "type").as_deref() != Some("1") {
                continue;
            }
            let index = sys(&name, "ifindex").and_then(|s| s.parse().ok());
            ifaces.push((index.unwrap_or(u32::MAX), name));
        }
        ifaces.sort();
    }
    let mut boards: Vec<Board> = Vec::new();
    for (_, iface) in ifaces {
        let Some(nic) = sys(&iface, "address").and_then(|a| parse_mac(&a)) else {
            continue;
        };
        if nic == 0 || boards.iter().any(|b| b.nic == nic) {
            continue;
        }
        let hostname = format!("{node}:{}", boards.len());
        boards.push(Board {
            iface,
            nic,
            hostname,
        });
    }
    if boards.is_empty() {
        boards.push(Board {
            iface: "local".to_string(),
            nic: local_nic(&node),
            hostname: format!("{node}:0"),
        });
    }
    boards
}

/// Reads a peers file: `MAC hostname:board` per line; bad lines are skipped.
pub fn parse_peers(text: &str) -> Vec<Peer> {
    parse_peers_checked(text).0
}

/// [`parse_peers`], with the lines it skipped: `(line number from 1, why)`.
pub fn parse_peers_checked(text: &str) -> (Vec<Peer>, Vec<(usize, String)>) {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(mac), Some(name)) = (words.next(), words.next()) else {
            skipped.push((n + 1, "expected `MAC hostname:board`".to_string()));
            continue;
        };
        let Some(nic) = parse_mac(mac) else {
            skipped.push((n + 1, format!("{mac:?} is not a MAC address")));
            continue;
        };
        if name.len() < MX_MAX_HOSTNAME_LEN {
            out.push(Peer {
                nic,
                hostname: name.to_string(),
            });
        } else {
            skipped.push((
                n + 1,
                format!(
                    "the host name is longer than {} bytes",
                    MX_MAX_HOSTNAME_LEN - 1
                ),
            ));
        }
    }
    (out, skipped)
}

pub fn load() {
    let boards = discover_boards(std::env::var("MYRIX_MX_IFACES").ok().as_deref());
    let mut peers: Vec<Peer> = boards
        .iter()
        .map(|b| Peer {
            nic: b.nic,
            hostname: b.hostname.clone(),
        })
        .collect();
    if let Some(path) = std::env::var_os("MYRIX_MX_PEERS") {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                // A local board's NIC id under another name is kept as an alias (the
                // name finds the board; the board's own name stays the NIC id's).
                for p in parse_peers(&text) {
                    if !peers.contains(&p) {
                        peers.push(p);
                    }
                }
            }
            Err(e) => eprintln!("MX: cannot read MYRIX_MX_PEERS {path:?}: {e}"),
        }
    }
    *lock(&NAMES) = Some(Names { boards, peers });
}

fn with<T>(f: impl FnOnce(&Names) -> T) -> T {
    let mut g = lock(&NAMES);
    if g.is_none() {
        drop(g);
        load();
        g = lock(&NAMES);
    }
    f(g.as_ref().expect("loaded above"))
}

pub fn boards() -> Vec<Board> {
    with(|n| n.boards.clone())
}

/// The peer table: the local boards, then the peers file's entries.
pub fn peers() -> Vec<Peer> {
    with(|n| n.peers.clone())
}

pub fn board(index: u32) -> Option<Board> {
    with(|n| n.boards.get(index as usize).cloned())
}

/// The board of this host with NIC id `nic`.
pub fn local_board(nic: u64) -> Option<u32> {
    with(|n| n.boards.iter().position(|b| b.nic == nic).map(|i| i as u32))
}

/// The peer table names a NIC id that is not a board of this host.
pub fn has_remote_peers() -> bool {
    with(|n| {
        n.peers
            .iter()
            .any(|p| !n.boards.iter().any(|b| b.nic == p.nic))
    })
}

pub fn hostname_of(nic: u64) -> Option<String> {
    with(|n| {
        n.peers
            .iter()
            .find(|p| p.nic == nic)
            .map(|p| p.hostname.clone())
    })
}

pub fn nic_of(hostname: &str) -> Option<u64> {
    with(|n| {
        let exact = n.peers.iter().find(|p| p.hostname == hostname);
        let bare = || {
            let full = format!("{hostname}:0");
            n.peers.iter().find(|p| p.hostname == full)
        };
        exact.or_else(bare).map(|p| p.nic)
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_hostname_to_nic_id(
    hostname: *mut c_char,
    nic_id: *mut u64,
) -> mx_return_t {
    guard("mx_hostname_to_nic_id", || {
        if let Err(e) = need_init("mx_hostname_to_nic_id") {
            return e;
        }
        if hostname.is_null() || nic_id.is_null() {
            return fail(
                ret::BAD_HOSTNAME_ARGS,
                "mx_hostname_to_nic_id: NULL argument",
            );
        }
        // SAFETY: the caller passes a NUL-terminated string (checked non-NULL above).
        let name = unsafe { CStr::from_ptr(hostname) }.to_string_lossy();
        match nic_of(&name) {
            Some(nic) => {
                // SAFETY: `nic_id` is non-NULL and points to a u64 the caller owns.
                unsafe { nic_id.write(nic) };
                ret::SUCCESS
            }
            None => fail(
                ret::HOST_NOT_FOUND,
                &format!("mx_hostname_to_nic_id: {name:?} is not in the peer table"),
            ),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_nic_id_to_hostname(nic_id: u64, hostname: *mut c_char) -> mx_return_t {
    guard("mx_nic_id_to_hostname", || {
        if let Err(e) = need_init("mx_nic_id_to_hostname") {
            return e;
        }
        if hostname.is_null() {
            return fail(
                ret::BAD_HOSTNAME_ARGS,
                "mx_nic_id_to_hostname: NULL hostname",
            );
        }
        let Some(name) = hostname_of(nic_id) else {
            return fail(
                ret::NIC_NOT_FOUND,
                &format!(
                    "mx_nic_id_to_hostname: NIC {} is not in the peer table",
                    format_mac(nic_id)
                ),
            );
        };
        let bytes = name.as_bytes();
        let n = bytes.len().min(MX_MAX_HOSTNAME_LEN - 1);
        // SAFETY: the caller provides MX_MAX_HOSTNAME_LEN bytes at `hostname` (the
        // interface's contract); we write at most that many, NUL included.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), hostname.cast::<u8>(), n);
            hostname.add(n).write(0);
        }
        ret::SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_board_number_to_nic_id(
    board_number: u32,
    nic_id: *mut u64,
) -> mx_return_t {
    guard("mx_board_number_to_nic_id", || {
        if let Err(e) = need_init("mx_board_number_to_nic_id") {
            return e;
        }
        if nic_id.is_null() {
            return fail(ret::BAD_INFO_VAL, "mx_board_number_to_nic_id: NULL nic_id");
        }
        match board(board_number) {
            Some(b) => {
                // SAFETY: `nic_id` is non-NULL and points to a u64 the caller owns.
                unsafe { nic_id.write(b.nic) };
                ret::SUCCESS
            }
            None => fail(
                ret::BOARD_UNKNOWN,
                &format!("mx_board_number_to_nic_id: no board {board_number}"),
            ),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_nic_id_to_board_number(
    nic_id: u64,
    board_number: *mut u32,
) -> mx_return_t {
    guard("mx_nic_id_to_board_number", || {
        if let Err(e) = need_init("mx_nic_id_to_board_number") {
            return e;
        }
        if board_number.is_null() {
            return fail(
                ret::BAD_INFO_VAL,
                "mx_nic_id_to_board_number: NULL board_number",
            );
        }
        match local_board(nic_id) {
            Some(b) => {
                // SAFETY: `board_number` is non-NULL and points to a u32 the caller owns.
                unsafe { board_number.write(b) };
                ret::SUCCESS
            }
            None => fail(
                ret::NIC_NOT_FOUND,
                &format!(
                    "mx_nic_id_to_board_number: NIC {} is not a board of this host",
                    format_mac(nic_id)
                ),
            ),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_and_peers_files() {
        assert_eq!(parse_mac("02:fc:00:00:00:01"), Some(0x02fc_0000_0001));
        assert_eq!(format_mac(0x02fc_0000_0001), "02:fc:00:00:00:01");
        assert_eq!(parse_mac("02:fc:00:00:00"), None);
        assert_eq!(parse_mac("02:fc:00:00:00:1g"), None);
        let p = parse_peers(
            "# peers\n00:11:22:33:44:55 alpha:0\nbad line\n00:11:22:33:44:56\tbeta:1 # x\n",
        );
        assert_eq!(
            p,
            vec![
                Peer {
                    nic: 0x0011_2233_4455,
                    hostname: "alpha:0".into()
                },
                Peer {
                    nic: 0x0011_2233_4456,
                    hostname: "beta:1".into()
                },
            ]
        );
        let l = local_nic("node");
        assert_eq!(l >> 24, 0x02_4d58);
        assert!(l < 1 << 48);
    }

    #[test]
    fn boards_fall_back_to_a_local_one() {
        let b = discover_boards(Some("no-such-iface0"));
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].iface, "local");
        assert!(b[0].hostname.ends_with(":0"));
    }
}
