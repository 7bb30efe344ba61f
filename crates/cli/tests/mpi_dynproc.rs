//! MPI's dynamic processes between separate jobs (`crates/mpiapi/src/dynproc.rs`):
//! two `myrix mpiexec` jobs (or programs without a launcher) meet through a port
//! written to a file or published by name, and check that data crosses the new
//! intercommunicator and the merged one (`crates/mpiapi/tests/c/ports.c`);
//! `MPI_Comm_join` over a socket (`join.c`); error codes for bad ports and names.

mod common;

use common::mpi::*;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

fn scratch(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpi-dynproc");
    std::fs::create_dir_all(&d).expect("scratch directory");
    let p = d.join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// `mpiexec -n n exe args…` (or `exe args…` alone when `n` is 0), with a time limit
/// the launcher enforces too.
fn job(n: usize, exe: &std::path::Path, args: &[&str]) -> Command {
    if n == 0 {
        let mut c = alone(exe);
        c.args(args);
        return c;
    }
    let mut c = myrix();
    // The launchers of spawned children inherit the limit.
    c.env("MPIEXEC_TIMEOUT", "90")
        .args(["mpiexec", "-n", &n.to_string()])
        .arg(exe)
        .args(args);
    c
}

/// Runs the server and client jobs at once; both outputs.
fn pair(server: Command, client: Command) -> (Output, Output) {
    let s = std::thread::spawn(move || run(server, Duration::from_secs(100)));
    let c = run(client, Duration::from_secs(100));
    (s.join().expect("server thread"), c)
}

#[test]
fn separate_jobs_connect_through_a_port_in_a_file() {
    let exe = build("ports");
    for (ns, nc) in [(2, 3), (1, 1), (3, 2), (0, 0)] {
        let file = scratch("port");
        let f = file.to_str().expect("utf-8 path");
        let (s, c) = pair(job(ns, &exe, &["server", f]), job(nc, &exe, &["client", f]));
        assert_every_rank(&s, "ports", ns.max(1));
        assert_every_rank(&c, "ports", nc.max(1));
        let _ = std::fs::remove_file(&file);
    }
}

#[test]
fn a_published_name_leads_to_the_port() {
    let exe = build("ports");
    let file = scratch("named");
    let f = file.to_str().expect("utf-8 path");
    let svc = format!("myrix-test-service-{}", std::process::id());
    let (s, c) = pair(
        job(2, &exe, &["server", f, &svc]),
        job(2, &exe, &["lookup", &svc]),
    );
    assert_every_rank(&s, "ports", 2);
    assert_every_rank(&c, "ports", 2);
    let _ = std::fs::remove_file(&file);
}

#[test]
fn bad_ports_and_names_are_errors() {
    let exe = build("ports");
    assert_every_rank(
        &run(job(0, &exe, &["errors"]), Duration::from_secs(60)),
        "ports",
        1,
    );
    assert_every_rank(
        &run(job(2, &exe, &["errors"]), Duration::from_secs(60)),
        "ports",
        2,
    );
}

#[test]
fn join_over_a_socket() {
    let exe = build("join");
    let sock = scratch("join.sock");
    let s = sock.to_str().expect("utf-8 path");
    // Two ranks of one job, and two jobs of one rank each.
    assert_every_rank(
        &run(job(2, &exe, &["both", s]), Duration::from_secs(100)),
        "join",
        2,
    );
    let (a, b) = pair(job(1, &exe, &["listen", s]), job(1, &exe, &["dial", s]));
    assert_every_rank(&a, "join", 1);
    assert_every_rank(&b, "join", 1);
    let _ = std::fs::remove_file(&sock);
}

/// Parents print "spawn ok <rank>", the `k` children "child ok <rank>".
fn assert_spawned(o: &Output, parents: usize, k: usize) {
    assert_every_rank(o, "spawn", parents);
    assert_every_rank(o, "child", k);
}

#[test]
fn spawn_starts_children_that_find_their_parents() {
    let exe = build("spawn");
    for (n, k) in [(1, 1), (2, 3), (3, 2)] {
        let o = run(job(n, &exe, &[&k.to_string()]), Duration::from_secs(100));
        assert_spawned(&o, n, k);
    }
    // spawn_multiple of two commands: 1 + 2 children in one job, MPI_APPNUM 0 and 1.
    let o = run(job(2, &exe, &["multi"]), Duration::from_secs(100));
    assert_spawned(&o, 2, 3);
    // Without a launcher: myrix from PATH.
    let bin = std::path::Path::new(MYRIX).parent().expect("bin dir");
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");
    let mut c = job(0, &exe, &["2"]);
    c.env("PATH", path).env("MPIEXEC_TIMEOUT", "90");
    assert_spawned(&run(c, Duration::from_secs(100)), 1, 2);
}

#[test]
fn spawn_failures_are_error_codes() {
    let exe = build("spawn");
    for mode in ["bad", "args"] {
        let o = run(job(2, &exe, &[mode]), Duration::from_secs(100));
        assert_every_rank(&o, "spawn", 2);
    }
    let o = run(job(2, &exe, &["bad"]), Duration::from_secs(100));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("launcher ended"), "{}", show(&o));
}
