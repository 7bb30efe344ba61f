//! Communicators for Rust programs: [`Comm`], a group of the job's ranks with a
//! context of its own, over the same engine, context ids and collectives as the C
//! library (`libmpi_abi.so`).
//!
//! The world ([`crate::World`]) is a `Comm` (it dereferences to one); new ones come
//! from [`Comm::dup`], [`Comm::split`] and [`Comm::split_shared`], collective over
//! their parent as `MPI_Comm_dup`, `MPI_Comm_split` and `MPI_Comm_split_type`
//! (`MPI_COMM_TYPE_SHARED`) are: the members agree on a context id through
//! [`crate::commctx`] on the parent's collective context, exactly as the C library's
//! `comm.rs` does. Dropping a `Comm` gives its context id back (`MPI_Comm_free`).
//!
//! Point-to-point on a `Comm` names its ranks (translated to the job's for the
//! engine, and back in every status); its collectives (`comm_coll.rs`) go through
//! a shared segment when its ranks share a node, else point-to-point.
//!
//! Decisions: the communicators of one process share the engine through an
//! `Rc<RefCell<…>>`, so a `Comm` is not `Send` (MPI's `THREAD_FUNNELED`: one
//! thread calls MPI). A call made while another is under way (from a reduction's
//! closure, or through another communicator inside a [`Comm::scope`]) is
//! [`Error::Busy`], never a panic. A dropped communicator's segment goes with it:
//! each rank's handle is its own mapping of one shared file, whose pages live while
//! any rank maps them, so a peer still reading the last collective's data from its
//! own mapping loses nothing (the C library frees a freed communicator's segment at
//! its next set-up, `coll_shm.rs`).

use std::cell::{Cell, OnceCell, RefCell, RefMut};
use std::rc::Rc;

use myrix_rsm::spin::SpinWait;

use crate::coll::{self, CollError, Pt2Pt};
use crate::commctx::ContextPool;
use crate::errors::Error;
use crate::p2p::fabric::Rank;
use crate::p2p::{Engine, ReqId, Scope, ScopedReq, SendMode, Status};
use crate::pod::{bytes, bytes_mut, zeroed, Pod};
use crate::world::BoxFabric;

pub use crate::comm_coll::Op;

/// Any source, for a receive or probe.
pub const ANY_SOURCE: Option<Rank> = None;
/// Any tag, for a receive or probe.
pub const ANY_TAG: Option<i32> = None;

/// What the communicators of one process share.
pub(crate) struct Shared {
    /// `None` once the world is finalized.
    pub(crate) engine: RefCell<Option<Engine<BoxFabric>>>,
    pool: RefCell<ContextPool>,
    /// This process's node (ranks that share memory have the same).
    pub(crate) node: u32,
    /// Ranks in the job.
    job_size: Rank,
    /// The collectives' choices from the environment, read once.
    pub(crate) coll_cfg: OnceCell<crate::comm_coll::Config>,
    pub(crate) live: Cell<bool>,
}

impl Shared {
    pub(crate) fn new(engine: Engine<BoxFabric>, node: u32, job_size: Rank) -> Rc<Shared> {
        Rc::new(Shared {
            engine: RefCell::new(Some(engine)),
            pool: RefCell::new(ContextPool::new()),
            node,
            job_size,
            coll_cfg: OnceCell::new(),
            live: Cell::new(true),
        })
    }

    /// The engine for one call.
    pub(crate) fn engine(&self) -> Result<RefMut<'_, Engine<BoxFabric>>, Error> {
        let g = self.engine.try_borrow_mut().map_err(|_| Error::Busy)?;
        RefMut::filter_map(g, |e| e.as_mut()).map_err(|_| Error::Finalized)
    }
}

/// A communicator's ranks: its size, and (but for the world's identity) the job
/// rank of each and the communicator rank of each job rank.
#[derive(Clone)]
pub(crate) struct Ranks {
    pub(crate) size: Rank,
    /// Communicator rank → job rank.
    map: Option<Rc<[Rank]>>,
    /// Job rank → communicator rank (`Rank::MAX`: not a member).
    back: Option<Rc<[Rank]>>,
}

impl Ranks {
    fn identity(size: Rank) -> Ranks {
        Ranks {
            size,
            map: None,
            back: None,
        }
    }

    fn of(job_ranks: Vec<Rank>, job_size: Rank) -> Ranks {
        let mut back = vec![Rank::MAX; job_size as usize];
        for (i, &r) in job_ranks.iter().enumerate() {
            if let Some(b) = back.get_mut(r as usize) {
                *b = i as Rank;
            }
        }
        Ranks {
            size: job_ranks.len() as Rank,
            map: Some(job_ranks.into()),
            back: Some(back.into()),
        }
    }

    /// The job rank of communicator rank `r`.
    #[inline]
    pub(crate) fn job(&self, r: Rank) -> Result<Rank, Error> {
        if r >= self.size {
            return Err(Error::NoSuchRank {
                rank: r,
                size: self.size,
            });
        }
        Ok(self.map.as_ref().map_or(r, |m| m[r as usize]))
    }

    fn src(&self, s: Option<Rank>) -> Result<Option<Rank>, Error> {
        s.map(|r| self.job(r)).transpose()
    }

    /// A status with its source as a communicator rank.
    #[inline]
    fn status(&self, mut s: Status) -> Status {
        if let Some(b) = &self.back {
            s.source = b.get(s.source as usize).copied().unwrap_or(Rank::MAX);
        }
        s
    }

    /// [`Ranks::status`] of a completed receive, its own error as `Err`.
    #[inline]
    fn received(&self, s: Status) -> Result<Status, Error> {
        received(self.status(s))
    }

    fn job_ranks(&self) -> Vec<Rank> {
        match &self.map {
            Some(m) => m.to_vec(),
            None => (0..self.size).collect(),
        }
    }
}

/// A communicator; see the module docs.
pub struct Comm {
    pub(crate) sh: Rc<Shared>,
    /// Point-to-point context; the collectives use `ctx + 1`.
    pub(crate) ctx: u32,
    pub(crate) rank: Rank,
    pub(crate) ranks: Ranks,
    /// How its collectives go (set up at the first one).
    pub(crate) coll: crate::comm_coll::State,
    /// The world's context is not the pool's.
    world: bool,
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comm")
            .field("ctx", &self.ctx)
            .field("rank", &self.rank)
            .field("size", &self.ranks.size)
            .finish_non_exhaustive()
    }
}

fn received(s: Status) -> Result<Status, Error> {
    match s.error {
        Some(e) => Err(e.into()),
        None => Ok(s),
    }
}

/// Elements of `elem` bytes in a message of `len` bytes.
pub(crate) fn whole(len: usize, elem: usize) -> Result<usize, Error> {
    match elem {
        0 => Ok(0),
        _ if len % elem == 0 => Ok(len / elem),
        _ => Err(Error::Partial { len, elem }),
    }
}

/// The elements of `T` a status's `len` (bytes) holds; an error if not a whole number.
pub fn elements<T: Pod>(s: &Status) -> Result<usize, Error> {
    whole(s.len, std::mem::size_of::<T>())
}

impl Comm {
    /// The world of `size` ranks on context 0 (its collectives on 1).
    pub(crate) fn world(sh: Rc<Shared>, rank: Rank, size: Rank) -> Comm {
        Comm {
            sh,
            ctx: 0,
            rank,
            ranks: Ranks::identity(size),
            coll: Default::default(),
            world: true,
        }
    }

    pub fn rank(&self) -> Rank {
        self.rank
    }

    pub fn size(&self) -> Rank {
        self.ranks.size
    }

    /// The job rank (the world's) of this communicator's rank `r`.
    pub fn world_rank(&self, r: Rank) -> Result<Rank, Error> {
        self.ranks.job(r)
    }

    /// Sends `data` to `dest` with `tag`; returns once `data` may be reused.
    pub fn send(&mut self, dest: Rank, tag: i32, data: &[u8]) -> Result<(), Error> {
        self.send_as(dest, tag, data, SendMode::Standard)
    }

    /// As [`Comm::send`], and returns only once a receive has matched the message.
    pub fn ssend(&mut self, dest: Rank, tag: i32, data: &[u8]) -> Result<(), Error> {
        self.send_as(dest, tag, data, SendMode::Sync)
    }

    fn send_as(&mut self, dest: Rank, tag: i32, data: &[u8], mode: SendMode) -> Result<(), Error> {
        let d = self.ranks.job(dest)?;
        let ctx = self.ctx;
        Ok(self.sh.engine()?.send(d, ctx, tag, data, mode)?)
    }

    /// Sends the elements of `data` (as their bytes, in this host's byte order).
    pub fn send_pod<T: Pod>(&mut self, dest: Rank, tag: i32, data: &[T]) -> Result<(), Error> {
        self.send(dest, tag, bytes(data))
    }

    /// Receives one message from `src` (`None`: any) with `tag` (`None`: any) into
    /// `buf`; the status says from whom, with which tag, and how many bytes. A longer
    /// message is an error ([`crate::p2p::P2pError::Truncated`]) after `buf` is
    /// filled.
    pub fn recv(
        &mut self,
        src: Option<Rank>,
        tag: Option<i32>,
        buf: &mut [u8],
    ) -> Result<Status, Error> {
        let s = self.ranks.src(src)?;
        let ctx = self.ctx;
        let st = self.sh.engine()?.recv(s, ctx, tag, buf)?;
        self.ranks.received(st)
    }

    /// Receives into a slice of `Pod` elements; returns how many arrived and the
    /// status. A message that is not a whole number of elements is an error.
    pub fn recv_pod<T: Pod>(
        &mut self,
        src: Option<Rank>,
        tag: Option<i32>,
        buf: &mut [T],
    ) -> Result<(usize, Status), Error> {
        let s = self.recv(src, tag, bytes_mut(buf))?;
        Ok((whole(s.len, std::mem::size_of::<T>())?, s))
    }

    /// Sends `data` to `dest` and receives into `buf` from `src` at once (never
    /// deadlocks against a matching `sendrecv`); the receive's status.
    #[allow(clippy::too_many_arguments)]
    pub fn sendrecv(
        &mut self,
        dest: Rank,
        stag: i32,
        data: &[u8],
        src: Option<Rank>,
        rtag: Option<i32>,
        buf: &mut [u8],
    ) -> Result<Status, Error> {
        let d = self.ranks.job(dest)?;
        let s = self.ranks.src(src)?;
        let ctx = self.ctx;
        let st = self
            .sh
            .engine()?
            .sendrecv(d, stag, data, s, rtag, buf, ctx)?;
        self.ranks.received(st)
    }

    /// [`Comm::sendrecv`] of `Pod` slices; how many elements arrived and the status.
    #[allow(clippy::too_many_arguments)]
    pub fn sendrecv_pod<T: Pod, U: Pod>(
        &mut self,
        dest: Rank,
        stag: i32,
        data: &[T],
        src: Option<Rank>,
        rtag: Option<i32>,
        buf: &mut [U],
    ) -> Result<(usize, Status), Error> {
        let s = self.sendrecv(dest, stag, bytes(data), src, rtag, bytes_mut(buf))?;
        Ok((whole(s.len, std::mem::size_of::<U>())?, s))
    }

    /// Receives one message of any length into a new vector of `T` (`Vec<u8>` for
    /// bytes): a matched probe, so no other receive can take the message between the
    /// probe and the receive.
    pub fn recv_vec<T: Pod>(
        &mut self,
        src: Option<Rank>,
        tag: Option<i32>,
    ) -> Result<(Vec<T>, Status), Error> {
        let s = self.ranks.src(src)?;
        let ctx = self.ctx;
        let mut engine = self.sh.engine()?;
        let mut spin = SpinWait::new();
        let (m, probed) = loop {
            match engine.improbe(s, ctx, tag)? {
                Some(found) => break found,
                None => spin.spin(),
            }
        };
        let n = whole(probed.len, std::mem::size_of::<T>())?;
        let mut v = zeroed::<T>(n);
        let buf = bytes_mut(&mut v);
        // SAFETY: `buf` (the vector's memory) lives until the wait below returns, and
        // the wait returns only once the request is complete.
        let r = unsafe { engine.imrecv(m, buf.as_mut_ptr(), buf.len()) }?;
        let st = engine.wait(r)?;
        drop(engine);
        Ok((v, self.ranks.received(st)?))
    }

    /// The status of a message a receive from `src` with `tag` would match now
    /// (`len`: its whole length), or `None`; the message stays to be received.
    pub fn iprobe(&mut self, src: Option<Rank>, tag: Option<i32>) -> Result<Option<Status>, Error> {
        let s = self.ranks.src(src)?;
        let ctx = self.ctx;
        let st = self.sh.engine()?.iprobe(s, ctx, tag)?;
        Ok(st.map(|st| self.ranks.status(st)))
    }

    /// Waits until a message from `src` with `tag` is here; its status.
    pub fn probe(&mut self, src: Option<Rank>, tag: Option<i32>) -> Result<Status, Error> {
        let mut spin = SpinWait::new();
        loop {
            if let Some(s) = self.iprobe(src, tag)? {
                return Ok(s);
            }
            spin.spin();
        }
    }

    /// Runs `f` with requests on borrowed slices; see [`Requests`]. Every request still
    /// open when `f` returns is completed (an unmatched receive is cancelled) before
    /// `scope` returns, so the slices are never used after their borrow ends. Other
    /// communicators cannot be used inside (their calls are [`Error::Busy`]).
    pub fn scope<'env, R>(
        &mut self,
        f: impl for<'s> FnOnce(&mut Requests<'_, 's, 'env>) -> R,
    ) -> Result<R, Error> {
        let (ctx, rank) = (self.ctx, self.rank);
        let ranks = &self.ranks;
        let mut engine = self.sh.engine()?;
        Ok(engine.scope(|scope| {
            f(&mut Requests {
                scope,
                ranks,
                ctx,
                rank,
            })
        }))
    }

    /// Starts sending `data`, moved into the request until [`Comm::wait_vec`] (or
    /// [`Comm::test_vec`]) hands it back.
    pub fn isend_vec(&mut self, dest: Rank, tag: i32, data: Vec<u8>) -> Result<ReqId, Error> {
        let d = self.ranks.job(dest)?;
        let ctx = self.ctx;
        Ok(self
            .sh
            .engine()?
            .isend_vec(d, ctx, tag, data, SendMode::Standard)?)
    }

    /// Starts receiving into `buf` (its length is the most that can arrive), moved into
    /// the request until [`Comm::wait_vec`] hands it back, cut to the bytes received.
    pub fn irecv_vec(
        &mut self,
        src: Option<Rank>,
        tag: Option<i32>,
        buf: Vec<u8>,
    ) -> Result<ReqId, Error> {
        let s = self.ranks.src(src)?;
        let ctx = self.ctx;
        Ok(self.sh.engine()?.irecv_vec(s, ctx, tag, buf)?)
    }

    /// Waits for a request of [`Comm::isend_vec`] or [`Comm::irecv_vec`] (of any
    /// communicator of this process; the status names this one's ranks).
    pub fn wait_vec(&mut self, r: ReqId) -> Result<(Status, Vec<u8>), Error> {
        let (st, v) = self.sh.engine()?.wait_vec(r)?;
        Ok((self.ranks.status(st), v))
    }

    /// As [`Comm::wait_vec`] if the request is complete; `None` otherwise.
    pub fn test_vec(&mut self, r: ReqId) -> Result<Option<(Status, Vec<u8>)>, Error> {
        let done = self.sh.engine()?.test_vec(r)?;
        Ok(done.map(|(st, v)| (self.ranks.status(st), v)))
    }

    /// The collectives' point-to-point of this communicator (its context `ctx + 1`)
    /// over `engine`.
    pub(crate) fn pt2pt<'a>(&'a self, engine: &'a mut Engine<BoxFabric>) -> CollPt2Pt<'a> {
        CollPt2Pt {
            engine,
            ctx: self.ctx + 1,
            rank: self.rank as usize,
            ranks: &self.ranks,
        }
    }

    /// A new context id agreed with the other members (collective).
    fn agree(&self) -> Result<u32, Error> {
        let mut engine = self.sh.engine()?;
        let mut p = self.pt2pt(&mut engine);
        let mut pool = self.sh.pool.try_borrow_mut().map_err(|_| Error::Busy)?;
        Ok(pool.allocate(&mut p)?)
    }

    fn made(&self, ctx: u32, job_ranks: Vec<Rank>) -> Comm {
        let me = self.ranks.job(self.rank).unwrap_or(Rank::MAX);
        let ranks = Ranks::of(job_ranks, self.sh.job_size);
        let rank = ranks
            .back
            .as_ref()
            .and_then(|b| b.get(me as usize).copied())
            .unwrap_or(Rank::MAX);
        Comm {
            sh: self.sh.clone(),
            ctx,
            rank,
            ranks,
            coll: Default::default(),
            world: false,
        }
    }

    /// A communicator of the same ranks in the same order on a new context
    /// (`MPI_Comm_dup`). Collective over this one.
    pub fn dup(&self) -> Result<Comm, Error> {
        let ctx = self.agree()?;
        Ok(self.made(ctx, self.ranks.job_ranks()))
    }

    /// The ranks that pass the same `color` form a new communicator, ordered by `key`
    /// and then by their rank here (`MPI_Comm_split`); `color` `None`
    /// (MPI_UNDEFINED) joins none and gets `None`. Collective over this one.
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Comm>, Error> {
        let n = self.ranks.size as usize;
        // [color (u64::MAX: none), key] per rank.
        let mut mine = [0u8; 12];
        mine[..8].copy_from_slice(&color.map_or(u64::MAX, u64::from).to_le_bytes());
        mine[8..].copy_from_slice(&key.to_le_bytes());
        let mut all = vec![0u8; 12 * n];
        {
            let mut engine = self.sh.engine()?;
            let mut p = self.pt2pt(&mut engine);
            coll::allgather(&mut p, &mine, &mut all)?;
        }
        let ctx = self.agree()?;
        let Some(color) = color else {
            self.sh
                .pool
                .try_borrow_mut()
                .map_err(|_| Error::Busy)?
                .release(ctx);
            return Ok(None);
        };
        let word = |b: &[u8]| {
            let mut w = [0u8; 8];
            w[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(w)
        };
        let mut members: Vec<(i32, usize)> = all
            .chunks_exact(12)
            .enumerate()
            .filter(|(_, e)| word(&e[..8]) == u64::from(color))
            .map(|(i, e)| (word(&e[8..]) as u32 as i32, i))
            .collect();
        members.sort_unstable();
        let job = members
            .iter()
            .map(|&(_, i)| self.ranks.job(i as Rank))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(self.made(ctx, job)))
    }

    /// The ranks of this communicator that share memory with this one (one node), by
    /// `key` then rank (`MPI_Comm_split_type` with `MPI_COMM_TYPE_SHARED`).
    /// Collective over this one.
    pub fn split_shared(&self, key: i32) -> Result<Comm, Error> {
        let c = self.split(Some(self.sh.node), key)?;
        // Every rank passed a color: each gets a communicator.
        c.ok_or(Error::Coll(CollError::Args(
            "split by node gave none".into(),
        )))
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        if !self.world {
            if let Ok(mut pool) = self.sh.pool.try_borrow_mut() {
                pool.release(self.ctx);
            }
        }
        // Its segment: this rank's mapping (module docs).
        drop(self.coll.take_shm());
    }
}

/// Nonblocking sends and receives on slices borrowed for a [`Comm::scope`].
pub struct Requests<'a, 's, 'env> {
    scope: &'a mut Scope<'s, 'env, BoxFabric>,
    ranks: &'a Ranks,
    ctx: u32,
    rank: Rank,
}

impl<'s, 'env> Requests<'_, 's, 'env> {
    pub fn rank(&self) -> Rank {
        self.rank
    }

    pub fn size(&self) -> Rank {
        self.ranks.size
    }

    /// Starts sending `data` to `dest`.
    pub fn isend(
        &mut self,
        dest: Rank,
        tag: i32,
        data: &'env [u8],
    ) -> Result<ScopedReq<'s>, Error> {
        self.isend_as(dest, tag, data, SendMode::Standard)
    }

    /// Starts a synchronous send: its request completes once a receive matched it.
    pub fn issend(
        &mut self,
        dest: Rank,
        tag: i32,
        data: &'env [u8],
    ) -> Result<ScopedReq<'s>, Error> {
        self.isend_as(dest, tag, data, SendMode::Sync)
    }

    fn isend_as(
        &mut self,
        dest: Rank,
        tag: i32,
        data: &'env [u8],
        mode: SendMode,
    ) -> Result<ScopedReq<'s>, Error> {
        let d = self.ranks.job(dest)?;
        Ok(self.scope.isend(d, self.ctx, tag, data, mode)?)
    }

    /// Starts sending the elements of `data`.
    pub fn isend_pod<T: Pod>(
        &mut self,
        dest: Rank,
        tag: i32,
        data: &'env [T],
    ) -> Result<ScopedReq<'s>, Error> {
        self.isend(dest, tag, bytes(data))
    }

    /// Starts receiving into `buf`.
    pub fn irecv(
        &mut self,
        src: Option<Rank>,
        tag: Option<i32>,
        buf: &'env mut [u8],
    ) -> Result<ScopedReq<'s>, Error> {
        let s = self.ranks.src(src)?;
        Ok(self.scope.irecv(s, self.ctx, tag, buf)?)
    }

    /// Starts receiving into a slice of `Pod` elements (the status's `len` is in
    /// bytes: [`elements`] turns it into a count).
    pub fn irecv_pod<T: Pod>(
        &mut self,
        src: Option<Rank>,
        tag: Option<i32>,
        buf: &'env mut [T],
    ) -> Result<ScopedReq<'s>, Error> {
        self.irecv(src, tag, bytes_mut(buf))
    }

    /// Waits for `r`; its own error (truncation, a lost peer) is `Err`.
    pub fn wait(&mut self, r: ScopedReq<'s>) -> Result<Status, Error> {
        Ok(self.ranks.status(self.scope.wait(r)?))
    }

    /// Waits for every request of `rs`, in order; the first error ends the wait (the
    /// others are completed by the scope's end).
    pub fn wait_all(
        &mut self,
        rs: impl IntoIterator<Item = ScopedReq<'s>>,
    ) -> Result<Vec<Status>, Error> {
        rs.into_iter().map(|r| self.wait(r)).collect()
    }

    /// `Ok(status)` if `r` is complete; otherwise `Err(r)` hands it back.
    pub fn test(&mut self, r: ScopedReq<'s>) -> Result<Result<Status, Error>, ScopedReq<'s>> {
        let ranks = self.ranks;
        self.scope
            .test(r)
            .map(|s| s.map(|s| ranks.status(s)).map_err(Error::from))
    }

    /// As [`Comm::iprobe`].
    pub fn iprobe(&mut self, src: Option<Rank>, tag: Option<i32>) -> Result<Option<Status>, Error> {
        let s = self.ranks.src(src)?;
        let st = self.scope.iprobe(s, self.ctx, tag)?;
        Ok(st.map(|st| self.ranks.status(st)))
    }

    /// A blocking send of a slice of any lifetime.
    pub fn send(&mut self, dest: Rank, tag: i32, data: &[u8]) -> Result<(), Error> {
        let d = self.ranks.job(dest)?;
        Ok(self.scope.send(d, self.ctx, tag, data)?)
    }

    /// A blocking receive into a slice of any lifetime.
    pub fn recv(
        &mut self,
        src: Option<Rank>,
        tag: Option<i32>,
        buf: &mut [u8],
    ) -> Result<Status, Error> {
        let s = self.ranks.src(src)?;
        let st = self.scope.recv(s, self.ctx, tag, buf)?;
        Ok(self.ranks.status(st))
    }
}

/// A communicator's engine on its collective context, for [`coll`] and
/// [`crate::commctx`]: ranks are the communicator's.
pub(crate) struct CollPt2Pt<'a> {
    engine: &'a mut Engine<BoxFabric>,
    ctx: u32,
    rank: usize,
    ranks: &'a Ranks,
}

impl CollPt2Pt<'_> {
    fn job(&self, r: usize) -> Result<Rank, CollError> {
        let r = Rank::try_from(r).unwrap_or(Rank::MAX);
        self.ranks
            .job(r)
            .map_err(|_| CollError::Args(format!("rank {r} is not in the communicator")))
    }
}

impl Pt2Pt for CollPt2Pt<'_> {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.ranks.size as usize
    }
    fn send(&mut self, dest: usize, tag: i32, data: &[u8]) -> Result<(), CollError> {
        let d = self.job(dest)?;
        self.engine
            .send(d, self.ctx, tag, data, SendMode::Standard)
            .map_err(CollError::from)
    }
    fn recv(&mut self, src: usize, tag: i32, buf: &mut [u8]) -> Result<usize, CollError> {
        let s = self.job(src)?;
        let st = self.engine.recv(Some(s), self.ctx, Some(tag), buf);
        st.map_err(CollError::from).and_then(CollError::received)
    }
    fn sendrecv(
        &mut self,
        dest: usize,
        stag: i32,
        data: &[u8],
        src: usize,
        rtag: i32,
        buf: &mut [u8],
    ) -> Result<usize, CollError> {
        let (d, s) = (self.job(dest)?, self.job(src)?);
        let st = self
            .engine
            .sendrecv(d, stag, data, Some(s), Some(rtag), buf, self.ctx);
        st.map_err(CollError::from).and_then(CollError::received)
    }
}
