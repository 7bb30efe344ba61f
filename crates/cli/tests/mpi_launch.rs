//! MPI programs in C built with `myrix mpicc` against libmpi_abi.so and started by
//! each launcher: `myrix mpiexec`, MPICH's hydra (`mpiexec.hydra`), Slurm (`srun
//! --mpi=pmi2`, when `.ci/slurm.sh up` ran and set MYRIX_SLURM=1), and alone.
//! MPI_Abort must end the job with the right status under each.
//!
//! The programs are `crates/mpiapi/tests/c/hello.c` (runtime, launchers) and `p2p.c`
//! (point-to-point between every pair of ranks). Needs `cc`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const MYRIX: &str = env!("CARGO_BIN_EXE_myrix");

fn myrix() -> Command {
    let mut c = Command::new(MYRIX);
    c.env_remove("LD_LIBRARY_PATH")
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("PMI_JOBID");
    c
}

/// A program run as a singleton (no launcher), without cargo's LD_LIBRARY_PATH: it
/// names target/<profile>, whose libmpi_abi.so may be older than the runpath's.
fn alone(exe: &Path) -> Command {
    let mut c = Command::new(exe);
    c.env_remove("LD_LIBRARY_PATH")
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("PMI_JOBID");
    c
}

fn run(mut c: Command, limit: Duration) -> Output {
    c.env_remove("LD_LIBRARY_PATH")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawning");
    let end = Instant::now() + limit;
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn show(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A program of `crates/mpiapi/tests/c/` built with `myrix mpicc`.
fn build(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mpiapi/tests/c")
        .join(format!("{name}.c"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpi-c");
    std::fs::create_dir_all(&dir).expect("output directory");
    let exe = dir.join(name);
    let mut c = myrix();
    c.args(["mpicc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg(&src)
        .arg("-o")
        .arg(&exe);
    let o = run(c, Duration::from_secs(120));
    assert!(o.status.success(), "myrix mpicc failed: {}", show(&o));
    exe
}

/// `hello.c`, built once.
fn hello() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| build("hello"))
}

/// `p2p.c`, built once.
fn p2p() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| build("p2p"))
}

/// `rma.c`, built once.
fn rma() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| build("rma"))
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

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
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
    let o = run(alone(hello()), Duration::from_secs(30));
    check_ranks(&o, 1);
    let mut c = alone(hello());
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
fn unsupported_functions_say_so_and_are_fatal_by_default() {
    let mut c = myrix();
    c.args(["mpiexec", "-n", "2"])
        .arg(hello())
        .arg("unsupported");
    let o = run(c, Duration::from_secs(60));
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(out.contains("MPI_Comm_spawn returned 55"), "{}", show(&o));
    assert!(
        err.contains("MPI_Comm_spawn is not implemented yet"),
        "{}",
        show(&o)
    );
    assert!(!out.contains("still running"), "{}", show(&o));
    assert_eq!(o.status.code(), Some(55), "{}", show(&o));
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

/// One-sided communication (`rma.c`: fence, locks, counters, CAS lock, PSCW,
/// shared and dynamic windows, refusals) alone and on 2 and 4 ranks.
#[test]
fn one_sided_under_myrix_mpiexec() {
    let check = |o: &Output, n: usize| {
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", show(o));
        for r in 0..n {
            assert!(
                text.lines().any(|l| l == format!("rma ok {r}")),
                "rank {r} did not finish:\n{}",
                show(o)
            );
        }
    };
    check(&run(alone(rma()), Duration::from_secs(60)), 1);
    for n in ["2", "4"] {
        let mut c = myrix();
        c.args(["mpiexec", "-n", n]).arg(rma());
        check(&run(c, Duration::from_secs(120)), n.parse().unwrap());
    }
}

/// `rma_random.c` (random puts, gets and accumulates in fence and lock epochs,
/// checked against a serial reference) on 2, 3 and 4 ranks, two seeds each.
#[test]
fn random_one_sided_traffic_matches_a_serial_reference() {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    let exe = EXE.get_or_init(|| build("rma_random"));
    for n in [2usize, 3, 4] {
        for seed in ["1", "20261123"] {
            let mut c = myrix();
            c.args(["mpiexec", "-n", &n.to_string()]).arg(exe).arg(seed);
            let o = run(c, Duration::from_secs(120));
            assert_every_rank(&o, "rma_random", n);
        }
    }
}

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

/// `topo.c` (topologies, neighbourhood collectives), `attr_info.c` (info
/// objects, attributes, error handlers, status accessors) and `type_grid.c`
/// (subarray and darray types) on 1, 2, 3, 4 and 6 ranks.
#[test]
fn topologies_info_and_attributes_under_myrix_mpiexec() {
    for prog in ["topo", "attr_info", "type_grid"] {
        let exe = build(prog);
        for n in [1usize, 2, 3, 4, 6] {
            let mut c = myrix();
            c.args(["mpiexec", "-n", &n.to_string()]).arg(&exe);
            let o = run(c, Duration::from_secs(120));
            assert!(o.status.success(), "{prog} n={n}: {}", show(&o));
            let text = String::from_utf8_lossy(&o.stdout);
            for r in 0..n {
                assert!(
                    text.lines().any(|l| l == format!("{prog} ok {r}")),
                    "{prog} n={n}: rank {r} did not finish:\n{}",
                    show(&o)
                );
            }
        }
    }
}

/// `o` exited 0 and each of its `n` ranks printed "`prog` ok <rank>".
fn assert_every_rank(o: &Output, prog: &str, n: usize) {
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
fn every_rank_ok(prog: &str, ranks: &[usize]) {
    let exe = build(prog);
    for &n in ranks {
        let mut c = myrix();
        c.args(["mpiexec", "-n", &n.to_string()]).arg(&exe);
        assert_every_rank(&run(c, Duration::from_secs(60)), prog, n);
    }
}

/// `MPI_Comm_create_group` (`comm_group.c`) at 1 to 5 ranks: two halves creating at
/// once with different tags, all ranks but one while that one never calls, a rank
/// alone, the empty group, and the error codes of bad arguments.
#[test]
fn communicators_created_by_their_group_alone() {
    every_rank_ok("comm_group", &[1, 2, 3, 4, 5]);
}

/// Persistent collectives (`pcoll.c`) at 1 to 4 and 6 ranks: eight requests made
/// once, started four times with MPI_Start and MPI_Startall, results checked each time.
#[test]
fn persistent_collectives_start_again_and_again() {
    every_rank_ok("pcoll", &[1, 2, 3, 4, 6]);
}

/// `MPI_Isendrecv` and `MPI_Isendrecv_replace` (`isendrecv.c`) at 1 to 4 ranks: a
/// ring at 0 B to 1 MiB with the send buffer overwritten at completion, a strided
/// type, a rank to itself, MPI_PROC_NULL, bad arguments.
#[test]
fn isendrecv_completes_both_halves() {
    every_rank_ok("isendrecv", &[1, 2, 3, 4]);
}

/// The MPI-4 large-count forms (`large_count.c`) at 1 to 4 ranks: point-to-point in
/// every mode, the v-collectives with `MPI_Count`/`MPI_Aint` arrays (rooted ones read
/// at the root only, an intercommunicator's remote-sized arrays), and a count above
/// INT_MAX refused with MPI_ERR_COUNT.
#[test]
fn large_count_forms_match_the_int_forms() {
    every_rank_ok("large_count", &[1, 2, 3, 4]);
}

/// The tool information interface (`mpit.c`): before `MPI_Init` and after
/// `MPI_Finalize`, counted initializations, no variables, the documented codes.
#[test]
fn tool_interface_answers_without_variables() {
    every_rank_ok("mpit", &[1, 2]);
}

/// MPI-4 sessions without MPI_Init (`session.c`) at 1 to 4 ranks: process sets,
/// communicators from their groups, two sessions at once, session error handlers,
/// and no second start after the last session ended.
#[test]
fn sessions_start_mpi_without_init() {
    every_rank_ok("session", &[1, 2, 3, 4]);
}

/// A session beside the World model (`session_world.c`): MPI_Finalize while the
/// session is open leaves its communicator working; its end tears down.
#[test]
fn sessions_outlive_mpi_finalize() {
    every_rank_ok("session_world", &[1, 2, 3]);
}

/// `MPI_Type_get_envelope` / `MPI_Type_get_contents` and their `_c` forms
/// (`type_decode.c`) at 1 to 4 ranks: every constructor decoded, its arguments given
/// back, inner types handed back as new handles, rebuilt types carrying the same data.
#[test]
fn datatypes_decode_to_their_constructor_arguments() {
    every_rank_ok("type_decode", &[1, 2, 3, 4]);
}

/// Generalized requests (`greq.c`) at 1 to 4 ranks: query/free/cancel callbacks
/// called as the standard says from Wait, Test, Waitall, Waitany, Testall,
/// Request_get_status, Request_free and Cancel.
#[test]
fn generalized_requests_call_their_callbacks() {
    every_rank_ok("greq", &[1, 2, 3, 4]);
}

/// Nonblocking `MPI_Comm_idup` (`comm_idup.c`) at 1 to 4 ranks: eight in flight on
/// one communicator, overlapping communicators duplicated in opposite orders, an idup
/// across an Iallreduce and a blocking dup, an intercommunicator's, each new
/// communicator's traffic its own.
#[test]
fn comm_idup_does_not_block() {
    every_rank_ok("comm_idup", &[1, 2, 3, 4]);
}

/// Intercommunicators (`intercomm.c`) at 2, 3, 4 and 5 ranks, the two groups of
/// uneven sizes at 3, 4 and 5: creation, point-to-point across the groups, merge
/// ordering, every blocking collective, dup/split/create/free.
#[test]
fn intercommunicators() {
    let exe = build("intercomm");
    for n in [2usize, 3, 4, 5] {
        let mut c = myrix();
        c.args(["mpiexec", "-n", &n.to_string()]).arg(&exe);
        let o = run(c, Duration::from_secs(120));
        assert_every_rank(&o, "intercomm", n);
    }
}

/// `rma_stack.c`: windows and attachments on the caller's stack (shared in place
/// from a stack of the library's own), attachments sharing a page, a lock after a
/// fence no access used; alone and on 2 and 3 ranks.
#[test]
fn one_sided_windows_on_the_stack() {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    let exe = EXE.get_or_init(|| build("rma_stack"));
    for n in [1usize, 2, 3] {
        let o = if n == 1 {
            run(alone(exe), Duration::from_secs(60))
        } else {
            let mut c = myrix();
            c.args(["mpiexec", "-n", &n.to_string()]).arg(exe);
            run(c, Duration::from_secs(60))
        };
        assert_every_rank(&o, "rma_stack", n);
    }
}

/// `die_in_coll.c`: a rank dies (`_exit(0)` or SIGKILL) inside `MPI_Allreduce` (from
/// its user op) or `MPI_Bcast` (from a timer signal), hidden from the launcher by a
/// parent that keeps its PMI socket open, so only the library can notice. The others,
/// with `MPI_ERRORS_RETURN`, must end in seconds, never hang: collectives over
/// point-to-point (`MYRIX_MPI_COLL=p2p`) return an error (the first survivor to see
/// it leaves, and the launcher ends the rest); collectives on shared memory, whose
/// waits cannot return one, abort the job.
#[test]
fn a_rank_dying_in_a_collective_ends_the_others() {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    let exe = EXE.get_or_init(|| build("die_in_coll"));
    for mode in ["auto", "p2p"] {
        for (n, coll, how) in [
            (3usize, "allreduce", "exit"),
            (3, "allreduce", "kill"),
            (3, "bcast", "exit"),
            (2, "bcast", "kill"),
            (4, "bcast", "kill"),
        ] {
            let mut c = myrix();
            c.env("MYRIX_MPI_COLL", mode)
                .args(["mpiexec", "-n", &n.to_string()])
                .arg(exe)
                .args([coll, how]);
            let t = Instant::now();
            let o = run(c, Duration::from_secs(40));
            let took = t.elapsed();
            let (out, err) = (
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr),
            );
            let what = format!("{mode}: {coll} {how} on {n} ranks, {took:?}: {}", show(&o));
            // The victim's parent sleeps 20 s: a job that lasts that long hung.
            assert!(took < Duration::from_secs(15), "hang: {what}");
            assert!(!o.status.success(), "{what}");
            assert!(!out.contains("saw no error"), "{what}");
            let error = out.lines().any(|l| {
                l.starts_with("survivor ") && l.split_whitespace().nth(3).is_some_and(|c| c != "0")
            });
            let aborted = err.contains("while this rank waited in a collective")
                && err.contains("called MPI_Abort with code");
            assert!(err.contains(&format!("rank {} is gone", n - 1)), "{what}");
            match mode {
                "p2p" => assert!(error, "no error returned: {what}"),
                _ => assert!(error || aborted, "neither an error nor an abort: {what}"),
            }
        }
    }
}

/// Files of `dir` whose name passes `name_ok` and whose little-endian u32 at byte
/// `at` is one of `pids`: segments of those processes.
fn owned_files(dir: &Path, name_ok: impl Fn(&str) -> bool, at: usize, pids: &[u32]) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name_ok(&name) {
            continue;
        }
        let Ok(b) = std::fs::read(e.path()) else {
            continue;
        };
        if let Some(w) = b.get(at..at + 4) {
            if pids.contains(&u32::from_le_bytes(w.try_into().expect("4 bytes"))) {
                found.push(name);
            }
        }
    }
    found
}

/// `die_holding_win.c`: a rank is killed (SIGKILL) holding an exclusive lock on a
/// window, with windows of every flavor open, while the others wait for it: the
/// launcher ends the job; or, the victim hidden from the launcher, the waiters get
/// an error (MPI_Win_lock gives up when a rank of the node died; the fence's
/// barrier reports the lost peer). Each rank had RSM segments published; once the launcher
/// returned none of them is left in the registry (`ID.ctl`, the owner pid at byte
/// 12; `.tmp-PID-…` files), nor an MX shared-memory segment of the job
/// (`/dev/shm/myrix-*`, the owner pid at byte 8).
#[test]
fn a_window_of_a_killed_rank_leaves_no_segment() {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    let exe = EXE.get_or_init(|| build("die_holding_win"));
    for (n, hidden) in [(2usize, false), (3, false), (2, true), (3, true)] {
        let mut c = myrix();
        c.args(["mpiexec", "-n", &n.to_string()]).arg(exe);
        if hidden {
            c.arg("hidden");
        }
        let t = Instant::now();
        let o = run(c, Duration::from_secs(40));
        // The hidden victim's parent sleeps 20 s: a job that lasts that long hung.
        assert!(t.elapsed() < Duration::from_secs(15), "{}", show(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        if hidden {
            // Every survivor that printed got an error (the first to leave ends
            // the job); at least one did.
            let classes: Vec<&str> = out
                .lines()
                .filter_map(|l| l.strip_prefix("survivor "))
                .filter_map(|l| l.split_whitespace().nth(2))
                .collect();
            assert!(
                !classes.is_empty() && classes.iter().all(|c| *c != "0"),
                "{}",
                show(&o)
            );
        } else {
            assert_eq!(o.status.code(), Some(137), "{}", show(&o));
        }
        let mut pids = Vec::new();
        for l in out.lines().filter_map(|l| l.strip_prefix("pid ")) {
            let w: Vec<i64> = l
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            assert!(
                w.len() == 3 && w[2] > 0,
                "no segment published: {l}\n{}",
                show(&o)
            );
            pids.push(w[1] as u32);
        }
        assert_eq!(pids.len(), n, "{}", show(&o));
        let dir = std::env::var_os("MYRIX_RSM_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/dev/shm/myrix-rsm"));
        let mut left = owned_files(&dir, |f| f.ends_with(".ctl"), 12, &pids);
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name.strip_prefix(".tmp-").and_then(|r| r.split('-').next());
            if pid
                .and_then(|p| p.parse().ok())
                .is_some_and(|p: u32| pids.contains(&p))
            {
                left.push(name);
            }
        }
        let shm = std::env::var_os("MYRIX_SHM_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/dev/shm"));
        left.extend(owned_files(
            &shm,
            |f| f.starts_with("myrix-") && f != "myrix-rsm",
            8,
            &pids,
        ));
        assert!(
            left.is_empty(),
            "segments of the job left: {left:?}\n{}",
            show(&o)
        );
    }
}

/// MPI-IO (`io.c`) at 1, 2 and 4 ranks: a collective write through a strided view
/// read back byte for byte, the shared and ordered pointers, nonblocking, split and
/// large-count forms, sizes, hints, file error handlers and the error classes.
#[test]
fn mpi_io_over_posix_files() {
    every_rank_ok("io", &[1, 2, 4]);
}
