//! The runtime's lock biased toward the thread that called `MPI_Init`
//! (`crates/mpiapi/src/rtlock.rs`): another thread calling in concurrently, then a
//! hand-off to a new thread, under `MPI_THREAD_SERIALIZED`, with every message
//! checked (`crates/mpiapi/tests/c/threads.c`), under `myrix mpiexec`. Needs `cc`.

mod common;

use common::mpi::every_rank_ok;

/// On 2 ranks the ping-pongs and the concurrent prober; alone, only the thread level.
#[test]
fn a_second_thread_revokes_the_bias_and_nothing_is_lost() {
    every_rank_ok("threads", &[1, 2]);
}
