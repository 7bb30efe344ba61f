//! Long runs show progress on standard error when that is a terminal, and standard
//! output (which scripts read and `bench/cli_identical.sh` compares) stays the same.

mod common;

use std::process::Command;

/// Runs `args` under `script(1)`, so that standard error is a terminal, with standard
/// output to a file; returns (standard output, what the terminal showed), or `None`
/// where `script` is missing.
fn on_a_terminal(args: &str) -> Option<(String, String)> {
    // One directory per call: the tests run in parallel threads of one process.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("myrix-progress-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (out, log) = (dir.join("out"), dir.join("terminal"));
    let cmd = format!(
        "'{}' {args} > '{}'",
        env!("CARGO_BIN_EXE_myrix"),
        out.display()
    );
    let ran = Command::new("script")
        .args(["-q", "-e", "-f", "-c", &cmd])
        .arg(&log)
        .output();
    let ran = match ran {
        Ok(r) => r,
        Err(e) => {
            eprintln!("skipped: cannot run script(1) for a terminal: {e}");
            return None;
        }
    };
    assert!(ran.status.success(), "{ran:?}");
    let got = (
        std::fs::read_to_string(&out).unwrap(),
        String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned(),
    );
    std::fs::remove_dir_all(&dir).unwrap();
    Some(got)
}

#[test]
fn a_long_simulation_shows_progress_on_a_terminal_and_none_on_standard_output() {
    let args = "sim --load 0.01 --sim-time 20ms";
    let plain = common::myrix(&args.split(' ').collect::<Vec<_>>(), b"");
    assert!(plain.status.success());
    // Not a terminal: nothing on standard error at all.
    assert_eq!(String::from_utf8_lossy(&plain.stderr), "");
    let table = common::stdout(&plain);
    assert!(!table.contains("simulated,"), "{table}");
    let Some((out, terminal)) = on_a_terminal(args) else {
        return;
    };
    assert_eq!(out, table, "standard output is the same on a terminal");
    assert!(
        terminal.contains("ms simulated, 0/1 load points"),
        "no progress shown: {terminal:?}"
    );
}

#[test]
fn bench_fabric_shows_the_simulated_clock_on_a_terminal_only() {
    let args = "bench fabric --sizes 8,65536 --iters 2 --load 0.015";
    let plain = common::myrix(&args.split(' ').collect::<Vec<_>>(), b"");
    assert!(plain.status.success());
    assert_eq!(String::from_utf8_lossy(&plain.stderr), "");
    let Some((out, terminal)) = on_a_terminal(args) else {
        return;
    };
    assert_eq!(out, common::stdout(&plain));
    assert!(
        terminal.contains("size 2 of 2: ") && terminal.contains("ms simulated"),
        "no progress shown: {terminal:?}"
    );
}
