//! What the integration tests share: running the binary and checking its one error line.

#![allow(dead_code)]

pub mod mpi;

use std::io::Write;
use std::process::{Command, Output, Stdio};

pub fn myrix(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_myrix"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// One `myrix: error:` line on stderr and the given exit code.
pub fn assert_one_error(o: &Output, code: i32, contains: &str) {
    let err = String::from_utf8(o.stderr.clone()).unwrap();
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("myrix: error: ") && lines[0].contains(contains),
        "{err}"
    );
}

/// A shared-memory benchmark server (`myrix bench pingpong --server`) and the address
/// it printed.
pub fn shm_server() -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut server = Command::new(env!("CARGO_BIN_EXE_myrix"))
        .args(["bench", "pingpong", "--server", "--transport", "shm"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (server, line.trim().to_string())
}

/// The share of frames `.ci/netns.sh` sends through its slow class (percent):
/// `MYRIX_NETNS_REORDER`, 10 by default.
pub fn reorder_share() -> String {
    std::env::var("MYRIX_NETNS_REORDER").unwrap_or_else(|_| "10".into())
}

/// Whether a test of network namespaces must skip: without `MYRIX_NETNS` (set by
/// `.ci/run`, as root) it says "`what`: skipped: set MYRIX_NETNS=1 and run as root"
/// straight to standard error, past the test harness's capture, so the skip shows.
pub fn netns_skipped(what: &str) -> bool {
    if std::env::var_os("MYRIX_NETNS").is_some() {
        return false;
    }
    let line = format!("{what}: skipped: set MYRIX_NETNS=1 and run as root\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    true
}
