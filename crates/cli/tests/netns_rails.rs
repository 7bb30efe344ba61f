//! MPI over two rails between two network namespaces joined by two veth pairs: a rail
//! taken down in the middle of a run and brought back, long messages striped over both,
//! every rail lost. The namespaces and veths are this test process's own, named by its
//! process id (`mfa<pid>`, `mfb<pid>`, veths `mf0<pid>`, `mf1<pid>`), so a second run
//! on the machine (CI, a helper) never takes or deletes another's; a Drop guard deletes
//! them, and another kills the job's processes, also when a test panics.
//!
//! The tests need root: `.ci/run` runs them with `MYRIX_NETNS=1 … --ignored
//! --test-threads=1`; a plain `cargo test` lists them as ignored, and a run with
//! `--ignored` without `MYRIX_NETNS` says it skipped them. The rail rules themselves
//! (`myrix_rsm_proto::rails`) are tested deterministically in
//! `crates/rsm-proto/tests/rails.rs`.

mod common;

use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// This process's names: the two namespaces and the two rails' veths (each veth has the
/// same name at both ends). At most 15 bytes each, the kernel's limit for interface
/// names: 3 + at most 7 digits of a pid.
struct RailNames {
    ns: [String; 2],
    rails: [String; 2],
}

fn names() -> &'static RailNames {
    static NAMES: std::sync::OnceLock<RailNames> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let pid = std::process::id();
        let n = RailNames {
            ns: [format!("mfa{pid}"), format!("mfb{pid}")],
            rails: [format!("mf0{pid}"), format!("mf1{pid}")],
        };
        assert!(n.rails.iter().chain(&n.ns).all(|s| s.len() <= 15));
        n
    })
}

fn ip(args: &[&str]) {
    let o = Command::new("ip").args(args).output().unwrap();
    assert!(
        o.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The two namespaces joined by two veth pairs (10.81.0.0/24 and 10.81.1.0/24, inside
/// the namespaces only), links not impaired; deleted when dropped.
struct RailNamespaces;

impl RailNamespaces {
    fn up() -> RailNamespaces {
        let n = names();
        // The guard first: a failure half-way deletes what was made.
        let guard = RailNamespaces;
        for ns in &n.ns {
            ip(&["netns", "add", ns]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        for (i, v) in n.rails.iter().enumerate() {
            ip(&[
                "link", "add", v, "netns", &n.ns[0], "type", "veth", "peer", "name", v, "netns",
                &n.ns[1],
            ]);
            for (k, ns) in n.ns.iter().enumerate() {
                let addr = format!("10.81.{i}.{}/24", k + 1);
                ip(&["-n", ns, "addr", "add", &addr, "dev", v]);
                ip(&["-n", ns, "link", "set", v, "up"]);
            }
        }
        guard
    }

    /// Takes rail `i` down (both ends) or brings it back up.
    fn set(&self, i: usize, up: bool) {
        let n = names();
        for ns in &n.ns {
            let state = if up { "up" } else { "down" };
            ip(&["-n", ns, "link", "set", &n.rails[i], state]);
        }
    }

    /// Packets received by namespace a's end of rail `i` so far.
    fn rx_packets(&self, i: usize) -> u64 {
        let n = names();
        let o = Command::new("ip")
            .args(["netns", "exec", &n.ns[0], "cat"])
            .arg(format!(
                "/sys/class/net/{}/statistics/rx_packets",
                n.rails[i]
            ))
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout)
            .trim()
            .parse()
            .unwrap_or(0)
    }
}

impl Drop for RailNamespaces {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veths in it (and their peers).
        for ns in &names().ns {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// `failover.c` built with `myrix mpicc -O1`.
fn failover_program() -> std::path::PathBuf {
    common::mpi::mpicc("mpi-netns-rails", &["-O1"]).build(&common::mpi::c_source("failover"))
}

/// A running `myrix mpiexec` in a process group of its own (its ranks are in it too):
/// dropping it kills the whole group, so no rank outlives a failed test.
struct Job(Option<Child>);

impl Job {
    fn spawn(cmd: &mut Command) -> Job {
        use std::os::unix::process::CommandExt;
        Job(Some(cmd.process_group(0).spawn().unwrap()))
    }

    fn kill_group(&self) {
        if let Some(c) = &self.0 {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", c.id())])
                .stderr(Stdio::null())
                .status();
        }
    }

    /// Waits until `end`, kills the group past that; the job's status and output.
    fn finish(mut self, end: Instant) -> (ExitStatus, String, String) {
        let mut child = self.0.take().unwrap();
        while child.try_wait().unwrap().is_none() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.0 = Some(child);
        // Whatever is left of the group (ranks of a job that hung).
        self.kill_group();
        let o = self.0.take().unwrap().wait_with_output().unwrap();
        (
            o.status,
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.kill_group();
        if let Some(mut c) = self.0.take() {
            let _ = c.wait();
        }
    }
}

/// Two ranks of `failover.c` for `secs` seconds across the namespaces, on both rails,
/// with `env` added.
fn spawn_failover(exe: &std::path::Path, secs: u64, env: &[(&str, &str)]) -> Job {
    let n = names();
    let mut cmd = common::mpi::myrix();
    cmd.args(["mpiexec", "--netns", &n.ns.join(","), "-n", "2"])
        .arg(exe)
        .arg(secs.to_string())
        .env("MYRIX_MPI_IFACE", n.rails.join(","))
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Job::spawn(&mut cmd)
}

/// Sleeps until `s` seconds after `start`.
fn at(start: Instant, s: u64) {
    if let Some(d) = (start + Duration::from_secs(s)).checked_duration_since(Instant::now()) {
        std::thread::sleep(d);
    }
}

/// Rail fail-over is invisible to an MPI program: `failover.c` (two ranks streaming
/// messages of mixed sizes both ways, inline to 1 MiB, every byte checked, errors
/// returned) runs across the two namespaces on two rails; rail `down` is taken down at
/// 4 s and brought back at 12 s. The program must finish without an error or a wrong
/// byte and must not pause while `down` is down: its message count rises between the
/// engine's timeout after the rail went down (4 + 5 s) and the rail's return (12 s);
/// the other rail carried the traffic meanwhile (at least a second's worth of what
/// `down` carried before), and `down` was taken up again after it came back
/// (docs/rsm-net.md, "Rails under MPI").
fn survives_a_rail_going_down_and_coming_back(down: usize) {
    let exe = failover_program();
    let ns = RailNamespaces::up();
    let secs = 24;
    let job = spawn_failover(&exe, secs, &[]);
    let start = Instant::now();
    let other = 1 - down;
    at(start, 4);
    let before = ns.rx_packets(down);
    let other_before = ns.rx_packets(other);
    ns.set(down, false);
    at(start, 12);
    let other_down = ns.rx_packets(other);
    ns.set(down, true);
    let (status, out, err) = job.finish(start + Duration::from_secs(secs + 60));
    eprint!("{err}");
    assert!(status.success(), "{status:?}\n{out}\n{err}");
    for r in 0..2 {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("failover ok {r} "))),
            "rank {r} did not finish\n{out}\n{err}"
        );
    }
    let (down_end, other_end) = (ns.rx_packets(down), ns.rx_packets(other));
    eprintln!(
        "mpi rails: packets received on rail {down}: {before} before it went down, {down_end} at the end; on rail {other}: {other_before}, {other_down} when rail {down} came back, {other_end} at the end"
    );
    assert!(
        before > 100,
        "rail {down} carried nothing before it went down"
    );
    // The program went on while `down` was down: `failover.c`'s per-second lines
    // (rank 0's clock, which starts after this test's, so its 11 s line came before
    // the rail's return at 12 s here).
    let lines = progress_lines(&err);
    let count_by = |t: u64| {
        lines
            .iter()
            .filter(|&&(s, _)| s <= t)
            .map(|&(_, n)| n)
            .max()
            .unwrap_or(0)
    };
    let (at_timeout, before_back) = (count_by(9), count_by(11));
    eprintln!(
        "mpi rails: rail {down} down from 4 s to 12 s: {at_timeout} messages by the 9 s line, {before_back} by the 11 s line"
    );
    assert!(
        before_back > at_timeout,
        "the program paused while rail {down} was down ({at_timeout} messages by 9 s, {before_back} by 11 s)\n{err}"
    );
    // Rail `other` carried the stream, not only the replay of what `down` held.
    assert!(
        other_down - other_before > before / 4,
        "rail {other} carried {} packets while rail {down} was down, less than a second's worth of what rail {down} carried before ({before} in 4 s)",
        other_down - other_before
    );
    assert!(
        down_end > before + 1000,
        "rail {down} was not used again after it came back"
    );
}

/// `failover.c`'s lines `failover: <s> s, <n> messages`: (seconds, messages).
fn progress_lines(stderr: &str) -> Vec<(u64, u64)> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("failover: ")?;
            let (s, rest) = rest.split_once(" s, ")?;
            let n = rest.strip_suffix(" messages")?;
            Some((s.parse().ok()?, n.parse().ok()?))
        })
        .collect()
}

/// Rail 0 is the primary: it carries every postbox (and a share of the long messages'
/// blocks), so its loss moves everything to rail 1.
#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces mfa<pid> and mfb<pid>)"]
fn mpi_survives_a_rail_going_down_and_coming_back() {
    if common::netns_skipped("mpi rails") {
        return;
    }
    survives_a_rail_going_down_and_coming_back(0);
}

/// Rail 1 carries only pieces of striped long messages (with the default settings):
/// losing it mid-message replays them on rail 0, behind which the postboxes wait.
#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces mfa<pid> and mfb<pid>)"]
fn mpi_survives_the_striping_rail_going_down_and_coming_back() {
    if common::netns_skipped("mpi rails") {
        return;
    }
    survives_a_rail_going_down_and_coming_back(1);
}

/// Runs `failover.c` for 5 s over both rails with `env` and checks that every byte was
/// right (the postbox after its striped blocks: the cross-rail order rule of
/// `myrix_rsm_proto::rails`) and that both rails carried a comparable share.
fn stripes_over_both_rails(what: &str, env: &[(&str, &str)]) {
    let exe = failover_program();
    let ns = RailNamespaces::up();
    let job = spawn_failover(&exe, 5, env);
    let (status, out, err) = job.finish(Instant::now() + Duration::from_secs(60));
    assert!(status.success(), "{what}: {status:?}\n{out}\n{err}");
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("failover ok "))
            .count(),
        2,
        "{what}: {out}\n{err}"
    );
    let (r0, r1) = (ns.rx_packets(0), ns.rx_packets(1));
    eprintln!("mpi rails: striped ({what}): {r0} packets received on rail 0, {r1} on rail 1");
    assert!(
        r1 > r0 / 4 && r0 > r1 / 4,
        "{what}: not striped: {r0} and {r1} packets"
    );
}

/// Long messages are striped over both rails with the default settings: the channel
/// puts a postbox's 4 KiB blocks as one run of 40 or 56 KiB, at or above RSM's
/// striping size (32 KiB).
#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces mfa<pid> and mfb<pid>)"]
fn mpi_stripes_long_messages_over_both_rails() {
    if common::netns_skipped("mpi rails") {
        return;
    }
    stripes_over_both_rails("default geometry", &[]);
}

/// The same with 64 KiB pool blocks (`MYRIX_MPI_LARGE_BLOCK=65536`, 1 MiB pool): each
/// block is a striped put of its own.
#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces mfa<pid> and mfb<pid>)"]
fn mpi_stripes_long_messages_with_64k_blocks() {
    if common::netns_skipped("mpi rails") {
        return;
    }
    stripes_over_both_rails(
        "64 KiB blocks",
        &[
            ("MYRIX_MPI_LARGE_BLOCK", "65536"),
            ("MYRIX_MPI_POOL", "1048576"),
        ],
    );
}

/// Only losing every rail is an error: the same program with both rails taken down at
/// 4 s (for good) fails with an MPI error, reported by the program, within a bounded
/// time (the engine's 5 s timeout on each rail in turn), and does not hang.
#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces mfa<pid> and mfb<pid>)"]
fn mpi_fails_in_bounded_time_when_every_rail_is_down() {
    if common::netns_skipped("mpi rails") {
        return;
    }
    let exe = failover_program();
    let ns = RailNamespaces::up();
    let job = spawn_failover(&exe, 60, &[]);
    let start = Instant::now();
    at(start, 4);
    ns.set(0, false);
    ns.set(1, false);
    let (status, out, err) = job.finish(start + Duration::from_secs(40));
    let took = start.elapsed();
    eprint!("{err}");
    eprintln!("mpi rails: every rail down at 4 s; the job ended after {took:?}");
    assert!(
        took < Duration::from_secs(38),
        "the job hung with every rail down"
    );
    assert!(!status.success(), "{status:?}\n{out}\n{err}");
    assert!(
        err.contains("failover: rank"),
        "the program did not report an MPI error\n{out}\n{err}"
    );
}
