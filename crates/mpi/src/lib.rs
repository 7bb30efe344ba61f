//! The MPI runtime of myrix, the part that needs no RSM: PMI clients for the
//! launchers people already use (MPICH's hydra: PMI-1; Slurm's `srun --mpi=pmi2`:
//! PMI-2; none: a singleton), the job's layout and key exchange, and the launcher of
//! `myrix mpiexec` with its PMI-1 server. The C library (`libmpi_abi.so`, crate
//! `myrix-mpiapi`) is built on it. See `docs/mpi.md`.
//!
//! * [`pmi`] — wire formats, sans-IO client codec, socket client, PMI-1 server.
//! * [`job`] — rank, size, local rank/size, node id; business-card exchange.
//! * [`launch`] — `myrix mpiexec`.
//! * [`wrapper`] — `myrix mpicc`: the compiler command line.
//! * [`datatype`], [`op`] — MPI datatypes (type maps, pack/unpack) and the
//!   predefined reduction operations.
//! * [`group`] — MPI groups and their algebra.
//! * [`coll`] — blocking collectives over any point-to-point layer.
//! * [`commctx`] — context ids for new communicators, agreed collectively.
//! * [`shmseg`] — the shared segment a communicator's collectives go through
//!   (its set-up, shared by the C library and the Rust API).
//! * [`channel`] — MPI messages in RSM segments (seed 004 §3): postboxes, pools,
//!   acknowledgements, deferred connections; a [`p2p::fabric::Fabric`].
//! * [`rma`] — one-sided communication: windows over RSM segments.
//! * [`p2p`] — point-to-point: MPI's matching engine over a transport
//!   ([`p2p::fabric::Fabric`]).
//! * [`world`] — MPI for Rust programs: [`World::init`] and the start-up the C
//!   library shares ([`world::start`]); [`comm`] — their communicators
//!   ([`comm::Comm`]: point-to-point, dup, split, collectives on plain data);
//!   [`pod`] — the plain data they carry; [`errors`] — their errors and MPI
//!   error classes.
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

pub mod channel;
mod cma;
pub mod coll;
pub mod comm;
mod comm_coll;
pub mod commctx;
pub mod datatype;
pub mod errors;
pub mod group;
pub mod job;
pub mod launch;
pub mod op;
pub mod p2p;
pub mod pmi;
pub mod pod;
pub mod rma;
pub mod shmseg;
pub mod topo;
pub mod world;
pub mod wrapper;

pub use comm::Comm;
pub use job::Job;
pub use world::World;
