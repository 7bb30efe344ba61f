//! A rank that dies inside MPI: the others end with an error or an abort, never a
//! hang, and no segment of the job is left behind; a job whose ranks are all killed
//! at once leaves none either, under `myrix mpiexec`, hydra and Slurm (issue 23).
//! Needs `cc`.

mod common;

use common::mpi::{build, have, myrix, run, show};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

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

/// The abstract socket names of RSM segments the ranks said they had published
/// (`names PID NAME…` lines).
fn names(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix("names "))
        .flat_map(|l| l.split_whitespace().skip(1).map(str::to_string))
        .collect()
}

/// What is left of the processes `pids` and of the segment names they had: registry
/// files they owned (an older version's `ID.ctl`, the owner pid at byte 12;
/// `.tmp-PID-…`), the names still bound (`/proc/net/unix`), and MX shared-memory
/// segments (`/dev/shm/myrix-*`, the owner pid at byte 8). Only these processes'
/// own: other tests run beside.
fn leftovers(pids: &[u32], names: &[String]) -> Vec<String> {
    let dir = std::env::var_os("MYRIX_RSM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/shm/myrix-rsm"));
    let mut left = owned_files(&dir, |f| f.ends_with(".ctl"), 12, pids);
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
    let unix = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    left.extend(
        unix.lines()
            .filter_map(|l| l.split_whitespace().nth(7))
            .filter(|n| names.iter().any(|m| m == n))
            .map(str::to_string),
    );
    let shm = std::env::var_os("MYRIX_SHM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/shm"));
    left.extend(owned_files(
        &shm,
        |f| f.starts_with("myrix-") && f != "myrix-rsm",
        8,
        pids,
    ));
    left
}

/// `die_holding_win.c`: a rank is killed (SIGKILL) holding an exclusive lock on a
/// window, with windows of every flavor open, while the others wait for it: the
/// launcher ends the job; or, the victim hidden from the launcher, the waiters get
/// an error (MPI_Win_lock gives up when a rank of the node died; the fence's
/// barrier reports the lost peer). Each rank had RSM segments published; once the
/// launcher returned nothing of them is left ([`leftovers`]).
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
        let left = leftovers(&pids, &names(&out));
        assert!(
            left.is_empty(),
            "segments of the job left: {left:?}\n{}",
            show(&o)
        );
    }
}

/// A job of `die_all.c` under a launcher ("myrix", "hydra", "slurm") on `n` ranks:
/// the command, without the variables cargo or an outer launcher set.
fn die_all(kind: &str, n: usize, mode: &str) -> Command {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    let exe = EXE.get_or_init(|| build("die_all"));
    let n = n.to_string();
    let mut c = match kind {
        "myrix" => {
            let mut c = myrix();
            c.args(["mpiexec", "-n", &n]);
            c
        }
        "hydra" => {
            let mut c = Command::new("mpiexec.hydra");
            c.args(["-n", &n]);
            c
        }
        _ => {
            let mut c = Command::new("srun");
            c.args(["--mpi=pmi2", "-O", "-n", &n]);
            c
        }
    };
    c.arg(exe)
        .arg(mode)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("PMI_JOBID")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Whether process `pid` has exited (gone, or a zombie: its descriptors are closed).
fn exited(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
    }
}

/// Runs a killed job: `mode` "all" (every rank SIGKILLed at once by this test once all
/// are ready, holding a window lock) or "p2p" (the last rank SIGKILLs itself in a ring
/// exchange). Once the launcher has returned and the ranks have exited, nothing of
/// the segments the ranks had published may be left ([`leftovers`]).
fn killed_job_leaves_nothing(kind: &str, n: usize, mode: &str) {
    let mut child = die_all(kind, n, mode)
        .spawn()
        .expect("starting the launcher");
    let (tx, rx) = mpsc::channel::<String>();
    let stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        for l in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let mut stderr = child.stderr.take().expect("piped");
    let errs = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let what = format!("{kind}, {n} ranks, {mode}");
    let start = Instant::now();
    let mut lines: Vec<String> = Vec::new();
    let pids_of = |lines: &[String]| -> Vec<u32> {
        lines
            .iter()
            .filter_map(|l| l.strip_prefix("names "))
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect()
    };
    if mode == "all" {
        while lines.iter().filter(|l| l.starts_with("ready ")).count() < n {
            match rx.recv_timeout(Duration::from_secs(90).saturating_sub(start.elapsed())) {
                Ok(l) => lines.push(l),
                Err(_) => {
                    let _ = child.kill();
                    let st = child.wait();
                    let err = errs.join().unwrap_or_default();
                    panic!("{what}: the ranks never got ready: {st:?} {lines:?}\n{err}");
                }
            }
        }
        let pids = pids_of(&lines);
        assert_eq!(pids.len(), n, "{what}: {lines:?}");
        // Every rank at once: one kill(1), nothing of ours runs between the signals.
        // Its status is not looked at: the launcher may have reaped a rank the first
        // signal killed (it kills the others itself) before a later pid's turn; what
        // counts is that every rank has exited, checked below.
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg("--")
            .args(pids.iter().map(u32::to_string))
            .stderr(Stdio::null())
            .status();
    }
    let status = loop {
        if let Some(st) = child.try_wait().expect("waiting for the launcher") {
            break st;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("{what}: the launcher did not return: {lines:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = start.elapsed();
    let _ = reader.join();
    lines.extend(rx.try_iter());
    let err = errs.join().unwrap_or_default();
    let out = lines.join("\n");
    let show = format!("{what}: {status:?} after {took:?}\nstdout:\n{out}\nstderr:\n{err}");
    assert!(!status.success(), "{show}");
    let pids = pids_of(&lines);
    assert_eq!(pids.len(), n, "{show}");
    let names = names(&out);
    assert!(names.len() >= n, "each rank published segments: {show}");
    assert!(!out.contains("published no segment"), "{show}");
    // The launcher may return a moment before the last rank's exit is complete.
    let gone = Instant::now();
    while !pids.iter().all(|&p| exited(p)) {
        assert!(
            gone.elapsed() < Duration::from_secs(10),
            "ranks outlived the launcher: {show}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let left = leftovers(&pids, &names);
    assert!(
        left.is_empty(),
        "segments of the job left: {left:?}\n{show}"
    );
    eprintln!(
        "{what}: {status:?} after {took:?}, {} segment names gone",
        names.len()
    );
}

/// A killed job leaves nothing under `myrix mpiexec`: every rank SIGKILLed at once
/// (nobody left to clean up, the launcher included: its sweep finds nothing), and a
/// rank killed in a point-to-point exchange.
#[test]
fn a_killed_job_leaves_no_segment() {
    for n in [2, 3] {
        killed_job_leaves_nothing("myrix", n, "all");
    }
    killed_job_leaves_nothing("myrix", 3, "p2p");
}

#[test]
#[ignore = "needs MPICH's hydra (apt-get install mpich); .ci/run runs it"]
fn a_killed_job_leaves_no_segment_under_hydra() {
    if !have("mpiexec.hydra") {
        panic!("skipped: mpiexec.hydra is not installed (apt-get install mpich)");
    }
    killed_job_leaves_nothing("hydra", 3, "all");
    killed_job_leaves_nothing("hydra", 3, "p2p");
}

#[test]
#[ignore = "needs a running one-node Slurm (.ci/slurm.sh up); .ci/run runs it with MYRIX_SLURM=1"]
fn a_killed_job_leaves_no_segment_under_slurm() {
    if std::env::var("MYRIX_SLURM").as_deref() != Ok("1") {
        panic!("skipped: MYRIX_SLURM=1 is not set (no Slurm from .ci/slurm.sh up)");
    }
    killed_job_leaves_nothing("slurm", 3, "all");
    killed_job_leaves_nothing("slurm", 3, "p2p");
}
