//! The thread levels asked for through `MPI_Init_thread` from C, and the runtime's lock
//! biased toward the thread that called `MPI_Init` (`crates/mpiapi/src/rtlock.rs`),
//! under `myrix mpiexec` (`crates/mpiapi/tests/c/threads.c`, every message checked).
//! SINGLE and FUNNELED are given as asked, MULTIPLE is answered with SERIALIZED;
//! `MPI_Query_thread` and `MPI_Is_thread_main` agree. Needs `cc`.

mod common;

use common::mpi::{assert_every_rank, build, myrix, run};
use std::time::Duration;

/// `threads.c <mode>` under `myrix mpiexec` on 1 and 2 ranks.
fn level(mode: &str) {
    let exe = build("threads");
    for n in [1usize, 2] {
        let mut c = myrix();
        c.args(["mpiexec", "-n", &n.to_string()]).arg(&exe);
        if !mode.is_empty() {
            c.arg(mode);
        }
        assert_every_rank(&run(c, Duration::from_secs(60)), "threads", n);
    }
}

/// On 2 ranks the ping-pongs and the concurrent prober; alone, only the thread level.
#[test]
fn a_second_thread_revokes_the_bias_and_nothing_is_lost() {
    level("");
}

#[test]
fn single_is_given_when_asked_for() {
    level("single");
}

/// The main thread ping-pongs while another thread, told it is not the main one,
/// watches the rounds go by.
#[test]
fn funneled_is_given_when_asked_for() {
    level("funneled");
}

/// MULTIPLE is not provided: SERIALIZED comes back, and the SERIALIZED steps run.
#[test]
fn multiple_is_answered_with_serialized() {
    level("multiple");
}
