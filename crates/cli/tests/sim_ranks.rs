//! `myrix sim` as the ranks of an MPI job: `myrix mpiexec -n 3 myrix sim --sweep …`
//! splits the load points over the ranks and prints what one process prints (the
//! table, JSON, and the plot file), byte for byte; the other ranks print nothing.
//! The same under MPICH's hydra (`mpiexec.hydra -n 3`, and `-pmi-port -n 2`) and Slurm (`srun --mpi=pmi2`,
//! 3 ranks and 4 on the node's 2 CPUs with `-O`): those tests are `#[ignore]`d and
//! `.ci/run` runs them where the launcher is (hydra installed; MYRIX_SLURM=1 after
//! `.ci/slurm.sh up`), as `mpi_launch.rs`'s.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const MYRIX: &str = env!("CARGO_BIN_EXE_myrix");

/// A small sweep: 8 switches, short points; it saturates within a few rounds.
const SMALL: &[&str] = &[
    "sim",
    "--switches",
    "8",
    "--seed",
    "2",
    "--sim-time",
    "40us",
    "--warmup",
    "10us",
];

fn run(mut c: Command, dir: &Path) -> Output {
    c.current_dir(dir)
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("PMI_JOBID")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawning myrix");
    let end = Instant::now() + Duration::from_secs(600);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().expect("output");
    assert!(
        o.status.success(),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("sim-ranks")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("test directory");
    d
}

/// One process, then `ranks` ranks under `myrix mpiexec`, each in its own directory:
/// (alone, job).
fn both(name: &str, ranks: u32, args: &[&str]) -> ((Output, PathBuf), (Output, PathBuf)) {
    let n = ranks.to_string();
    under(name, &[MYRIX, "mpiexec", "-n", &n], args)
}

/// One process, then the job `launcher… myrix <SMALL> <args>`, each in its own
/// directory: (alone, job).
fn under(name: &str, launcher: &[&str], args: &[&str]) -> ((Output, PathBuf), (Output, PathBuf)) {
    let d1 = dir(&format!("{name}-alone"));
    let mut c = Command::new(MYRIX);
    c.args(SMALL).args(args);
    let alone = run(c, &d1);
    let dn = dir(&format!("{name}-job"));
    let mut c = Command::new(launcher[0]);
    c.args(&launcher[1..]).arg(MYRIX).args(SMALL).args(args);
    let job = run(c, &dn);
    ((alone, d1), (job, dn))
}

/// Under `launcher`: the sweep's table, stderr and plot, then two policies in JSON,
/// each byte for byte what one process prints.
fn same_as_one_process(name: &str, launcher: &[&str]) {
    let sweep = ["--sweep", "--plot", "sweep.svg"];
    let ((alone, d1), (job, dn)) = under(&format!("{name}-sweep"), launcher, &sweep);
    let table = String::from_utf8(alone.stdout).unwrap();
    assert!(table.contains("SATURATED"), "{table}");
    assert_eq!(
        String::from_utf8(job.stdout).unwrap(),
        table,
        "{launcher:?}"
    );
    assert_eq!(
        String::from_utf8(job.stderr).unwrap(),
        String::from_utf8(alone.stderr).unwrap(),
        "{launcher:?}: stderr"
    );
    assert_eq!(
        std::fs::read(dn.join("sweep.svg")).unwrap(),
        std::fs::read(d1.join("sweep.svg")).unwrap(),
        "{launcher:?}: the plots"
    );
    let json = ["--sweep", "--routing", "osud,rrmit", "--format", "json"];
    let ((alone, _), (job, _)) = under(&format!("{name}-json"), launcher, &json);
    let text = String::from_utf8(alone.stdout).unwrap();
    assert!(text.contains("\"rrmit\""), "{text}");
    assert_eq!(String::from_utf8(job.stdout).unwrap(), text, "{launcher:?}");
}

fn have(prog: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {prog}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_sweep_over_three_ranks_prints_the_table_of_one_process() {
    let ((alone, d1), (job, dn)) = both("sweep", 3, &["--sweep", "--plot", "sweep.svg"]);
    let table = String::from_utf8(alone.stdout).unwrap();
    assert!(table.contains("SATURATED"), "{table}");
    assert!(table.lines().count() > 4, "{table}");
    assert_eq!(String::from_utf8(job.stdout).unwrap(), table);
    // Rank 0 alone says where the plot went; the other ranks say nothing.
    assert_eq!(
        String::from_utf8(job.stderr).unwrap(),
        String::from_utf8(alone.stderr).unwrap()
    );
    let p1 = std::fs::read(d1.join("sweep.svg")).unwrap();
    assert_eq!(
        std::fs::read(dn.join("sweep.svg")).unwrap(),
        p1,
        "the plots"
    );
}

#[test]
fn every_figure_is_the_same_with_two_policies_in_json() {
    // JSON shows every float in full: equal text is equal numbers. Two policies: two
    // sweeps in one job, each split.
    let args = ["--sweep", "--routing", "osud,rrmit", "--format", "json"];
    let ((alone, _), (job, _)) = both("json", 3, &args);
    let text = String::from_utf8(alone.stdout).unwrap();
    assert!(text.contains("\"rrmit\""), "{text}");
    assert_eq!(String::from_utf8(job.stdout).unwrap(), text);
}

#[test]
fn fixed_loads_are_split_too_and_one_rank_is_a_job_of_one() {
    let args = ["--loads", "0.01:0.05:0.01", "--format", "csv"];
    let ((alone, _), (job, _)) = both("loads", 2, &args);
    let text = String::from_utf8(alone.stdout).unwrap();
    assert_eq!(text.lines().count(), 6, "a header and 5 points: {text}");
    assert_eq!(String::from_utf8(job.stdout).unwrap(), text);
    // More ranks than points: some ranks measure nothing.
    let ((_, _), (job, _)) = both("loads-many", 7, &args);
    assert_eq!(String::from_utf8(job.stdout).unwrap(), text);
    let ((_, _), (job, _)) = both("loads-one", 1, &args);
    assert_eq!(String::from_utf8(job.stdout).unwrap(), text);
}

#[test]
#[ignore = "needs MPICH's hydra (apt-get install mpich); .ci/run runs it"]
fn hydra_prints_the_table_of_one_process() {
    if !have("mpiexec.hydra") {
        panic!("skipped: mpiexec.hydra is not installed (apt-get install mpich)");
    }
    same_as_one_process("hydra", &["mpiexec.hydra", "-n", "3"]);
    // PMI over a port (PMI_PORT, PMI_ID) instead of an inherited descriptor.
    same_as_one_process("hydra-port", &["mpiexec.hydra", "-pmi-port", "-n", "2"]);
}

#[test]
#[ignore = "needs a running one-node Slurm (.ci/slurm.sh up); .ci/run runs it with MYRIX_SLURM=1"]
fn slurm_prints_the_table_of_one_process() {
    if std::env::var("MYRIX_SLURM").as_deref() != Ok("1") {
        panic!("skipped: MYRIX_SLURM=1 is not set (no Slurm from .ci/slurm.sh up)");
    }
    // The node has as many CPUs as the machine (2 here): -O lets 3 and 4 tasks share.
    same_as_one_process("slurm", &["srun", "--mpi=pmi2", "-O", "-n", "3"]);
    same_as_one_process("slurm4", &["srun", "--mpi=pmi2", "-O", "-n", "4"]);
}
