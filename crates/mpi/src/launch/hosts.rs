//! Where the ranks of a `myrix mpiexec --hosts` / `--hostfile` job run: the host list
//! (MPICH hydra's `-hosts h1,h2:4` and `-f FILE` syntax), the placement rule, and
//! which hosts are this machine.
//!
//! * An entry is `host[:slots]`; slots default to 1. A hostfile has one entry a line;
//!   `#` starts a comment, blank lines are skipped.
//! * Placement, as hydra does it: the entries, in order, are expanded to a list of
//!   slots (`a:2,b` is `a a b`) and rank `i` runs on slot `i mod len`, so ranks fill
//!   each host's slots in order and wrap round the list when the job has more ranks
//!   than slots (`a,b -n 4` is `a b a b`; `a:2,b:3 -n 7` is `a a b b b a a`).
//! * A host named twice is one host (its ranks share one proxy).
//! * A host is this machine when it is `localhost`, this host's name (or its first
//!   label), or resolves to an address assigned in this network namespace.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs, UdpSocket};

/// The most entries a host list may have, and the most slots one entry may give.
pub const MAX_ENTRIES: usize = 4096;
pub const MAX_SLOTS: u32 = 4096;
/// The longest hostfile read, in bytes.
pub const MAX_HOSTFILE: u64 = 1 << 20;

/// One `host[:slots]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub host: String,
    pub slots: u32,
}

/// Why a host list is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostsError {
    #[error("{at}: {what}")]
    Bad { at: String, what: String },
    #[error("{0}: no hosts in it")]
    Empty(String),
    #[error("{0}")]
    Read(String),
}

fn bad(at: &str, what: impl Into<String>) -> HostsError {
    HostsError::Bad {
        at: at.to_string(),
        what: what.into(),
    }
}

/// Parses one entry; `at` names where it came from, for the error.
pub fn parse_entry(text: &str, at: &str) -> Result<Entry, HostsError> {
    let text = text.trim();
    // `[v6addr]:n` or `v6addr` alone; otherwise the last ':' splits off the slots.
    let (host, slots) = if let Some(rest) = text.strip_prefix('[') {
        let (h, tail) = rest
            .split_once(']')
            .ok_or_else(|| bad(at, format!("{text:?}: '[' without ']'")))?;
        match tail {
            "" => (h, None),
            t => (
                h,
                Some(
                    t.strip_prefix(':')
                        .ok_or_else(|| bad(at, format!("{text:?}: expected ':SLOTS' after ']'")))?,
                ),
            ),
        }
    } else if text.matches(':').count() > 1 {
        (text, None)
    } else {
        match text.split_once(':') {
            Some((h, s)) => (h, Some(s)),
            None => (text, None),
        }
    };
    if host.is_empty() {
        return Err(bad(at, format!("{text:?}: no host name")));
    }
    if host.len() > 255
        || !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '%'))
        || host.starts_with('-')
    {
        return Err(bad(at, format!("{host:?}: not a host name or address")));
    }
    let slots = match slots {
        None => 1,
        Some(s) => s
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_SLOTS).contains(n))
            .ok_or_else(|| {
                bad(
                    at,
                    format!("{text:?}: the slot count must be a number from 1 to {MAX_SLOTS}"),
                )
            })?,
    };
    Ok(Entry {
        host: host.to_string(),
        slots,
    })
}

/// `--hosts h1,h2:4,…`.
pub fn parse_list(text: &str) -> Result<Vec<Entry>, HostsError> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() > MAX_ENTRIES {
        return Err(bad("--hosts", format!("more than {MAX_ENTRIES} entries")));
    }
    let out = parts
        .iter()
        .enumerate()
        .map(|(i, p)| parse_entry(p, &format!("--hosts entry {}", i + 1)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(out)
}

/// The text of a hostfile (`name` for the errors).
pub fn parse_file_text(text: &str, name: &str) -> Result<Vec<Entry>, HostsError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if out.len() == MAX_ENTRIES {
            return Err(bad(name, format!("more than {MAX_ENTRIES} hosts")));
        }
        let at = format!("{name}:{}", i + 1);
        if line.split_whitespace().count() > 1 {
            return Err(bad(&at, format!("{line:?}: one host[:slots] a line")));
        }
        out.push(parse_entry(line, &at)?);
    }
    if out.is_empty() {
        return Err(HostsError::Empty(name.to_string()));
    }
    Ok(out)
}

/// Reads and parses a hostfile.
pub fn read_file(path: &std::path::Path) -> Result<Vec<Entry>, HostsError> {
    use std::io::Read;
    let name = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| HostsError::Read(format!("{name}: {e}")))?;
    let mut bytes = Vec::new();
    f.take(MAX_HOSTFILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| HostsError::Read(format!("{name}: {e}")))?;
    if bytes.len() as u64 > MAX_HOSTFILE {
        return Err(HostsError::Read(format!(
            "{name}: longer than {MAX_HOSTFILE} bytes"
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| HostsError::Read(format!("{name}: not a text file (UTF-8)")))?;
    parse_file_text(&text, &name)
}

/// The distinct hosts, in order of first appearance, and the host index of each of
/// `n` ranks (hydra's rule: slots in order, wrapping round).
pub fn place(entries: &[Entry], n: u32) -> (Vec<String>, Vec<usize>) {
    let mut hosts: Vec<String> = Vec::new();
    let mut slots: Vec<usize> = Vec::new();
    for e in entries {
        let h = match hosts.iter().position(|h| *h == e.host) {
            Some(h) => h,
            None => {
                hosts.push(e.host.clone());
                hosts.len() - 1
            }
        };
        // Past n slots the list only repeats itself; bound the work.
        let room = (n as usize).saturating_sub(slots.len());
        slots.extend(std::iter::repeat_n(h, (e.slots as usize).min(room)));
    }
    if slots.is_empty() {
        return (hosts, Vec::new());
    }
    let of = (0..n as usize).map(|i| slots[i % slots.len()]).collect();
    (hosts, of)
}

/// This machine's host name (the kernel's).
pub fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// The addresses `host` resolves to (port 0); empty if it does not resolve.
pub fn resolve(host: &str) -> Vec<IpAddr> {
    let mut v: Vec<IpAddr> = (host, 0)
        .to_socket_addrs()
        .map(|a| a.map(|s| s.ip()).collect())
        .unwrap_or_default();
    v.dedup();
    v
}

/// Whether `host` is this machine (in this network namespace): `localhost`, the host
/// name or its first label, or a name whose address can be bound here.
pub fn is_local(host: &str) -> bool {
    let me = this_host();
    let short = me.split('.').next().unwrap_or("");
    if host == "localhost" || (!me.is_empty() && (host == me || host == short)) {
        return true;
    }
    let addrs = resolve(host);
    !addrs.is_empty()
        && addrs
            .iter()
            .all(|ip| UdpSocket::bind(SocketAddr::new(*ip, 0)).is_ok())
}

/// The source address of the route from here toward `host` (what a TCP connection to
/// it would carry): the address the remote side can reach us at. No packet is sent.
pub fn source_address_toward(host: &str) -> Option<IpAddr> {
    resolve(host).into_iter().find_map(|ip| {
        let any: IpAddr = match ip {
            IpAddr::V4(_) => std::net::Ipv4Addr::UNSPECIFIED.into(),
            IpAddr::V6(_) => std::net::Ipv6Addr::UNSPECIFIED.into(),
        };
        let s = UdpSocket::bind(SocketAddr::new(any, 0)).ok()?;
        s.connect(SocketAddr::new(ip, 9)).ok()?;
        Some(s.local_addr().ok()?.ip())
    })
}

/// Where each rank of a job runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The distinct hosts, in order of first appearance.
    pub hosts: Vec<String>,
    /// The index in `hosts` of each rank's host.
    pub host_of: Vec<usize>,
    /// Whether each host is this machine ([`is_local`]).
    pub local: Vec<bool>,
}

impl Placement {
    /// `n` ranks over `entries` by [`place`]'s rule.
    pub fn new(entries: &[Entry], n: u32) -> Placement {
        let (hosts, host_of) = place(entries, n);
        let local = hosts.iter().map(|h| is_local(h)).collect();
        Placement {
            hosts,
            host_of,
            local,
        }
    }

    /// Whether some rank runs on another host.
    pub fn has_remote(&self) -> bool {
        self.host_of.iter().any(|&h| !self.local[h])
    }

    /// Each rank's node: hosts numbered in order of their first rank, every name of
    /// this machine one node.
    pub fn nodes(&self) -> Vec<u32> {
        let mut id_of: Vec<Option<u32>> = vec![None; self.hosts.len()];
        let (mut next, mut here) = (0u32, None);
        self.host_of
            .iter()
            .map(|&h| {
                let slot = if self.local[h] {
                    &mut here
                } else {
                    &mut id_of[h]
                };
                *slot.get_or_insert_with(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect()
    }
}

/// Each rank's `(local rank, ranks on its node)` from its node.
pub fn local_ranks(nodes: &[u32]) -> Vec<(u32, u32)> {
    let mut seen: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    let mut count: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    for n in nodes {
        *count.entry(*n).or_default() += 1;
    }
    nodes
        .iter()
        .map(|n| {
            let i = seen.entry(*n).or_default();
            *i += 1;
            (*i - 1, count[n])
        })
        .collect()
}

/// MPICH's `PMI_process_mapping` for these nodes: one `(node,1,run)` block per run of
/// consecutive ranks on one node.
pub fn process_mapping(nodes: &[u32]) -> String {
    let mut s = String::from("(vector");
    let mut i = 0;
    while i < nodes.len() {
        let run = nodes[i..].iter().take_while(|&&n| n == nodes[i]).count();
        s += &format!(",({},1,{run})", nodes[i]);
        i += run;
    }
    s + ")"
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn e(host: &str, slots: u32) -> Entry {
        Entry {
            host: host.into(),
            slots,
        }
    }

    #[test]
    fn entries_and_lists() {
        assert_eq!(parse_entry("a", "x").unwrap(), e("a", 1));
        assert_eq!(
            parse_entry(" node-1.lan:4 ", "x").unwrap(),
            e("node-1.lan", 4)
        );
        assert_eq!(parse_entry("10.0.0.2:2", "x").unwrap(), e("10.0.0.2", 2));
        assert_eq!(parse_entry("[fe80::1]:3", "x").unwrap(), e("fe80::1", 3));
        assert_eq!(parse_entry("fe80::1", "x").unwrap(), e("fe80::1", 1));
        assert_eq!(
            parse_list("a,b:2,a").unwrap(),
            vec![e("a", 1), e("b", 2), e("a", 1)]
        );
        for bad in [
            "",
            ":2",
            "a:0",
            "a:-1",
            "a:x",
            "a:4097",
            "a:99999999999999999999",
        ] {
            let err = parse_entry(bad, "--hosts entry 1").unwrap_err().to_string();
            assert!(err.starts_with("--hosts entry 1: "), "{bad}: {err}");
        }
        assert!(parse_entry("a b", "x").is_err());
        assert!(
            parse_entry("-oProxyCommand=x", "x").is_err(),
            "no ssh option"
        );
        assert!(parse_list("a,,b").is_err());
    }

    #[test]
    fn hostfiles_as_hydra_reads_them() {
        let text = "# the cluster\ndonner:2   # first two\n\n  foo:3\nshakey\n";
        assert_eq!(
            parse_file_text(text, "h").unwrap(),
            vec![e("donner", 2), e("foo", 3), e("shakey", 1)]
        );
        assert_eq!(
            parse_file_text("# nothing\n\n", "h"),
            Err(HostsError::Empty("h".into()))
        );
        let err = parse_file_text("a\nb:0\n", "h").unwrap_err().to_string();
        assert!(err.starts_with("h:2: "), "{err}");
        assert!(parse_file_text("a b\n", "h").is_err());
        let missing = read_file(std::path::Path::new("/nonexistent/hosts"));
        assert!(matches!(missing, Err(HostsError::Read(_))));
    }

    #[test]
    fn ranks_fill_slots_in_order_and_wrap_round() {
        let (hosts, of) = place(&[e("a", 1), e("b", 1)], 4);
        assert_eq!(hosts, ["a", "b"]);
        assert_eq!(of, [0, 1, 0, 1]);
        let (_, of) = place(&[e("a", 2), e("b", 3)], 7);
        assert_eq!(of, [0, 0, 1, 1, 1, 0, 0]);
        // Fewer ranks than slots: the first slots only.
        let (hosts, of) = place(&[e("a", 4), e("b", 4)], 3);
        assert_eq!(hosts, ["a", "b"]);
        assert_eq!(of, [0, 0, 0]);
        // A host named twice is one host.
        let (hosts, of) = place(&[e("a", 1), e("b", 1), e("a", 1)], 4);
        assert_eq!(hosts, ["a", "b"]);
        assert_eq!(of, [0, 1, 0, 0]);
    }

    #[test]
    fn nodes_and_their_mapping() {
        let p = Placement {
            hosts: vec!["a".into(), "localhost".into(), "b".into()],
            host_of: vec![1, 0, 2, 1, 0, 2],
            local: vec![false, true, false],
        };
        assert!(p.has_remote());
        let nodes = p.nodes();
        assert_eq!(nodes, [0, 1, 2, 0, 1, 2]);
        assert_eq!(
            local_ranks(&nodes),
            [(0, 2), (0, 2), (0, 2), (1, 2), (1, 2), (1, 2)]
        );
        let m = process_mapping(&[0, 0, 1, 1, 1, 0]);
        assert_eq!(m, "(vector,(0,1,2),(1,1,3),(0,1,1))");
        let layout = crate::job::parse_process_mapping(&m, 6).unwrap();
        assert_eq!(layout.node_of, [0, 0, 1, 1, 1, 0]);
    }

    #[test]
    fn this_machine_is_local() {
        assert!(is_local("localhost"));
        assert!(is_local("127.0.0.1"));
        let me = this_host();
        if !me.is_empty() {
            assert!(is_local(&me));
        }
        // TEST-NET-1 (RFC 5737) is never assigned here.
        assert!(!is_local("192.0.2.1"));
        assert!(!is_local("no-such-host.invalid"));
        assert!(source_address_toward("127.0.0.1").is_some());
    }

    proptest! {
        #[test]
        fn any_hostfile_text_is_parsed_or_refused(text in "(?s).{0,400}") {
            if let Ok(v) = parse_file_text(&text, "f") {
                prop_assert!(!v.is_empty());
                prop_assert!(v.iter().all(|e| (1..=MAX_SLOTS).contains(&e.slots) && !e.host.is_empty()));
            }
            let _ = parse_list(&text);
        }

        #[test]
        fn placement_follows_the_slots(slots in proptest::collection::vec(1u32..6, 1..6), n in 1u32..40) {
            let entries: Vec<Entry> = slots.iter().enumerate().map(|(i, &s)| e(&format!("h{i}"), s)).collect();
            let (hosts, of) = place(&entries, n);
            prop_assert_eq!(hosts.len(), entries.len());
            prop_assert_eq!(of.len(), n as usize);
            let total: u32 = slots.iter().sum();
            // Rank i and rank i + total share a host; the first slots[0] ranks are on h0.
            for i in 0..n as usize {
                if i + (total as usize) < n as usize {
                    prop_assert_eq!(of[i], of[i + total as usize]);
                }
            }
            for r in of.iter().take(slots[0].min(n) as usize) {
                prop_assert_eq!(*r, 0);
            }
        }
    }
}
