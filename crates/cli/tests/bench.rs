//! The benchmarks as a script or a second user meets them: `bench fabric`'s JSON and a
//! client turned away by a busy server.

mod common;

use common::{myrix, stdout};

#[test]
fn bench_fabric_json_has_the_names_of_bench_pingpong() {
    let o = myrix(
        &[
            "bench", "fabric", "--sizes", "8,5000", "--iters", "2", "--format", "json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    // One array and nothing else on standard output: no heading for a script to skip.
    assert_eq!(out.lines().count(), 1, "{out}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{out}");
    assert_eq!(rows[0]["length"], 8);
    assert_eq!(rows[1]["length"], 5000);
    let lat = rows[0]["latency_us"].as_f64().unwrap();
    assert!(lat > 0.5 && lat < 1.5, "{out}");
    assert_eq!(rows[0]["frames_per_message"], 1.0);
    assert!(
        rows[1]["frames_per_message"].as_f64().unwrap() >= 2.0,
        "{out}"
    );
    let bw = rows[1]["bandwidth_mb_s"].as_f64().unwrap();
    assert!(bw > 50.0 && bw < 160.0, "{out}");
    // The same figures as the table (simulated time is exact).
    let t = myrix(
        &["bench", "fabric", "--sizes", "8,5000", "--iters", "2"],
        b"",
    );
    let table = stdout(&t);
    let last: Vec<&str> = table.lines().last().unwrap().split_whitespace().collect();
    assert_eq!(last[0], "5000");
    let table_lat: f64 = last[1].parse().unwrap();
    let json_lat = rows[1]["latency_us"].as_f64().unwrap();
    assert!((table_lat - json_lat).abs() < 0.001, "{table} {out}");
}

/// A second client of a server busy with a first is told so within seconds (the server
/// takes one plan at a time), not after the 30 s a silent peer is given.
#[test]
fn a_second_client_of_a_busy_server_is_turned_away_at_once() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let (mut server, addr) = common::shm_server();
    let mut first = Command::new(env!("CARGO_BIN_EXE_myrix"))
        .args(["bench", "pingpong", "--client", &addr, "--transport", "shm"])
        .args(["--start", "8", "--end", "8", "--iterations", "100000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The heading is printed once connected; the plan follows within milliseconds.
    let mut heading = String::new();
    std::io::BufReader::new(first.stdout.take().unwrap())
        .read_line(&mut heading)
        .unwrap();
    assert!(heading.starts_with("# myrix bench pingpong"), "{heading:?}");
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    let o = myrix(
        &["bench", "pingpong", "--client", &addr, "--transport", "shm"],
        b"",
    );
    let took = t0.elapsed();
    let still_served = first.try_wait().unwrap().is_none();
    let _ = first.kill();
    let _ = first.wait();
    let _ = server.kill();
    let _ = server.wait();
    assert!(still_served, "the first client ended early");
    common::assert_one_error(&o, 1, "the server is serving another client");
    assert!(took < Duration::from_secs(10), "turned away after {took:?}");
}

/// `bench rsm` starts its own server, verifies every byte, and its JSON has every
/// figure for every length; the server's segment is gone once it exits.
#[test]
fn bench_rsm_verifies_and_reports_every_figure() {
    let o = myrix(
        &[
            "bench",
            "rsm",
            "--start",
            "8",
            "--end",
            "70000",
            "--multiplier",
            "16",
            "--iterations",
            "50",
            "--warmup",
            "5",
            "--verify",
            "--format",
            "json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = rows.as_array().unwrap();
    let lengths: Vec<u64> = rows.iter().map(|r| r["length"].as_u64().unwrap()).collect();
    assert_eq!(lengths, [8, 128, 2048, 32768], "{out}");
    for r in rows {
        for k in ["put_us", "get_us", "pingpong_us", "put_mb_s"] {
            let v = r[k].as_f64().unwrap();
            assert!(v.is_finite() && v > 0.0, "{k} in {out}");
        }
    }
}

#[test]
fn bench_rsm_refuses_what_it_cannot_do() {
    let o = myrix(&["bench", "rsm", "--client", "shm:0"], b"");
    common::assert_one_error(&o, 2, "not an RSM benchmark address");
    let o = myrix(&["bench", "rsm", "--client", "shm:0:7fffffff"], b"");
    common::assert_one_error(&o, 1, "RSMERR_SEG_NOT_PUBLISHED");
    let o = myrix(&["bench", "rsm", "--end", "1000000000"], b"");
    common::assert_one_error(&o, 2, "at most 16777216 bytes");
    let o = myrix(&["bench", "rsm", "--iterations", "0"], b"");
    common::assert_one_error(&o, 2, "--iterations must be 1 to");
}

/// Over the simulated fabric the figures are exact: the 8-byte row is the zero-load
/// arithmetic of `sim::rsmnet`'s tests (319, 280 and 138 ticks of 6.25 ns).
#[test]
fn bench_rsm_over_the_simulated_fabric_gives_the_zero_load_figures() {
    let o = myrix(
        &[
            "bench",
            "rsm",
            "--transport",
            "sim",
            "--end",
            "8",
            "--format",
            "json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let r = &rows[0];
    assert_eq!(r["length"], 8);
    assert!(
        (r["put_us"].as_f64().unwrap() - 1.99375).abs() < 1e-3,
        "{r}"
    );
    assert!((r["get_us"].as_f64().unwrap() - 1.75).abs() < 1e-6, "{r}");
    assert!(
        (r["pingpong_us"].as_f64().unwrap() - 0.8625).abs() < 1e-6,
        "{r}"
    );
    let o = myrix(
        &["bench", "rsm", "--transport", "sim", "--client", "x:0:1"],
        b"",
    );
    common::assert_one_error(&o, 2, "no --server or --client");
}

/// Over UDP on the loopback, with a node table the command makes for the run: every
/// byte verified, and the table is gone afterwards.
#[test]
fn bench_rsm_over_udp_on_the_loopback() {
    let tables = || {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("myrix-rsm-bench-")
            })
            .count()
    };
    let before = tables();
    let o = myrix(
        &[
            "bench",
            "rsm",
            "--transport",
            "udp",
            "--start",
            "8",
            "--end",
            "40000",
            "--multiplier",
            "64",
            "--iterations",
            "20",
            "--warmup",
            "2",
            "--verify",
            "--format",
            "json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let lengths: Vec<u64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["length"].as_u64().unwrap())
        .collect();
    assert_eq!(lengths, [8, 512, 32768]);
    assert_eq!(tables(), before, "the node table is removed");
}
