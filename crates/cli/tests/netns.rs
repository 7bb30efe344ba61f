//! MX over UDP between two processes in two network namespaces joined by a veth pair,
//! with loss and duplication (and reordering where the kernel has netem) added on the
//! link; every byte verified. `.ci/run` creates the namespaces with `.ci/netns.sh up`
//! and sets `MYRIX_NETNS=1`; elsewhere the test says why it is skipped.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn run_pair(mode: &str, extra: &[&str]) {
    let exe = env!("CARGO_BIN_EXE_myrix");
    let mut server = Command::new("ip")
        .args(["netns", "exec", "myrix-a", exe, "bench", mode, "--server"])
        .args(["--transport", "udp", "--listen", "10.77.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("@udp:10.77.0.1:"), "server said {line:?}");
    let out = Command::new("ip")
        .args(["netns", "exec", "myrix-b", exe, "bench", mode])
        .args(["--client", line.trim(), "--transport", "udp", "--verify"])
        .args(["--start", "1", "--end", "1048576", "--multiplier", "4"])
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let status = server.wait().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client failed: {err}");
    assert!(status.success(), "server failed");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    // 1, 4, 16, …, 1 MiB: every message class.
    assert_eq!(rows.len(), 11);
    for r in rows {
        assert!(r["latency_us"].as_f64().unwrap() > 0.0);
        assert!(r["bandwidth_mb_s"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn udp_between_namespaces_with_loss_every_byte_verified() {
    if std::env::var_os("MYRIX_NETNS").is_none() {
        eprintln!(
            "skipped: no namespaces (run `bash .ci/netns.sh up` as root and set MYRIX_NETNS=1, as .ci/run does)"
        );
        return;
    }
    run_pair("pingpong", &["--iterations", "20", "--warmup", "2"]);
    run_pair(
        "stream",
        &["--iterations", "10", "--warmup", "1", "--window", "8"],
    );
}
