//! The channel between nodes: ranks whose [`crate::job::node_identity`] differs (another
//! host, or another network namespace of this one) talk through one of RSM's network
//! controllers instead of `shm`: `eth` (raw Ethernet, `AF_PACKET`) or `udp`, as
//! `MYRIX_MPI_NET` (`udp`, the default, `eth`, `auto`) and what the ranks can do decide
//! ([`card`]: `auto` takes `eth` when every rank can open a packet socket on an
//! interface of its own, all in one subnet, else `udp`).
//!
//! * **Which interface.** Each rank's rails are the interfaces `MYRIX_MPI_IFACE` names
//!   (a comma list: one board per interface, each a rail of the controller, striped
//!   and failed over by it), else the first interface (in `getifaddrs(3)` order) that
//!   is up, not loopback and has an IPv4 address, else (UDP only) `127.0.0.1`. In a
//!   network namespace that is its veth end. Over `udp` a rank binds a port on each
//!   interface's address, chosen by the kernel (a bind to port 0, released and bound
//!   again by the controller: another process could take it in between, which fails
//!   the job's start with the bind's error); over `eth` its board is the interface and
//!   its MAC address.
//! * **The node table** is built in memory from the boards every rank publishes
//!   through PMI at `MPI_Init` ([`local_card`]): RSM node `rank + 1` is the rank's endpoint (a node of
//!   a network controller is one process). No file, no `MYRIX_RSM_NODES`.
//! * **When.** Only a job whose ranks are on more than one node opens it: all ranks
//!   compute the same node ids, so they agree, and open it between two PMI barriers (an
//!   inbox must be published before anyone connects to it).
//! * The network inbox has a fixed segment id ([`NET_INBOX`]): it is the only segment
//!   of its controller a peer must find before any connection exists.
//! * **Acks** of messages from another node are staged; once 8 are, they ride with the
//!   receiver's next message to that peer, else they are put after [`ack_idle`] of
//!   idle progress, or once 32 are staged (and at exit): see `window`'s lazy windows.
//! * **A direct receive** (`Fabric::recv_now`) from a rank on another node polls the
//!   controller first: only this process's polls take that peer's frames in.
//! * **Exit.** A put returns once queued: a rank that exits right after `MPI_Finalize`
//!   could take its last message (still unacknowledged by the peer's engine, a frame
//!   lost on the way) with it. So every channel area on another node whose sends the
//!   receiver has not all acknowledged is flushed (a barrier close: a round trip) when
//!   the process exits ([`flush_at_exit`], an `atexit` handler). Channels whose sends
//!   were all acknowledged are left alone: their receiver may have exited, and a
//!   flush toward it would wait for the engine's timeout (5 s); a flag not yet updated
//!   (the ack arrived after the rank's last progress) costs at most
//!   [`EXIT_FLUSH_WAIT`]. Ack segments and
//!   inboxes are not flushed (a peer that needs an ack or a reply is alive and the
//!   engine resends).
//! * Messages up to [`NET_SHORT_DEFAULT`] bytes (`MYRIX_MPI_NET_SHORT`) go inline in
//!   postboxes to a remote rank (see the measurement in `docs/mpi.md`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once, Weak};

use myrix_rsm::{BarrierType, Controller, Import, NodeId, SegmentId};

use crate::p2p::fabric::Rank;

pub mod card;

/// The segment id of every rank's network inbox.
pub const NET_INBOX: SegmentId = SegmentId(SegmentId::USER_BASE | 0x4d50_0001);

/// Default largest message sent inline to a rank on another node: 16 postboxes, which
/// a batch window puts as one frame (the pool protocol takes two: the block, then the
/// postbox). Measured across two namespaces (`docs/mpi-net.md`, "Across namespaces"):
/// frames per message 2.0 (96 B) to 2.45 (880 B) inline against 3.0 in the pool.
pub const NET_SHORT_DEFAULT: usize = 880;

/// The short limit toward other nodes: `MYRIX_MPI_NET_SHORT`, bounded like
/// `MYRIX_MPI_SHORT` (at most 56 bytes per postbox of the queue less one).
pub fn net_short(queue: u32, eager: usize) -> Result<usize, String> {
    let max = super::config::CONT_INLINE * (queue as usize - 1);
    match std::env::var("MYRIX_MPI_NET_SHORT") {
        Err(_) => Ok(NET_SHORT_DEFAULT.min(max).min(eager)),
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if n <= max && n <= eager => Ok(n),
            _ => Err(format!(
                "MYRIX_MPI_NET_SHORT={v:?}: must be a number up to {} (56 bytes per \
                 postbox, queue - 1 postboxes, and at most the eager limit)",
                max.min(eager)
            )),
        },
    }
}

/// How long a receiver's progress must have found nothing to do before it puts the
/// acks it staged for other nodes: `MYRIX_MPI_NET_ACK_IDLE_US` (default
/// [`ACK_IDLE_DEFAULT_US`]). They also leave once 32 are staged, and ride with the
/// rank's next message to their peer once 8 are.
pub fn ack_idle() -> std::time::Duration {
    let us = std::env::var("MYRIX_MPI_NET_ACK_IDLE_US")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(ACK_IDLE_DEFAULT_US)
        .min(1_000_000);
    std::time::Duration::from_micros(us)
}

/// The default of `MYRIX_MPI_NET_ACK_IDLE_US`: longer than a ping-pong's round trip
/// across a veth (5–10 µs), so a rank waiting for a reply does not send its staged acks
/// as a datagram of their own (they ride with a later message), yet short beside what
/// a sender out of postboxes would notice.
pub const ACK_IDLE_DEFAULT_US: u64 = 50;

/// The RSM node of `rank` on the network controller.
pub fn node_of_rank(rank: Rank) -> NodeId {
    NodeId(rank + 1)
}

/// The rank of a network controller's node (inverse of [`node_of_rank`]).
pub fn rank_of_node(node: NodeId) -> Option<Rank> {
    node.0.checked_sub(1)
}

/// An interface's IPv4 address as `getifaddrs(3)` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IfaceAddr {
    pub name: String,
    pub ip: Ipv4Addr,
    /// The length of its network prefix (from the netmask).
    pub prefix: u8,
}

/// The IPv4 address of interface `name`, or of the first up, non-loopback interface
/// with one when `name` is None; None if there is none.
pub fn iface_ipv4(name: Option<&str>) -> Option<Ipv4Addr> {
    iface_addr(name).map(|a| a.ip)
}

/// [`iface_ipv4`] with the interface's name and prefix length.
pub fn iface_addr(name: Option<&str>) -> Option<IfaceAddr> {
    myrix_mx::transport::ifaddrs::addrs()
        .into_iter()
        .find_map(|a| {
            let IpAddr::V4(ip) = a.ip else {
                return None;
            };
            let take = match name {
                Some(n) => a.name == n,
                None => a.up && !a.loopback && !ip.is_loopback(),
            };
            take.then_some(IfaceAddr {
                name: a.name,
                ip,
                prefix: a.prefix,
            })
        })
}

/// The interfaces of this rank's rails (see the module docs): `MYRIX_MPI_IFACE`'s
/// (comma-separated, each with an IPv4 address, at most 8), else the first up,
/// non-loopback one with an IPv4 address, else none (then `127.0.0.1`).
pub fn rail_ifaces() -> Result<Vec<IfaceAddr>, String> {
    let ifs = match std::env::var("MYRIX_MPI_IFACE") {
        Ok(list) if !list.trim().is_empty() => list
            .split(',')
            .map(|name| {
                let name = name.trim();
                iface_addr(Some(name)).ok_or_else(|| {
                    format!("MYRIX_MPI_IFACE={list:?}: {name:?}: no such interface with an IPv4 address")
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => iface_addr(None).into_iter().collect(),
    };
    if ifs.len() > 8 {
        return Err("MYRIX_MPI_IFACE: at most 8 interfaces (rails)".into());
    }
    Ok(ifs)
}

/// The addresses this rank's UDP endpoints bind, one per rail (see the module docs):
/// each interface's address and a port free now. `MYRIX_MPI_IFACE` may name several
/// interfaces, comma-separated (`eth0,eth1`): rail `r` joins every rank's `r`-th.
pub fn local_endpoint() -> Result<Vec<SocketAddr>, String> {
    udp_endpoints(&rail_ifaces()?)
}

fn udp_endpoints(ifs: &[IfaceAddr]) -> Result<Vec<SocketAddr>, String> {
    let ips: Vec<Ipv4Addr> = if ifs.is_empty() {
        vec![Ipv4Addr::LOCALHOST]
    } else {
        ifs.iter().map(|a| a.ip).collect()
    };
    ips.into_iter()
        .map(|ip| {
            let s =
                UdpSocket::bind((ip, 0)).map_err(|e| format!("binding a UDP port on {ip}: {e}"))?;
            s.local_addr().map_err(|e| format!("UDP port on {ip}: {e}"))
        })
        .collect()
}

/// What this rank publishes with its card for the network side (see [`card`]): the
/// `MYRIX_MPI_NET` choice, its UDP endpoints and, unless the choice is `udp`, its
/// raw-Ethernet boards when it can open a packet socket on every rail's interface.
/// An error (a bad `MYRIX_MPI_NET` or `MYRIX_MPI_IFACE`, no UDP port, `eth` chosen
/// without the right to raw sockets) is reported if the job spans nodes.
pub fn local_card() -> Result<String, String> {
    let kind = card::net_kind()?;
    let ifs = rail_ifaces()?;
    let udp = if kind == card::NetKind::Eth {
        Vec::new()
    } else {
        udp_endpoints(&ifs)?
    };
    let eth = if kind == card::NetKind::Udp || ifs.is_empty() {
        None
    } else {
        match card::probe_eth(&ifs) {
            Ok(b) => Some(b),
            Err(e) if kind == card::NetKind::Eth => return Err(format!("MYRIX_MPI_NET=eth: {e}")),
            Err(_) => None,
        }
    };
    if kind == card::NetKind::Eth && eth.is_none() {
        return Err(
            "MYRIX_MPI_NET=eth: no interface for raw Ethernet (set MYRIX_MPI_IFACE)".into(),
        );
    }
    Ok(card::NetCard { kind, udp, eth }.encode())
}

/// The network controller this process opened for the job (None on one node): other
/// parts of the library (one-sided windows spanning nodes) use the same node.
pub fn controller() -> Option<Controller> {
    NET_CTL.get().cloned()
}

static NET_CTL: std::sync::OnceLock<Controller> = std::sync::OnceLock::new();

/// Opens the network controller as `me`'s node from every rank's published
/// [`local_card`] (`-` for a rank that could not make one): `eth` or `udp` as
/// [`card::choose`] decides, every rank at its published boards (one per rail).
pub fn open_controller(me: Rank, cards: &[String]) -> Result<Controller, String> {
    let cards = cards
        .iter()
        .enumerate()
        .map(|(r, c)| {
            card::NetCard::decode(c).ok_or_else(|| {
                format!("rank {r} has no network endpoint (it could not make one: see its error)")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (kind, table) = card::choose(&cards)?;
    let c = Controller::net(
        kind,
        node_of_rank(me),
        table,
        myrix_rsm::net::default_config(),
    )
    .map_err(|e| format!("{kind}: {e}"))?;
    let _ = NET_CTL.set(c.clone());
    Ok(c)
}

type ExitList = Mutex<Vec<(Weak<Import>, Arc<AtomicBool>)>>;

fn exit_list() -> &'static ExitList {
    static L: ExitList = Mutex::new(Vec::new());
    &L
}

fn ack_list() -> &'static Mutex<Vec<super::window::NetFlush>> {
    static L: Mutex<Vec<super::window::NetFlush>> = Mutex::new(Vec::new());
    &L
}

fn exit_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        // SAFETY: registers a function with no arguments that never unwinds.
        unsafe { libc::atexit(exit_flush) };
    });
}

/// Registers a lazy ack window: its staged acks are put at exit (no wait).
pub fn flush_acks_at_exit(f: &super::window::NetFlush) {
    exit_hook();
    ack_list()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(f.clone());
}

/// Registers a channel area's import for the flush at exit; the returned flag says
/// whether its channel has unacknowledged sends (the fabric keeps it current).
pub fn flush_at_exit(area: &Arc<Import>) -> Arc<AtomicBool> {
    exit_hook();
    let busy = Arc::new(AtomicBool::new(false));
    let mut l = exit_list().lock().unwrap_or_else(|p| p.into_inner());
    l.retain(|(w, _)| w.strong_count() > 0);
    l.push((Arc::downgrade(area), busy.clone()));
    busy
}

/// How long the flush at exit waits at most: a live peer answers within a round
/// trip and a few resends (5 ms each); a peer that exited never does.
pub const EXIT_FLUSH_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// Flushes the busy channel areas now, each on a thread of its own, waiting at most
/// [`EXIT_FLUSH_WAIT`] for all (what the `atexit` handler does).
pub fn flush_busy() {
    if let Ok(acks) = ack_list().try_lock() {
        for f in acks.iter() {
            f.flush();
        }
    }
    let list: Vec<_> = match exit_list().try_lock() {
        Ok(l) => l.clone(),
        Err(_) => return,
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let mut n = 0;
    for (w, busy) in list {
        if !busy.load(Ordering::Relaxed) {
            continue;
        }
        let Some(i) = w.upgrade() else { continue };
        let tx = tx.clone();
        let spawned = std::thread::Builder::new()
            .name("myrix-mpi-exit".into())
            .spawn(move || {
                if let Ok(mut b) = i.init_barrier(BarrierType::Segment) {
                    if b.open().is_ok() {
                        let _ = b.close();
                    }
                }
                let _ = tx.send(());
            });
        n += usize::from(spawned.is_ok());
    }
    let end = std::time::Instant::now() + EXIT_FLUSH_WAIT;
    for _ in 0..n {
        let left = end.saturating_duration_since(std::time::Instant::now());
        if rx.recv_timeout(left).is_err() {
            return;
        }
    }
}

extern "C" fn exit_flush() {
    let _ = std::panic::catch_unwind(flush_busy);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_and_addresses() {
        assert_eq!(rank_of_node(node_of_rank(7)), Some(7));
        assert_eq!(rank_of_node(NodeId(0)), None);
        assert_eq!(iface_ipv4(Some("lo")), Some(Ipv4Addr::LOCALHOST));
        assert_eq!(iface_ipv4(Some("no-such-iface0")), None);
        let a = local_endpoint().unwrap();
        assert_eq!(a.len(), 1);
        assert_ne!(a[0].port(), 0);
        assert!(net_short(64, 65536).unwrap() <= 56 * 63);
    }
}
