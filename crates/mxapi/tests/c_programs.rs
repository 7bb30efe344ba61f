//! myrix's own MX programs in C (`tests/c/`), compiled against `myriexpress.h` with the
//! flags `pkg-config` gives from the generated `myriexpress.pc`, and run without
//! `LD_LIBRARY_PATH` (the library is found through the rpath the `.pc` file adds).
//!
//! Needs `cc` and `pkg-config` (Debian: `gcc`, `pkg-config`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{build, library, program};
use myrix_ctest::{run, text};

fn run_ok(exe: &Path, args: &[&str]) -> String {
    let mut c = program(exe);
    c.args(args);
    let o = run(c, Duration::from_secs(60));
    let (out, err) = text(&o);
    assert!(
        o.status.success(),
        "{} {args:?}: {:?}\nstdout:\n{out}\nstderr:\n{err}",
        exe.display(),
        o.status
    );
    out
}

#[test]
fn abi_matches_mx() {
    let out = run_ok(&build("abi"), &[]);
    assert!(out.contains("sizeof mx_status_t 48: code@0 source@8 match_info@24 msg_length@32 xfer_length@36 context@40"), "{out}");
    assert!(out.contains("sizeof mx_endpoint_addr_t 16"), "{out}");
    assert!(out.contains("sizeof mx_segment_t 16"), "{out}");
    assert!(out.contains("MX_API 0x301, 45 functions linked"), "{out}");
    assert!(out.contains("return 30: Timeout"), "{out}");
    assert!(out.contains("status 5: Truncated"), "{out}");
    assert!(out.ends_with("abi ok\n"), "{out}");
}

#[test]
fn self_send_without_connect() {
    let out = run_ok(&build("selfsend"), &[]);
    for line in [
        "gathered 2 segments into 3: 60 bytes ok",
        "truncated: Truncated, 4 of 10 bytes",
        "probe, peek, test ok",
        "cancelled a pending receive",
        "unexpected handler: 2 calls, 1 message finished",
        "disconnected and sent again",
        "selfsend ok",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }
}

#[test]
fn wait_any_with_a_mask_and_context_ids() {
    let out = run_ok(&build("waitany"), &[]);
    assert_eq!(out.matches("wait_any context 2: tag ").count(), 3, "{out}");
    assert!(out.contains("test_any context 1: tags 0 1 2"), "{out}");
    let line = format!("{:<44} -> 42", "MX_BAD_MATCHING_FOR_CONTEXT_ID_MASK");
    assert_eq!(out.matches(&line).count(), 2, "{out}");
    assert!(
        out.contains(&format!("{:<44} -> 14", "MX_BAD_MATCH_MASK")),
        "{out}"
    );
    assert!(out.contains("waitany ok"), "{out}");
}

#[test]
fn wakeup_ends_other_threads_blocking_calls() {
    let out = run_ok(&build("wakeup"), &[]);
    for line in [
        "sent while two threads block",
        "wait woke up",
        "probe woke up",
        "wakeup ok",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }
}

#[test]
fn bad_arguments_get_mx_codes() {
    let exe = build("badargs");
    let peers = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mxapi-c/peers");
    std::fs::write(
        &peers,
        "# a peer on another host\n02:aa:bb:cc:dd:ee peer-of-test:0\n",
    )
    .expect("peers file");
    let mut c = program(&exe);
    // Shared memory alone refuses the other host's NIC id at once (with raw Ethernet
    // beside, the default where a raw socket opens, the connect would time out).
    c.env("MYRIX_MX_PEERS", &peers)
        .env("MYRIX_MX_TRANSPORT", "shm");
    let o = run(c, Duration::from_secs(60));
    let (out, err) = text(&o);
    assert!(o.status.success(), "badargs: {:?}\n{out}\n{err}", o.status);
    assert!(
        out.contains("peers file: peer-of-test:0 is 02:aa:bb:cc:dd:ee"),
        "{out}"
    );
    for (name, code) in [
        ("MX_NOT_INITIALIZED", 4),
        ("MX_ALREADY_INITIALIZED", 3),
        ("MX_BOARD_UNKNOWN", 8),
        ("MX_BAD_ENDPOINT", 9),
        ("MX_BAD_SEG_LIST", 10),
        ("MX_BAD_SEG_MEM", 11),
        ("MX_BAD_SEG_CNT", 12),
        ("MX_BAD_REQUEST", 13),
        ("MX_BAD_MATCH_MASK", 14),
        ("MX_BUSY", 20),
        ("MX_BAD_INFO_KEY", 21),
        ("MX_BAD_INFO_VAL", 22),
        ("MX_BAD_PARAM_LIST", 24),
        ("MX_BAD_PARAM_NAME", 25),
        ("MX_BAD_PARAM_VAL", 26),
        ("MX_BAD_HOSTNAME_ARGS", 27),
        ("MX_HOST_NOT_FOUND", 28),
        ("MX_BAD_ENDPOINT_ID", 32),
        ("MX_CONNECTION_FAILED", 33),
        ("MX_BAD_CONNECTION_KEY", 34),
        ("MX_BAD_INFO_LENGTH", 35),
        ("MX_NIC_NOT_FOUND", 36),
        ("MX_BAD_LIB_VERSION", 38),
        ("MX_CANCEL_NOT_SUPPORTED", 40),
    ] {
        let line = format!("{name:<44} -> {code:2}");
        assert!(out.contains(&line), "{line:?} missing from:\n{out}");
    }
    assert!(out.contains("the endpoint's handler saw 5 errors"), "{out}");
    assert!(out.ends_with("badargs ok\n"), "{out}");

    // The default handler prints the error and aborts.
    let mut c = program(&exe);
    c.arg("fatal");
    let o = run(c, Duration::from_secs(30));
    let (out, err) = text(&o);
    assert!(!o.status.success() && !out.contains("not reached"), "{out}");
    assert!(
        err.contains("MX: fatal error: mx_open_endpoint: no board 4000: Unknown board"),
        "{err}"
    );

    // MX_ERRORS_ARE_FATAL=0 in the environment makes errors return.
    let mut c = program(&exe);
    c.arg("env").env("MX_ERRORS_ARE_FATAL", "0");
    let o = run(c, Duration::from_secs(30));
    let (out, err) = text(&o);
    assert!(
        o.status.success() && out.contains("badargs env ok"),
        "{out}\n{err}"
    );
}

/// `nm -D` output of `file`'s dynamic symbols (`--defined-only` or `--undefined-only`).
fn nm(file: &Path, which: &str) -> String {
    let o = Command::new("nm")
        .args(["-D", which])
        .arg(file)
        .output()
        .expect("nm (binutils) must be installed");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The library's symbols carry MX's versions as Open-MX's library has them
/// (`myriexpress.map`), every other exported one `MX_0.0`, and nothing else is exported;
/// a program built against it asks for those versions.
#[test]
fn symbols_carry_mx_versions() {
    // selfsend.c calls all seven versioned functions.
    let exe = build("selfsend");
    let lib = nm(&library(), "--defined-only");
    let versioned = [
        ("mx_open_endpoint", "MX_0.9"),
        ("mx_decompose_endpoint_addr", "MX_0.9"),
        ("mx_get_info", "MX_0.91"),
        ("mx_test", "MX_0.91"),
        ("mx_wait", "MX_0.91"),
        ("mx_iprobe", "MX_0.91"),
        ("mx__init_api", "MX_0.92"),
    ];
    let mut names = 0;
    for line in lib.lines() {
        // "000000000007ddb0 T mx_open_endpoint@@MX_0.9", "0000000000000000 A MX_0.9"
        let sym = line.split_whitespace().nth(2).expect("nm line");
        if line.split_whitespace().nth(1) == Some("A") {
            assert!(
                ["MX_0.0", "MX_0.9", "MX_0.91", "MX_0.92"].contains(&sym),
                "{line}"
            );
            continue;
        }
        let (name, version) = sym.split_once("@@").unwrap_or((sym, ""));
        let want = versioned
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("MX_0.0", |(_, v)| *v);
        assert_eq!(version, want, "{line}");
        assert!(name.starts_with("mx_") || name.starts_with("MX_"), "{line}");
        names += 1;
    }
    // Every function of myriexpress.h and mx_extensions.h, and the two handlers.
    assert!(names >= 45, "{names} symbols:\n{lib}");
    let prog = nm(&exe, "--undefined-only");
    for (name, version) in versioned {
        assert!(
            prog.contains(&format!("{name}@{version}")),
            "{name}: {prog}"
        );
    }
    assert!(prog.contains("mx_isend@MX_0.0"), "{prog}");
}

#[test]
fn ping_pong_between_two_processes_over_shared_memory() {
    use std::io::{BufRead, BufReader};
    let exe = build("pingpong");
    let mut recv = program(&exe).arg("recv").spawn().expect("receiver");
    let mut lines = BufReader::new(recv.stdout.take().expect("piped"));
    let mut first = String::new();
    lines
        .read_line(&mut first)
        .expect("the receiver's first line");
    // "eid N host NODE:0"
    let words: Vec<&str> = first.split_whitespace().collect();
    assert!(
        matches!(words.as_slice(), ["eid", _, "host", _]),
        "{first:?}"
    );
    let sender = run_ok(&exe, &["send", words[3], words[1]]);
    let end = Instant::now() + Duration::from_secs(60);
    while recv.try_wait().expect("waiting").is_none() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = recv.kill();
    let status = recv.wait().expect("receiver status");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut lines, &mut rest).expect("receiver output");
    assert!(status.success(), "receiver: {status:?} {rest}");
    assert!(
        sender.contains("sender ok: 6097695 bytes each way"),
        "{sender}"
    );
    assert!(
        rest.contains("receiver ok: 6097695 bytes each way"),
        "{rest}"
    );
}

/// The C ping-pong between the two namespaces of `.ci/netns.sh` (a veth pair with loss,
/// duplication and reordering), over raw Ethernet: `MYRIX_MX_TRANSPORT=eth`, each side's
/// board its veth, the peer table from a peers file naming both MACs. Skipped, saying
/// so, where the namespaces are not set up (`MYRIX_NETNS=1`, as `.ci/run` sets).
#[test]
fn ping_pong_across_namespaces_over_raw_ethernet() {
    use std::io::{BufRead, BufReader};
    if std::env::var_os("MYRIX_NETNS").is_none() {
        eprintln!(
            "skipped: no namespaces (run `bash .ci/netns.sh up` as root and set MYRIX_NETNS=1)"
        );
        return;
    }
    let exe = build("pingpong");
    let mac = |ns: &str, iface: &str| {
        let o = Command::new("ip")
            .args(["netns", "exec", ns, "cat"])
            .arg(format!("/sys/class/net/{iface}/address"))
            .output()
            .expect("ip netns exec");
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let peers = std::env::temp_dir().join(format!("myrix-peers-{}", std::process::id()));
    std::fs::write(
        &peers,
        format!(
            "{} ns-a:0\n{} ns-b:0\n",
            mac("myrix-a", "myrix-va"),
            mac("myrix-b", "myrix-vb")
        ),
    )
    .unwrap();
    let side = |ns: &str, iface: &str| {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns])
            .arg(&exe)
            .env_remove("LD_LIBRARY_PATH")
            .env_remove("MX_ERRORS_ARE_FATAL")
            .env_remove("OMX_FATAL_ERRORS")
            .env("MYRIX_MX_TRANSPORT", "eth")
            .env("MYRIX_MX_IFACES", iface)
            .env("MYRIX_MX_PEERS", &peers)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    };
    let mut recv = side("myrix-a", "myrix-va")
        .arg("recv")
        .spawn()
        .expect("receiver");
    let mut lines = BufReader::new(recv.stdout.take().expect("piped"));
    let mut first = String::new();
    lines
        .read_line(&mut first)
        .expect("the receiver's first line");
    let words: Vec<&str> = first.split_whitespace().collect();
    assert!(
        matches!(words.as_slice(), ["eid", _, "host", _]),
        "{first:?}"
    );
    let mut send = side("myrix-b", "myrix-vb");
    send.args(["send", "ns-a:0", words[1]]);
    let o = run(send, Duration::from_secs(120));
    let (sender, err) = text(&o);
    let end = Instant::now() + Duration::from_secs(60);
    while recv.try_wait().expect("waiting").is_none() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = recv.kill();
    let status = recv.wait().expect("receiver status");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut lines, &mut rest).expect("receiver output");
    let _ = std::fs::remove_file(&peers);
    assert!(o.status.success(), "sender: {:?} {sender} {err}", o.status);
    assert!(status.success(), "receiver: {status:?} {rest}");
    assert!(
        sender.contains("sender ok: 6097695 bytes each way"),
        "{sender}"
    );
    assert!(
        rest.contains("receiver ok: 6097695 bytes each way"),
        "{rest}"
    );
}
