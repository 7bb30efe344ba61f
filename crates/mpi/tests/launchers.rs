//! The job module under each launcher: `myrix_mpi::launch` (PMI-1 on PMI_FD), MPICH's
//! hydra (`mpiexec.hydra`, PMI-1), Slurm (`srun --mpi=pmi2`, PMI-2, when
//! `MYRIX_SLURM=1` says `.ci/slurm.sh up` ran), and no launcher (singleton). The
//! program is `examples/job_info.rs`, which cargo builds for the tests.

use myrix_ctest::{have, run};
use myrix_mpi::launch::{self, App, LaunchSpec};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

fn example() -> PathBuf {
    // target/<profile>/deps/launchers-<hash> -> target/<profile>/examples/job_info
    let p = myrix_ctest::profile_dir().join("examples/job_info");
    assert!(
        p.exists(),
        "{} is not built: run `cargo test -p myrix-mpi` (which builds the examples), not `--test launchers`",
        p.display()
    );
    p
}

/// Checks `n` lines, one per rank, local layout as expected on one node.
fn check_lines(out: &Output, n: u32, mode: &str) {
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(
        lines.len(),
        n as usize,
        "stdout: {text}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for r in 0..n {
        let want = format!("rank {r} size {n} local {r}/{n} node 0/1 mode {mode} cards OK");
        assert!(
            lines.contains(&want.as_str()),
            "no line {want:?} in\n{text}"
        );
    }
}

#[test]
fn singleton() {
    let o = run(Command::new(example()), Duration::from_secs(30));
    assert!(o.status.success());
    check_lines(&o, 1, "Singleton");
}

#[test]
fn myrix_launcher() {
    // The launcher's output is inherited, so run it in a child: this test binary with
    // a filter would be awkward; the example's own output is checked through sh.
    let spec = LaunchSpec {
        apps: vec![App::new(
            4,
            "/bin/sh",
            vec![
                "-c".into(),
                format!("exec {} > \"$OUT.$PMI_RANK\"", example().display()).into(),
            ],
        )],
        env: vec![(
            "OUT".into(),
            std::env::temp_dir()
                .join(format!("myrix-job-info-{}", std::process::id()))
                .into(),
        )],
        netns: vec![],
        timeout: None,
    };
    let outcome = launch::run(&spec).expect("launch");
    assert_eq!(outcome.code, 0, "{:?}", outcome.reason);
    let mut text = Vec::new();
    for r in 0..4 {
        let p = std::env::temp_dir().join(format!("myrix-job-info-{}.{r}", std::process::id()));
        text.extend(std::fs::read(&p).expect("rank output"));
        let _ = std::fs::remove_file(p);
    }
    let o = Output {
        status: std::process::ExitStatus::default(),
        stdout: text,
        stderr: Vec::new(),
    };
    check_lines(&o, 4, "Pmi1");

    let spec = LaunchSpec {
        apps: vec![App::new(3, example(), vec!["abort".into()])],
        env: vec![],
        netns: vec![],
        timeout: None,
    };
    assert_eq!(launch::run(&spec).expect("launch").code, 7);
}

#[test]
#[ignore = "needs MPICH's hydra (apt-get install mpich); .ci/run runs it"]
fn hydra() {
    if !have("mpiexec.hydra") {
        panic!("skipped: mpiexec.hydra is not installed (apt-get install mpich)");
    }
    let mut c = Command::new("mpiexec.hydra");
    c.args(["-n", "2"]).arg(example());
    let o = run(c, Duration::from_secs(60));
    assert!(o.status.success(), "{o:?}");
    check_lines(&o, 2, "Pmi1");
    // PMI_PORT + PMI_ID instead of PMI_FD.
    let mut c = Command::new("mpiexec.hydra");
    c.args(["-pmi-port", "-n", "2"]).arg(example());
    let o = run(c, Duration::from_secs(60));
    assert!(o.status.success(), "{o:?}");
    check_lines(&o, 2, "Pmi1");
    let mut c = Command::new("mpiexec.hydra");
    c.args(["-n", "3"]).arg(example()).arg("abort");
    let o = run(c, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(7), "{o:?}");
}

#[test]
#[ignore = "needs a running one-node Slurm (.ci/slurm.sh up); .ci/run runs it with MYRIX_SLURM=1"]
fn slurm() {
    if std::env::var("MYRIX_SLURM").as_deref() != Ok("1") {
        panic!("skipped: MYRIX_SLURM=1 is not set (no Slurm from .ci/slurm.sh up)");
    }
    for (args, n) in [(vec!["-n", "2"], 2), (vec!["-O", "-n", "4"], 4)] {
        let mut c = Command::new("srun");
        c.arg("--mpi=pmi2").args(&args).arg(example());
        let o = run(c, Duration::from_secs(120));
        assert!(o.status.success(), "{o:?}");
        check_lines(&o, n, "Pmi2");
    }
    let mut c = Command::new("srun");
    c.args(["--mpi=pmi2", "-O", "-n", "3"])
        .arg(example())
        .arg("abort");
    let o = run(c, Duration::from_secs(120));
    assert!(!o.status.success(), "{o:?}");
}
