//! The node table: which node id is reached at which board.
//!
//! A node of a network controller is **one process's endpoint**: the process that
//! opens controller `udp` as node 3 binds the board the table gives node 3, and every
//! other process reaches node 3 there. Two processes of one host are two nodes.
//!
//! The file (named by `MYRIX_RSM_NODES`; the local node by `MYRIX_RSM_NODE`) has one
//! node per line, `#` starts a comment, blank lines are ignored:
//!
//! ```text
//! # node  board [board ...]
//! 1       udp:127.0.0.1:7001
//! 2       udp:127.0.0.1:7002
//! 3       eth:veth0@02:00:00:00:00:03
//! ```
//!
//! A board is `udp:HOST:PORT` (an address this node binds and the others send to) or
//! `eth:IFACE@MAC` (the interface this node opens, and its Ethernet address, which the
//! others send to). Several boards on one line are the node's *rails*: rail `r` joins
//! the nodes' `r`-th boards, large puts are striped across rails and a failed rail's
//! traffic moves to the others (see `net::import` and `docs/rsm-net.md`). Node ids are unique, boards are unique, and
//! a malformed table is one [`NodeTableError`] naming the line, never a panic.

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};

use myrix_rsm_proto::NodeId;

/// A board as the table names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Board {
    /// `udp:HOST:PORT`, resolved once when the table is read.
    Udp(SocketAddr),
    /// `eth:IFACE@MAC`.
    Eth { iface: String, mac: [u8; 6] },
}

impl Board {
    /// `udp` or `eth`.
    pub fn kind(&self) -> &'static str {
        match self {
            Board::Udp(_) => "udp",
            Board::Eth { .. } => "eth",
        }
    }

    /// The board string an MX endpoint opens (`udp:127.0.0.1:7001`, `eth:veth0`).
    pub fn open_string(&self) -> String {
        match self {
            Board::Udp(a) => format!("udp:{a}"),
            Board::Eth { iface, .. } => format!("eth:{iface}"),
        }
    }

    fn parse(s: &str) -> Result<Board, String> {
        if let Some(rest) = s.strip_prefix("udp:") {
            let addr = rest
                .to_socket_addrs()
                .map_err(|e| format!("bad UDP address {rest:?}: {e}"))?
                .next()
                .ok_or_else(|| format!("UDP address {rest:?} resolves to nothing"))?;
            if addr.port() == 0 {
                return Err(format!("UDP board {s:?} needs a port other than 0"));
            }
            return Ok(Board::Udp(addr));
        }
        if let Some(rest) = s.strip_prefix("eth:") {
            let (iface, mac) = rest
                .split_once('@')
                .ok_or_else(|| format!("Ethernet board {s:?} must be eth:IFACE@MAC"))?;
            if iface.is_empty() || iface.len() > 15 {
                return Err(format!("bad interface name {iface:?}"));
            }
            let mac = myrix_mx::transport::eth::parse_mac(mac)
                .ok_or_else(|| format!("bad Ethernet address {mac:?}"))?;
            return Ok(Board::Eth {
                iface: iface.to_string(),
                mac,
            });
        }
        Err(format!(
            "unknown board {s:?}: expected udp:HOST:PORT or eth:IFACE@MAC"
        ))
    }
}

/// Why a node table was refused: the line (1-based, 0 for the file itself) and what is
/// wrong with it. The controller reports it as `RsmError::BadConf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeTableError {
    pub line: usize,
    pub why: String,
}

impl std::fmt::Display for NodeTableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "RSM node table: {}", self.why)
        } else {
            write!(f, "RSM node table, line {}: {}", self.line, self.why)
        }
    }
}

impl std::error::Error for NodeTableError {}

/// Nodes and their boards; see the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeTable {
    nodes: BTreeMap<NodeId, Vec<Board>>,
}

/// The most nodes a table may list.
pub const MAX_NODES: usize = 4096;
/// The most boards (rails) per node.
pub const MAX_RAILS: usize = 8;

impl NodeTable {
    /// Parses the table's text.
    pub fn parse(text: &str) -> Result<NodeTable, NodeTableError> {
        let mut t = NodeTable::default();
        let mut seen: Vec<(String, usize)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let err = |why: String| NodeTableError { line, why };
            let body = raw.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let mut words = body.split_whitespace();
            let id = words.next().unwrap_or("");
            let id: u32 = id
                .parse()
                .map_err(|_| err(format!("node id {id:?} is not a number 0-4294967295")))?;
            let mut boards = Vec::new();
            for w in words {
                let b = Board::parse(w).map_err(err)?;
                let key = b.open_string() + &format!("{:?}", b);
                if let Some((_, l)) = seen.iter().find(|(k, _)| *k == key) {
                    return Err(err(format!("board {w:?} already given on line {l}")));
                }
                seen.push((key, line));
                boards.push(b);
            }
            if boards.is_empty() {
                return Err(err(format!("node {id} has no board")));
            }
            if boards.len() > MAX_RAILS {
                return Err(err(format!("node {id} has more than {MAX_RAILS} boards")));
            }
            if boards.iter().any(|b| b.kind() != boards[0].kind()) {
                return Err(err(format!("node {id} mixes udp and eth boards")));
            }
            if t.nodes.insert(NodeId(id), boards).is_some() {
                return Err(err(format!("node {id} listed twice")));
            }
            if t.nodes.len() > MAX_NODES {
                return Err(err(format!("more than {MAX_NODES} nodes")));
            }
        }
        Ok(t)
    }

    /// Reads and parses the file at `path`.
    pub fn load(path: &std::path::Path) -> Result<NodeTable, NodeTableError> {
        let text = std::fs::read_to_string(path).map_err(|e| NodeTableError {
            line: 0,
            why: format!("cannot read {}: {e}", path.display()),
        })?;
        Self::parse(&text)
    }

    /// The table named by `MYRIX_RSM_NODES` and the local node `MYRIX_RSM_NODE`.
    pub fn from_env() -> Result<(NodeId, NodeTable), NodeTableError> {
        let path = std::env::var_os("MYRIX_RSM_NODES").ok_or_else(|| NodeTableError {
            line: 0,
            why: "MYRIX_RSM_NODES (the node table's file) is not set".into(),
        })?;
        let node = std::env::var("MYRIX_RSM_NODE").map_err(|_| NodeTableError {
            line: 0,
            why: "MYRIX_RSM_NODE (this process's node id) is not set".into(),
        })?;
        let node: u32 = node.trim().parse().map_err(|_| NodeTableError {
            line: 0,
            why: format!("MYRIX_RSM_NODE {node:?} is not a node id"),
        })?;
        Ok((NodeId(node), Self::load(std::path::Path::new(&path))?))
    }

    /// A table built in code: `(node, board)` pairs, boards as in the file.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (u32, &'a str)>,
    ) -> Result<NodeTable, NodeTableError> {
        let text: String = pairs
            .into_iter()
            .map(|(n, b)| format!("{n} {b}\n"))
            .collect();
        Self::parse(&text)
    }

    /// The nodes, in order.
    pub fn nodes(&self) -> Vec<NodeId> {
        self.nodes.keys().copied().collect()
    }

    /// A node's boards (rails).
    pub fn boards(&self, node: NodeId) -> Option<&[Board]> {
        self.nodes.get(&node).map(|v| v.as_slice())
    }

    /// Every (node, first board).
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, &Board)> {
        self.nodes.iter().map(|(n, b)| (*n, &b[0]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        let t = NodeTable::parse(
            "# nodes\n1 udp:127.0.0.1:7001  # one\n\n2 udp:127.0.0.1:7002 udp:127.0.0.1:7003\n",
        )
        .unwrap();
        assert_eq!(t.nodes(), vec![NodeId(1), NodeId(2)]);
        assert_eq!(t.boards(NodeId(2)).unwrap().len(), 2);
        let e = NodeTable::parse("1 udp:127.0.0.1:7001\nx udp:127.0.0.1:7002\n").unwrap_err();
        assert_eq!(e.line, 2);
        for bad in [
            "1\n",
            "1 tcp:1.2.3.4:5\n",
            "1 udp:127.0.0.1:0\n",
            "1 udp:nonsense\n",
            "1 udp:127.0.0.1:7001\n1 udp:127.0.0.1:7002\n",
            "1 udp:127.0.0.1:7001\n2 udp:127.0.0.1:7001\n",
            "1 eth:veth0\n",
            "1 eth:veth0@zz\n",
            "1 eth:veth0@02:00:00:00:00:01 udp:127.0.0.1:7001\n",
            "99999999999 udp:127.0.0.1:7001\n",
        ] {
            assert!(NodeTable::parse(bad).is_err(), "{bad:?}");
        }
        let t = NodeTable::parse("3 eth:veth0@02:00:00:00:00:03\n").unwrap();
        assert_eq!(t.boards(NodeId(3)).unwrap()[0].open_string(), "eth:veth0");
    }
}
