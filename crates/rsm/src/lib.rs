//! Remote shared memory (RSM) as seed 004 (§2.5–2.8) and Sun's RSMAPI describe it: a
//! process *exports* a segment of memory under a segment id with an access list, other
//! processes (on this host or, through a network controller, on other hosts) *import*
//! it and put into it or get from it directly, with *barriers* that report transfer
//! errors and *signals* (remote interrupts) both ways.
//!
//! * [`Controller`] — an interconnect by name (`shm`, alias `loopback`; `udp` and
//!   `eth` from the node table `MYRIX_RSM_NODES`; `sim` gives
//!   [`RsmError::CtlrNotPresent`] until its backend exists),
//!   its attributes and topology, and the entry points that create exports and imports.
//! * [`Export`] ([`export`]) — a segment of this process's memory: publish, republish,
//!   unpublish, rebind, signals.
//! * [`Import`], [`Barrier`], [`Mapping`] ([`import`]) — a connection to a published
//!   segment: bounds-checked puts and gets, scalars, scatter/gather, barriers, signals,
//!   and on `shm` a direct mapping.
//! * [`spin`] — how a caller spin-polls a flag in a segment without starving a
//!   process that shares its core.
//! * `backend` (private) — the traits a controller implements. The front end checks
//!   every argument (bounds, alignment, permission, list sizes) and keeps barrier
//!   bookkeeping, so a backend sees only valid requests; `shm` is the first backend,
//!   network controllers plug in beside it.
//! * `shm` (private) — the `shm` controller: segments in unnamed files of
//!   `/dev/shm/myrix-rsm/`, named by abstract sockets that die with their exporter,
//!   mapped by importers in other processes (one-sided for real). Its design is in the module's own documentation and in `docs/rsm-shm.md`.
//! * [`net`] — the `udp` and `eth` controllers: the sans-IO RSM engine served beside MX
//!   on an MX endpoint, a progress thread per process for one-sided access, the node
//!   table ([`net::node_table`]). Design and costs in `docs/rsm-net.md`.
//!
//! ```
//! use myrix_rsm::{Controller, ExportFlags, Perm};
//!
//! let c = Controller::get("shm")?; // this host ("loopback" too)
//! let e = c.export_create(4096, ExportFlags::default())?; // page-aligned, zeroed
//! let id = e.publish(None, &[])?; // an id from the user range, open to all
//! // In any process on this host (here the same one):
//! let i = c.import_connect(c.local_node(), id, Perm::RDWR)?;
//! i.put(8, b"hello")?; // one-sided: the exporter calls nothing
//! let mut buf = [0u8; 5];
//! i.get(8, &mut buf)?;
//! assert_eq!(&buf, b"hello");
//! # Ok::<(), myrix_rsm::RsmError>(())
//! ```
//!
//! The plain values and errors are the sans-IO crate `myrix-rsm-proto`'s, re-exported
//! here. Every refusal is an [`RsmError`] with RSMAPI's number; no bad argument makes
//! the library panic or write outside a segment.
//!
//! `unsafe` is denied here but in the module that maps memory and makes the raw system
//! calls (`shm::mem`), at its call sites in `shm::export` (sharing memory in place), and
//! in the functions that take caller memory ([`Controller::export_create_at`],
//! [`Export::rebind`]: `unsafe fn`s passing the caller's promise on), each block with a
//! `SAFETY:` note.

#![deny(unsafe_code)]

mod backend;
pub mod export;
pub mod import;
pub mod net;
mod shm;
pub mod spin;

use std::sync::Arc;

pub use export::{Export, SignalSender};
pub use import::{Barrier, Import, IoVec, IoVecMut, Mapping, Scalar};
pub use myrix_rsm_proto::{
    AccessEntry, Acl, BarrierMode, BarrierType, Credentials, NodeId, Perm, RsmError, SegmentId,
};

use backend::CtlrBackend;

/// What a controller is and offers (RSMAPI's `rsmapi_controller_attr_t`, in Rust terms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerAttr {
    /// The name it was opened by (`shm`, `loopback`, …).
    pub name: String,
    /// The kind of interconnect: `shm`, `udp`, `eth`, `sim`.
    pub kind: &'static str,
    /// This host's node id on the interconnect.
    pub local_node: NodeId,
    /// Segment lengths and addresses are multiples of this.
    pub page_size: usize,
    /// The largest segment [`Controller::export_create`] accepts.
    pub max_segment_size: usize,
    /// Whether [`Import::map`] gives a pointer (only `shm` does).
    pub map_supported: bool,
}

/// An interconnect, by name. Cheap to clone; handles made from it keep what they need.
#[derive(Clone)]
pub struct Controller {
    name: Arc<str>,
    backend: Arc<dyn CtlrBackend>,
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Controller {
    /// The controller named `name`: `shm` (alias `loopback`): this host, node id from
    /// `MYRIX_RSM_NODE` (default 0); `udp`, `eth`: this process is node
    /// `MYRIX_RSM_NODE` of the node table in the file `MYRIX_RSM_NODES`
    /// ([`net::node_table`]); without `MYRIX_RSM_NODES` they are `CtlrNotPresent`
    /// (not configured), and a table that cannot be read or is malformed, or a node
    /// missing from it, is `BadConf` (its reason is printed to stderr). `sim` is refused with `CtlrNotPresent` until its backend is
    /// built, as is any other name.
    pub fn get(name: &str) -> Result<Controller, RsmError> {
        let backend: Arc<dyn CtlrBackend> = match name {
            "shm" | "loopback" => Arc::new(shm::ShmCtlr::open()?),
            "udp" => Arc::new(net::NetCtlr::from_env("udp")?),
            "eth" => Arc::new(net::NetCtlr::from_env("eth")?),
            _ => return Err(RsmError::CtlrNotPresent),
        };
        Ok(Controller {
            name: name.into(),
            backend,
        })
    }

    /// Controller `udp` as node `node` of `table`, without the environment (tests,
    /// programs that build their table). Errors in the table or the board are
    /// [`net::node_table::NodeTableError`]s, which say what is wrong.
    pub fn udp(
        node: NodeId,
        table: net::node_table::NodeTable,
    ) -> Result<Controller, net::node_table::NodeTableError> {
        Self::net("udp", node, table, net::default_config())
    }

    /// Controller `eth` as node `node` of `table` (needs `CAP_NET_RAW`).
    pub fn eth(
        node: NodeId,
        table: net::node_table::NodeTable,
    ) -> Result<Controller, net::node_table::NodeTableError> {
        Self::net("eth", node, table, net::default_config())
    }

    /// A network controller (`kind` `udp` or `eth`) with the engine's parameters given
    /// (timers, windows; the MTU is the board's).
    pub fn net(
        kind: &str,
        node: NodeId,
        table: net::node_table::NodeTable,
        cfg: myrix_rsm_proto::engine::Config,
    ) -> Result<Controller, net::node_table::NodeTableError> {
        let kind: &'static str = match kind {
            "udp" => "udp",
            "eth" => "eth",
            _ => {
                return Err(net::node_table::NodeTableError {
                    line: 0,
                    why: format!("{kind:?} is not a network controller (udp, eth)"),
                })
            }
        };
        let backend = net::NetCtlr::open(kind, node, table, cfg)?;
        Ok(Controller {
            name: kind.into(),
            backend: Arc::new(backend),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn attr(&self) -> ControllerAttr {
        let mut a = self.backend.attr();
        a.name = self.name.to_string();
        a
    }

    pub fn local_node(&self) -> NodeId {
        self.backend.attr().local_node
    }

    /// How many times this process's progress agent has woken so far (a network
    /// controller's cost when idle); `None` for controllers without one.
    pub fn agent_rounds(&self) -> Option<u64> {
        self.backend.agent_rounds()
    }

    /// Each rail's counters (one rail per board of this node; network controllers
    /// only, empty otherwise).
    pub fn rail_stats(&self) -> Vec<net::RailStats> {
        self.backend.rail_stats()
    }

    /// Fault injection for tests and drills: while `down`, rail `rail` of this process
    /// drops every frame it would send or receive, as a dead link does; the engine
    /// then finds the peers on it unreachable and imports fail over to the other
    /// rails. `BadConf` for a rail that does not exist or a controller without rails.
    pub fn set_rail_down(&self, rail: usize, down: bool) -> Result<(), RsmError> {
        self.backend.set_rail_down(rail, down)
    }

    /// Sends what this process still has unacknowledged on the controller (the last
    /// disconnects, signals, unpublishes, unflushed puts) until the nodes acknowledge
    /// it or the engine's retry limit declares them unreachable; returns whether
    /// everything was acknowledged. The controller's release does this by itself; a
    /// process about to exit with handles still open calls it (the C library does at
    /// exit). Nothing to do (`true`) on `shm`.
    pub fn drain(&self) -> bool {
        self.backend.drain()
    }

    /// [`Controller::drain`] for a process about to exit: then (with `MYRIX_RSM_BYE=1`
    /// in the environment) every node it talked with is told that it leaves
    /// (docs/rsm.md "Leaving: the bye"), so none waits for its acknowledgements, and their imports of its segments end
    /// `RSMERR_CONN_ABORTED`. The controller's release does this by itself; use the
    /// controller no more after it.
    pub fn leave(&self) -> bool {
        self.backend.leave()
    }

    /// The nodes this controller reaches, the local node included.
    pub fn topology(&self) -> Vec<NodeId> {
        self.backend.topology()
    }

    /// A segment of `len` bytes of library-allocated, page-aligned, zeroed memory
    /// (`len` > 0, a multiple of the page size, at most the maximum segment size).
    pub fn export_create(&self, len: usize, flags: ExportFlags) -> Result<Export, RsmError> {
        let attr = self.backend.attr();
        check_len(len, &attr)?;
        let b = self.backend.export_create(len, flags)?;
        Ok(Export::new(b, flags))
    }

    /// A segment of the caller's memory (RSMAPI's `rsm_memseg_export_create` with a
    /// `vaddr`): `ptr` and `len` page-aligned, the range mapped readable and writable.
    /// On `shm` the range is remapped in place while published (same address, same
    /// contents, now shared), so `ptr` stays valid.
    ///
    /// # Safety
    /// `ptr..ptr+len` is memory the caller owns and keeps mapped (does not unmap, free
    /// or remap) until the [`Export`] is destroyed or rebound to other memory; nothing
    /// else of the program relies on it being private (it must not be a mapping of a
    /// file the program shares by other means).
    #[allow(unsafe_code)]
    pub unsafe fn export_create_at(
        &self,
        ptr: *mut u8,
        len: usize,
        flags: ExportFlags,
    ) -> Result<Export, RsmError> {
        let attr = self.backend.attr();
        check_caller_mem(ptr, len, &attr)?;
        // SAFETY: the caller's promise, passed on.
        let b = unsafe { self.backend.export_create_at(ptr, len, flags)? };
        Ok(Export::new(b, flags))
    }

    /// Connects to segment `id` published on `node`, asking for `perm` (a non-empty
    /// subset of [`Perm::RDWR`]). Refused with `SegNotPublished`,
    /// `SegNotPublishedToNode`, `PermDenied` (more than the access list grants),
    /// `BadPerms`, or `RemoteNodeUnreachable` (a node not in the topology).
    pub fn import_connect(
        &self,
        node: NodeId,
        id: SegmentId,
        perm: Perm,
    ) -> Result<Import, RsmError> {
        let perm = Perm::requested(perm.0)?;
        let b = self.backend.import_connect(node, id, perm)?;
        Ok(Import::new(
            b,
            node,
            id,
            perm,
            self.backend.attr().map_supported,
        ))
    }
}

fn check_len(len: usize, attr: &ControllerAttr) -> Result<(), RsmError> {
    if len == 0 || len % attr.page_size != 0 || len > attr.max_segment_size {
        return Err(RsmError::BadLength);
    }
    Ok(())
}

/// The checks RSMAPI makes on caller memory: not null, page-aligned address and length.
pub(crate) fn check_caller_mem(
    ptr: *mut u8,
    len: usize,
    attr: &ControllerAttr,
) -> Result<(), RsmError> {
    if ptr.is_null() {
        return Err(RsmError::BadAddr);
    }
    if (ptr as usize) % attr.page_size != 0 {
        return Err(RsmError::BadMemAlignment);
    }
    check_len(len, attr)?;
    if (ptr as usize).checked_add(len).is_none() {
        return Err(RsmError::BadAddr);
    }
    Ok(())
}

/// How a segment is created (RSMAPI's `rsm_memseg_export_create` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExportFlags {
    /// `RSM_ALLOW_REBIND` (0x01): [`Export::rebind`] is allowed.
    pub allow_rebind: bool,
    /// `RSM_CREATE_SEG_DONTWAIT` (0x02): do not wait for resources (the shm controller
    /// never waits; recorded only).
    pub dontwait: bool,
    /// `RSM_LOCK_OPS` (0x04): the segment may be used for locks (recorded only: myrix
    /// offers no lock operations).
    pub lock_ops: bool,
}

impl ExportFlags {
    pub const ALLOW_REBIND: u32 = 0x01;
    pub const DONTWAIT: u32 = 0x02;
    pub const LOCK_OPS: u32 = 0x04;

    /// Flags from RSMAPI's bits; an unknown bit is refused with `BadConf` (RSMAPI names
    /// no error for it).
    pub fn from_bits(b: u32) -> Result<ExportFlags, RsmError> {
        if b & !(Self::ALLOW_REBIND | Self::DONTWAIT | Self::LOCK_OPS) != 0 {
            return Err(RsmError::BadConf);
        }
        Ok(ExportFlags {
            allow_rebind: b & Self::ALLOW_REBIND != 0,
            dontwait: b & Self::DONTWAIT != 0,
            lock_ops: b & Self::LOCK_OPS != 0,
        })
    }

    pub fn bits(&self) -> u32 {
        (if self.allow_rebind {
            Self::ALLOW_REBIND
        } else {
            0
        }) | (if self.dontwait { Self::DONTWAIT } else { 0 })
            | (if self.lock_ops { Self::LOCK_OPS } else { 0 })
    }
}

/// How a signal is posted (RSMAPI's `rsm_intr_signal_post` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SignalFlags {
    /// `RSM_SIGPOST_NO_ACCUMULATE` (0x02): if a signal is already pending at a
    /// receiver, this one is not added to it.
    pub no_accumulate: bool,
}

impl SignalFlags {
    pub const NO_ACCUMULATE: u32 = 0x02;

    /// Flags from RSMAPI's bits; an unknown bit is refused with `BadConf`.
    pub fn from_bits(b: u32) -> Result<SignalFlags, RsmError> {
        if b & !Self::NO_ACCUMULATE != 0 {
            return Err(RsmError::BadConf);
        }
        Ok(SignalFlags {
            no_accumulate: b & Self::NO_ACCUMULATE != 0,
        })
    }

    pub fn bits(&self) -> u32 {
        if self.no_accumulate {
            Self::NO_ACCUMULATE
        } else {
            0
        }
    }
}

/// A random number from the kernel (getrandom), with no thread-local state: segment
/// ids and file names are chosen by it also where thread-locals are gone (an
/// `atexit` teardown: MPI's sessions end the job there).
pub(crate) fn random_u64() -> u64 {
    use rand::RngCore;
    rand::rngs::OsRng.next_u64()
}
