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
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

pub mod job;
pub mod launch;
pub mod pmi;
pub mod wrapper;

pub use job::Job;
pub mod channel;
pub mod p2p;
