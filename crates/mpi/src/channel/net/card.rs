//! What a rank publishes for the network side, and which controller the job opens.
//!
//! * **`MYRIX_MPI_NET`** = `auto` (the default; also when empty), `udp` or `eth`; any
//!   other value is refused with an error naming it ([`parse_net_kind`]).
//! * **The card's network field** ([`NetCard`], published through PMI with the rank's
//!   card): `KIND;UDP;ETH`, `KIND` the rank's choice, `UDP` its UDP endpoints
//!   (`ip:port`, one per rail, comma-separated, `-` for none), `ETH` its raw-Ethernet
//!   boards (`iface@mac@ip/prefix`, one per rail, `-` for none). A rank lists Ethernet
//!   boards only if it could open a packet socket (`AF_PACKET`, root or
//!   `CAP_NET_RAW`) on every rail's interface ([`probe_eth`]).
//! * **The choice** ([`choose`]) is made from the cards alone, so every rank makes the
//!   same: `udp` → the `udp` controller; `eth` → the `eth` controller or an error;
//!   `auto` → `eth` when it can serve the job, else `udp`. Ranks asking for different
//!   kinds are an error (they would open different controllers and never meet).
//! * **What `eth` needs.** Raw Ethernet reaches a *node of the controller* by its
//!   interface's MAC address, and the RSM engine tells its peers apart by that address
//!   alone (no endpoint number in its frames): one process per interface. So every
//!   rank must have its own interface on each rail (one rank per network namespace or
//!   host); two ranks sharing one (`mpiexec --netns a,b -n 4`: two per namespace) make
//!   `eth` an error and `auto` fall back to `udp`. `auto` also wants every rank's rail
//!   address in one IPv4 subnet (rank 0's), a sign of one Ethernet segment: raw frames
//!   do not cross a router; `eth` trusts the user there.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};

use myrix_rsm::net::node_table::NodeTable;

use super::{node_of_rank, IfaceAddr};

/// Which network controller a rank asks for (`MYRIX_MPI_NET`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetKind {
    Auto,
    Udp,
    Eth,
}

impl NetKind {
    fn word(self) -> &'static str {
        match self {
            NetKind::Auto => "auto",
            NetKind::Udp => "udp",
            NetKind::Eth => "eth",
        }
    }
}

/// `MYRIX_MPI_NET`'s value (None: unset).
pub fn parse_net_kind(v: Option<&str>) -> Result<NetKind, String> {
    match v.map(str::trim) {
        // UDP by default: its batched sends (segmentation offload) move large messages
        // 2× faster than raw Ethernet's frame per system call, which gains only 12 %
        // at 8 B (docs/mpi-net.md, "Across namespaces").
        None | Some("") | Some("udp") => Ok(NetKind::Udp),
        Some("auto") => Ok(NetKind::Auto),
        Some("eth") => Ok(NetKind::Eth),
        Some(other) => Err(format!("MYRIX_MPI_NET={other:?}: must be eth, udp or auto")),
    }
}

/// This process's `MYRIX_MPI_NET` (a value that is not UTF-8 is refused too).
pub fn net_kind() -> Result<NetKind, String> {
    match std::env::var_os("MYRIX_MPI_NET") {
        None => parse_net_kind(None),
        Some(v) => match v.to_str() {
            Some(s) => parse_net_kind(Some(s)),
            None => Err(format!("MYRIX_MPI_NET={v:?}: must be eth, udp or auto")),
        },
    }
}

/// A rail's raw-Ethernet board as a rank publishes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EthBoard {
    pub iface: String,
    pub mac: [u8; 6],
    pub ip: Ipv4Addr,
    pub prefix: u8,
}

impl EthBoard {
    fn mac_text(&self) -> String {
        let m = self.mac;
        format!(
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }

    /// Its network: the address with the host bits cleared.
    fn network(&self) -> (u32, u8) {
        let p = self.prefix.min(32);
        let mask = if p == 0 { 0 } else { u32::MAX << (32 - p) };
        (u32::from(self.ip) & mask, p)
    }
}

/// Opens (and closes) a raw-Ethernet socket on each interface: its board, or why not.
pub fn probe_eth(ifs: &[IfaceAddr]) -> Result<Vec<EthBoard>, String> {
    ifs.iter()
        .map(|a| {
            let mac = myrix_mx::transport::eth::Eth::probe(&a.name)
                .map_err(|e| format!("raw Ethernet on {}: {e}", a.name))?;
            Ok(EthBoard {
                iface: a.name.clone(),
                mac,
                ip: a.ip,
                prefix: a.prefix,
            })
        })
        .collect()
}

/// A rank's network field (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetCard {
    pub kind: NetKind,
    pub udp: Vec<SocketAddr>,
    pub eth: Option<Vec<EthBoard>>,
}

impl NetCard {
    pub fn encode(&self) -> String {
        let udp = if self.udp.is_empty() {
            "-".to_string()
        } else {
            let v: Vec<String> = self.udp.iter().map(|a| a.to_string()).collect();
            v.join(",")
        };
        let eth = match &self.eth {
            Some(b) if !b.is_empty() => {
                let v: Vec<String> = b
                    .iter()
                    .map(|b| format!("{}@{}@{}/{}", b.iface, b.mac_text(), b.ip, b.prefix))
                    .collect();
                v.join(",")
            }
            _ => "-".to_string(),
        };
        // '+' between fields: PMI-2 (Slurm's srun) ends a value at ';', PMI-1 at ' '.
        format!("{}+{udp}+{eth}", self.kind.word())
    }

    /// The field [`NetCard::encode`] wrote; None for anything else (`-`: the rank
    /// could not make one).
    pub fn decode(s: &str) -> Option<NetCard> {
        let mut it = s.split('+');
        let (Some(kind), Some(udp), Some(eth), None) = (it.next(), it.next(), it.next(), it.next())
        else {
            return None;
        };
        let kind = parse_net_kind(Some(kind)).ok()?;
        let udp = if udp == "-" {
            Vec::new()
        } else {
            udp.split(',')
                .map(|a| a.parse().ok())
                .collect::<Option<Vec<SocketAddr>>>()?
        };
        let eth = if eth == "-" {
            None
        } else {
            Some(
                eth.split(',')
                    .map(|b| {
                        let mut p = b.split('@');
                        let (Some(iface), Some(mac), Some(net), None) =
                            (p.next(), p.next(), p.next(), p.next())
                        else {
                            return None;
                        };
                        let (ip, prefix) = net.split_once('/')?;
                        let prefix: u8 = prefix.parse().ok().filter(|p| *p <= 32)?;
                        if iface.is_empty()
                            || iface.len() > 15
                            || iface.contains(char::is_whitespace)
                        {
                            return None;
                        }
                        Some(EthBoard {
                            iface: iface.to_string(),
                            mac: myrix_mx::transport::eth::parse_mac(mac)?,
                            ip: ip.parse().ok()?,
                            prefix,
                        })
                    })
                    .collect::<Option<Vec<_>>>()?,
            )
        };
        if udp.len() > 8 || eth.as_ref().is_some_and(|e| e.len() > 8) {
            return None;
        }
        Some(NetCard { kind, udp, eth })
    }
}

/// The controller kind (`eth` or `udp`) and node table every rank opens, from every
/// rank's card (index = rank), or why none can be.
pub fn choose(cards: &[NetCard]) -> Result<(&'static str, NodeTable), String> {
    let Some(first) = cards.first() else {
        return Err("no ranks".into());
    };
    if let Some((r, c)) = cards.iter().enumerate().find(|(_, c)| c.kind != first.kind) {
        return Err(format!(
            "MYRIX_MPI_NET differs between ranks: rank 0 has {}, rank {r} {}",
            first.kind.word(),
            c.kind.word()
        ));
    }
    match first.kind {
        NetKind::Udp => Ok(("udp", udp_table(cards)?)),
        NetKind::Eth => Ok(("eth", eth_table(cards, false)?)),
        NetKind::Auto => match eth_table(cards, true) {
            Ok(t) => Ok(("eth", t)),
            Err(_) => Ok(("udp", udp_table(cards)?)),
        },
    }
}

fn udp_table(cards: &[NetCard]) -> Result<NodeTable, String> {
    let mut boards = Vec::with_capacity(cards.len());
    for (r, c) in cards.iter().enumerate() {
        if c.udp.is_empty() {
            return Err(format!("rank {r} has no UDP endpoint"));
        }
        let v: Vec<String> = c.udp.iter().map(|a| format!("udp:{a}")).collect();
        boards.push(v.join(" "));
    }
    table(&boards)
}

/// The `eth` table, or why the ranks cannot use raw Ethernet (see the module docs);
/// `same_subnet`: also ask every rail address to be in rank 0's subnet.
fn eth_table(cards: &[NetCard], same_subnet: bool) -> Result<NodeTable, String> {
    let mut owner: HashMap<(usize, [u8; 6]), usize> = HashMap::new();
    let mut boards = Vec::with_capacity(cards.len());
    let rank0 = cards[0].eth.as_deref().unwrap_or(&[]);
    for (r, c) in cards.iter().enumerate() {
        let eth = match &c.eth {
            Some(e) if !e.is_empty() => e,
            _ => {
                return Err(format!(
                    "rank {r} cannot use raw Ethernet (no interface, or no right to \
                     open a packet socket: root or CAP_NET_RAW)"
                ))
            }
        };
        for (i, b) in eth.iter().enumerate() {
            if let Some(s) = owner.insert((i, b.mac), r) {
                return Err(format!(
                    "ranks {s} and {r} share the interface {} ({}) on rail {i}: raw \
                     Ethernet reaches one process per interface (run one rank per \
                     node, or MYRIX_MPI_NET=udp)",
                    b.iface,
                    b.mac_text()
                ));
            }
            if same_subnet {
                if let Some(z) = rank0.get(i) {
                    if z.network() != b.network() {
                        return Err(format!(
                            "rank {r}'s rail {i} ({}/{}) is not in rank 0's subnet ({}/{})",
                            b.ip, b.prefix, z.ip, z.prefix
                        ));
                    }
                }
            }
        }
        let v: Vec<String> = eth
            .iter()
            .map(|b| format!("eth:{}@{}", b.iface, b.mac_text()))
            .collect();
        boards.push(v.join(" "));
    }
    table(&boards)
}

fn table(boards: &[String]) -> Result<NodeTable, String> {
    NodeTable::from_pairs(
        boards
            .iter()
            .enumerate()
            .map(|(r, b)| (node_of_rank(r as super::Rank).0, b.as_str())),
    )
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use myrix_rsm::net::node_table::Board;
    use myrix_rsm::NodeId;

    fn eth(iface: &str, last: u8, ip: [u8; 4], prefix: u8) -> EthBoard {
        EthBoard {
            iface: iface.into(),
            mac: [2, 0, 0, 0, 0, last],
            ip: ip.into(),
            prefix,
        }
    }

    fn card(kind: NetKind, port: u16, eth: Option<Vec<EthBoard>>) -> NetCard {
        NetCard {
            kind,
            udp: vec![SocketAddr::from(([10, 0, 0, 1], port))],
            eth,
        }
    }

    #[test]
    fn net_kind_values_and_refusals() {
        assert_eq!(parse_net_kind(None), Ok(NetKind::Udp));
        assert_eq!(parse_net_kind(Some("")), Ok(NetKind::Udp));
        assert_eq!(parse_net_kind(Some(" eth ")), Ok(NetKind::Eth));
        assert_eq!(parse_net_kind(Some("udp")), Ok(NetKind::Udp));
        assert_eq!(parse_net_kind(Some("auto")), Ok(NetKind::Auto));
        for bad in ["ETH", "tcp", "eth,udp", "1", "\u{e9}"] {
            let e = parse_net_kind(Some(bad)).unwrap_err();
            assert!(
                e.contains("MYRIX_MPI_NET") && e.contains("eth, udp or auto"),
                "{e}"
            );
        }
    }

    #[test]
    fn cards_round_trip_and_garbage_is_refused() {
        let c = NetCard {
            kind: NetKind::Auto,
            udp: vec![
                "10.0.0.1:4000".parse().unwrap(),
                "10.0.1.1:4001".parse().unwrap(),
            ],
            eth: Some(vec![
                eth("veth0", 1, [10, 0, 0, 1], 24),
                eth("veth1", 2, [10, 0, 1, 1], 24),
            ]),
        };
        let s = c.encode();
        assert_eq!(
            s,
            "auto+10.0.0.1:4000,10.0.1.1:4001+veth0@02:00:00:00:00:01@10.0.0.1/24,\
             veth1@02:00:00:00:00:02@10.0.1.1/24"
        );
        assert_eq!(NetCard::decode(&s), Some(c));
        let u = NetCard {
            kind: NetKind::Eth,
            udp: vec![],
            eth: None,
        };
        assert_eq!(NetCard::decode(&u.encode()), Some(u));
        for bad in [
            "-",
            "",
            "auto",
            "auto+-",
            "auto+-+-+-",
            "tcp+-+-",
            "auto+10.0.0.1+-",
            "auto+-+veth0@02:00:00:00:00:01",
            "auto+-+veth0@zz@10.0.0.1/24",
            "auto+-+veth0@02:00:00:00:00:01@10.0.0.1/33",
            "auto+-+@02:00:00:00:00:01@10.0.0.1/24",
            "auto+-+a@b@c@d",
            "auto+-+veth0@02:00:00:00:00:01@10.0.0.1/24,",
        ] {
            assert_eq!(NetCard::decode(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn auto_takes_eth_when_every_rank_has_its_own_interface() {
        let cards: Vec<NetCard> = (0..3u8)
            .map(|r| {
                card(
                    NetKind::Auto,
                    4000 + u16::from(r),
                    Some(vec![
                        eth("veth0", r, [10, 0, 0, r + 1], 24),
                        eth("veth1", 10 + r, [10, 0, 1, r + 1], 24),
                    ]),
                )
            })
            .collect();
        let (kind, t) = choose(&cards).unwrap();
        assert_eq!(kind, "eth");
        assert_eq!(t.nodes(), vec![NodeId(1), NodeId(2), NodeId(3)]);
        let b = t.boards(NodeId(3)).unwrap();
        assert_eq!(
            b,
            &[
                Board::Eth {
                    iface: "veth0".into(),
                    mac: [2, 0, 0, 0, 0, 2]
                },
                Board::Eth {
                    iface: "veth1".into(),
                    mac: [2, 0, 0, 0, 0, 12]
                }
            ]
        );
        // Asked for explicitly: the same table.
        let explicit: Vec<NetCard> = cards
            .iter()
            .map(|c| NetCard {
                kind: NetKind::Eth,
                ..c.clone()
            })
            .collect();
        assert_eq!(choose(&explicit).unwrap(), ("eth", t));
    }

    #[test]
    fn shared_interfaces_fall_back_to_udp_or_are_refused() {
        // Ranks 0 and 2 in one namespace: one interface.
        let mk = |kind| {
            vec![
                card(kind, 4000, Some(vec![eth("veth0", 1, [10, 0, 0, 1], 24)])),
                card(kind, 4001, Some(vec![eth("veth1", 2, [10, 0, 0, 2], 24)])),
                card(kind, 4002, Some(vec![eth("veth0", 1, [10, 0, 0, 1], 24)])),
            ]
        };
        let (kind, t) = choose(&mk(NetKind::Auto)).unwrap();
        assert_eq!(kind, "udp");
        assert_eq!(
            t.boards(NodeId(2)).unwrap(),
            &[Board::Udp("10.0.0.1:4001".parse().unwrap())]
        );
        let e = choose(&mk(NetKind::Eth)).unwrap_err();
        assert!(e.contains("ranks 0 and 2 share the interface veth0"), "{e}");
        assert_eq!(choose(&mk(NetKind::Udp)).unwrap().0, "udp");
    }

    #[test]
    fn auto_wants_eth_on_every_rank_and_one_subnet() {
        // A rank without raw sockets.
        let no = vec![
            card(
                NetKind::Auto,
                4000,
                Some(vec![eth("e0", 1, [10, 0, 0, 1], 24)]),
            ),
            card(NetKind::Auto, 4001, None),
        ];
        assert_eq!(choose(&no).unwrap().0, "udp");
        let mut ex = no.clone();
        for c in &mut ex {
            c.kind = NetKind::Eth;
        }
        assert!(choose(&ex)
            .unwrap_err()
            .contains("rank 1 cannot use raw Ethernet"));
        // Two subnets (a router between): auto keeps to UDP, eth trusts the user.
        let two = vec![
            card(
                NetKind::Auto,
                4000,
                Some(vec![eth("e0", 1, [10, 0, 0, 1], 24)]),
            ),
            card(
                NetKind::Auto,
                4001,
                Some(vec![eth("e0", 2, [10, 0, 9, 1], 24)]),
            ),
        ];
        assert_eq!(choose(&two).unwrap().0, "udp");
        let mut ex = two.clone();
        for c in &mut ex {
            c.kind = NetKind::Eth;
        }
        assert_eq!(choose(&ex).unwrap().0, "eth");
    }

    #[test]
    fn ranks_must_agree() {
        let cards = vec![
            card(NetKind::Auto, 4000, None),
            card(NetKind::Udp, 4001, None),
        ];
        let e = choose(&cards).unwrap_err();
        assert!(e.contains("rank 0 has auto, rank 1 udp"), "{e}");
        assert!(choose(&[]).is_err());
        // udp chosen but a rank published no UDP endpoint: an error, not a panic.
        let cards = vec![
            card(NetKind::Udp, 4000, None),
            NetCard {
                kind: NetKind::Udp,
                udp: vec![],
                eth: None,
            },
        ];
        assert!(choose(&cards).unwrap_err().contains("rank 1 has no UDP"));
    }
}
