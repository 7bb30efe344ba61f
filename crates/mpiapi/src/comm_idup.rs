//! MPI_Comm_idup(_with_info), nonblocking, and the context agreement it shares
//! with the blocking constructors.
//!
//! # The agreement
//! Members of a parent communicator must agree on a context id free on all of
//! them. A nonblocking agreement cannot hold the context pool's lock while it
//! communicates, so other agreements (blocking ones, other idups on overlapping
//! communicators, started in any order) run while it is in flight. Each attempt
//! (a round) therefore goes in two steps:
//!
//! 1. every member contributes its used-id bitmap; the OR is what is used
//!    anywhere; every member picks the same candidate from it (one of the 16
//!    lowest free ids, chosen by a hash of the agreement's identity and the round,
//!    so two agreements in flight at once rarely pick the same one);
//! 2. each member takes the candidate locally if it is still free (marking it used
//!    at once, so no later agreement here can pick it) and contributes a 1-byte
//!    "could not" flag; the OR decides: every member took it (done), or each one
//!    that took it gives it back and the next round starts afresh.
//!
//! No lock is held between the steps, and an id is only ever marked used by a
//! member that found it free, so two communicators sharing a member never get the
//! same id. The blocking form ([`agree_blocking`], used by dup/split/create) loops
//! until a round succeeds; MPI_Comm_idup runs [`ROUNDS`] rounds as one schedule of
//! `myrix_mpi::coll::nb` on the parent's collective context (the engine drives it
//! from every progress call), its local steps being calls of the schedule's
//! combine function on a private byte each (see [`pad`]). The new communicator's
//! handle is written at the call (its attributes copied then), and gets its
//! context when the request completes; using it before is erroneous (MPI).
//!
//! The steps of a schedule run inside progress, possibly while some caller up the
//! stack holds the pool's lock (intercommunicator creation, MPI_Comm_create_group
//! communicate under it): there they only try the lock, and a round they cannot
//! take part in fails on every member alike.

use crate::abi::*;
use crate::coll::args::coll_code;
use crate::coll_glue::pt2pt;
use crate::comm::{self, pool, CommRef};
use crate::ffi::{finish, mpi_fn, put};
use crate::greq::Hook;
use crate::intercomm::Inter;
use crate::p2p::{insert, p2p, report, CStatus, Finish};
use crate::runtime;
use myrix_mpi::coll::nb::{self, build, Builder};
use myrix_mpi::coll::{self as mcoll, ReduceOp};
use myrix_mpi::commctx::{ContextPool, CAPACITY, FIRST};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Rounds of one MPI_Comm_idup schedule (each two allreduces; later rounds are
/// idle once one succeeded).
pub const ROUNDS: usize = 8;
const BYTES: usize = CAPACITY / 8;
/// How many of the lowest free ids a round chooses among.
const SPREAD: usize = 16;
/// MPI_Comm_idup agreements whose steps may still run in this process.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The `n` candidates of a round: distinct ids among the lowest free ones of
/// `agreed`, selected by a hash of (`who`, `round`); `None` when fewer are free.
fn pick(agreed: &[u8], who: u64, round: u64, n: usize) -> Option<Vec<u32>> {
    let mut free: Vec<usize> = (0..CAPACITY)
        .filter(|&i| agreed.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) == 0))
        .take(SPREAD + n)
        .collect();
    if free.len() < n {
        return None;
    }
    let mut out = Vec::with_capacity(n);
    for k in 0..n as u64 {
        // splitmix64: a fixed, well-mixed function of the agreement and the round.
        let mut z = who ^ (round * 8 + k).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let i = free.remove((z % free.len() as u64) as usize);
        out.push(FIRST + 2 * i as u32);
    }
    Some(out)
}

/// Takes every id of `xs` here if all are free (marks them used); whether it did.
fn take(p: &mut ContextPool, xs: &[u32]) -> bool {
    if xs.iter().any(|&x| p.is_used(x)) {
        return false;
    }
    xs.iter().all(|&x| p.reserve(x))
}

/// Agrees on a new context id with the members of `parent`, blocking (collective).
pub(crate) fn agree_blocking(parent: &CommRef, name: &str) -> Result<u32, c_int> {
    let mut p = pt2pt(parent);
    let mut or = |i: &[u8], o: &mut [u8]| o.iter_mut().zip(i).for_each(|(o, i)| *o |= *i);
    // Blocking agreements of one parent never overlap on a member, so the parent's
    // context alone tells this one from the nonblocking ones (whose tag has bit 30).
    let who = u64::from(parent.ctx) << 32;
    for round in 0u64.. {
        let mut snap = pool().bitmap().to_vec();
        // Whether an idup's steps may change this pool before the take below.
        snap.push(u8::from(LIVE.load(Ordering::Acquire) > 0));
        let mut agreed = vec![0u8; snap.len()];
        let mut op = ReduceOp {
            op: &mut or,
            commutative: true,
        };
        mcoll::allreduce(&mut p, &snap, &mut agreed, &mut op).map_err(|e| coll_code(&e, name))?;
        let Some(xs) = pick(&agreed[..BYTES], who, round, 1) else {
            crate::ffi::say!("myrix MPI: {name}: no context id free on all members");
            return Err(MPI_ERR_OTHER);
        };
        let x = xs[0];
        let took = take(&mut pool(), &xs);
        if agreed[BYTES] == 0 {
            // No member has an idup in flight: every pool is as its snapshot was
            // (this thread is here), so the candidate was free everywhere; every
            // member knows it, and skips the second step alike.
            if !took {
                crate::ffi::say!("myrix MPI: {name}: context {x} taken meanwhile");
                return Err(MPI_ERR_INTERN);
            }
            return Ok(x);
        }
        let mut any = [0u8];
        let mut op = ReduceOp {
            op: &mut or,
            commutative: true,
        };
        mcoll::allreduce(&mut p, &[u8::from(!took)], &mut any, &mut op)
            .map_err(|e| coll_code(&e, name))?;
        if any[0] == 0 {
            return Ok(x);
        }
        if took {
            pool().release(x);
        }
    }
    Err(MPI_ERR_INTERN)
}

/// Memory a schedule's steps read and write, owned here until the request ends.
struct Area(Box<[u8]>);

impl Area {
    fn new(len: usize) -> Area {
        Area(vec![0u8; len].into_boxed_slice())
    }
    fn ptr(&mut self) -> *mut u8 {
        self.0.as_mut_ptr()
    }
}

/// One MPI_Comm_idup's agreement, driven by its schedule's local steps.
struct Agree {
    who: u64,
    snap: Area,
    agreed: Area,
    flag: Area,
    any: Area,
    /// The byte whose address names each local step ([`pad`]).
    pad: Area,
    pad_in: Area,
    /// How many ids (1 for an intracommunicator, 3 for an intercommunicator).
    n: usize,
    candidates: Option<Vec<u32>>,
    took: bool,
    result: Option<Vec<u32>>,
    /// Counted in [`LIVE`] (from the start until its last step, or its end).
    live: bool,
}

// SAFETY: the areas are touched only by the engine's steps and these local steps,
// both under the runtime's lock, one at a time.
unsafe impl Send for Agree {}

/// Local step `k` of round `k / 3`: 0 snapshot, 1 pick and take, 2 decide.
fn pad(round: usize, step: usize) -> usize {
    3 * round + step
}

impl Agree {
    /// No step of this agreement runs any more.
    fn over(&mut self) {
        if std::mem::take(&mut self.live) {
            LIVE.fetch_sub(1, Ordering::AcqRel);
        }
    }

    fn step(&mut self, k: usize) {
        if k + 1 == 3 * ROUNDS {
            self.over();
        }
        let (round, step) = (k / 3, k % 3);
        if self.result.is_some() {
            if step == 0 {
                self.snap.0.fill(0);
            } else if step == 1 {
                self.flag.0[0] = 0;
            }
            return;
        }
        match step {
            0 => match comm::try_pool() {
                Some(p) => self.snap.0.copy_from_slice(p.bitmap()),
                // Nothing free: the round fails everywhere.
                None => self.snap.0.fill(0xff),
            },
            1 => {
                self.candidates = pick(&self.agreed.0, self.who, round as u64, self.n);
                self.took = match (&self.candidates, comm::try_pool()) {
                    (Some(xs), Some(mut p)) => take(&mut p, xs),
                    _ => false,
                };
                self.flag.0[0] = u8::from(!self.took);
            }
            _ => {
                if self.any.0[0] == 0 {
                    self.result = self.candidates.take();
                } else if self.took {
                    // Without the lock the ids stay marked used here (never wrong,
                    // only ids fewer).
                    if let (Some(xs), Some(mut p)) = (&self.candidates, comm::try_pool()) {
                        xs.iter().for_each(|&x| p.release(x));
                    }
                }
                self.took = false;
            }
        }
    }
}

/// The request's end: gives the new communicator (and an intercommunicator's
/// hidden helpers) its context.
struct Done {
    agree: Arc<Mutex<Agree>>,
    targets: Vec<MPI_Comm>,
    /// The parent's context: the new communicator joins its session (if any).
    parent_ctx: u32,
}

impl Done {
    fn install(&self) -> Result<(), c_int> {
        let r = {
            let mut a = self.agree.lock().unwrap_or_else(|p| p.into_inner());
            a.over();
            a.result.take()
        };
        match r {
            Some(xs) => {
                let mut out = Ok(());
                for (&h, &x) in self.targets.iter().zip(&xs) {
                    out = out.and(comm::set_ctx(h, x));
                }
                if let Some(&x) = xs.first() {
                    crate::bsend::inherit_session(self.parent_ctx, x);
                }
                out
            }
            None => {
                crate::ffi::say!(
                    "myrix MPI: MPI_Comm_idup: no context id agreed in {ROUNDS} rounds"
                );
                Err(MPI_ERR_OTHER)
            }
        }
    }
}

impl Hook for Done {
    fn done(self: Box<Self>, st: &mut CStatus) {
        if let Err(e) = self.install() {
            if st.error == MPI_SUCCESS {
                st.error = e;
            }
        }
    }
    fn freed(self: Box<Self>) {
        let _ = self.install();
    }
}

/// Builds the schedule of `ROUNDS` rounds for `parent` and the agreement it drives.
fn schedule(parent: &CommRef, agree: &Arc<Mutex<Agree>>) -> Result<nb::Schedule, c_int> {
    let mut a = agree.lock().unwrap_or_else(|p| p.into_inner());
    let mut b = Builder::new(&parent.ranks, parent.rank as usize, parent.ctx + 1, 0);
    // SAFETY: the areas live in `agree`, which the request keeps (through the
    // combine function the schedule owns) until the schedule is over.
    let (snap, agreed, flag, any, pad_b, pad_in) = unsafe {
        (
            b.user(a.snap.ptr(), BYTES),
            b.user(a.agreed.ptr(), BYTES),
            b.user(a.flag.ptr(), 1),
            b.user(a.any.ptr(), 1),
            b.user(a.pad.ptr(), 3 * ROUNDS),
            b.user(a.pad_in.ptr(), 1),
        )
    };
    let pad_at = a.pad.ptr() as usize;
    drop(a);
    // A local step: a combine call on its own pad byte, with nothing in flight.
    let local = |b: &mut Builder<'_>, k: usize| {
        b.fence();
        b.reduce(pad_in, 0, pad_b, k, 1);
        b.fence();
    };
    for r in 0..ROUNDS {
        local(&mut b, pad(r, 0));
        build::allreduce(&mut b, snap, agreed, BYTES);
        local(&mut b, pad(r, 1));
        build::allreduce(&mut b, flag, any, 1);
        local(&mut b, pad(r, 2));
    }
    let st = agree.clone();
    b.set_combine(Box::new(move |i: &[u8], o: &mut [u8]| {
        let at = o.as_ptr() as usize;
        if (pad_at..pad_at + 3 * ROUNDS).contains(&at) {
            st.lock()
                .unwrap_or_else(|p| p.into_inner())
                .step(at - pad_at);
        } else {
            o.iter_mut().zip(i).for_each(|(o, i)| *o |= *i);
        }
    }));
    b.build().map_err(|e| coll_code(&e, "MPI_Comm_idup"))
}

/// MPI_Comm_idup(_with_info)'s body.
///
/// # Safety
/// `newcomm` is NULL or an MPI_Comm; `request` NULL or an MPI_Request.
unsafe fn idup(
    comm_h: MPI_Comm,
    info: Option<MPI_Info>,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
    name: &str,
) -> c_int {
    let r = (|| {
        if newcomm.is_null() || request.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let hints = info.map(crate::info::pairs_or_empty).transpose()?;
        let parent = comm::lookup(comm_h, name)?;
        let (h, req) = start(comm_h, &parent, name)?;
        if let Some(p) = hints {
            crate::info::attach(h, p);
        }
        // SAFETY: both are non-NULL, of their types by the C contract.
        unsafe { put(newcomm, h).and_then(|()| put(request, req)) }
    })();
    finish(comm_h, name, r)
}

/// Makes the new communicator (no context yet) and says what agrees on its
/// contexts: for an intracommunicator the parent; for an intercommunicator its
/// hidden both-groups communicator, over which three ids are agreed (the new one's
/// and its own hidden helpers', made here too). Last, the handles to give them to.
fn make(comm_h: MPI_Comm, parent: &CommRef) -> Result<(MPI_Comm, CommRef, Vec<MPI_Comm>), c_int> {
    let Some(i) = &parent.inter else {
        let me = parent.ranks[parent.rank as usize];
        let h = comm::install(comm_h, comm::NO_CTX, parent.ranks.to_vec(), me)?;
        return Ok((h, parent.clone(), vec![h]));
    };
    let m = comm::lookup(i.mh, "MPI_Comm_idup")?;
    let me = m.ranks[m.rank as usize];
    let mh = comm::install_with(MPI_ERRORS_RETURN, comm::NO_CTX, m.ranks.to_vec(), me)?;
    let lh = comm::install_with(MPI_ERRORS_RETURN, comm::NO_CTX, i.local.to_vec(), me);
    let lh = lh.inspect_err(|_| {
        let _ = comm::remove(mh);
    })?;
    let inter = Inter {
        local: i.local.clone(),
        lh,
        mh,
        local_first: i.local_first,
    };
    let cref = CommRef {
        ctx: comm::NO_CTX,
        rank: parent.rank,
        ranks: parent.ranks.to_vec().into(),
        inter: Some(Arc::new(inter)),
    };
    let errh = runtime::errhandler(comm_h).unwrap_or(MPI_ERRORS_ARE_FATAL);
    let h = comm::install_ref(errh, cref).inspect_err(|_| {
        let _ = comm::remove(mh);
        let _ = comm::remove(lh);
    })?;
    Ok((h, m, vec![h, mh, lh]))
}

/// Makes the new communicator and starts the agreement of its context(s).
fn start(comm_h: MPI_Comm, parent: &CommRef, name: &str) -> Result<(MPI_Comm, MPI_Request), c_int> {
    let (h, over, targets) = make(comm_h, parent)?;
    let made = (|| {
        comm::set_topology(h, comm::topology(comm_h))?;
        crate::attr::copy_all(crate::attr::Kind::Comm, comm_h, h)?;
        crate::info::attach(h, crate::info::attached(comm_h));
        let agree = Arc::new(Mutex::new(Agree {
            who: 0,
            snap: Area::new(BYTES),
            agreed: Area::new(BYTES),
            flag: Area::new(1),
            any: Area::new(1),
            pad: Area::new(3 * ROUNDS),
            pad_in: Area::new(1),
            n: targets.len(),
            candidates: None,
            took: false,
            result: None,
            live: true,
        }));
        LIVE.fetch_add(1, Ordering::AcqRel);
        let mut s = schedule(&over, &agree)?;
        let done: Box<dyn Hook> = Box::new(Done {
            agree: agree.clone(),
            targets,
            parent_ctx: parent.ctx,
        });
        runtime::with(name, |rt| {
            let p = p2p(rt)?;
            let tag = nb::tag(crate::icoll::next_seq(&over));
            s.retag(tag);
            agree.lock().unwrap_or_else(|p| p.into_inner()).who =
                (u64::from(over.ctx) << 32) | tag as u32 as u64;
            let id = p.engine.start_schedule(s).map_err(|e| report(name, &e))?;
            insert(
                p,
                Some(id),
                None,
                over.ranks.clone(),
                Finish::Custom(done),
                None,
            )
        })
    })();
    match made {
        Ok(req) => Ok((h, req)),
        Err(e) => {
            let _ = crate::attr::delete_all(crate::attr::Kind::Comm, h);
            let _ = comm::remove(h);
            Err(e)
        }
    }
}

mpi_fn! {
    /// Duplicates without blocking: see the module docs.
    fn MPI_Comm_idup / PMPI_Comm_idup(comm: MPI_Comm, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the C contract for both pointers.
        unsafe { idup(comm, None, newcomm, request, "MPI_Comm_idup") }
    }
}

mpi_fn! {
    fn MPI_Comm_idup_with_info / PMPI_Comm_idup_with_info(comm: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the C contract for both pointers.
        unsafe { idup(comm, Some(info), newcomm, request, "MPI_Comm_idup_with_info") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_free(map: &[u8], x: u32) -> bool {
        let i = ((x - FIRST) / 2) as usize;
        map[i / 8] & (1 << (i % 8)) == 0
    }

    #[test]
    fn candidates_are_distinct_free_and_the_same_for_every_member() {
        let mut map = vec![0u8; BYTES];
        // The lowest 20 ids and some scattered ones are used.
        for i in (0..20).chain([25, 31, 40]) {
            map[i / 8] |= 1 << (i % 8);
        }
        for round in 0..50 {
            for n in [1, 3] {
                let a = pick(&map, 77 << 32 | round, round, n).unwrap();
                assert_eq!(a, pick(&map, 77 << 32 | round, round, n).unwrap());
                assert_eq!(a.len(), n);
                assert!(a.iter().all(|&x| is_free(&map, x) && x % 2 == 0), "{a:?}");
                let mut d = a.clone();
                d.sort_unstable();
                d.dedup();
                assert_eq!(d.len(), n, "{a:?}");
                // Among the lowest free ones.
                assert!(a
                    .iter()
                    .all(|&x| x < FIRST + 2 * (20 + 3 + SPREAD as u32 + 3)));
            }
        }
        // Two agreements in one round mostly pick differently.
        let differ = (0..64u64)
            .filter(|&k| pick(&map, k << 32, 0, 1) != pick(&map, (k + 100) << 32, 0, 1))
            .count();
        assert!(differ > 48, "{differ} of 64 differ");
    }

    #[test]
    fn no_candidate_when_too_few_are_free() {
        let mut map = vec![0xffu8; BYTES];
        assert_eq!(pick(&map, 1, 0, 1), None);
        map[BYTES - 1] = 0x7f;
        assert_eq!(
            pick(&map, 1, 0, 1),
            Some(vec![FIRST + 2 * (CAPACITY as u32 - 1)])
        );
        assert_eq!(pick(&map, 1, 0, 3), None);
    }

    #[test]
    fn take_is_all_or_nothing() {
        let mut p = ContextPool::new();
        assert!(p.reserve(FIRST + 2));
        assert!(!take(&mut p, &[FIRST, FIRST + 2]));
        assert!(!p.is_used(FIRST));
        assert!(take(&mut p, &[FIRST, FIRST + 4]));
        assert!(p.is_used(FIRST) && p.is_used(FIRST + 4));
    }
}
