//! Randomized derived datatypes over the whole stack (issue 23: non-contiguous data
//! gathered into the postboxes and pool blocks and scattered out of them in place):
//! `crates/mpiapi/tests/c/dtype_random.c` (vectors with negative strides, shuffled
//! indexed blocks, structs, resized types with holes, contiguous repeats; every
//! protocol size from inline postboxes to 1 MiB rendezvous; blocking, nonblocking,
//! unexpected, probed, matched-probe, synchronous and self receives; truncation; every
//! byte checked against the map kept by hand, holes untouched, counts and elements)
//! built with `myrix mpicc` and run under `myrix mpiexec` on shared memory with the
//! default channel and a shrunk one, and the program itself checked under MPICH.
//! Needs `cc`.

mod common;

use common::mpi::{build, myrix, run, show};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

fn dtype_random() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| build("dtype_random"))
}

/// `o` succeeded and each of its `n` ranks printed "dtype_random ok <rank> <rounds>
/// <bytes>"; returns the bytes received in all.
fn every_rank_ok(o: &Output, n: usize, what: &str) -> u64 {
    assert!(o.status.success(), "{what}: {}", show(o));
    let text = String::from_utf8_lossy(&o.stdout);
    (0..n)
        .map(|r| {
            let line = text
                .lines()
                .find_map(|l| l.trim().strip_prefix(&format!("dtype_random ok {r} ")))
                .unwrap_or_else(|| panic!("{what}: rank {r} did not finish: {}", show(o)));
            line.split_whitespace()
                .nth(1)
                .and_then(|w| w.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("{what}: rank {r}: {line:?}"))
        })
        .sum()
}

fn mpiexec(n: usize, seed: &str, rounds: &str, env: &[(&str, &str)]) -> Output {
    let mut c = myrix();
    c.envs(env.iter().copied())
        .args(["mpiexec", "-n", &n.to_string()])
        .arg(dtype_random())
        .args([seed, rounds]);
    run(c, Duration::from_secs(180))
}

/// The default channel (40-byte inline limit, 64 KiB eager limit) at 2 and 3 ranks.
#[test]
fn random_derived_types_over_shared_memory() {
    for (n, seeds) in [(2, &["1", "2", "3"][..]), (3, &["4", "20261129"][..])] {
        for seed in seeds {
            let what = format!("n={n} seed {seed}");
            let bytes = every_rank_ok(&mpiexec(n, seed, "40", &[]), n, &what);
            assert!(bytes > 0, "{what}: no byte received");
        }
    }
}

/// A shrunk channel: 8 postboxes, a pool of four large blocks, rendezvous past 4 KiB,
/// so queues and pool wrap and the gathers and scatters are cut at every boundary.
#[test]
fn random_derived_types_with_small_queues_pool_and_eager_limit() {
    let env = [
        ("MYRIX_MPI_QUEUE", "8"),
        ("MYRIX_MPI_POOL", "16384"),
        ("MYRIX_MPI_EAGER", "4096"),
        ("MYRIX_MPI_SHORT", "200"),
    ];
    for seed in ["5", "6"] {
        let what = format!("small channel, seed {seed}");
        every_rank_ok(&mpiexec(2, seed, "40", &env), 2, &what);
    }
}

/// The program is correct MPI: under MPICH it passes the same seeds (the status of a
/// truncated receive, which the standard leaves open, unchecked).
#[test]
fn the_program_passes_under_mpich() {
    if !common::mpi::have("mpicc.mpich") || !common::mpi::have("mpiexec.mpich") {
        eprintln!("dtype_random under MPICH: skipped: no mpicc.mpich or mpiexec.mpich");
        return;
    }
    let exe = myrix_ctest::Compiler::command(
        "mpicc.mpich",
        &[],
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("dtype-random-mpich"),
    )
    .flags(&["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"])
    .build(&common::mpi::c_source("dtype_random"));
    for seed in ["1", "4"] {
        let mut c = Command::new("mpiexec.mpich");
        c.env_remove("PMI_FD")
            .env_remove("PMI_PORT")
            .args(["-n", "2"])
            .arg(&exe)
            .args([seed, "40", "lenient"]);
        every_rank_ok(&run(c, Duration::from_secs(180)), 2, "MPICH -n 2");
    }
}
