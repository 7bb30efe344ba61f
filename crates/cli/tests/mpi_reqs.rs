//! The two kinds of C request handle (`crates/mpiapi/src/p2p_reqs.rs`: engine
//! handles for `MPI_Irecv` on the world, table entries for the rest) through every
//! completion call, cancel and free (`crates/mpiapi/tests/c/reqs.c`), under `myrix
//! mpiexec`. Needs `cc`.

mod common;

use common::mpi::every_rank_ok;

/// Both kinds mixed in one array through Waitall, Wait, Test, Testall, Waitany,
/// Testany, Waitsome, Testsome and Request_get_status, with statuses in world
/// ranks; a cancelled and a freed engine handle; a completed one refused when used
/// again. Alone (it only prints), on 2 and on 3 ranks.
#[test]
fn engine_and_table_handles_complete_alike() {
    every_rank_ok("reqs", &[1, 2, 3]);
}
