//! MPI for Rust programs: [`World`], the job's processes as one communicator, over the
//! same core as the C library (`libmpi_abi.so`) and without C.
//!
//! [`World::init`] starts from whatever launched the process, as `MPI_Init` does:
//! `myrix mpiexec` or MPICH's hydra (PMI-1), Slurm's `srun --mpi=pmi2` (PMI-2), or
//! nothing (a singleton). It opens the channels the C library opens ([`start`]: shared
//! memory between the ranks of one host, the network between hosts or namespaces).
//! A `World` dereferences to its [`Comm`] (`MPI_COMM_WORLD`): rank, size, blocking
//! and nonblocking sends and receives of byte slices and of plain-old-data slices
//! ([`Pod`]), probes, collectives, and new communicators ([`Comm::dup`],
//! [`Comm::split`], [`Comm::split_shared`]); dropping the world finalizes.
//!
//! ```no_run
//! use myrix_mpi::world::{Op, World, ANY_TAG};
//! # fn main() -> Result<(), myrix_mpi::world::Error> {
//! let mut world = World::init()?;
//! if world.rank() == 0 {
//!     world.send_pod(1, 7, &[1.5f64, 2.5])?;
//! } else if world.rank() == 1 {
//!     let mut x = [0f64; 2];
//!     let (n, status) = world.recv_pod(Some(0), ANY_TAG, &mut x)?;
//!     assert_eq!((n, status.tag), (2, 7));
//! }
//! let mut params = [0u64; 2];
//! if world.rank() == 0 {
//!     params = [64, 100];
//! }
//! world.bcast(0, &mut params)?;
//! let me = world.rank() as f64;
//! let sum = world.allreduce_one(me, Op::Sum)?;
//! let color = world.rank() % 2;
//! let mut rows = world.split(Some(color), 0)?.expect("a color");
//! rows.barrier()?;
//! # let _ = sum;
//! world.finalize() // or let it drop
//! # }
//! ```
//!
//! Nonblocking operations come in two shapes, both safe: on borrowed slices inside
//! [`Comm::scope`] (every request is completed before the scope ends, as in
//! `std::thread::scope`), or on owned vectors ([`Comm::isend_vec`],
//! [`Comm::irecv_vec`], handed back by [`Comm::wait_vec`]).
//!
//! Decisions: the world's point-to-point traffic uses context id 0 (MPI_COMM_WORLD's),
//! its collectives context 1, so a user's tags never meet a collective's; other
//! communicators get ids agreed as the C library agrees them ([`crate::commctx`]).
//! Every error is an [`Error`] with its MPI class ([`Error::class`]); nothing a peer
//! sends can make this module panic. A `World` dropped while its thread panics ends
//! the whole job through the launcher (the others would otherwise wait for it for
//! ever in the closing barrier).

use std::rc::Rc;

use crate::channel::{ChannelConfig, ChannelFabric};
use crate::coll;
use crate::comm::Shared;
use crate::job::Job;
use crate::p2p::fabric::Fabric;
use crate::p2p::Engine;

pub use crate::comm::{elements, Comm, Op, Requests, ANY_SOURCE, ANY_TAG};
pub use crate::errors::{Error, ErrorClass};
pub use crate::pod::{bytes, bytes_mut, Num, Pod};

/// The transport chosen at start-up (a boxed [`Fabric`]: chosen at run time).
pub type BoxFabric = Box<dyn Fabric + Send>;

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
    comm: Comm,
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

impl std::ops::Deref for World {
    type Target = Comm;
    fn deref(&self) -> &Comm {
        &self.comm
    }
}

impl std::ops::DerefMut for World {
    fn deref_mut(&mut self) -> &mut Comm {
        &mut self.comm
    }
}

impl World {
    /// Joins the job this process was launched into (or starts alone) and opens the
    /// channels to the other ranks. Collective: every rank of the job calls it.
    pub fn init() -> Result<World, Error> {
        let (job, fabric) = start()?;
        let sh: Rc<Shared> = Shared::new(Engine::new(fabric), job.node_id, job.size);
        Ok(World {
            comm: Comm::world(sh, job.rank, job.size),
            job,
            done: false,
        })
    }

    /// Where the ranks run (local rank and size, node id and count).
    pub fn job(&self) -> &Job {
        &self.job
    }

    /// Ends the whole job with exit status `code` (every rank, through the launcher).
    pub fn abort(&mut self, code: i32, why: &str) -> ! {
        self.job.abort(code, why)
    }

    /// Leaves the job: a barrier (every message sent to this rank is in), the
    /// channels closed, the launcher told. Collective. Dropping the world does the
    /// same, without the error. Communicators still alive fail with
    /// [`Error::Finalized`] afterwards.
    pub fn finalize(mut self) -> Result<(), Error> {
        self.close()
    }

    fn close(&mut self) -> Result<(), Error> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(());
        }
        // Over point-to-point: a segment is not worth setting up to leave.
        let closing = self
            .comm
            .sh
            .engine()
            .and_then(|mut e| Ok(coll::barrier(&mut self.comm.pt2pt(&mut e))?));
        // Past this fence no rank makes progress on a channel any more (each returned
        // from the barrier, taking in what was sent to it), nor reads a segment: the
        // segments can go.
        let fence = match (&closing, self.job.size > 1) {
            (Ok(()), true) => self.job.barrier().map_err(Error::Pmi),
            _ => Ok(()),
        };
        let sh = self.comm.sh.clone();
        sh.live.set(false);
        drop(self.comm.coll.take_shm());
        if let Ok(mut e) = sh.engine.try_borrow_mut() {
            *e = None;
        }
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
