//! What the MPI test binaries (`mpi_launch`, `mpi_coll`, `mpi_programs`, `mpi_crash`,
//! the `netns_*` ones…) share: building a program of `crates/mpiapi/tests/c/` with
//! `myrix mpicc` (through `myrix-ctest`, once per test process), running it under a
//! time limit without the variables cargo or a launcher set, and checking that every
//! rank finished.

use myrix_ctest::Compiler;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

// Not every test binary takes each of them.
#[allow(unused_imports)]
pub use myrix_ctest::{have, run, show};

pub const MYRIX: &str = env!("CARGO_BIN_EXE_myrix");

/// The myrix binary without the variables a launcher sets, nor cargo's LD_LIBRARY_PATH:
/// it names target/<profile>, whose libmpi_abi.so may be older than the one the
/// programs' runpath names (`myrix mpicc` links the newest copy).
pub fn myrix() -> Command {
    let mut c = Command::new(MYRIX);
    c.env_remove("LD_LIBRARY_PATH")
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("PMI_JOBID");
    c
}

/// A program run as a singleton (no launcher), without cargo's LD_LIBRARY_PATH: it
/// names target/<profile>, whose libmpi_abi.so may be older than the runpath's.
pub fn alone(exe: &Path) -> Command {
    let mut c = Command::new(exe);
    c.env_remove("LD_LIBRARY_PATH")
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("PMI_JOBID");
    c
}

/// A program of `crates/mpiapi/tests/c/` built with `myrix mpicc`, warnings as errors.
pub fn build(name: &str) -> PathBuf {
    mpicc("mpi-c", &["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"]).build(&c_source(name))
}

/// `crates/mpiapi/tests/c/<name>.c`.
pub fn c_source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mpiapi/tests/c")
        .join(format!("{name}.c"))
}

/// `myrix mpicc <flags>`, writing into `<CARGO_TARGET_TMPDIR>/<dir>`, without the
/// variables a launcher sets.
pub fn mpicc(dir: &str, flags: &[&str]) -> Compiler {
    Compiler::command(
        MYRIX,
        &["mpicc"],
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir),
    )
    .flags(flags)
    .env_remove("PMI_FD")
    .env_remove("PMI_PORT")
    .env_remove("PMI_JOBID")
}

/// `o` exited 0 and each of its `n` ranks printed "`prog` ok <rank>".
pub fn assert_every_rank(o: &Output, prog: &str, n: usize) {
    assert!(o.status.success(), "{prog} n={n}: {}", show(o));
    let text = String::from_utf8_lossy(&o.stdout);
    for r in 0..n {
        assert!(
            text.lines().any(|l| l == format!("{prog} ok {r}")),
            "{prog} n={n}: rank {r} did not finish:\n{}",
            show(o)
        );
    }
}

/// Builds `crates/mpiapi/tests/c/<prog>.c` and runs it under `myrix mpiexec` at each
/// rank count of `ranks` (at most 60 s each): it must exit 0 with every rank printing
/// "<prog> ok <rank>".
pub fn every_rank_ok(prog: &str, ranks: &[usize]) {
    ranks_ok(&build(prog), prog, ranks);
}

/// Runs `exe` under `myrix mpiexec` at each rank count of `ranks` (at most 60 s each):
/// it must exit 0 with every rank printing "<prog> ok <rank>".
pub fn ranks_ok(exe: &Path, prog: &str, ranks: &[usize]) {
    for &n in ranks {
        let mut c = myrix();
        c.args(["mpiexec", "-n", &n.to_string()]).arg(exe);
        assert_every_rank(&run(c, Duration::from_secs(60)), prog, n);
    }
}
