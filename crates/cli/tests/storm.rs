//! The retransmission storm of issue 20, between two processes: 1 MiB messages
//! streamed over UDP on the loopback. Alone in its test binary, so no other test's
//! spinning processes take its cores: with the cores to itself the run has no resend
//! and no duplicate, but with two busy loops on a 2-core machine the same run gave
//! 0-25 % duplicate or stale frames at the receiver (pull blocks asked again while
//! their frames were still queued; before and after session 14 alike), and once in
//! about eight contended runs the sender declared the receiver unreachable. Flow
//! control under CPU starvation is still open.

mod common;

use common::myrix;

/// `key=value` counters of the `stats SIDE:` line in `err`.
fn counter(err: &str, side: &str, key: &str) -> u64 {
    let line = err
        .lines()
        .find(|l| l.starts_with(&format!("stats {side}: ")))
        .unwrap_or_else(|| panic!("no {side} counters in {err:?}"));
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

/// The run completes, and resent and duplicate (or stale) frames stay under 1 % of the
/// frames received (the storm had half as many duplicates as frames).
#[test]
fn a_udp_stream_of_1_mib_messages_between_two_processes_resends_little() {
    let o = myrix(
        &[
            "bench",
            "stream",
            "--transport",
            "udp",
            "--start",
            "1048576",
            "--end",
            "1048576",
            "--iterations",
            "30",
            "--warmup",
            "10",
            "--window",
            "16",
            "--format",
            "json",
            "--stats",
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows[0]["length"], 1048576);
    assert!(rows[0]["bandwidth_mb_s"].as_f64().unwrap() > 0.0);
    let sum = |k: &str| counter(&err, "server", k) + counter(&err, "client", k);
    let (received, resent, dups) = (
        sum("frames_in"),
        sum("retransmits"),
        sum("duplicates") + sum("stale_frames"),
    );
    eprintln!("frames received {received}, resent {resent}, duplicate or stale {dups}");
    // 4 windows of 16 MiB: tens of thousands of frames.
    assert!(received > 10_000, "{err}");
    assert!(
        resent * 100 < received,
        "{resent} resent of {received}: {err}"
    );
    // The storm this test was written for had one duplicate or stale frame for every
    // two received (2.0 M and 1.0 M of 4 M). On an idle machine a run has well under
    // 1 % (`bash bench/udp_stream.sh` measures it); with other processes on the two
    // cores (CI, other builds) a receiver descheduled for milliseconds asks again for
    // blocks still queued in its socket, and 1-3 % (7 % once) were seen in session 18
    // with or without UDP offload. A storm is an order of magnitude above that.
    assert!(
        dups * 10 < received,
        "{dups} duplicates of {received}: {err}"
    );
}
