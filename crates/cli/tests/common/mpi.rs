//! What the MPI test binaries (`mpi_launch`, `mpi_coll`, `mpi_programs`, `mpi_crash`)
//! share: building a program of `crates/mpiapi/tests/c/` with `myrix mpicc`, running
//! it under a time limit without the variables cargo or a launcher set, and checking
//! that every rank finished.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const MYRIX: &str = env!("CARGO_BIN_EXE_myrix");

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

pub fn run(mut c: Command, limit: Duration) -> Output {
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

pub fn show(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A program of `crates/mpiapi/tests/c/` built with `myrix mpicc`.
pub fn build(name: &str) -> PathBuf {
    // Once per program and test process: two tests building the same program at once
    // would overwrite the executable while the other runs it (EACCES/ETXTBSY).
    type Once = std::sync::Arc<std::sync::OnceLock<PathBuf>>;
    static BUILT: std::sync::Mutex<Vec<(String, Once)>> = std::sync::Mutex::new(Vec::new());
    let once: Once = {
        let mut b = BUILT.lock().unwrap_or_else(|p| p.into_inner());
        match b.iter().find(|e| e.0 == name) {
            Some(e) => e.1.clone(),
            None => {
                let o = Once::default();
                b.push((name.to_string(), o.clone()));
                o
            }
        }
    };
    once.get_or_init(|| compile(name)).clone()
}

fn compile(name: &str) -> PathBuf {
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

pub fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
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
    let exe = build(prog);
    for &n in ranks {
        let mut c = myrix();
        c.args(["mpiexec", "-n", &n.to_string()]).arg(&exe);
        assert_every_rank(&run(c, Duration::from_secs(60)), prog, n);
    }
}
