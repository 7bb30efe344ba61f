//! Which collectives go through shared memory, and the segments they use.
//!
//! At the first collective on a communicator (of the kinds `coll::shm` does), its
//! ranks set up a shared segment through `myrix_mpi::shmseg` (the set-up the Rust
//! API shares: node ids exchanged, one RSM `shm` segment made by rank 0 with the
//! geometry of `MYRIX_MPI_SHM_SLOT` and `MYRIX_MPI_SHM_DEPTH`, rank 0's values
//! winning, imported by the others, and used only if every rank mapped it). A
//! communicator of one rank uses heap memory.
//!
//! Per call, [`get`] answers whether this collective, at this size, goes through
//! shared memory: `MYRIX_MPI_COLL=p2p` never, `=shm` whenever the communicator has a
//! segment, otherwise up to the switch point of [`Limits`] (each tunable with an
//! environment variable, the same on every rank). `MYRIX_MPI_COLL_DEBUG=1` prints
//! the choice once per communicator and collective.
//!
//! Communicators are told apart by context id and by their rank table (the
//! `Arc<[u32]>` of `CommRef`, one per communicator). A communicator's segment is
//! released at the next set-up after the communicator is freed (the registry then
//! holds the last reference to its rank table), and at process exit otherwise (the
//! shm controller's cleaner removes a dead exporter's files).

#[path = "coll_cache.rs"]
mod cache;

pub use cache::{fast, forget, known, note, Fast};

/// How a call reaches its communicator's segment: through the record its entry
/// resolved (`fast`), or by asking [`get`].
#[derive(Clone, Copy)]
pub enum Via<'a> {
    Record(&'static Fast),
    Comm(&'a CommRef),
}

impl<'a> Via<'a> {
    /// The communicator.
    #[inline]
    pub fn c(self) -> &'a CommRef {
        match self {
            Via::Record(f) => &f.cref,
            Via::Comm(c) => c,
        }
    }

    /// [`get`]: with a record, the switch point alone (records exist only when
    /// collectives may go through shared memory and no choice is printed).
    #[inline(always)]
    pub fn get(self, which: Which, bytes: usize) -> Option<Shm> {
        match self {
            Via::Record(f) => {
                let cell = f.cell()?;
                let cfg = config();
                let yes = cfg.force == Force::Shm || bytes <= cfg.limits.max[which as usize];
                yes.then_some(Shm::Borrowed(cell))
            }
            Via::Comm(c) => get(c, which, bytes),
        }
    }
}

use crate::abi::MPI_COMM_WORLD;
use crate::coll_glue::pt2pt;
use crate::comm::CommRef;
use crate::runtime;
use myrix_mpi::coll::shm::ShmColl;
use myrix_mpi::shmseg::{self, Params};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The collectives `coll::shm` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Gather,
    Scatter,
    Allgather,
    Allgatherv,
    Alltoall,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Barrier => "MPI_Barrier",
            Which::Bcast => "MPI_Bcast",
            Which::Reduce => "MPI_Reduce",
            Which::Allreduce => "MPI_Allreduce",
            Which::Gather => "MPI_Gather",
            Which::Scatter => "MPI_Scatter",
            Which::Allgather => "MPI_Allgather",
            Which::Allgatherv => "MPI_Allgatherv",
            Which::Alltoall => "MPI_Alltoall",
        }
    }
}

/// `MYRIX_MPI_COLL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Force {
    Auto,
    P2p,
    Shm,
}

/// The largest message (bytes: the buffer of one rank; alltoall: one rank's whole
/// send buffer) each collective sends through shared memory by default; larger
/// ones go point-to-point. `MYRIX_MPI_SHM_MAX` sets them all,
/// `MYRIX_MPI_SHM_MAX_<COLLECTIVE>` (e.g. `MYRIX_MPI_SHM_MAX_BCAST`) one.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    max: [usize; 9],
}

struct Config {
    force: Force,
    debug: bool,
    /// The segment's geometry and tunables (`myrix_mpi::shmseg::Params`).
    params: Params,
    limits: Limits,
}

fn env_size(name: &str) -> Option<usize> {
    shmseg::env_size(name, &|m| crate::ffi::say_line(m))
}

#[inline]
fn config() -> &'static Config {
    static C: OnceLock<Config> = OnceLock::new();
    C.get_or_init(|| {
        let force = match std::env::var("MYRIX_MPI_COLL").as_deref() {
            Ok("p2p") => Force::P2p,
            Ok("shm") => Force::Shm,
            Ok("") | Ok("auto") | Err(_) => Force::Auto,
            Ok(v) => {
                crate::ffi::say!("myrix MPI: MYRIX_MPI_COLL={v}: not p2p, shm or auto; auto");
                Force::Auto
            }
        };
        let all = env_size("MYRIX_MPI_SHM_MAX");
        let which = [
            Which::Barrier,
            Which::Bcast,
            Which::Reduce,
            Which::Allreduce,
            Which::Gather,
            Which::Scatter,
            Which::Allgather,
            Which::Allgatherv,
            Which::Alltoall,
        ];
        let mut max = [usize::MAX; 9];
        for w in which {
            let var = format!(
                "MYRIX_MPI_SHM_MAX_{}",
                w.name().trim_start_matches("MPI_").to_uppercase()
            );
            if let Some(v) = env_size(&var).or(all) {
                max[w as usize] = v;
            }
        }
        Config {
            force,
            debug: std::env::var("MYRIX_MPI_COLL_DEBUG").is_ok_and(|v| v != "0" && !v.is_empty()),
            params: Params::from_env(&|m| crate::ffi::say_line(m)),
            limits: Limits { max },
        }
    })
}

/// A communicator's shared-memory collectives behind a one-word lock: taking it is
/// one atomic exchange, releasing it a plain store (a call on a communicator whose
/// collectives another thread runs at the same moment is erroneous in MPI; the lock
/// only keeps that from corrupting memory).
pub struct ShmCell {
    busy: AtomicBool,
    coll: UnsafeCell<Option<ShmColl>>,
}

// SAFETY: `coll` is only reached through a `Guard`, which holds `busy`.
unsafe impl Sync for ShmCell {}

impl ShmCell {
    fn new(s: ShmColl) -> ShmCell {
        ShmCell {
            busy: AtomicBool::new(false),
            coll: UnsafeCell::new(Some(s)),
        }
    }

    fn lock(&self) -> Guard<'_> {
        while self.busy.swap(true, Ordering::Acquire) {
            std::thread::yield_now();
        }
        Guard(self)
    }
}

/// A locked [`ShmCell`].
pub struct Guard<'a>(&'a ShmCell);

impl Guard<'_> {
    fn coll(&self) -> *mut Option<ShmColl> {
        self.0.coll.get()
    }
}

impl std::ops::Deref for Guard<'_> {
    type Target = ShmColl;
    fn deref(&self) -> &ShmColl {
        // SAFETY: the lock is held. Cells are emptied only at MPI_Finalize, after
        // which no collective reaches one (the runtime refuses them first).
        unsafe { &*self.coll() }
            .as_ref()
            .expect("a collective after MPI_Finalize")
    }
}

impl std::ops::DerefMut for Guard<'_> {
    fn deref_mut(&mut self) -> &mut ShmColl {
        // SAFETY: as in deref; the lock makes this the only reference.
        unsafe { &mut *self.coll() }
            .as_mut()
            .expect("a collective after MPI_Finalize")
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::Release);
    }
}

/// A communicator's shared-memory collectives, to lock for one call: the world's
/// without a reference count (the hot path), others shared with the registry, or
/// borrowed from the communicator's record (`coll_cache.rs`) for one blocking call.
#[derive(Clone)]
pub enum Shm {
    World(&'static ShmCell),
    Comm(Arc<ShmCell>),
    /// Valid while the communicator lives (`coll_cache.rs`): never kept past the
    /// call that got it (`peek`, whose answers nonblocking requests keep, never
    /// gives one).
    Borrowed(&'static ShmCell),
}

impl Shm {
    fn cell(&self) -> &ShmCell {
        match self {
            Shm::World(w) | Shm::Borrowed(w) => w,
            Shm::Comm(a) => a,
        }
    }

    /// An owned handle on the same cell (nonblocking requests keep it).
    fn owned(&self) -> Shm {
        match self {
            Shm::World(w) => Shm::World(w),
            Shm::Comm(a) => Shm::Comm(a.clone()),
            Shm::Borrowed(_) => unreachable!("records and the registry hold no borrowed cells"),
        }
    }
}

/// What a communicator's collectives go through.
struct Entry {
    ctx: u32,
    ranks: Arc<[u32]>,
    shm: Option<Shm>,
    /// Collectives whose choice was printed (MYRIX_MPI_COLL_DEBUG).
    printed: u32,
}

static REG: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// MPI_COMM_WORLD's cell once set up with a segment: `get` answers the world from it
/// before the records. Through the world's record instead, an 8 B MPI_Bcast on 2
/// ranks took 0.095-0.101 us against main's 0.057-0.063 (session 29, not understood;
/// the rooted calls, which take the record from their entry, did not slow down).
static WORLD: OnceLock<&'static ShmCell> = OnceLock::new();

fn reg() -> MutexGuard<'static, Vec<Entry>> {
    REG.lock().unwrap_or_else(|p| p.into_inner())
}

/// Drops every communicator's segment (MPI_Finalize, after the fence past which no
/// rank runs a collective): the exports are destroyed now rather than by the next
/// RSM user's cleaner. Freeing one at MPI_Comm_free is not done: a peer may still be
/// reading the last collective's data from it.
pub fn release_all() {
    cache::release_all();
    let mut r = reg();
    for e in r.iter() {
        if let Some(Shm::World(w)) = &e.shm {
            let g = w.lock();
            // SAFETY: under the cell's lock.
            unsafe { *g.coll() = None };
        }
    }
    r.clear();
}

fn is_world(c: &CommRef) -> bool {
    c.ctx == 0
        && crate::comm::predefined_ref(MPI_COMM_WORLD)
            .is_some_and(|w| Arc::ptr_eq(&w.ranks, &c.ranks))
}

/// Whether `which` on `bytes` goes through shared memory on `c`: its state, to lock
/// for the call. Collective: the first call on a communicator sets it up (alike on
/// every rank, since every rank makes the same calls).
#[inline]
pub fn get(c: &CommRef, which: Which, bytes: usize) -> Option<Shm> {
    let cfg = config();
    if cfg.force == Force::P2p {
        return None;
    }
    if !cfg.debug {
        if c.ctx == 0 {
            if let Some(&w) = WORLD.get() {
                if is_world(c) {
                    let yes = cfg.force == Force::Shm || bytes <= cfg.limits.max[which as usize];
                    return yes.then_some(Shm::World(w));
                }
            }
        }
        if let Some(f) = cache::by_ctx(c) {
            let cell = f.cell()?;
            let yes = cfg.force == Force::Shm || bytes <= cfg.limits.max[which as usize];
            return yes.then_some(Shm::Borrowed(cell));
        }
    }
    get_slow(c, which, bytes, cfg)
}

/// [`get`] for a communicator without a record: the registry (and the set-up).
#[cold]
#[inline(never)]
fn get_slow(c: &CommRef, which: Which, bytes: usize, cfg: &'static Config) -> Option<Shm> {
    let found = {
        let mut r = reg();
        r.iter_mut()
            .find(|e| e.ctx == c.ctx && Arc::ptr_eq(&e.ranks, &c.ranks))
            .map(|e| {
                if !cfg.debug {
                    cache::remember(c, e.shm.as_ref().map(Shm::owned));
                }
                pick(e, c, which, bytes, cfg)
            })
    };
    if let Some(f) = found {
        return f;
    }
    let shm = setup(c, cfg).map(|mut s| {
        s.set_idle(crate::runtime::progress_schedules);
        let cell = ShmCell::new(s);
        if is_world(c) {
            // The world lives as long as the process: its cell is never freed (its
            // segment is, at MPI_Finalize).
            let cell: &'static ShmCell = Box::leak(Box::new(cell));
            let _ = WORLD.set(cell);
            Shm::World(cell)
        } else {
            Shm::Comm(Arc::new(cell))
        }
    });
    if !cfg.debug {
        cache::remember(c, shm.as_ref().map(Shm::owned));
    }
    let mut r = reg();
    // Communicators freed since: the registry holds the last reference to their
    // rank tables.
    r.retain(|e| Arc::strong_count(&e.ranks) > 1);
    r.push(Entry {
        ctx: c.ctx,
        ranks: c.ranks.clone(),
        shm,
        printed: 0,
    });
    let e = r.last_mut()?;
    pick(e, c, which, bytes, cfg)
}

fn pick(e: &mut Entry, c: &CommRef, which: Which, bytes: usize, cfg: &Config) -> Option<Shm> {
    let shm = e.shm.as_ref()?;
    let yes = cfg.force == Force::Shm || bytes <= cfg.limits.max[which as usize];
    if cfg.debug && e.printed & (1 << which as u32) == 0 {
        e.printed |= 1 << which as u32;
        let line = format!(
            "myrix MPI: rank {} of context {} ({} ranks): {} of {bytes} bytes through {}\n",
            c.rank,
            c.ctx,
            c.ranks.len(),
            which.name(),
            if yes {
                "shared memory"
            } else {
                "point-to-point"
            }
        );
        // One write, so the lines of ranks sharing a terminal or pipe stay whole
        // (eprintln! writes its pieces one by one).
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
    }
    yes.then(|| shm.owned())
}

/// Sets up `c`'s segment (collective, `myrix_mpi::shmseg`); None when its ranks
/// are not all on this node or something failed (then alike on every rank).
fn setup(c: &CommRef, cfg: &Config) -> Option<ShmColl> {
    let debug = |why: &str| {
        if cfg.debug {
            crate::ffi::say!(
                "myrix MPI: rank {} of context {}: collectives point-to-point: {why}",
                c.rank,
                c.ctx
            );
        }
    };
    let node = if c.ranks.len() == 1 {
        0
    } else {
        runtime::with("a collective", |rt| Ok(rt.job.node_id)).ok()?
    };
    shmseg::setup(&mut pt2pt(c), node, &cfg.params, &debug)
}

/// `c`'s segment if a collective already set it up (never sets one up: the
/// nonblocking collectives must not wait for the set-up's messages). Every rank
/// makes the same collective calls, so the answer is alike on every rank.
pub fn peek(c: &CommRef) -> Option<Shm> {
    if config().force == Force::P2p {
        return None;
    }
    if let Some(f) = cache::by_ctx(c) {
        return f.shm().map(Shm::owned);
    }
    let r = reg();
    let e = r
        .iter()
        .find(|e| e.ctx == c.ctx && Arc::ptr_eq(&e.ranks, &c.ranks))?;
    e.shm.as_ref().map(Shm::owned)
}

/// Locks a communicator's shared-memory state unless it is taken.
pub fn try_lock(s: &Shm) -> Option<Guard<'_>> {
    let cell = s.cell();
    (!cell.busy.swap(true, Ordering::Acquire)).then_some(Guard(cell))
}

/// Locks a communicator's shared-memory state for one collective.
pub fn lock(s: &Shm) -> Guard<'_> {
    s.cell().lock()
}
