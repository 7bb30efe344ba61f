//! The rooted collectives' direct path (`coll_rooted.rs` `direct`, the records of
//! `coll_cache.rs`): `coll_world_run.c` under `myrix mpiexec` on 2, 3 and 4 ranks,
//! on MPI_COMM_WORLD, on a dup of it and on a split with the ranks reversed (each
//! freed and made again as it runs), through shared memory in the default and in
//! 1 KiB slots, and point to point; and on 4 ranks on pretend nodes (levels). Needs
//! `cc`.

mod common;

use common::mpi::{assert_every_rank, build, myrix, run};
use std::time::Duration;

/// Gather(v)/Scatter(v) back to back with changing roots, sizes around a line and a
/// slot, a lagging rank the others run ahead of, and in-place, derived-type and
/// split-communicator calls between them, every result checked.
#[test]
fn rooted_calls_on_the_world_run_ahead_with_changing_roots() {
    let exe = build("coll_world_run");
    for (how, slot) in [("auto", None), ("shm", Some("1024")), ("p2p", None)] {
        for n in [2usize, 3, 4] {
            let mut c = myrix();
            c.env("MYRIX_MPI_COLL", how);
            if let Some(s) = slot {
                c.env("MYRIX_MPI_SHM_SLOT", s);
            }
            c.args(["mpiexec", "-n", &n.to_string()]).arg(&exe);
            let o = run(c, Duration::from_secs(180));
            assert_every_rank(&o, "coll_world_run", n);
        }
    }
    // Pretend nodes: the world has a segment, yet its calls go by levels.
    let mut c = myrix();
    c.env("MYRIX_MPI_COLL_HIER_NODES", "2")
        .args(["mpiexec", "-n", "4"])
        .arg(&exe);
    let o = run(c, Duration::from_secs(180));
    assert_every_rank(&o, "coll_world_run", 4);
}

/// The same calls on a dup of the world and on a split of it with every rank in
/// reverse order, each freed and made again every 300 calls (handles and contexts
/// reused), so the per-communicator records are made, found and dropped.
#[test]
fn rooted_calls_on_a_dup_and_a_split_run_ahead_with_changing_roots() {
    let exe = build("coll_world_run");
    for mode in ["dup", "split"] {
        for (how, slot) in [("auto", None), ("shm", Some("1024")), ("p2p", None)] {
            for n in [2usize, 3, 4] {
                if how == "p2p" && n != 3 {
                    continue;
                }
                let mut c = myrix();
                c.env("MYRIX_MPI_COLL", how);
                if let Some(s) = slot {
                    c.env("MYRIX_MPI_SHM_SLOT", s);
                }
                c.args(["mpiexec", "-n", &n.to_string()])
                    .arg(&exe)
                    .arg(mode);
                let o = run(c, Duration::from_secs(180));
                assert_every_rank(&o, "coll_world_run", n);
            }
        }
        let mut c = myrix();
        c.env("MYRIX_MPI_COLL_HIER_NODES", "2")
            .args(["mpiexec", "-n", "4"])
            .arg(&exe)
            .arg(mode);
        let o = run(c, Duration::from_secs(180));
        assert_every_rank(&o, "coll_world_run", 4);
    }
}
