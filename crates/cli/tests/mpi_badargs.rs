//! Bad arguments to the MPI collectives under MPI_ERRORS_RETURN never hang
//! (`crates/mpiapi/tests/c/coll_badargs.c`; docs/mpi.md, "Bad arguments to
//! collectives under MPI_ERRORS_RETURN"): a value every rank passes alike (a root out of range, a
//! negative count, MPI_DATATYPE_NULL, MPI_OP_NULL, MPI_IN_PLACE where the standard
//! forbids it, a NULL buffer, the same memory as send and receive buffer) is refused with its error class on every rank, and a
//! buffer only the root's call makes significant (NULL or MPI_IN_PLACE) fails at the
//! root alone while the others return MPI_SUCCESS. After each case the ranks take a
//! barrier and an allreduce: the communicator must still be in step. Needs `cc`.

mod common;

use common::mpi::{assert_every_rank, build, myrix, run, show};
use std::collections::BTreeMap;
use std::process::Output;
use std::time::{Duration, Instant};

/// The class a rank must return for `kind`, passed by every rank (`all`) or by the
/// root alone (`root`: rank n-1).
fn expected(kind: &str, who: &str, rank: usize, n: usize) -> &'static str {
    if who == "root" && rank != n - 1 {
        return "MPI_SUCCESS";
    }
    match kind {
        "root" => "MPI_ERR_ROOT",
        "count" => "MPI_ERR_COUNT",
        "type" => "MPI_ERR_TYPE",
        "op" => "MPI_ERR_OP",
        _ => "MPI_ERR_BUFFER",
    }
}

/// Checks every case's lines: each of the `n` ranks returned what it must and was
/// in step after; returns how many cases ran.
fn check(o: &Output, n: usize, what: &str) -> usize {
    assert_every_rank(o, "coll_badargs", n);
    let text = String::from_utf8_lossy(&o.stdout);
    let mut returned: BTreeMap<String, usize> = BTreeMap::new();
    let mut in_step: BTreeMap<String, usize> = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("coll_badargs: ") else {
            continue;
        };
        let w: Vec<&str> = rest.split_whitespace().collect();
        // COLL KIND WHO rank R returned CLASS | COLL KIND WHO rank R in step
        assert!(w.len() >= 6 && w[3] == "rank", "{what}: odd line {line:?}");
        let case = format!("{} {} {}", w[0], w[1], w[2]);
        let rank: usize = w[4].parse().expect("a rank");
        if w[5] == "returned" {
            let want = expected(w[1], w[2], rank, n);
            assert_eq!(w[6..].join(" "), want, "{what}: {case} rank {rank}");
            *returned.entry(case).or_default() += 1;
        } else {
            *in_step.entry(case).or_default() += 1;
        }
    }
    for (case, &k) in &returned {
        assert_eq!(k, n, "{what}: {case}: {k} ranks returned");
        assert_eq!(in_step.get(case), Some(&n), "{what}: {case}: out of step");
    }
    returned.len()
}

/// Every case of `coll_badargs.c`'s two tables on 2 and 4 ranks, through shared
/// memory, point-to-point and by levels on two pretend nodes; each job must end
/// within 60 s (it takes about a second).
#[test]
fn bad_collective_arguments_under_errors_return_never_hang() {
    let exe = build("coll_badargs");
    for (n, var, val) in [
        (2usize, "MYRIX_MPI_COLL", "shm"),
        (2, "MYRIX_MPI_COLL", "p2p"),
        (4, "MYRIX_MPI_COLL", "shm"),
        (4, "MYRIX_MPI_COLL", "p2p"),
        (4, "MYRIX_MPI_COLL_HIER_NODES", "2"),
    ] {
        let mut c = myrix();
        c.env(var, val)
            .args(["mpiexec", "-n", &n.to_string()])
            .arg(&exe)
            .args(["all", "root"]);
        let t0 = Instant::now();
        let o = run(c, Duration::from_secs(60));
        let what = format!("n={n} {var}={val}");
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "{what}: hung: {}",
            show(&o)
        );
        let cases = check(&o, n, &what);
        // The two tables of coll_badargs.c: 82 cases every rank passes alike (10 of
        // them aliased buffers, 4 overlapping ones), 12 at the root alone.
        assert_eq!(cases, 94, "{what}: {}", show(&o));
    }
}
