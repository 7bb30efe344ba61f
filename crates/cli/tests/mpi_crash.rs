//! A rank that dies inside MPI: the others end with an error or an abort, never a
//! hang, and no segment of the job is left behind. Needs `cc`.

mod common;

use common::mpi::{build, myrix, run, show};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
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
