//! What a collective needs of a communicator — its `CommRef` (rank, rank table,
//! context) and its segment — found without a lock, a reference count or a search,
//! for every communicator alike (MPI_COMM_WORLD, its dups, splits).
//!
//! Each communicator whose segment question `get` answered gets a record (a
//! [`Fast`]), found two ways:
//! - by context ([`by_ctx`], a slot picked from the context id, checked against the
//!   context and the rank table): `get` and `peek` answer from it without the
//!   registry's lock and search;
//! - by handle ([`fast`], a slot picked from the handle value, checked against the
//!   whole handle, so a stale or reused handle misses): the C entries of the rooted
//!   calls go straight to their predefined-type paths with it, without looking the
//!   communicator up in the table (a lock and reference counts) or asking whether it
//!   is an intercommunicator or spans nodes. A record is reached by handle only once
//!   one of those entries asked for it (`publish`), and only when that holds for the
//!   whole process: an intracommunicator, collectives not by levels
//!   (`coll_hier::enabled`), not forced point-to-point, no choices to print.
//!
//! Records are made by the blocking collectives (`get`) and freed only when their
//! communicator is (`forget`, from MPI_Comm_free) or at MPI_Finalize
//! (`release_all`); a slot already taken by a live record is left as it is (that
//! communicator then takes the registry's way), so no record is ever freed while a
//! call up the stack may hold it. MPI does not let a communicator be freed during a
//! call on it (and myrix provides at most MPI_THREAD_SERIALIZED), which is what
//! makes the `'static` borrows handed out here valid for the call that takes them.

use super::{config, Force, Shm, ShmCell};
use crate::abi::*;
use crate::comm::CommRef;
use std::sync::atomic::{AtomicPtr, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

/// Slots of each index (a power of two).
const SLOTS: usize = 64;

/// What the collectives need of one communicator.
pub struct Fast {
    /// The handle this record is reached by (0: none yet).
    handle: AtomicUsize,
    /// The communicator: context, this rank, rank table.
    pub cref: CommRef,
    /// Its segment; None when its collectives go point-to-point.
    cell: Option<Shm>,
    /// Whether the rooted entries go straight to the segment (`fast`): 0 not
    /// decided yet, 1 yes, 2 no.
    direct: AtomicU8,
}

impl Fast {
    /// The segment's cell, borrowed for the call (module docs).
    pub(super) fn cell(&'static self) -> Option<&'static ShmCell> {
        self.cell.as_ref().map(Shm::cell)
    }

    /// The segment as the registry holds it.
    pub(super) fn shm(&self) -> Option<&Shm> {
        self.cell.as_ref()
    }
}

static BY_CTX: [AtomicPtr<Fast>; SLOTS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];
static BY_HANDLE: [AtomicPtr<Fast>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// Context ids are even (MPI_COMM_WORLD 0, MPI_COMM_SELF 2, others from the pool).
#[inline]
fn ctx_slot(ctx: u32) -> usize {
    (ctx as usize >> 1) & (SLOTS - 1)
}

/// The predefined handles first, then a created handle's index bits.
#[inline]
fn handle_slot(h: MPI_Comm) -> usize {
    match h {
        MPI_COMM_WORLD => 0,
        MPI_COMM_SELF => 1,
        _ => 2 + (h & 0xff_ffff) % (SLOTS - 2),
    }
}

/// The record in `slot`, borrowed (module docs: records live until their
/// communicator is freed).
#[inline]
fn load(slot: &AtomicPtr<Fast>) -> Option<&'static Fast> {
    // SAFETY: a non-null pointer in a slot came from `Box::into_raw` and is freed
    // only after being taken out of both indexes (`forget`, `release_all`), which
    // MPI lets happen only when no call on its communicator runs.
    unsafe { slot.load(Ordering::Acquire).as_ref() }
}

/// `c`'s record, if it has one.
#[inline]
pub(super) fn by_ctx(c: &CommRef) -> Option<&'static Fast> {
    load(&BY_CTX[ctx_slot(c.ctx)])
        .filter(|f| f.cref.ctx == c.ctx && Arc::ptr_eq(&f.cref.ranks, &c.ranks))
}

/// Gives `c` a record with segment `cell` (what the registry holds for it), unless
/// its slot is taken.
pub(super) fn remember(c: &CommRef, cell: Option<Shm>) {
    let slot = &BY_CTX[ctx_slot(c.ctx)];
    if !slot.load(Ordering::Acquire).is_null() || c.inter.is_some() {
        return;
    }
    let f = Box::into_raw(Box::new(Fast {
        handle: AtomicUsize::new(0),
        cref: c.clone(),
        cell,
        direct: AtomicU8::new(0),
    }));
    if slot
        .compare_exchange(std::ptr::null_mut(), f, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        // SAFETY: never published.
        drop(unsafe { Box::from_raw(f) });
    }
}

/// The record of communicator `comm` if it is reachable by its handle (an
/// intracommunicator: intercommunicators get none).
#[inline]
pub fn known(comm: MPI_Comm) -> Option<&'static Fast> {
    load(&BY_HANDLE[handle_slot(comm)]).filter(|f| f.handle.load(Ordering::Relaxed) == comm)
}

/// Makes `c`'s record, if a collective made one, reachable by its handle `comm`.
pub fn note(comm: MPI_Comm, c: &CommRef) {
    if let Some(f) = by_ctx(c) {
        f.handle.store(comm, Ordering::Relaxed);
        BY_HANDLE[handle_slot(comm)].store((f as *const Fast).cast_mut(), Ordering::Release);
    }
}

/// The record of communicator `comm` with a segment in use, for a rooted call's
/// entry to go straight to the segment (the conditions in the module docs). The
/// caller checked that MPI is up.
#[inline]
pub fn fast(comm: MPI_Comm) -> Option<&'static Fast> {
    match known(comm) {
        Some(f) => match f.direct.load(Ordering::Relaxed) {
            1 => Some(f),
            2 => None,
            _ => decide(f),
        },
        None => publish(comm),
    }
}

/// Whether `f`'s rooted entries go straight to its segment: it has one and no
/// collective goes by levels (decided once: both hold for the process's life).
#[cold]
fn decide(f: &'static Fast) -> Option<&'static Fast> {
    let yes = f.cell.is_some() && !crate::coll_hier::enabled();
    f.direct.store(if yes { 1 } else { 2 }, Ordering::Relaxed);
    yes.then_some(f)
}

/// [`fast`] for a handle not reachable yet: looks it up and [`note`]s it.
#[cold]
fn publish(comm: MPI_Comm) -> Option<&'static Fast> {
    let cfg = config();
    if cfg.force == Force::P2p || cfg.debug || crate::coll_hier::enabled() {
        return None;
    }
    let c = crate::comm::lookup(comm, "").ok()?;
    note(comm, &c);
    known(comm).and_then(decide)
}

/// Frees the record of communicator `h` (MPI_Comm_free), if it has one.
pub fn forget(h: MPI_Comm, c: &CommRef) {
    let alias = &BY_HANDLE[handle_slot(h)];
    if load(alias).is_some_and(|f| f.handle.load(Ordering::Relaxed) == h) {
        alias.store(std::ptr::null_mut(), Ordering::Release);
    }
    if by_ctx(c).is_some() {
        let p = BY_CTX[ctx_slot(c.ctx)].swap(std::ptr::null_mut(), Ordering::AcqRel);
        drop_record(p);
    }
}

/// Frees a record taken out of `BY_CTX`, after taking it out of `BY_HANDLE` too.
fn drop_record(p: *mut Fast) {
    // SAFETY: out of BY_CTX, its owner; still valid.
    let Some(f) = (unsafe { p.as_ref() }) else {
        return;
    };
    let alias = &BY_HANDLE[handle_slot(f.handle.load(Ordering::Relaxed))];
    let _ = alias.compare_exchange(p, std::ptr::null_mut(), Ordering::AcqRel, Ordering::Acquire);
    // SAFETY: from `Box::into_raw`, in no index now.
    drop(unsafe { Box::from_raw(p) });
}

/// Frees every record (MPI_Finalize).
pub(super) fn release_all() {
    for s in &BY_HANDLE {
        s.store(std::ptr::null_mut(), Ordering::Release);
    }
    for s in &BY_CTX {
        drop_record(s.swap(std::ptr::null_mut(), Ordering::AcqRel));
    }
}
