//! The network controllers `udp` and `eth`: RSM between nodes that share no memory.
//!
//! A node is **one process's endpoint**: the process that opens the controller as node
//! N opens an MX endpoint on the board the node table gives N (`udp:IP:PORT` or
//! `eth:IFACE`, see [`node_table`]) and attaches the sans-IO RSM engine
//! (`myrix_rsm_proto::engine`) to it as an `mx::protocol::Protocol`: RSM frames (tag
//! `0x52`) travel beside MX's on the same socket, with the MX engine's reliability
//! layer inside the RSM engine. The topology is the table's nodes.
//!
//! * [`node_table`] — the documented table file and its parser;
//! * [`agent`] — the engine behind a lock, the `Protocol` wrapper and the progress
//!   thread;
//! * [`memory`] — the exporter's segments as the engine's `Memory` (raw pointers);
//! * [`signal`] — per-handle signal mailboxes with an eventfd each (the pollfd);
//! * [`export`], [`import`] — the two ends, as the front end's backends; `import` also
//!   stripes puts across rails and fails over.
//!
//! **Rails.** A node with several boards in the table has several rails: one MX
//! endpoint, one engine and one agent thread per board. Exports are published on
//! every rail; an import connects on every rail that reaches the node.
//!
//! **One-sided for real: a progress thread per exporting process.** A put or get must
//! complete without the exporting application calling the library. Two designs serve
//! remote accesses while it computes: a thread in each process (chosen), or one agent
//! process per host that owns the interfaces and reaches every exporter's memory (as
//! Open-MX's kernel driver emulates the NIC). The thread wins here because:
//! * it reaches the segment with a plain copy in the same address space; an agent
//!   process would need every segment in shared memory (caller memory given to
//!   `export_create_at` too, which the shm controller can only do by remapping it in
//!   place) and a second hop (importer → agent → memory) on every access;
//! * it costs nothing when idle: it sleeps in `poll(2)` on the endpoint's socket (a
//!   descriptor `mx::Endpoint::wait_fd` hands out) and wakes when a frame arrives or
//!   the engine's next timer is due (at most every 20 ms), not on a period;
//! * a crashed process takes its segments and its agent with it; no daemon to start,
//!   secure or keep alive, and no privileges (the per-host agent would own raw
//!   Ethernet sockets for everybody);
//! * its price, one extra thread per process and a wake-up (a few µs) on the exporter
//!   for each burst of frames, is measured in `docs/rsm-net.md`.
//!
//! Calls that wait (connect, get, barrier close, implicit-mode puts, signal waits)
//! drive the endpoint themselves, spinning then yielding then sleeping briefly
//! ([`Net::wait`]), so their latency does not depend on the agent. The importer's agent
//! keeps pipelined puts flowing after `put` returns.
//!
//! One controller per board and process: opening `udp` again in the process gives the
//! same controller (a second bind of the port would fail).

pub(crate) mod agent;
pub(crate) mod export;
pub(crate) mod import;
pub(crate) mod memory;
pub mod node_table;
pub(crate) mod signal;

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use myrix_mx::Endpoint;
use myrix_rsm_proto::engine::{Config, Engine};
use myrix_rsm_proto::{Credentials, NodeId, Perm, RsmError, SegmentId};

use crate::backend::{CtlrBackend, ExportBackend, ImportBackend};
use crate::spin::SpinWait;
use crate::{ControllerAttr, ExportFlags};
use agent::{lock, Addr, Core, RsmProtocol};
use node_table::{Board, NodeTable, NodeTableError};

/// The largest segment a network controller exports: 4 GiB (a get is at most
/// `Config::max_get`, 1 GiB, at a time; puts are cut in 1 MiB pieces).
pub(crate) const MAX_SEGMENT: usize = 1 << 32;

/// Protocol parameters for the network controllers: the engine's defaults with timers
/// for a local network (an unanswered frame is resent after 5 ms, a peer silent for
/// 5 s is unreachable).
pub fn default_config() -> Config {
    Config {
        ack_delay_ns: 200_000,
        resend_ns: 5_000_000,
        timeout_ns: 5_000_000_000,
        ..Config::default()
    }
}

/// One rail: an endpoint on one of the node's boards, with its own engine.
pub(crate) struct Rail {
    pub(crate) board: String,
    pub(crate) ep: Mutex<Endpoint>,
    pub(crate) core: Arc<Mutex<Core>>,
    /// Where each node is on this rail (nodes with fewer boards are absent).
    addrs: HashMap<NodeId, Addr>,
    /// Put bytes this process queued on the rail.
    pub(crate) bytes_put: AtomicU64,
    /// Nodes an import failed over from on this rail: later connects leave the rail
    /// out for them (the engines cannot resynchronise on it; see docs/rsm-net.md).
    pub(crate) failed: Mutex<std::collections::HashSet<NodeId>>,
}

/// A rail's counters ([`crate::Controller::rail_stats`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RailStats {
    /// The board (`udp:127.0.0.1:7001`, `eth:veth0`).
    pub board: String,
    /// Put bytes this process queued on the rail (replays after a fail-over included).
    pub bytes_put: u64,
    /// Frames the rail's engine sent and received.
    pub frames_out: u64,
    pub frames_in: u64,
    /// Whether the rail is marked down ([`crate::Controller::set_rail_down`]).
    pub down: bool,
}

/// A network controller's state, shared by its handles and (weakly) its agents.
pub(crate) struct Net {
    pub(crate) kind: &'static str,
    pub(crate) node: NodeId,
    pub(crate) table: NodeTable,
    pub(crate) rails: Vec<Rail>,
    /// No later than the endpoints' clock origin: the agents' deadlines.
    pub(crate) epoch: Instant,
    pub(crate) page: usize,
    pub(crate) who: Credentials,
    /// Rounds the agent made (woken by a frame or a timer): its cost, for the docs.
    pub(crate) agent_rounds: AtomicU64,
}

fn conf(e: NodeTableError) -> RsmError {
    // The front end's errors carry no text: say what was wrong where a person sees it.
    eprintln!("myrix-rsm: {e}");
    RsmError::BadConf
}

impl Net {
    fn open(
        kind: &'static str,
        node: NodeId,
        table: NodeTable,
        cfg: Config,
    ) -> Result<Arc<Net>, NodeTableError> {
        let bad = |why: String| NodeTableError { line: 0, why };
        let boards = table.boards(node).ok_or_else(|| {
            bad(format!(
                "node {} (this process) is not in the table",
                node.0
            ))
        })?;
        if boards[0].kind() != kind {
            return Err(bad(format!(
                "node {}'s board is {}, not a {kind} board",
                node.0,
                boards[0].kind()
            )));
        }
        for (n, b) in table.iter() {
            if b.kind() != kind {
                return Err(bad(format!(
                    "node {} has a {} board; a {kind} controller needs {kind} boards",
                    n.0,
                    b.kind()
                )));
            }
        }
        let epoch = Instant::now();
        let session = (std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(1)
            & 0x7fff_ffff) as u32
            | 1;
        let mut rails = Vec::new();
        let mut fds = Vec::new();
        for (r, board) in boards.iter().enumerate() {
            let mut addrs = HashMap::new();
            for n in table.nodes() {
                if let Some(b) = table.boards(n).and_then(|bs| bs.get(r)) {
                    addrs.insert(
                        n,
                        match b {
                            Board::Udp(a) => Addr::Udp(*a),
                            Board::Eth { mac, .. } => Addr::Eth(*mac),
                        },
                    );
                }
            }
            let mut ep = Endpoint::open(&board.open_string(), 0, 0)
                .map_err(|e| bad(format!("cannot open {}: {e}", board.open_string())))?;
            let mut cfg = cfg.clone();
            cfg.mtu = ep.config().mtu;
            let mut engine = Engine::new(cfg, node, session);
            for (n, a) in &addrs {
                engine.add_node(*a, *n);
            }
            let core = Arc::new(Mutex::new(Core::new(engine, r)));
            ep.attach(Box::new(RsmProtocol { core: core.clone() }))
                .map_err(|e| bad(format!("cannot attach RSM: {e}")))?;
            fds.push(ep.wait_fd());
            rails.push(Rail {
                board: board.open_string(),
                ep: Mutex::new(ep),
                core,
                addrs,
                bytes_put: AtomicU64::new(0),
                failed: Mutex::new(Default::default()),
            });
        }
        let (uid, gid, _pid) = crate::shm::mem::whoami();
        let net = Arc::new(Net {
            kind,
            node,
            table,
            rails,
            epoch,
            page: crate::shm::mem::page_size(),
            who: Credentials { uid, gid },
            agent_rounds: AtomicU64::new(0),
        });
        for (r, fd) in fds.into_iter().enumerate() {
            agent::spawn_agent(&net, r, fd).map_err(|e| bad(format!("cannot start agent: {e}")))?;
        }
        Ok(net)
    }

    /// Moves frames now on every rail (sends what calls queued, takes in what arrived).
    pub(crate) fn progress(&self) {
        for r in &self.rails {
            let _ = lock(&r.ep).progress();
        }
    }

    /// [`Net::wait_with`] on one rail's core.
    pub(crate) fn wait<T>(
        &self,
        rail: usize,
        timeout: Option<Duration>,
        mut f: impl FnMut(&mut Core) -> Option<T>,
    ) -> Option<T> {
        self.wait_with(timeout, || f(&mut lock(&self.rails[rail].core)))
    }

    /// Polls `f`, driving progress between polls (spin, then yield, then sleep 50 µs),
    /// until it gives a value or `timeout` passes (`None`: never).
    pub(crate) fn wait_with<T>(
        &self,
        timeout: Option<Duration>,
        mut f: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let deadline = timeout.map(|t| Instant::now() + t);
        // Made after the first polls: it reads /proc/loadavg, which a short wait (a get
        // on a quiet network) should not pay for.
        let mut sw: Option<SpinWait> = None;
        let mut polls = 0u32;
        loop {
            if let Some(v) = f() {
                return Some(v);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return None;
            }
            self.progress();
            polls = polls.saturating_add(1);
            if polls < 64 {
                std::hint::spin_loop();
            } else if polls < 2_000 {
                sw.get_or_insert_with(SpinWait::new).spin();
            } else if polls < 4_000 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    pub(crate) fn addr_of(&self, rail: usize, node: NodeId) -> Option<Addr> {
        self.rails.get(rail)?.addrs.get(&node).copied()
    }

    /// The agent's rounds so far.
    pub(crate) fn agent_rounds(&self) -> u64 {
        self.agent_rounds.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Open controllers of this process, by kind and node: a second `get` shares the first.
type Registry = Mutex<HashMap<(String, u32), Weak<Net>>>;

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A network controller's backend.
pub(crate) struct NetCtlr {
    pub(crate) net: Arc<Net>,
}

impl NetCtlr {
    /// Controller `kind` (`udp`, `eth`) as node `node` of `table`.
    pub(crate) fn open(
        kind: &'static str,
        node: NodeId,
        table: NodeTable,
        cfg: Config,
    ) -> Result<NetCtlr, NodeTableError> {
        let mut reg = lock(registry());
        let key = (kind.to_string(), node.0);
        if let Some(net) = reg.get(&key).and_then(Weak::upgrade) {
            if net.table != table {
                return Err(NodeTableError {
                    line: 0,
                    why: format!(
                        "{kind} node {} is already open in this process with another table",
                        node.0
                    ),
                });
            }
            return Ok(NetCtlr { net });
        }
        let net = Net::open(kind, node, table, cfg)?;
        reg.insert(key, Arc::downgrade(&net));
        Ok(NetCtlr { net })
    }

    /// Controller `kind` from `MYRIX_RSM_NODES` / `MYRIX_RSM_NODE`: `CtlrNotPresent`
    /// when no table is configured, `BadConf` when it is wrong.
    pub(crate) fn from_env(kind: &'static str) -> Result<NetCtlr, RsmError> {
        if std::env::var_os("MYRIX_RSM_NODES").is_none() {
            return Err(RsmError::CtlrNotPresent);
        }
        let (node, table) = NodeTable::from_env().map_err(conf)?;
        Self::open(kind, node, table, default_config()).map_err(conf)
    }
}

impl CtlrBackend for NetCtlr {
    fn attr(&self) -> ControllerAttr {
        ControllerAttr {
            name: String::new(),
            kind: self.net.kind,
            local_node: self.net.node,
            page_size: self.net.page,
            max_segment_size: MAX_SEGMENT,
            map_supported: false,
        }
    }

    fn topology(&self) -> Vec<NodeId> {
        self.net.table.nodes()
    }

    fn agent_rounds(&self) -> Option<u64> {
        Some(self.net.agent_rounds())
    }

    fn rail_stats(&self) -> Vec<RailStats> {
        self.net
            .rails
            .iter()
            .map(|r| {
                let c = lock(&r.core);
                let st = c.engine.stats();
                RailStats {
                    board: r.board.clone(),
                    bytes_put: r.bytes_put.load(std::sync::atomic::Ordering::Relaxed),
                    frames_out: st.frames_out,
                    frames_in: st.frames_in,
                    down: c.down,
                }
            })
            .collect()
    }

    fn set_rail_down(&self, rail: usize, down: bool) -> Result<(), RsmError> {
        let r = self.net.rails.get(rail).ok_or(RsmError::BadConf)?;
        lock(&r.core).down = down;
        Ok(())
    }

    fn export_create(
        &self,
        len: usize,
        flags: ExportFlags,
    ) -> Result<Box<dyn ExportBackend>, RsmError> {
        let ptr = crate::shm::mem::alloc_guarded(len)?;
        Ok(Box::new(export::NetExport::new(
            self.net.clone(),
            ptr,
            len,
            true,
            flags,
        )?))
    }

    #[allow(unsafe_code)]
    unsafe fn export_create_at(
        &self,
        ptr: *mut u8,
        len: usize,
        flags: ExportFlags,
    ) -> Result<Box<dyn ExportBackend>, RsmError> {
        if !crate::shm::mem::is_mapped(ptr, len) {
            return Err(RsmError::BadAddr);
        }
        Ok(Box::new(export::NetExport::new(
            self.net.clone(),
            ptr,
            len,
            false,
            flags,
        )?))
    }

    fn import_connect(
        &self,
        node: NodeId,
        id: SegmentId,
        perm: Perm,
    ) -> Result<Box<dyn ImportBackend>, RsmError> {
        Ok(Box::new(import::NetImport::connect(
            self.net.clone(),
            node,
            id,
            perm,
        )?))
    }
}
