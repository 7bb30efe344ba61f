//! MPI programs in C built with `myrix mpicc` against libmpi_abi.so and started by
//! each launcher: `myrix mpiexec`, MPICH's hydra (`mpiexec.hydra`), Slurm (`srun
//! --mpi=pmi2`, when `.ci/slurm.sh up` ran and set MYRIX_SLURM=1), and alone.
//! MPI_Abort must end the job with the right status under each.
//!
//! The programs are `crates/mpiapi/tests/c/hello.c` (runtime, launchers) and `p2p.c`
//! (point-to-point between every pair of ranks). What the library does under
//! `myrix mpiexec` is tested in `mpi_coll.rs`, `mpi_programs.rs` and `mpi_crash.rs`.
//! Needs `cc`.

mod common;

use common::mpi::{alone, build, have, myrix, run, show, MYRIX};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `hello.c` (built once per test process).
fn hello() -> PathBuf {
    build("hello")
}

/// `p2p.c` (built once per test process).
fn p2p() -> PathBuf {
    build("p2p")
}

/// Checks one "p2p ok <rank>" line per rank.
fn check_p2p(o: &Output, n: usize) {
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", show(o));
    for r in 0..n {
        assert!(
            text.lines().any(|l| l == format!("p2p ok {r}")),
            "rank {r} did not finish:\n{}",
            show(o)
        );
    }
}

/// Checks one "passed the barrier" line per rank.
fn check_ranks(o: &Output, n: usize) {
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", show(o));
    for r in 0..n {
        let want = format!("rank {r} of {n} on ");
        assert!(
            text.lines()
                .any(|l| l.starts_with(&want) && l.ends_with("passed the barrier")),
            "no {want:?}… line:\n{}",
            show(o)
        );
    }
    assert!(
        text.contains("version 5.0 library myrix MPI"),
        "{}",
        show(o)
    );
    assert!(text.contains("error 5: MPI_ERR_COMM"), "{}", show(o));
}

#[test]
fn mpicc_show_prints_the_command() {
    let o = run(
        {
            let mut c = myrix();
            c.args(["mpicc", "-show", "x.c", "-o", "x"]);
            c
        },
        Duration::from_secs(30),
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", show(&o));
    assert!(text.contains(" x.c -o x "), "{text}");
    assert!(
        text.contains("-Wl,-rpath,") && text.trim_end().ends_with("-lmpi_abi"),
        "{text}"
    );
    assert!(text.contains("mpiapi/include"), "{text}");

    // Build systems export CC=<the wrapper>: it must not call itself.
    let o = run(
        {
            let mut c = myrix();
            c.args(["mpicxx", "-show", "x.cc"]).env("CXX", "mpicxx");
            c
        },
        Duration::from_secs(30),
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", show(&o));
    assert!(text.starts_with("c++ -I"), "{text}");
    let o = run(
        {
            let mut c = myrix();
            c.args(["mpicc", "-show", "x.c"])
                .env("CC", format!("{MYRIX} mpicc"));
            c
        },
        Duration::from_secs(30),
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("cc -I"),
        "{}",
        show(&o)
    );
}

#[test]
fn singleton() {
    let o = run(alone(&hello()), Duration::from_secs(30));
    check_ranks(&o, 1);
    let mut c = alone(&hello());
    c.arg("abort");
    assert_eq!(run(c, Duration::from_secs(30)).status.code(), Some(7));
}

#[test]
fn myrix_mpiexec() {
    let mut c = myrix();
    c.args(["mpiexec", "-n", "4"]).arg(hello());
    check_ranks(&run(c, Duration::from_secs(60)), 4);

    let mut c = myrix();
    c.args(["mpiexec", "-n", "3"]).arg(hello()).arg("abort");
    let o = run(c, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(7), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("rank 1 called MPI_Abort with code 7"),
        "{}",
        show(&o)
    );
}

/// MPMD: `mpiexec -n 2 hello : -n 1 hello x`: one job of 3 ranks, MPI_APPNUM 0, 0, 1.
#[test]
fn myrix_mpiexec_runs_several_programs_in_one_job() {
    let mut c = myrix();
    c.args(["mpiexec", "-n", "2"])
        .arg(hello())
        .args([":", "-n", "1", "--wdir", "/"])
        .arg(hello())
        .arg("x");
    let o = run(c, Duration::from_secs(60));
    check_ranks(&o, 3);
    let text = String::from_utf8_lossy(&o.stdout);
    for (r, a) in [(0, 0), (1, 0), (2, 1)] {
        assert!(
            text.contains(&format!("rank {r} appnum {a}\n")),
            "{}",
            show(&o)
        );
    }
    for (args, needle) in [
        (vec![":", "/bin/true"], "needs -n N"),
        (vec![":", "-n", "0", "/bin/true"], "between 1 and 4096"),
        (vec![":", "-n", "4096", "/bin/true"], "between 1 and 4096"),
        (vec![":", "-n"], "needs a value"),
        (vec![":", "-n", "1"], "no program given"),
    ] {
        let mut c = myrix();
        c.args(["mpiexec", "-n", "1", "/bin/true"]).args(&args);
        let o = run(c, Duration::from_secs(30));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(needle),
            "{args:?}: {}",
            show(&o)
        );
    }
}

#[test]
fn point_to_point_under_myrix_mpiexec() {
    check_p2p(&run(Command::new(p2p()), Duration::from_secs(60)), 1);
    // Four ranks on two cores: the spin-waits must yield.
    for n in ["2", "3", "4"] {
        let mut c = myrix();
        c.args(["mpiexec", "-n", n]).arg(p2p());
        check_p2p(&run(c, Duration::from_secs(120)), n.parse().unwrap());
    }
}

#[test]
fn errors_return_or_end_the_job_by_default() {
    let mut c = myrix();
    c.args(["mpiexec", "-n", "2"]).arg(hello()).arg("fatal");
    let o = run(c, Duration::from_secs(60));
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    // MPI_ERR_COMM (5) returned, then fatal: the job ends with that code.
    assert!(out.contains("MPI_Comm_rank returned 5"), "{}", show(&o));
    assert!(
        err.contains("MPI_Comm_rank failed") && err.contains("MPI_ERRORS_ARE_FATAL"),
        "{}",
        show(&o)
    );
    assert!(!out.contains("still running"), "{}", show(&o));
    assert_eq!(o.status.code(), Some(5), "{}", show(&o));
}

#[test]
fn mpiexec_refuses_bad_arguments() {
    for (args, needle) in [
        (vec!["mpiexec", "-n", "4097", "true"], "between 1 and 4096"),
        (vec!["mpiexec", "-n", "0", "true"], "between 1 and 4096"),
        (vec!["mpiexec", "-n", "x", "true"], "invalid value"),
        (vec!["mpiexec", "-n", "2"], "required"),
    ] {
        let mut c = myrix();
        c.args(&args);
        let o = run(c, Duration::from_secs(30));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(needle),
            "{args:?}: {}",
            show(&o)
        );
    }
    for bad in ["0", "x", "99999999999", "-5"] {
        let mut c = myrix();
        c.env("MPIEXEC_TIMEOUT", bad)
            .args(["mpiexec", "-n", "1", "true"]);
        let o = run(c, Duration::from_secs(30));
        assert_eq!(
            o.status.code(),
            Some(2),
            "MPIEXEC_TIMEOUT={bad}: {}",
            show(&o)
        );
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("MPIEXEC_TIMEOUT"),
            "{}",
            show(&o)
        );
    }
    // The time limit, from the environment as under hydra, and from --timeout.
    for (var, arg) in [(Some("1"), None), (None, Some("1"))] {
        let mut c = myrix();
        if let Some(v) = var {
            c.env("MPIEXEC_TIMEOUT", v);
        }
        c.args(["mpiexec", "-n", "2"]);
        if let Some(a) = arg {
            c.args(["--timeout", a]);
        }
        c.args(["sleep", "30"]);
        let t = Instant::now();
        let o = run(c, Duration::from_secs(30));
        assert_eq!(o.status.code(), Some(124), "{}", show(&o));
        assert!(t.elapsed() < Duration::from_secs(15), "{}", show(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("time limit"),
            "{}",
            show(&o)
        );
    }
    let mut c = myrix();
    c.args(["mpiexec", "-n", "2", "/nonexistent/program"]);
    let o = run(c, Duration::from_secs(30));
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
}

#[test]
fn a_rank_killed_by_a_signal_ends_the_job() {
    let mut c = myrix();
    c.args([
        "mpiexec",
        "-n",
        "3",
        "sh",
        "-c",
        "[ $PMI_RANK = 2 ] && kill -9 $$; exec sleep 30",
    ]);
    let t = Instant::now();
    let o = run(c, Duration::from_secs(20));
    assert_eq!(o.status.code(), Some(137), "{}", show(&o));
    assert!(t.elapsed() < Duration::from_secs(15));
    assert!(String::from_utf8_lossy(&o.stderr).contains("rank 2 was killed by signal 9"));
}

#[test]
fn killing_mpiexec_kills_the_ranks() {
    let marker = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpi-orphan-pids");
    let _ = std::fs::remove_file(&marker);
    let mut c = myrix();
    c.args(["mpiexec", "-n", "2", "sh", "-c"])
        .arg(format!("echo $$ >> {}; exec sleep 60", marker.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut launcher = c.spawn().expect("mpiexec");
    let end = Instant::now() + Duration::from_secs(20);
    let pids = loop {
        let text = std::fs::read_to_string(&marker).unwrap_or_default();
        let pids: Vec<String> = text.lines().map(str::to_string).collect();
        if pids.len() == 2 || Instant::now() > end {
            break pids;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(pids.len(), 2, "the ranks did not start");
    launcher.kill().expect("kill mpiexec");
    launcher.wait().expect("wait mpiexec");
    let alive = |pid: &str| {
        Path::new("/proc").join(pid).exists()
            && !std::fs::read_to_string(Path::new("/proc").join(pid).join("stat"))
                .unwrap_or_default()
                .contains(") Z ")
    };
    let end = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|p| alive(p)) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !pids.iter().any(|p| alive(p)),
        "ranks {pids:?} outlived mpiexec"
    );
}

#[test]
#[ignore = "needs MPICH's hydra (apt-get install mpich); .ci/run runs it"]
fn hydra() {
    if !have("mpiexec.hydra") {
        panic!("skipped: mpiexec.hydra is not installed (apt-get install mpich)");
    }
    let mut c = Command::new("mpiexec.hydra");
    c.args(["-n", "2"]).arg(hello());
    check_ranks(&run(c, Duration::from_secs(60)), 2);
    let mut c = Command::new("mpiexec.hydra");
    c.args(["-n", "3"]).arg(p2p());
    check_p2p(&run(c, Duration::from_secs(120)), 3);
    let mut c = Command::new("mpiexec.hydra");
    c.args(["-n", "3"]).arg(hello()).arg("abort");
    let o = run(c, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(7), "{}", show(&o));
}

#[test]
#[ignore = "needs a running one-node Slurm (.ci/slurm.sh up); .ci/run runs it with MYRIX_SLURM=1"]
fn slurm() {
    if std::env::var("MYRIX_SLURM").as_deref() != Ok("1") {
        panic!("skipped: MYRIX_SLURM=1 is not set (no Slurm from .ci/slurm.sh up)");
    }
    let mut c = Command::new("srun");
    c.args(["--mpi=pmi2", "-n", "2"]).arg(hello());
    check_ranks(&run(c, Duration::from_secs(120)), 2);
    let mut c = Command::new("srun");
    c.args(["--mpi=pmi2", "-O", "-n", "4"]).arg(hello());
    check_ranks(&run(c, Duration::from_secs(120)), 4);
    let mut c = Command::new("srun");
    c.args(["--mpi=pmi2", "-O", "-n", "3"]).arg(p2p());
    check_p2p(&run(c, Duration::from_secs(120)), 3);
    // Slurm ends the step on MPI_Abort by killing every task: srun reports the
    // SIGKILL (137), as it does for MPICH's own programs.
    let mut c = Command::new("srun");
    c.args(["--mpi=pmi2", "-O", "-n", "3"])
        .arg(hello())
        .arg("abort");
    let t = Instant::now();
    let o = run(c, Duration::from_secs(120));
    assert_eq!(o.status.code(), Some(137), "{}", show(&o));
    assert!(t.elapsed() < Duration::from_secs(60), "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("MPI_Abort called with code 7"));
}
