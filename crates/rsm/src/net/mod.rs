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
//! * [`bundle`] — several RSM frames to one peer in one datagram (a write and its
//!   flush leave in one send);
//! * [`export`], [`import`] — the two ends, as the front end's backends; `import` also
//!   stripes puts across rails and fails over.
//! * `ending` — the drain and the bye when the controller is released.
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
//! drive the endpoint themselves ([`Net::wait`]: spinning while the machine has a core
//! for it, else asleep on the sockets and an eventfd kick), and so does an exporter
//! polling its memory (`Export::load_u64`), so their latency does not depend on the
//! agent; while they do, the agent naps rather than being woken by every frame. The
//! importer's agent keeps pipelined puts flowing after `put` returns.
//!
//! One controller per board and process: opening `udp` again in the process gives the
//! same controller (a second bind of the port would fail).

pub(crate) mod agent;
pub(crate) mod bundle;
mod ending;
pub(crate) mod export;
pub(crate) mod import;
pub(crate) mod memory;
pub mod node_table;
pub(crate) mod signal;

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, TryLockError, Weak};
use std::time::{Duration, Instant};

use myrix_mx::Endpoint;
use myrix_rsm_proto::engine::{Config, Engine};
use myrix_rsm_proto::hash::FastMap;
use myrix_rsm_proto::{Credentials, NodeId, Perm, RsmError, SegmentId};

use crate::backend::{CtlrBackend, ExportBackend, ImportBackend};
use crate::{ControllerAttr, ExportFlags};
use agent::{lock, Addr, Core, CoreLock, RsmProtocol};
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

/// A polling caller stamps its activity every this many polls ([`Net::mark_polling`]).
const MARK_POLLS: u32 = 8;
/// How often the machine's load is looked at ([`Net::may_spin`]).
const LOAD_RECHECK_NS: u64 = 10_000_000;
/// The longest a waiting caller sleeps on the sockets before it polls again.
const WAIT_BLOCK_MAX: Duration = Duration::from_millis(1);

/// One rail: an endpoint on one of the node's boards, with its own engine.
pub(crate) struct Rail {
    pub(crate) board: String,
    pub(crate) ep: Mutex<Endpoint>,
    pub(crate) core: Arc<CoreLock>,
    /// Where each node is on this rail (nodes with fewer boards are absent).
    addrs: FastMap<NodeId, Addr>,
    /// Put bytes this process queued on the rail.
    pub(crate) bytes_put: AtomicU64,
    /// Nodes an import failed over from on this rail: later connects leave the rail
    /// out for them until its engine has resynchronised with the node (then they, and
    /// the live imports, take it up again: `import.rs`).
    pub(crate) failed: Mutex<std::collections::HashSet<NodeId>>,
    /// The endpoint's socket (owned by the endpoint, open while the rail lives): what a
    /// waiting caller sleeps on when the machine has no core to spin on.
    wait_fd: Option<RawFd>,
    /// The last progress on the rail took frames in: the socket may hold a backlog
    /// ([`Rail::progress`]).
    backlog: AtomicBool,
    /// The longest write that travels as one frame on this rail (the engine's MTU less
    /// a write's head): what a write must fit to be stored first word last.
    pub(crate) one_write: usize,
}

impl Rail {
    /// One progress of the endpoint (the caller holds it); returns the frames taken in.
    /// `polling`: a poll of a loop ([`Endpoint::poll`], the clock read every few polls).
    ///
    /// The UDP transport returns after the first short frame (in a ping-pong, asking
    /// again costs a system call to learn the socket is empty). Under a backlog (two
    /// progresses in a row took frames in: a stream, a flood of resends) that lets the
    /// socket overflow: a caller whose progress also sends reads one frame per call
    /// while the peer resends whole windows, until the kernel drops most of them and
    /// the peer is declared unreachable (seen with every MPI message on one rail after
    /// a fail-over). So then it takes frames in until the socket is empty, at most
    /// [`DRAIN_MAX`] progresses.
    fn progress(&self, ep: &mut Endpoint, polling: bool) -> usize {
        let first = if polling { ep.poll() } else { ep.progress() };
        let mut got = first.unwrap_or(0);
        if got > 0 && self.backlog.load(Ordering::Relaxed) {
            for _ in 1..DRAIN_MAX {
                let n = ep.progress().unwrap_or(0);
                got += n;
                if n == 0 {
                    break;
                }
            }
        }
        self.backlog.store(got > 0, Ordering::Relaxed);
        got
    }
}

/// The most progresses [`Rail::progress`] makes to empty a socket with a backlog.
const DRAIN_MAX: usize = 64;

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
    /// When (ns since `epoch`) the application last drove an endpoint: while that is
    /// recent the agent leaves the sockets to it.
    pub(crate) app_at: AtomicU64,
    /// Polls since the last [`Net::mark_polling`] stamp (racy on purpose: a count lost
    /// between two polling threads only delays a stamp).
    mark_polls: AtomicU32,
    /// When (ns since `epoch`, 0: never) the machine's load was last looked at, and
    /// whether it then had a core for every busy process ([`Net::may_spin`]).
    load_at: AtomicU64,
    spin_ok: AtomicBool,
    /// Callers asleep on the sockets in [`Net::wait_with`], and how they are woken
    /// when another thread took in the frame they wait for.
    waiters: AtomicU32,
    kick: Kick,
}

/// An eventfd that wakes callers asleep in `poll(2)`.
struct Kick(OwnedFd);

impl Kick {
    #[allow(unsafe_code)]
    fn new() -> std::io::Result<Kick> {
        // SAFETY: creates a new descriptor; no memory is passed.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        Ok(Kick(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    #[allow(unsafe_code)]
    fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our own eventfd.
        let _ = unsafe { libc::write(self.0.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    #[allow(unsafe_code)]
    fn drain(&self) {
        let mut v: u64 = 0;
        // SAFETY: reads 8 bytes into a live u64 from our own non-blocking eventfd.
        let _ = unsafe { libc::read(self.0.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
    }
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
            let mut addrs = FastMap::default();
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
            // Room for a bundle's head in the endpoint's datagram (`bundle.rs`).
            let mtu = ep.config().mtu - bundle::HEAD;
            cfg.mtu = mtu;
            // At least 16 frames in flight: on a link of 64 KiB frames the 256 KiB
            // window is 4 frames, the exporter acks every 4th (`ack_after`), and a
            // large put went stop-and-wait (docs/mpi-net.md, "Session 25").
            cfg.write_window = cfg.write_window.max(16 * mtu);
            let mut engine = Engine::new(cfg, node, session);
            for (n, a) in &addrs {
                engine.add_node(*a, *n);
            }
            let core = Arc::new(CoreLock::new(Core::new(engine, r)));
            ep.attach(Box::new(RsmProtocol::new(core.clone())))
                .map_err(|e| bad(format!("cannot attach RSM: {e}")))?;
            fds.push(ep.wait_fd());
            let wait_fd = ep.wait_fd();
            rails.push(Rail {
                wait_fd,
                board: board.open_string(),
                ep: Mutex::new(ep),
                core,
                addrs,
                bytes_put: AtomicU64::new(0),
                backlog: AtomicBool::new(false),
                one_write: mtu.saturating_sub(myrix_wire::rsm::WRITE_HEAD),
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
            app_at: AtomicU64::new(0),
            mark_polls: AtomicU32::new(0),
            load_at: AtomicU64::new(0),
            spin_ok: AtomicBool::new(false),
            waiters: AtomicU32::new(0),
            kick: Kick::new().map_err(|e| bad(format!("cannot make an eventfd: {e}")))?,
        });
        for (r, fd) in fds.into_iter().enumerate() {
            agent::spawn_agent(&net, r, fd).map_err(|e| bad(format!("cannot start agent: {e}")))?;
        }
        Ok(net)
    }

    /// Whether the machine has a core for every busy process (the project's spin rule,
    /// [`crate::spin::oversubscribed`]), looked at every [`LOAD_RECHECK_NS`].
    pub(crate) fn may_spin(&self) -> bool {
        let now = self.epoch.elapsed().as_nanos() as u64 + 1;
        let at = self.load_at.load(Ordering::Relaxed);
        if at == 0 || now.saturating_sub(at) >= LOAD_RECHECK_NS {
            self.load_at.store(now, Ordering::Relaxed);
            // The machine's cores, not this thread's affinity (a pinned process has 1).
            let ok = crate::spin::cores() > 1 && !crate::spin::oversubscribed();
            self.spin_ok.store(ok, Ordering::Relaxed);
            return ok;
        }
        self.spin_ok.load(Ordering::Relaxed)
    }

    /// The application drives the endpoints now, so the agent leaves the sockets to it.
    /// Also on an oversubscribed machine: the caller polls anyway (yielding between
    /// polls, or asleep on the sockets in a wait, woken by the frame itself), and an
    /// agent woken by every frame as well only adds a thread wake-up per frame, on a
    /// machine that has no core to spare for it (session 21: the exporter's agent was
    /// woken for every frame of a ping-pong while its application polled).
    fn mark_active(&self) {
        let now = self.epoch.elapsed().as_nanos() as u64 + 1;
        self.app_at.store(now, Ordering::Relaxed);
    }

    /// [`Net::mark_active`] for a poll of a loop: the clock is read every
    /// [`MARK_POLLS`] polls only (a stamp a few polls old still says the application
    /// polls; a clock read per poll was a tenth of an idle poll's instructions).
    fn mark_polling(&self) {
        let n = self.mark_polls.load(Ordering::Relaxed).wrapping_add(1);
        self.mark_polls.store(n, Ordering::Relaxed);
        if n % MARK_POLLS == 0 || self.app_at.load(Ordering::Relaxed) == 0 {
            self.mark_active();
        }
    }

    /// How much longer the application counts as driving the endpoints (it did in the
    /// last [`agent::APP_ACTIVE_NS`]); `None` if it does not.
    pub(crate) fn app_active_for(&self) -> Option<Duration> {
        let at = self.app_at.load(Ordering::Relaxed);
        let since = (self.epoch.elapsed().as_nanos() as u64).saturating_sub(at);
        (at != 0 && since < agent::APP_ACTIVE_NS)
            .then(|| Duration::from_nanos(agent::APP_ACTIVE_NS - since))
    }

    /// Frames were taken in (by the agent or a caller): a caller asleep in
    /// [`Net::wait_with`] may have been waiting for one of them.
    pub(crate) fn took_frames(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            self.kick.wake();
        }
    }

    /// Moves frames now on every rail (sends what calls queued, takes in what arrived),
    /// waiting for an endpoint the agent holds.
    pub(crate) fn progress(&self) {
        self.mark_active();
        let mut got = 0;
        for r in &self.rails {
            got += r.progress(&mut lock(&r.ep), false);
        }
        if got > 0 {
            self.took_frames();
        }
    }

    /// Sends what calls queued on every rail, without receiving (a call that only
    /// queued frames: a receive first would cost a system call before the send; the
    /// frames that arrived are taken in by the next wait, poll or the agent).
    pub(crate) fn transmit(&self) {
        for r in &self.rails {
            let _ = lock(&r.ep).transmit();
        }
    }

    /// [`Net::progress`] on the rails nobody else is driving right now: a poll of a
    /// wait, where a rail the agent holds is being driven anyway.
    pub(crate) fn try_progress(&self) {
        self.try_progress_at(true);
    }

    /// [`Net::try_progress`]; `polling`: the polls are close together (a spin), so
    /// the clock may be read every few of them; else (a poll after a sleep) it is read.
    fn try_progress_at(&self, polling: bool) {
        if polling {
            self.mark_polling();
        } else {
            self.mark_active();
        }
        let mut got = 0;
        for r in &self.rails {
            got += match r.ep.try_lock() {
                Ok(mut ep) => r.progress(&mut ep, polling),
                Err(TryLockError::Poisoned(p)) => r.progress(&mut p.into_inner(), polling),
                Err(TryLockError::WouldBlock) => 0,
            };
        }
        if got > 0 {
            self.took_frames();
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

    /// Polls `f`, driving progress between polls, until it gives a value or `timeout`
    /// passes (`None`: never). While the machine has a core for every busy process the
    /// caller spins (a long wait then sleeps 50 µs between polls); when it has not, the
    /// caller sleeps on the sockets and is woken by the next frame (or by the thread
    /// that took it in): a woken thread gets the core at once, where one that yields
    /// may wait a whole time slice of another process.
    pub(crate) fn wait_with<T>(
        &self,
        timeout: Option<Duration>,
        mut f: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut polls = 0u32;
        // Whether the last poll was followed by a sleep: the next reads the clock.
        let mut slept = false;
        loop {
            if let Some(v) = f() {
                return Some(v);
            }
            let left = match deadline {
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return None;
                    }
                    Some(d - now)
                }
                None => None,
            };
            self.try_progress_at(!slept);
            slept = false;
            polls = polls.saturating_add(1);
            if polls < 64 {
                std::hint::spin_loop();
            } else if self.may_spin() {
                if polls < 20_000 {
                    std::hint::spin_loop();
                } else {
                    std::thread::sleep(Duration::from_micros(50));
                    slept = true;
                }
            } else {
                self.waiters.fetch_add(1, Ordering::SeqCst);
                // Again after announcing ourselves: a frame taken in by another thread
                // from now on kicks us.
                if let Some(v) = f() {
                    self.waiters.fetch_sub(1, Ordering::SeqCst);
                    return Some(v);
                }
                let nap = left.map_or(WAIT_BLOCK_MAX, |l| l.min(WAIT_BLOCK_MAX));
                self.sleep_on_sockets(nap);
                self.waiters.fetch_sub(1, Ordering::SeqCst);
                slept = true;
            }
        }
    }

    /// Sleeps until a frame arrives on a rail, a kick, or `d`.
    #[allow(unsafe_code)]
    fn sleep_on_sockets(&self, d: Duration) {
        let mut fds: Vec<libc::pollfd> = self
            .rails
            .iter()
            .filter_map(|r| r.wait_fd)
            .chain(std::iter::once(self.kick.0.as_raw_fd()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let ts = libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        };
        // SAFETY: live pollfds and their count; a live timespec; no signal mask. The
        // sockets stay open while `self` (their endpoints) lives.
        let _ = unsafe {
            libc::ppoll(
                fds.as_mut_ptr(),
                fds.len() as libc::nfds_t,
                &ts,
                std::ptr::null(),
            )
        };
        if fds.last().is_some_and(|p| p.revents != 0) {
            self.kick.drain();
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

    fn drain(&self) -> bool {
        self.net.drain()
    }

    fn leave(&self) -> bool {
        self.net.leave()
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
