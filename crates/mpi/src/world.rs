//! MPI for Rust programs: [`World`], the job's processes as one communicator, over the
//! same core as the C library (`libmpi_abi.so`) and without C.
//!
//! [`World::init`] starts from whatever launched the process, as `MPI_Init` does:
//! `myrix mpiexec` or MPICH's hydra (PMI-1), Slurm's `srun --mpi=pmi2` (PMI-2), or
//! nothing (a singleton). It opens the channels the C library opens ([`start`]: shared
//! memory between the ranks of one host, the network between hosts or namespaces) and
//! gives rank, size, blocking and nonblocking sends and receives of byte slices and of
//! plain-old-data slices ([`Pod`]), probes, a barrier, and a clean finalize on drop.
//!
//! ```no_run
//! use myrix_mpi::world::{World, ANY_TAG};
//! # fn main() -> Result<(), myrix_mpi::world::Error> {
//! let mut world = World::init()?;
//! if world.rank() == 0 {
//!     world.send_pod(1, 7, &[1.5f64, 2.5])?;
//! } else if world.rank() == 1 {
//!     let mut x = [0f64; 2];
//!     let (n, status) = world.recv_pod(Some(0), ANY_TAG, &mut x)?;
//!     assert_eq!((n, status.tag), (2, 7));
//! }
//! world.barrier()?;
//! world.finalize() // or let it drop
//! # }
//! ```
//!
//! Nonblocking operations come in two shapes, both safe: on borrowed slices inside
//! [`World::scope`] (every request is completed before the scope ends, as in
//! `std::thread::scope`), or on owned vectors ([`World::isend_vec`],
//! [`World::irecv_vec`], handed back by [`World::wait_vec`]).
//!
//! Decisions: point-to-point traffic uses context id 0 (MPI_COMM_WORLD's), the barrier
//! context 1 (its collective context), so a user's tags never meet the barrier's.
//! Every error is an [`Error`]; nothing a peer sends can make this module panic. A
//! `World` dropped while its thread panics ends the whole job through the launcher
//! (the others would otherwise wait for it for ever in the closing barrier).

use myrix_rsm::spin::SpinWait;

use crate::channel::{ChannelConfig, ChannelFabric};
use crate::coll::{self, CollError, Pt2Pt};
use crate::job::Job;
use crate::p2p::fabric::{Fabric, Rank};
use crate::p2p::{Engine, P2pError, ReqId, Scope, ScopedReq, SendMode, Status};
use crate::pmi::PmiError;

/// The transport chosen at start-up (a boxed [`Fabric`]: chosen at run time).
pub type BoxFabric = Box<dyn Fabric + Send>;

/// Any source, for a receive or probe.
pub const ANY_SOURCE: Option<Rank> = None;
/// Any tag, for a receive or probe.
pub const ANY_TAG: Option<i32> = None;

/// Point-to-point context of the world (MPI_COMM_WORLD's), and its collective one.
const CTX: u32 = 0;
const COLL_CTX: u32 = 1;

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The launcher could not be reached (or answered nonsense).
    #[error("cannot join the job: {0}")]
    Join(PmiError),
    /// The channels to the other ranks could not be opened.
    #[error("cannot set up point-to-point: {0}")]
    Open(String),
    /// A send, receive or probe failed: a truncated message, a lost peer, the
    /// transport.
    #[error("{0}")]
    P2p(#[from] P2pError),
    #[error("rank {rank} is not in this job of {size} ranks")]
    NoSuchRank { rank: Rank, size: Rank },
    /// A message of `len` bytes received into a slice of `elem`-byte elements.
    #[error("a message of {len} bytes is not a whole number of {elem}-byte elements")]
    Partial { len: usize, elem: usize },
    #[error("barrier: {0}")]
    Coll(#[from] CollError),
    /// The launcher failed while the job ran (a fence, finalize).
    #[error("launcher: {0}")]
    Pmi(PmiError),
    /// The world was finalized (only reachable through a bug here).
    #[error("the world is finalized")]
    Finalized,
}

/// Element types whose slices travel as their bytes.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes is a valid `Self`, and `Self` has
/// no padding bytes (a receive writes any bytes into it; a send reads all of them).
pub unsafe trait Pod: Copy + 'static {}

macro_rules! pod {
    ($($t:ty)*) => { $(
        // SAFETY: a primitive number: no padding, every bit pattern valid.
        unsafe impl Pod for $t {}
    )* };
}
pod!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64);
// SAFETY: an array of `Pod` elements has no padding between or after them.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// The bytes of a slice of `Pod` values.
pub fn bytes<T: Pod>(s: &[T]) -> &[u8] {
    // SAFETY: `T: Pod` has no padding, so every byte of the slice is initialized; the
    // length is the slice's size in bytes, and the borrow is carried over.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// The bytes of a mutable slice of `Pod` values (any bytes written are valid values).
pub fn bytes_mut<T: Pod>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `bytes`; every bit pattern is a valid `T` (`Pod`), and the
    // exclusive borrow is carried over.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// The transport for `job`, as the C library's `MPI_Init` opens it: postboxes in RSM
/// segments (shared memory on one node, the network between nodes); a process alone
/// does without segments when they cannot be made (it then cannot reach other jobs).
pub fn open_fabric(job: &mut Job) -> Result<BoxFabric, String> {
    let cfg = ChannelConfig::from_env().map_err(|e| e.to_string())?;
    match ChannelFabric::open(job, &cfg) {
        Ok(f) => Ok(Box::new(f)),
        Err(_) if job.size == 1 => {
            let (_, mut f) = crate::p2p::loopnet::LoopNet::new(1, Default::default());
            Ok(Box::new(f.pop().ok_or("no in-process fabric")?))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The start-up the C library's `MPI_Init` and [`World::init`] share: joins the job
/// through the launcher in the environment ([`Job::init`]), sets the spin-wait rule
/// for this many ranks on the host, and opens the transport ([`open_fabric`]).
pub fn start() -> Result<(Job, BoxFabric), Error> {
    let mut job = Job::init().map_err(Error::Join)?;
    // Waits spin hard unless this job alone has more ranks here than cores.
    myrix_rsm::spin::set_local_procs(job.local_size as usize);
    let fabric = open_fabric(&mut job).map_err(Error::Open)?;
    Ok((job, fabric))
}

/// The job's ranks as one communicator; see the module docs.
pub struct World {
    /// `None` only once finalized (dropped before the launcher is told).
    engine: Option<Engine<BoxFabric>>,
    job: Job,
    done: bool,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("rank", &self.job.rank)
            .field("size", &self.job.size)
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
fn whole(len: usize, elem: usize) -> Result<usize, Error> {
    match elem {
        0 => Ok(0),
        _ if len % elem == 0 => Ok(len / elem),
        _ => Err(Error::Partial { len, elem }),
    }
}

impl World {
    /// Joins the job this process was launched into (or starts alone) and opens the
    /// channels to the other ranks. Collective: every rank of the job calls it.
    pub fn init() -> Result<World, Error> {
        let (job, fabric) = start()?;
        Ok(World {
            engine: Some(Engine::new(fabric)),
            job,
            done: false,
        })
    }

    pub fn rank(&self) -> Rank {
        self.job.rank
    }

    pub fn size(&self) -> Rank {
        self.job.size
    }

    /// Where the ranks run (local rank and size, node id and count).
    pub fn job(&self) -> &Job {
        &self.job
    }

    fn eng(&mut self) -> Result<&mut Engine<BoxFabric>, Error> {
        self.engine.as_mut().ok_or(Error::Finalized)
    }

    fn check(&self, r: Rank) -> Result<(), Error> {
        match r < self.job.size {
            true => Ok(()),
            false => Err(Error::NoSuchRank {
                rank: r,
                size: self.job.size,
            }),
        }
    }

    fn check_src(&self, src: Option<Rank>) -> Result<(), Error> {
        src.map_or(Ok(()), |r| self.check(r))
    }

    /// Sends `data` to `dest` with `tag`; returns once `data` may be reused.
    pub fn send(&mut self, dest: Rank, tag: i32, data: &[u8]) -> Result<(), Error> {
        self.check(dest)?;
        Ok(self.eng()?.send(dest, CTX, tag, data, SendMode::Standard)?)
    }

    /// As [`World::send`], and returns only once a receive has matched the message.
    pub fn ssend(&mut self, dest: Rank, tag: i32, data: &[u8]) -> Result<(), Error> {
        self.check(dest)?;
        Ok(self.eng()?.send(dest, CTX, tag, data, SendMode::Sync)?)
    }

    /// Sends the elements of `data` (as their bytes, in this host's byte order).
    pub fn send_pod<T: Pod>(&mut self, dest: Rank, tag: i32, data: &[T]) -> Result<(), Error> {
        self.send(dest, tag, bytes(data))
    }

    /// Receives one message from `src` (`None`: any) with `tag` (`None`: any) into
    /// `buf`; the status says from whom, with which tag, and how many bytes. A longer
    /// message is an error ([`P2pError::Truncated`]) after `buf` is filled.
    pub fn recv(
        &mut self,
        src: Option<Rank>,
        tag: Option<i32>,
        buf: &mut [u8],
    ) -> Result<Status, Error> {
        self.check_src(src)?;
        received(self.eng()?.recv(src, CTX, tag, buf)?)
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

    /// Receives one message of any length into a new vector of `T` (`Vec<u8>` for
    /// bytes): a matched probe, so no other receive can take the message between the
    /// probe and the receive.
    pub fn recv_vec<T: Pod>(
        &mut self,
        src: Option<Rank>,
        tag: Option<i32>,
    ) -> Result<(Vec<T>, Status), Error> {
        self.check_src(src)?;
        let engine = self.eng()?;
        let mut spin = SpinWait::new();
        let (m, probed) = loop {
            match engine.improbe(src, CTX, tag)? {
                Some(found) => break found,
                None => spin.spin(),
            }
        };
        let n = whole(probed.len, std::mem::size_of::<T>())?;
        // SAFETY: all-zero bytes are a valid `T` (`Pod`: every bit pattern is).
        let zero: T = unsafe { std::mem::zeroed() };
        let mut v = vec![zero; n];
        let buf = bytes_mut(&mut v);
        // SAFETY: `buf` (the vector's memory) lives until the wait below returns, and
        // the wait returns only once the request is complete.
        let r = unsafe { engine.imrecv(m, buf.as_mut_ptr(), buf.len()) }?;
        let s = received(engine.wait(r)?)?;
        Ok((v, s))
    }

    /// The status of a message a receive from `src` with `tag` would match now
    /// (`len`: its whole length), or `None`; the message stays to be received.
    pub fn iprobe(&mut self, src: Option<Rank>, tag: Option<i32>) -> Result<Option<Status>, Error> {
        self.check_src(src)?;
        Ok(self.eng()?.iprobe(src, CTX, tag)?)
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

    /// Returns once every rank has called it (over point-to-point, its own context).
    pub fn barrier(&mut self) -> Result<(), Error> {
        let engine = self.eng()?;
        Ok(coll::barrier(&mut CollPt2Pt { engine })?)
    }

    /// Runs `f` with requests on borrowed slices; see [`Requests`]. Every request still
    /// open when `f` returns is completed (an unmatched receive is cancelled) before
    /// `scope` returns, so the slices are never used after their borrow ends.
    pub fn scope<'env, R>(
        &mut self,
        f: impl for<'s> FnOnce(&mut Requests<'_, 's, 'env>) -> R,
    ) -> Result<R, Error> {
        let size = self.job.size;
        Ok(self.eng()?.scope(|scope| f(&mut Requests { scope, size })))
    }

    /// Starts sending `data`, moved into the request until [`World::wait_vec`] (or
    /// [`World::test_vec`]) hands it back.
    pub fn isend_vec(&mut self, dest: Rank, tag: i32, data: Vec<u8>) -> Result<ReqId, Error> {
        self.check(dest)?;
        Ok(self
            .eng()?
            .isend_vec(dest, CTX, tag, data, SendMode::Standard)?)
    }

    /// Starts receiving into `buf` (its length is the most that can arrive), moved into
    /// the request until [`World::wait_vec`] hands it back, cut to the bytes received.
    pub fn irecv_vec(
        &mut self,
        src: Option<Rank>,
        tag: Option<i32>,
        buf: Vec<u8>,
    ) -> Result<ReqId, Error> {
        self.check_src(src)?;
        Ok(self.eng()?.irecv_vec(src, CTX, tag, buf)?)
    }

    /// Waits for a request of [`World::isend_vec`] or [`World::irecv_vec`].
    pub fn wait_vec(&mut self, r: ReqId) -> Result<(Status, Vec<u8>), Error> {
        Ok(self.eng()?.wait_vec(r)?)
    }

    /// As [`World::wait_vec`] if the request is complete; `None` otherwise.
    pub fn test_vec(&mut self, r: ReqId) -> Result<Option<(Status, Vec<u8>)>, Error> {
        Ok(self.eng()?.test_vec(r)?)
    }

    /// Ends the whole job with exit status `code` (every rank, through the launcher).
    pub fn abort(&mut self, code: i32, why: &str) -> ! {
        self.job.abort(code, why)
    }

    /// Leaves the job: a barrier (every message sent to this rank is in), the
    /// channels closed, the launcher told. Collective. Dropping the world does the
    /// same, without the error.
    pub fn finalize(mut self) -> Result<(), Error> {
        self.close()
    }

    fn close(&mut self) -> Result<(), Error> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(());
        }
        let closing = self.barrier();
        // Past this fence no rank makes progress on a channel any more (each returned
        // from the barrier, taking in what was sent to it): the segments can go.
        let fence = match (&closing, self.job.size > 1) {
            (Ok(()), true) => self.job.barrier().map_err(Error::Pmi),
            _ => Ok(()),
        };
        self.engine = None;
        let fin = self.job.finalize().map_err(Error::Pmi);
        closing.and(fence).and(fin)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if std::thread::panicking() {
            // The other ranks may wait for this one: end the job instead of leaving
            // them (or this rank, in the closing barrier) hanging.
            self.job.abort(101, "a rank panicked");
        }
        if let Err(e) = self.close() {
            eprintln!("myrix MPI: rank {}: finalize: {e}", self.job.rank);
        }
    }
}

/// Nonblocking sends and receives on slices borrowed for a [`World::scope`].
pub struct Requests<'a, 's, 'env> {
    scope: &'a mut Scope<'s, 'env, BoxFabric>,
    size: Rank,
}

impl<'s, 'env> Requests<'_, 's, 'env> {
    fn check(&self, r: Rank) -> Result<(), Error> {
        match r < self.size {
            true => Ok(()),
            false => Err(Error::NoSuchRank {
                rank: r,
                size: self.size,
            }),
        }
    }

    pub fn rank(&self) -> Rank {
        self.scope.rank()
    }

    pub fn size(&self) -> Rank {
        self.size
    }

    /// Starts sending `data` to `dest`.
    pub fn isend(
        &mut self,
        dest: Rank,
        tag: i32,
        data: &'env [u8],
    ) -> Result<ScopedReq<'s>, Error> {
        self.check(dest)?;
        Ok(self.scope.isend(dest, CTX, tag, data, SendMode::Standard)?)
    }

    /// Starts a synchronous send: its request completes once a receive matched it.
    pub fn issend(
        &mut self,
        dest: Rank,
        tag: i32,
        data: &'env [u8],
    ) -> Result<ScopedReq<'s>, Error> {
        self.check(dest)?;
        Ok(self.scope.isend(dest, CTX, tag, data, SendMode::Sync)?)
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
        if let Some(r) = src {
            self.check(r)?;
        }
        Ok(self.scope.irecv(src, CTX, tag, buf)?)
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
        Ok(self.scope.wait(r)?)
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
        self.scope.test(r).map(|s| s.map_err(Error::from))
    }

    /// As [`World::iprobe`].
    pub fn iprobe(&mut self, src: Option<Rank>, tag: Option<i32>) -> Result<Option<Status>, Error> {
        if let Some(r) = src {
            self.check(r)?;
        }
        Ok(self.scope.iprobe(src, CTX, tag)?)
    }

    /// A blocking send of a slice of any lifetime.
    pub fn send(&mut self, dest: Rank, tag: i32, data: &[u8]) -> Result<(), Error> {
        self.check(dest)?;
        Ok(self.scope.send(dest, CTX, tag, data)?)
    }

    /// A blocking receive into a slice of any lifetime.
    pub fn recv(
        &mut self,
        src: Option<Rank>,
        tag: Option<i32>,
        buf: &mut [u8],
    ) -> Result<Status, Error> {
        if let Some(r) = src {
            self.check(r)?;
        }
        Ok(self.scope.recv(src, CTX, tag, buf)?)
    }
}

/// The elements of `T` a status's `len` (bytes) holds; an error if not a whole number.
pub fn elements<T: Pod>(s: &Status) -> Result<usize, Error> {
    whole(s.len, std::mem::size_of::<T>())
}

/// The world's engine on its collective context, for [`coll`].
struct CollPt2Pt<'a> {
    engine: &'a mut Engine<BoxFabric>,
}

impl Pt2Pt for CollPt2Pt<'_> {
    fn rank(&self) -> usize {
        self.engine.rank() as usize
    }
    fn size(&self) -> usize {
        self.engine.size() as usize
    }
    fn send(&mut self, dest: usize, tag: i32, data: &[u8]) -> Result<(), CollError> {
        self.engine
            .send(dest as Rank, COLL_CTX, tag, data, SendMode::Standard)
            .map_err(CollError::from)
    }
    fn recv(&mut self, src: usize, tag: i32, buf: &mut [u8]) -> Result<usize, CollError> {
        let s = self
            .engine
            .recv(Some(src as Rank), COLL_CTX, Some(tag), buf);
        s.map_err(CollError::from).and_then(CollError::received)
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
        let (d, s) = (dest as Rank, src as Rank);
        let st = self
            .engine
            .sendrecv(d, stag, data, Some(s), Some(rtag), buf, COLL_CTX);
        st.map_err(CollError::from).and_then(CollError::received)
    }
}
