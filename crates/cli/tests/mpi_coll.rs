//! MPI collectives under `myrix mpiexec`: every collective on several rank counts,
//! through shared memory, point-to-point and by levels on pretend nodes, random ones
//! against a serial reference, nonblocking and persistent forms, and a bad argument
//! at the root. Needs `cc`.

mod common;

use common::mpi::{assert_every_rank, build, every_rank_ok, myrix, run, show};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// `coll_ranks.c`, built once.
fn coll_ranks() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| build("coll_ranks"))
}

/// Every collective on 2, 3 and 4 ranks (4 on two cores: the waits must yield), on
/// the world and on split communicators, through shared memory and through
/// point-to-point (`MYRIX_MPI_COLL`), checked against locally computed values.
#[test]
fn collectives_on_several_ranks_through_shm_and_p2p() {
    for how in ["shm", "p2p"] {
        for n in [2usize, 3, 4] {
            let mut c = myrix();
            c.env("MYRIX_MPI_COLL", how)
                .env("MYRIX_MPI_COLL_DEBUG", "1")
                .args(["mpiexec", "-n", &n.to_string()])
                .arg(coll_ranks());
            let o = run(c, Duration::from_secs(300));
            assert_every_rank(&o, "coll_ranks", n);
            let err = String::from_utf8_lossy(&o.stderr);
            let shm = err.contains("MPI_Allreduce of 4 bytes through shared memory");
            assert_eq!(shm, how == "shm", "{how} n={n}: the choice:\n{err}");
        }
    }
}

/// The shared-memory reductions split among the ranks from 64-byte chunks on
/// (`MYRIX_MPI_SHM_SPLIT`), in 1 KiB slots, so `coll_ranks.c`'s sizes (the user's
/// non-commutative op among them) cross the split and chunk boundaries.
#[test]
fn collectives_split_among_ranks_in_small_slots() {
    for n in [2usize, 3, 4] {
        let mut c = myrix();
        c.env("MYRIX_MPI_COLL", "shm")
            .env("MYRIX_MPI_SHM_SPLIT", "64")
            .env("MYRIX_MPI_SHM_SLOT", "1024")
            .args(["mpiexec", "-n", &n.to_string()])
            .arg(coll_ranks());
        let o = run(c, Duration::from_secs(300));
        assert_every_rank(&o, "coll_ranks", n);
    }
}

/// `coll_small.c`: Gatherv, Scatterv, Alltoallv of blocks around the 48 bytes that
/// ride in the first step's line, and Gather, Scatter, Reduce of predefined types
/// (the hot paths in the caller's buffers), every root, on 2, 3 and 4 ranks, through
/// shared memory and point-to-point.
#[test]
fn small_blocks_through_the_fast_paths() {
    let exe = build("coll_small");
    for how in ["shm", "p2p"] {
        for n in [2usize, 3, 4] {
            let mut c = myrix();
            c.env("MYRIX_MPI_COLL", how)
                .args(["mpiexec", "-n", &n.to_string()])
                .arg(&exe);
            let o = run(c, Duration::from_secs(120));
            assert_every_rank(&o, "coll_small", n);
        }
    }
}

/// `coll_random.c`, built once.
fn coll_random() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| build("coll_random"))
}

/// `coll_random.c`: 600 random collectives per run (communicators split at random,
/// ten predefined types, every operation allowed on each, MAXLOC/MINLOC on pair
/// types, random counts, roots and MPI_IN_PLACE), every result compared bitwise
/// with a serial reference each rank computes; on 2, 3 and 4 ranks, through shared
/// memory and through point-to-point, with two seeds.
#[test]
fn random_collectives_match_a_serial_reference() {
    let exe = coll_random();
    for how in ["shm", "p2p"] {
        for n in [2usize, 3, 4] {
            for seed in ["11", "12"] {
                let mut c = myrix();
                c.env("MYRIX_MPI_COLL", how)
                    .args(["mpiexec", "-n", &n.to_string()])
                    .arg(exe)
                    .args([seed, "600"]);
                let o = run(c, Duration::from_secs(60));
                let what = format!("{how} n={n} seed {seed}: {}", show(&o));
                assert!(o.status.success(), "{what}");
                let text = String::from_utf8_lossy(&o.stdout);
                for r in 0..n {
                    assert!(
                        text.lines().any(|l| l == format!("coll_random ok {r} 600")),
                        "rank {r} did not finish: {what}"
                    );
                }
            }
        }
    }
}

/// `coll_random.c` with the ranks on pretend nodes (`MYRIX_MPI_COLL_HIER_NODES`:
/// world rank w on node w % k), so communicators spanning nodes take the
/// collectives by levels (`crates/mpiapi/src/coll_hier/`) on one host: 2 nodes of
/// 2 and 2 + 3 ranks with the default switch points, and 3 and 5 nodes (leaders not
/// a power of two) with the leaders' allreduce by Rabenseifner from 1 KiB and
/// alltoall by levels at every size; the choice printed (`MYRIX_MPI_COLL_DEBUG`).
/// (Oversubscribed on two cores: a run under a loaded machine took 55 s once, the
/// flat path too; hence the generous limit.)
#[test]
fn random_collectives_by_levels_on_pretend_nodes() {
    for (k, n, small) in [(2, 4, false), (2, 5, false), (3, 5, true), (5, 6, true)] {
        // The whole run, then a short one printing the choices (the test reads the
        // output when the job has ended: a long run's lines would fill the pipe).
        for (iters, debug) in [("200", false), ("100", true)] {
            let mut c = myrix();
            c.env("MYRIX_MPI_COLL_HIER_NODES", k.to_string())
                .args(["mpiexec", "-n", &n.to_string()])
                .arg(coll_random())
                .args(["31", iters]);
            if debug {
                c.env("MYRIX_MPI_COLL_DEBUG", "1");
            }
            if small {
                c.env("MYRIX_MPI_HIER_RSA_MIN", "1k")
                    .env("MYRIX_MPI_HIER_ALLTOALL_MAX", "1m")
                    .env("MYRIX_MPI_HIER_BLOCK_MAX", "1k");
            }
            let o = run(c, Duration::from_secs(300));
            let what = format!("{k} nodes, {n} ranks: {}", show(&o));
            assert!(o.status.success(), "{what}");
            let text = String::from_utf8_lossy(&o.stdout);
            for r in 0..n {
                assert!(
                    text.lines()
                        .any(|l| l == format!("coll_random ok {r} {iters}")),
                    "rank {r} did not finish: {what}"
                );
            }
            if debug {
                check_levels(&o, small, &what);
            }
        }
    }
}

/// The choices `MYRIX_MPI_COLL_DEBUG` printed: every collective by levels at least
/// once (the all-to-alls with `rsa` only), and with `rsa` the leaders' allreduce by
/// Rabenseifner.
fn check_levels(o: &Output, rsa: bool, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    for coll in [
        "MPI_Reduce",
        "MPI_Gather",
        "MPI_Scatter",
        "MPI_Allgather",
        "MPI_Alltoall",
        "MPI_Reduce_scatter",
        "MPI_Gatherv",
        "MPI_Scatterv",
        "MPI_Ibarrier",
        "MPI_Ibcast",
        "MPI_Ireduce",
        "MPI_Iallreduce",
        "MPI_Iallgather",
        "MPI_Iallgatherv",
        "MPI_Ialltoall",
    ] {
        // With the default MYRIX_MPI_HIER_ALLTOALL_MAX (1 KiB) whether a run draws
        // an all-to-all of small enough blocks is chance: checked with `rsa` (the
        // runs with every switch point small).
        if !rsa && coll.contains("lltoall") {
            continue;
        }
        let mark = format!(": {coll} ");
        assert!(
            err.lines()
                .any(|l| l.contains(&mark) && l.contains("by levels")),
            "{coll} not by levels: {what}"
        );
    }
    if rsa {
        assert!(err.contains("leaders by Rabenseifner's"), "{what}");
    }
}

/// `coll_badroot.c`: the root of MPI_Gather, Scatter, Gatherv, Scatterv gives
/// MPI_DATATYPE_NULL or a type twice as wide as the others' (its buffer then past
/// the by-levels switch point theirs is under). On 4 ranks on 2 pretend nodes
/// (root 2 not a leader, root 1 one) and flat, the job ends with the root's error
/// (the default handler) at once: never the ranks waiting in different algorithms.
#[test]
fn a_bad_type_at_the_root_ends_the_job_by_levels_as_flat() {
    let exe = build("coll_badroot");
    for coll in ["gather", "scatter", "gatherv", "scatterv"] {
        for (kind, code) in [("null", "MPI_ERR_TYPE"), ("wide", "MPI_ERR_TRUNCATE")] {
            for (var, val, root) in [
                ("MYRIX_MPI_COLL_HIER_NODES", "2", "2"),
                ("MYRIX_MPI_COLL_HIER_NODES", "2", "1"),
                ("MYRIX_MPI_COLL_HIER", "0", "2"),
            ] {
                let mut c = myrix();
                c.env(var, val)
                    .args(["mpiexec", "-n", "4"])
                    .arg(&exe)
                    .args([coll, kind, root]);
                let t0 = Instant::now();
                let o = run(c, Duration::from_secs(60));
                let what = format!("{coll} {kind} {var}={val} root {root}: {}", show(&o));
                assert!(t0.elapsed() < Duration::from_secs(60), "hung: {what}");
                assert!(o.status.code().is_some_and(|c| c != 0), "{what}");
                assert!(String::from_utf8_lossy(&o.stderr).contains(code), "{what}");
                assert!(
                    !String::from_utf8_lossy(&o.stdout).contains(&format!("no error (rank {root}")),
                    "{what}"
                );
            }
        }
    }
}

/// Under MPI_ERRORS_RETURN, a root whose own side alone is bad (Gather's receive
/// type, Scatter's send type: MPI_DATATYPE_NULL or twice as wide; Reduce: a NULL
/// receive buffer) still takes the collective's steps (`coll_stand.rs`): every rank
/// returns, the root with the error and the others with MPI_SUCCESS, and the world
/// still works after (a barrier and an allreduce). Flat, through shared memory and
/// point-to-point, on 2 and 4 ranks.
#[test]
fn a_bad_root_side_under_errors_return_ends_on_every_rank() {
    let exe = build("coll_badroot");
    for (coll, kind, code) in [
        ("gather", "null", "MPI_ERR_TYPE"),
        ("gather", "wide", "MPI_ERR_TRUNCATE"),
        ("scatter", "null", "MPI_ERR_TYPE"),
        ("scatter", "wide", "MPI_ERR_TRUNCATE"),
        ("reduce", "null", "MPI_ERR_BUFFER"),
    ] {
        for how in ["shm", "p2p"] {
            for (n, root) in [(2usize, 1usize), (4, 0)] {
                let mut c = myrix();
                c.env("MYRIX_MPI_COLL", how)
                    .env("MYRIX_MPI_COLL_HIER", "0")
                    .args(["mpiexec", "-n", &n.to_string()])
                    .arg(&exe)
                    .args([coll, kind, &root.to_string(), "return"]);
                let o = run(c, Duration::from_secs(60));
                let what = format!("{coll} {kind} {how} n={n} root {root}");
                assert_every_rank(&o, "coll_badroot", n);
                let text = String::from_utf8_lossy(&o.stdout);
                for r in 0..n {
                    let want = if r == root { code } else { "MPI_SUCCESS" };
                    let line = format!("coll_badroot: rank {r} returned {want}");
                    assert!(
                        text.lines().any(|l| l.starts_with(&line)),
                        "{what}: no {line:?}: {}",
                        show(&o)
                    );
                }
            }
        }
    }
}

/// `icoll.c`, built once.
fn icoll() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| build("icoll"))
}

/// Every nonblocking collective and MPI_Alltoallw, alone and on 2, 3 and 4 ranks
/// (4 on two cores), several outstanding at once, mixed with blocking collectives,
/// and a rank blocked in MPI_Recv whose receive must keep an Ibarrier/Iallreduce
/// moving (the progress rule), every result checked exactly.
#[test]
fn nonblocking_collectives_under_myrix_mpiexec() {
    let check = |o: &Output, n: usize| {
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "n={n}: {}", show(o));
        for r in 0..n {
            assert!(
                text.lines().any(|l| l == format!("icoll ok {r}")),
                "n={n}: rank {r} did not finish:\n{}",
                show(o)
            );
        }
    };
    check(&run(Command::new(icoll()), Duration::from_secs(60)), 1);
    for n in [2usize, 3, 4] {
        let mut c = myrix();
        c.args(["mpiexec", "-n", &n.to_string()]).arg(icoll());
        check(&run(c, Duration::from_secs(120)), n);
    }
}

/// Persistent collectives (`pcoll.c`) at 1 to 4 and 6 ranks: eight requests made
/// once, started four times with MPI_Start and MPI_Startall, results checked each time.
#[test]
fn persistent_collectives_start_again_and_again() {
    every_rank_ok("pcoll", &[1, 2, 3, 4, 6]);
}

/// Nonblocking and persistent neighbourhood collectives and their `_c` forms
/// (`nbr_nb.c`) at 1 to 6 ranks: a 2-D grid periodic in one dimension (MPI_PROC_NULL
/// neighbours), a ring (the same neighbour twice at 1 and 2 ranks), an asymmetric
/// distributed graph with a repeated edge, against a reference from the topology.
#[test]
fn nonblocking_neighbourhood_collectives() {
    every_rank_ok("nbr_nb", &[1, 2, 3, 4, 5, 6]);
}

/// Nonblocking and persistent collectives on intercommunicators (`icoll_inter.c`) at
/// 2 to 5 ranks, uneven groups: every form against a reference, both directions for
/// the rooted ones, a non-commutative op, an idup'ed intercommunicator.
#[test]
fn nonblocking_collectives_on_intercommunicators() {
    every_rank_ok("icoll_inter", &[2, 3, 4, 5]);
}

/// A rank dying while the others wait for an MPI_Ibarrier through the shared
/// segment (`die_in_coll.c ibarrier`): the survivors' MPI_Wait returns an error (the
/// request's driver in the engine sees the lost peer) or the job is aborted, never
/// a hang.
#[test]
fn a_rank_dying_in_a_nonblocking_collective_on_the_segment_ends_the_others() {
    let exe = build("die_in_coll");
    for (n, how) in [(2usize, "kill"), (3, "exit"), (3, "kill")] {
        let mut c = myrix();
        c.args(["mpiexec", "-n", &n.to_string()])
            .arg(&exe)
            .args(["ibarrier", how]);
        let t = Instant::now();
        let o = run(c, Duration::from_secs(40));
        let took = t.elapsed();
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        let what = format!("ibarrier {how} on {n} ranks, {took:?}: {}", show(&o));
        // The victim's parent sleeps 20 s: a job that lasts that long hung.
        assert!(took < Duration::from_secs(15), "hang: {what}");
        assert!(!o.status.success(), "{what}");
        assert!(!out.contains("saw no error"), "{what}");
        let error = out.lines().any(|l| {
            l.starts_with("survivor ") && l.split_whitespace().nth(3).is_some_and(|c| c != "0")
        });
        let aborted = err.contains("called MPI_Abort with code");
        assert!(error || aborted, "neither an error nor an abort: {what}");
    }
}

/// A rank waiting for a nonblocking collective before a blocking one that the other
/// ranks enter first (`icoll_order.c`, issue 24): Ibarrier, Ibcast, Ireduce,
/// Iallreduce and two in flight, through the segment and by point-to-point schedules
/// (sizes on both sides of a slot), on the world and on a duplicate, before a
/// Barrier, Allreduce or Bcast through the segment, on 2 to 4 ranks (4 on two
/// cores). The blocking collective must move the nonblocking one, or the job hangs
/// (the time limit ends it and the test fails).
#[test]
fn a_blocking_collective_moves_the_nonblocking_ones_a_peer_waits_for() {
    let exe = build("icoll_order");
    for n in [2usize, 3, 4] {
        let mut c = myrix();
        c.args(["mpiexec", "-n", &n.to_string()]).arg(&exe);
        assert_every_rank(&run(c, Duration::from_secs(120)), "icoll_order", n);
    }
}
