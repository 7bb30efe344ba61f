//! A window: each rank's memory an RSM segment on `shm`, every rank mapping every
//! other's (and its control block, [`super::ctrl`]), so a put is a copy into the
//! target's memory, a get a copy out, an accumulate atomics on it.
//!
//! Creation is collective over a [`Pt2Pt`] (a communicator's private context):
//! each rank prepares its segments, the ranks allgather a record (node, segment
//! ids, size, displacement unit, whether it went well) and map each other's; a
//! last allgather agrees that everyone mapped everything. A failure anywhere is
//! every rank's error, so no rank is left waiting in a later fence.

mod cut;
mod fast;
mod memory;
mod ops;
mod sync;

use super::ctrl::{self, Ctrl};
use super::net::service::{self, Service};
use super::net::{wire, NetSide, Remote};
use super::RmaError;
use crate::coll::{self, Pt2Pt};
use memory::{export_new, export_pages, Piece};
use myrix_rsm::{Controller, Export, ExportFlags, Import, Mapping, Perm, SegmentId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// How the window's memory came to be (MPI_WIN_FLAVOR_*).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Create,
    Allocate,
    Dynamic,
    Shared,
}

/// This rank's memory for a new window.
#[derive(Debug, Clone, Copy)]
pub enum Memory {
    /// MPI_Win_create: the caller's `len` bytes at `ptr` (exported in place: the
    /// pages holding them become shared memory).
    Caller { ptr: *mut u8, len: usize },
    /// MPI_Win_allocate: `len` bytes of library memory.
    Allocate { len: usize },
    /// MPI_Win_allocate_shared: `len` bytes of one segment shared by all ranks,
    /// rank `r + 1`'s right after rank `r`'s.
    Shared { len: usize },
    /// MPI_Win_create_dynamic: memory attached later.
    Dynamic,
}

/// A passive-target lock kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    Shared,
    Exclusive,
}

const NONE: u8 = 0;
const SHARED: u8 = 1;
const EXCLUSIVE: u8 = 2;
const STARTED: u8 = 4;

/// What one rank sees of another's window.
struct Target {
    base: usize,
    len: usize,
    disp_unit: usize,
    /// Its control block, mapped (None for a rank on another node).
    ctrl: Option<Ctrl>,
    /// The data segment's import (None for this rank, size 0, shared windows but
    /// rank 0's segment, dynamic windows, ranks on other nodes).
    import: Option<Import>,
    /// A rank on another node: reached through the network controller.
    remote: Option<Box<Remote>>,
}

impl Target {
    /// The control block of a rank of this node.
    fn ctrl(&self) -> &Ctrl {
        self.ctrl.as_ref().expect("a local target's control block")
    }
}

/// This rank's network side of a window spanning nodes. The service thread is
/// stopped (dropped) before the window's memory goes.
struct NetWin {
    _service: Option<Service>,
    side: NetSide,
    /// The control block as exported on the network controller (waits poll it).
    ctrl: Arc<Export>,
    _exports: Vec<Arc<Export>>,
}

/// Mappings of other ranks' attached memory, by (rank, segment, page).
type DynMaps = HashMap<(usize, u32, u64), (Import, Mapping)>;

/// Per-epoch bookkeeping, changed by synchronization calls only.
#[derive(Default)]
struct Epochs {
    fence: bool,
    lock_all: bool,
    start: Option<Vec<usize>>,
    post: Option<Vec<usize>>,
    posts_seen: Vec<u64>,
    completes_seen: Vec<u64>,
}

/// A window of `size` ranks, as rank `rank` holds it.
pub struct Window {
    /// Declared first: dropped (the service thread joined) before the memory.
    net: Option<NetWin>,
    rank: usize,
    size: usize,
    flavor: Flavor,
    base: usize,
    len: usize,
    disp_unit: usize,
    targets: Vec<Target>,
    ctl: Controller,
    /// Whether any access epoch to every target is open (fence or lock_all).
    access_all: AtomicBool,
    /// Whether this rank issued an access since the last fence: a fence epoch no
    /// access used ends at the next lock, lock_all, start or post (MPI-3 §11.5:
    /// a fence that no RMA follows may be followed by other synchronization).
    fence_used: AtomicBool,
    lock_all_nocheck: AtomicBool,
    /// Per target: NONE, SHARED/EXCLUSIVE (locked), STARTED (PSCW).
    access: Vec<AtomicU8>,
    touched: Vec<AtomicBool>,
    epochs: Mutex<Epochs>,
    dyn_maps: Mutex<DynMaps>,
    /// An error of an access found before it reached a target (memory not attached
    /// at a rank of this node), kept for the synchronization that ends the epoch.
    deferred: Mutex<Option<RmaError>>,
    /// Whether `deferred` may hold an error: lets every flush skip the mutex (a
    /// lock and an unlock, two locked instructions) in the usual case of none.
    has_deferred: AtomicBool,
    /// Regions attached here: their address and pieces.
    attached: Mutex<Vec<(usize, Vec<Piece>)>>,
    // Kept alive while the window is: mappings before their imports.
    _maps: Vec<Mapping>,
    _imports: Vec<Import>,
    /// The control blocks of the other ranks of this node, by rank (their
    /// connections tell whether those processes are alive).
    ctrl_imports: Vec<(usize, Import)>,
    _exports: Vec<Arc<Export>>,
}

// SAFETY: the raw addresses it holds (as usize) point into segments it keeps
// mapped; every shared state is atomic or behind a mutex.
unsafe impl Send for Window {}
// SAFETY: as above.
unsafe impl Sync for Window {}

fn rsm(what: &str) -> impl Fn(myrix_rsm::RsmError) -> RmaError + '_ {
    move |e| RmaError::Rsm(what.to_string(), e)
}

fn round_up(n: usize, page: usize) -> usize {
    n.div_ceil(page).max(1) * page
}

const REC: usize = 48;

/// What each rank tells the others at creation.
#[derive(Debug, Clone, Copy, Default)]
struct Rec {
    ok: u32,
    node: u32,
    ctrl: u32,
    data: u32,
    len: u64,
    disp_unit: u64,
    off: u64,
    rsm_node: u32,
}

impl Rec {
    fn encode(&self) -> [u8; REC] {
        let mut b = [0u8; REC];
        b[0..4].copy_from_slice(&self.ok.to_le_bytes());
        b[4..8].copy_from_slice(&self.node.to_le_bytes());
        b[8..12].copy_from_slice(&self.ctrl.to_le_bytes());
        b[12..16].copy_from_slice(&self.data.to_le_bytes());
        b[16..24].copy_from_slice(&self.len.to_le_bytes());
        b[24..32].copy_from_slice(&self.disp_unit.to_le_bytes());
        b[32..40].copy_from_slice(&self.off.to_le_bytes());
        b[40..44].copy_from_slice(&self.rsm_node.to_le_bytes());
        b
    }
    fn decode(b: &[u8]) -> Rec {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8"));
        Rec {
            ok: u32_at(0),
            node: u32_at(4),
            ctrl: u32_at(8),
            data: u32_at(12),
            len: u64_at(16),
            disp_unit: u64_at(24),
            off: u64_at(32),
            rsm_node: u32_at(40),
        }
    }
}

fn allgather_recs(p: &mut dyn Pt2Pt, me: &Rec) -> Result<Vec<Rec>, RmaError> {
    let mut all = vec![0u8; REC * p.size()];
    coll::allgather(p, &me.encode(), &mut all)?;
    Ok(all.chunks_exact(REC).map(Rec::decode).collect())
}

/// Whether every rank says `ok`.
fn agree(p: &mut dyn Pt2Pt, ok: bool) -> Result<bool, RmaError> {
    let mut all = vec![0u8; p.size()];
    coll::allgather(p, &[u8::from(ok)], &mut all)?;
    Ok(all.iter().all(|&b| b == 1))
}

/// What this rank prepared before the exchange.
struct Local {
    ctrl: Arc<Export>,
    data: Option<(Arc<Export>, SegmentId, usize)>,
    base: usize,
}

const NET_REC: usize = 32;

/// What each rank tells the others about its network side.
#[derive(Debug, Clone, Copy, Default)]
struct NetRec {
    ok: u32,
    node: u32,
    ctrl: u32,
    data: u32,
    req: u32,
    reply: u32,
    off: u64,
}

impl NetRec {
    fn encode(&self) -> [u8; NET_REC] {
        let mut b = [0u8; NET_REC];
        for (i, v) in [
            self.ok, self.node, self.ctrl, self.data, self.req, self.reply,
        ]
        .iter()
        .enumerate()
        {
            b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        b[24..32].copy_from_slice(&self.off.to_le_bytes());
        b
    }
    fn decode(b: &[u8]) -> NetRec {
        let u = |i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().expect("4"));
        NetRec {
            ok: u(0),
            node: u(1),
            ctrl: u(2),
            data: u(3),
            req: u(4),
            reply: u(5),
            off: u64::from_le_bytes(b[24..32].try_into().expect("8")),
        }
    }
}

/// This rank's exports on the network controller: its control block and window
/// memory (the same pages as on `shm`), a request segment and a reply segment.
fn net_exports(
    size: usize,
    local: &Local,
) -> Result<(myrix_rsm::Controller, NetRec, Vec<Arc<Export>>), RmaError> {
    let ctl = crate::channel::net::controller().ok_or(RmaError::Unsupported(
        "the window spans nodes but this process has no network controller".into(),
    ))?;
    let page = ctl.attr().page_size;
    let publish = |x: Export| -> Result<(Arc<Export>, u32), RmaError> {
        let id = x
            .publish(None, &[])
            .map_err(rsm("publishing on the network"))?;
        Ok((Arc::new(x), id.0))
    };
    // SAFETY: the control block's pages stay mapped while the window lives (its shm
    // export is kept, and the network export is dropped first).
    let c = unsafe {
        ctl.export_create_at(
            local.ctrl.as_ptr(),
            local.ctrl.len(),
            ExportFlags::default(),
        )
    }
    .map_err(rsm("exporting the control block on the network"))?;
    let (c, ctrl_id) = publish(c)?;
    let mut xs = vec![c];
    let (mut data, mut off) = (0, 0);
    if let Some((x, _, o)) = &local.data {
        // SAFETY: the window's memory, kept mapped by its shm export (or the caller,
        // as MPI requires) while the window lives.
        let d = unsafe { ctl.export_create_at(x.as_ptr(), x.len(), ExportFlags::default()) }
            .map_err(rsm("exporting window memory on the network"))?;
        let (d, id) = publish(d)?;
        xs.push(d);
        (data, off) = (id, *o as u64);
    }
    let req = ctl
        .export_create(round_up(size * wire::RING, page), ExportFlags::default())
        .map_err(rsm("the request segment"))?;
    let (req, req_id) = publish(req)?;
    let reply = ctl
        .export_create(round_up(size * wire::AREA, page), ExportFlags::default())
        .map_err(rsm("the reply segment"))?;
    let (reply, reply_id) = publish(reply)?;
    xs.push(req);
    xs.push(reply);
    let rec = NetRec {
        ok: 1,
        node: ctl.local_node().0,
        ctrl: ctrl_id,
        data,
        req: req_id,
        reply: reply_id,
        off,
    };
    Ok((ctl, rec, xs))
}

/// The network side of a window spanning nodes (collective): exports, exchange,
/// imports of every rank on another node, the service thread.
fn net_phase(
    p: &mut dyn Pt2Pt,
    flavor: Flavor,
    recs: &[Rec],
    node: u32,
    local: &Local,
    targets: &mut [Target],
) -> Result<NetWin, RmaError> {
    let (rank, size) = (p.rank(), p.size());
    let made = net_exports(size, local);
    let me = made.as_ref().map_or(NetRec::default(), |m| m.1);
    let mut all = vec![0u8; NET_REC * size];
    coll::allgather(p, &me.encode(), &mut all)?;
    let nrecs: Vec<NetRec> = all.chunks_exact(NET_REC).map(NetRec::decode).collect();
    let (ctl, _, xs) = made?;
    if let Some(r) = nrecs.iter().position(|r| r.ok != 1) {
        return Err(RmaError::Peer(r));
    }
    let (req_x, reply_x) = (xs[xs.len() - 2].clone(), xs[xs.len() - 1].clone());
    let connected = (|| -> Result<(Vec<Option<Import>>, Service), RmaError> {
        let mut replies: Vec<Option<Import>> = (0..size).map(|_| None).collect();
        for (r, (rec, nr)) in recs.iter().zip(&nrecs).enumerate() {
            if rec.node == node {
                continue;
            }
            let nd = myrix_rsm::NodeId(nr.node);
            let conn = |id: u32, what: &str| {
                ctl.import_connect(nd, SegmentId(id), Perm::RDWR)
                    .map_err(|e| RmaError::Rsm(format!("connecting to rank {r}'s {what}"), e))
            };
            let data = if nr.data != 0 && rec.len > 0 {
                Some(conn(nr.data, "window memory")?)
            } else {
                None
            };
            targets[r].remote = Some(Box::new(Remote::new(
                r,
                data,
                nr.off as usize,
                conn(nr.ctrl, "control block")?,
                conn(nr.req, "request segment")?,
            )));
            replies[r] = Some(conn(nr.reply, "reply segment")?);
        }
        let me = &targets[rank];
        let svc = Service::start(service::Ctx {
            me: rank,
            req: req_x.clone(),
            replies: std::mem::take(&mut replies),
            ctrl: *me.ctrl(),
            base: me.base,
            len: me.len,
            dynamic: flavor == Flavor::Dynamic,
        })
        .map_err(|e| RmaError::Unsupported(format!("starting the window's service thread: {e}")))?;
        Ok((replies, svc))
    })();
    if !agree(p, connected.is_ok())? {
        return Err(connected.err().unwrap_or(RmaError::Peer(usize::MAX)));
    }
    let (_, svc) = connected?;
    Ok(NetWin {
        _service: Some(svc),
        side: NetSide {
            me: rank,
            reply: reply_x,
        },
        ctrl: xs[0].clone(),
        _exports: xs,
    })
}

impl Window {
    /// Creates a window over `p`'s ranks (collective). `node` is this rank's node
    /// in the job: a window whose ranks are on more than one node is refused
    /// (`Unsupported`) on every rank, as is one the `shm` controller cannot serve.
    pub fn create(
        p: &mut dyn Pt2Pt,
        mem: Memory,
        disp_unit: usize,
        node: u32,
    ) -> Result<Window, RmaError> {
        let (rank, size) = (p.rank(), p.size());
        let ctl = Controller::get("shm").map_err(rsm("the shm controller"));
        let local = ctl.as_ref().map_err(|e| e.clone()).and_then(|ctl| {
            let c = export_new(ctl, ctrl::len(size))?;
            // SAFETY: a fresh, zeroed, page-aligned segment of ctrl::len(size) bytes.
            unsafe { Ctrl::new(c.0.as_ptr(), size) }.set_state(ctrl::LIVE);
            let (data, base) = match mem {
                Memory::Caller { ptr, len } if len > 0 => {
                    let d = export_pages(ctl, ptr, len)?;
                    (Some(d), ptr as usize)
                }
                Memory::Caller { ptr, .. } => (None, ptr as usize),
                Memory::Allocate { len } if len > 0 => {
                    let (x, id) = export_new(ctl, len)?;
                    let b = x.as_ptr() as usize;
                    (Some((x, id, 0)), b)
                }
                _ => (None, 0),
            };
            Ok(Local {
                ctrl: c.0,
                data,
                base,
            })
        });
        let first_err = local.as_ref().err().cloned();
        let (len, flavor) = match mem {
            Memory::Caller { len, .. } => (len, Flavor::Create),
            Memory::Allocate { len } => (len, Flavor::Allocate),
            Memory::Shared { len } => (len, Flavor::Shared),
            Memory::Dynamic => (0, Flavor::Dynamic),
        };
        let me = match &local {
            Ok(l) => Rec {
                ok: 1,
                node,
                ctrl: l.ctrl.id().map_or(0, |i| i.0),
                data: l.data.as_ref().map_or(0, |d| d.1 .0),
                len: len as u64,
                disp_unit: disp_unit as u64,
                off: l.data.as_ref().map_or(0, |d| d.2 as u64),
                rsm_node: ctl.as_ref().map_or(0, |c| c.local_node().0),
            },
            Err(_) => Rec::default(),
        };
        let recs = allgather_recs(p, &me)?;
        if let Some(e) = first_err {
            return Err(e);
        }
        if let Some(r) = recs.iter().position(|r| r.ok != 1) {
            return Err(RmaError::Peer(r));
        }
        let spans = recs.iter().position(|r| r.node != node);
        if let Some(r) = spans {
            if flavor == Flavor::Shared {
                return Err(RmaError::Unsupported(format!(
                    "MPI_Win_allocate_shared needs ranks that share memory (rank {r} is on \
                     node {}, rank {rank} on node {node}): use a communicator of \
                     MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)",
                    recs[r].node
                )));
            }
        }
        let (ctl, mut local) = (ctl?, local?);
        // Shared windows: rank 0 makes one segment for all, the others map it.
        let mut shared: Option<(usize, Vec<usize>)> = None;
        let mut maps = Vec::new();
        let mut imports = Vec::new();
        if flavor == Flavor::Shared {
            let mut prefix = Vec::with_capacity(size + 1);
            let mut total = 0usize;
            for r in &recs {
                prefix.push(total);
                total = total
                    .checked_add(r.len as usize)
                    .ok_or(RmaError::Arg("shared window too large".into()))?;
            }
            let made = if rank == 0 && total > 0 {
                export_new(&ctl, total).map(Some)
            } else {
                Ok(None)
            };
            let id = made.as_ref().ok().and_then(|m| m.as_ref().map(|m| m.1 .0));
            let mut ids = vec![0u8; 8 * size];
            let mine = [u32::from(made.is_ok()), id.unwrap_or(0)];
            let enc: Vec<u8> = mine.iter().flat_map(|v| v.to_le_bytes()).collect();
            coll::allgather(p, &enc, &mut ids)?;
            let made = made?;
            if ids[0..4] != 1u32.to_le_bytes() {
                return Err(RmaError::Peer(0));
            }
            let id0 = u32::from_le_bytes(ids[4..8].try_into().expect("4"));
            let got = if total == 0 {
                Ok(0)
            } else if let Some((x, _)) = &made {
                let b = x.as_ptr() as usize;
                local.data = Some((x.clone(), SegmentId(id0), 0));
                Ok(b)
            } else {
                ctl.import_connect(
                    myrix_rsm::NodeId(recs[0].rsm_node),
                    SegmentId(id0),
                    Perm::RDWR,
                )
                .and_then(|i| {
                    let m = i.map()?;
                    let b = m.as_ptr() as usize;
                    maps.push(m);
                    imports.push(i);
                    Ok(b)
                })
                .map_err(rsm("mapping the shared window"))
            };
            if !agree(p, got.is_ok())? {
                return Err(got.err().unwrap_or(RmaError::Peer(usize::MAX)));
            }
            let b = got?;
            shared = Some((b, prefix));
        }
        let mut targets = Vec::with_capacity(size);
        let mut ctrl_imports = Vec::new();
        let mut mapped: Result<(), RmaError> = Ok(());
        for (r, rec) in recs.iter().enumerate() {
            if rec.node != node {
                targets.push(Target {
                    base: 0,
                    len: rec.len as usize,
                    disp_unit: rec.disp_unit as usize,
                    ctrl: None,
                    import: None,
                    remote: None,
                });
                continue;
            }
            let one = (|| {
                let nd = myrix_rsm::NodeId(rec.rsm_node);
                let ctrl_ptr = if r == rank {
                    local.ctrl.as_ptr() as usize
                } else {
                    let i = ctl
                        .import_connect(nd, SegmentId(rec.ctrl), Perm::RDWR)
                        .map_err(rsm("connecting to a window's control block"))?;
                    let m = i.map().map_err(rsm("mapping a window's control block"))?;
                    let a = m.as_ptr() as usize;
                    maps.push(m);
                    ctrl_imports.push((r, i));
                    a
                };
                let (base, import) = if let Some((b, prefix)) = &shared {
                    (b + prefix[r], None)
                } else if r == rank {
                    (local.base, None)
                } else if rec.data != 0 {
                    let i = ctl
                        .import_connect(nd, SegmentId(rec.data), Perm::RDWR)
                        .map_err(rsm("connecting to a window's memory"))?;
                    let m = i.map().map_err(rsm("mapping a window's memory"))?;
                    let a = m.as_ptr() as usize + rec.off as usize;
                    maps.push(m);
                    (a, Some(i))
                } else {
                    (0, None)
                };
                Ok(Target {
                    base,
                    len: rec.len as usize,
                    disp_unit: rec.disp_unit as usize,
                    // SAFETY: a control block of ctrl::len(size) bytes, page-aligned,
                    // kept mapped by the window (its export or mapping).
                    ctrl: Some(unsafe { Ctrl::new(ctrl_ptr as *mut u8, size) }),
                    import,
                    remote: None,
                })
            })();
            match one {
                Ok(t) => targets.push(t),
                Err(e) => {
                    mapped = Err(e);
                    break;
                }
            }
        }
        if !agree(p, mapped.is_ok())? {
            return Err(mapped.err().unwrap_or(RmaError::Peer(usize::MAX)));
        }
        let net = match spans {
            Some(_) => Some(net_phase(p, flavor, &recs, node, &local, &mut targets)?),
            None => None,
        };
        let mine = &targets[rank];
        let (base, my_len) = (mine.base, mine.len);
        let mut exports = vec![local.ctrl];
        exports.extend(local.data.map(|d| d.0));
        Ok(Window {
            net,
            rank,
            size,
            flavor,
            base,
            len: my_len,
            disp_unit,
            targets,
            ctl,
            access_all: AtomicBool::new(false),
            fence_used: AtomicBool::new(false),
            lock_all_nocheck: AtomicBool::new(false),
            access: (0..size).map(|_| AtomicU8::new(NONE)).collect(),
            touched: (0..size).map(|_| AtomicBool::new(false)).collect(),
            epochs: Mutex::new(Epochs {
                posts_seen: vec![0; size],
                completes_seen: vec![0; size],
                ..Epochs::default()
            }),
            dyn_maps: Mutex::new(HashMap::new()),
            deferred: Mutex::new(None),
            has_deferred: AtomicBool::new(false),
            attached: Mutex::new(Vec::new()),
            _maps: maps,
            _imports: imports,
            ctrl_imports,
            _exports: exports,
        })
    }

    pub fn rank(&self) -> usize {
        self.rank
    }
    pub fn size(&self) -> usize {
        self.size
    }
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }
    /// This rank's window memory (NULL-like 0 for an empty or dynamic window).
    pub fn base(&self) -> *mut u8 {
        self.base as *mut u8
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn disp_unit(&self) -> usize {
        self.disp_unit
    }

    /// Rank `r`'s memory as this process sees it (MPI_Win_shared_query): address,
    /// size, displacement unit. Every rank's memory is mapped here, whatever the
    /// flavor (dynamic windows have none: 0, 0).
    pub fn query(&self, r: usize) -> Result<(*mut u8, usize, usize), RmaError> {
        let t = self.targets.get(r).ok_or(RmaError::Rank(r))?;
        Ok((t.base as *mut u8, t.len, t.disp_unit))
    }

    fn epochs(&self) -> MutexGuard<'_, Epochs> {
        self.epochs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `e` for the next synchronization (the first one wins).
    fn defer(&self, e: RmaError) {
        self.deferred
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
        self.has_deferred.store(true, Ordering::Release);
    }

    /// The error kept by [`Window::defer`], if any (taken).
    #[inline]
    fn take_deferred(&self) -> Result<(), RmaError> {
        // Set after the error is stored and cleared before it is taken: a calling
        // thread (the library is at most MPI_THREAD_SERIALIZED) never misses one.
        // A plain load, not a swap: a swap is a locked instruction.
        if !self.has_deferred.load(Ordering::Acquire) {
            return Ok(());
        }
        self.take_deferred_slow()
    }

    #[cold]
    fn take_deferred_slow(&self) -> Result<(), RmaError> {
        self.has_deferred.store(false, Ordering::Relaxed);
        self.deferred
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .map_or(Ok(()), Err)
    }

    fn refresh_all(&self, e: &Epochs) {
        self.access_all
            .store(e.fence || e.lock_all, Ordering::Release);
    }

    #[inline]
    fn target(&self, r: usize) -> Result<&Target, RmaError> {
        let Some(t) = self.targets.get(r) else {
            return Err(RmaError::Rank(r));
        };
        if !self.access_all.load(Ordering::Acquire)
            && self.access[r].load(Ordering::Acquire) == NONE
        {
            return Err(no_epoch(r));
        }
        self.touched[r].store(true, Ordering::Relaxed);
        self.fence_used.store(true, Ordering::Relaxed);
        Ok(t)
    }
}

#[cold]
fn no_epoch(r: usize) -> RmaError {
    RmaError::Sync(format!(
        "no access epoch to rank {r} is open (fence, lock, lock_all or start first)"
    ))
}
