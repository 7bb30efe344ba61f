//! Bad input, as a user types it: every case is one `myrix: error:` line on standard
//! error holding a fragment of the message, and the exit code (2 for input that could
//! not be read or understood, 1 for input that was understood and holds errors).

mod common;

use common::{assert_one_error, myrix};

/// One case: the arguments (`{dir}` stands for a directory holding the files of
/// [`files`]), standard input, the exit code, a fragment of the message.
struct Case {
    args: &'static [&'static str],
    stdin: &'static [u8],
    code: i32,
    says: &'static str,
}

const fn case(args: &'static [&'static str], code: i32, says: &'static str) -> Case {
    Case {
        args,
        stdin: b"",
        code,
        says,
    }
}

const fn with_input(
    args: &'static [&'static str],
    stdin: &'static [u8],
    code: i32,
    says: &'static str,
) -> Case {
    Case {
        args,
        stdin,
        code,
        says,
    }
}

/// Link-layer code-group streams and packets.
const LINK_AND_PACKETS: &[Case] = &[
    case(&["link", "encode", "--hex", "0g"], 2, "not a hex digit"),
    case(&["link", "encode", "--hex", "abc"], 2, "not whole bytes"),
    case(&["link", "encode"], 2, "no data bytes"),
    case(
        &["link", "encode", "--file", "/nonexistent/x"],
        2,
        "/nonexistent/x",
    ),
    with_input(&["link", "decode"], b"0101\n", 2, "line 1"),
    with_input(&["link", "decode"], b"001111 10101\n", 2, "not a 10-bit"),
    with_input(&["link", "decode"], &[0xff, 0xfe], 2, "not text"),
    // A packet without its GAP is a truncated stream.
    with_input(&["link", "decode"], b"100111 0100\n", 1, "error(s)"),
    case(&["link", "slack", "--length-m=-3"], 2, "--length-m"),
    case(&["link", "slack", "--length-m=1e300"], 2, "too long"),
    case(&["packet", "parse", "81"], 2, "truncated"),
    case(&["packet", "build", "--route", "1,x"], 2, "'x'"),
    case(&["packet", "build", "--type", "200"], 2, "--type"),
    // A corrupted packet parses but fails its CRC.
    case(&["packet", "parse", "838087046d7972697868"], 1, "CRC"),
];

/// Topologies, routes and the mapper.
const NETWORKS: &[Case] = &[
    case(
        &["topo", "gen", "--kind", "cube"],
        2,
        "unknown topology kind 'cube'",
    ),
    case(
        &["topo", "gen", "--kind", "torus", "--dims", "2x4"],
        2,
        "at least 3",
    ),
    case(&["topo", "gen", "--dims", "4x"], 2, "--dims"),
    case(&["topo", "show", "/nonexistent.toml"], 2, "nonexistent"),
    case(
        &["topo", "show", "{dir}/disconnected.toml"],
        2,
        "disconnected",
    ),
    case(&["topo", "show", "{dir}/one-port.toml"], 2, "only 1 ports"),
    case(&["topo", "show", "{dir}/syntax.toml"], 2, "line 1"),
    case(
        &["topo", "show", "{dir}/net.toml", "--root", "top"],
        2,
        "--root",
    ),
    case(&["routes", "--routing", "xy"], 2, "unknown routing 'xy'"),
    case(
        &["routes", "--topology", "/nonexistent.toml"],
        2,
        "nonexistent",
    ),
    case(
        &["map", "--topology", "{dir}/net.toml", "--mapper", "40"],
        2,
        "40 hosts",
    ),
];

/// `myrix sim` and the experiment.
const SIMULATION: &[Case] = &[
    case(&["sim", "--load", "0"], 2, "load must be a positive"),
    case(&["sim", "--load=-0.5"], 2, "load must be a positive"),
    case(&["sim", "--routing", "xy"], 2, "unknown routing 'xy'"),
    case(&["sim", "--routing", "osud,xy"], 2, "unknown routing 'xy'"),
    case(
        &["sim", "--traffic", "tornado"],
        2,
        "unknown traffic 'tornado'",
    ),
    case(
        &["sim", "--switch-model", "fast"],
        2,
        "unknown switch model 'fast'",
    ),
    case(
        &["sim", "--channel-release", "never"],
        2,
        "unknown channel release 'never'",
    ),
    case(&["sim", "--sim-time", "5"], 2, "unit"),
    case(&["sim", "--sim-time=-3ms"], 2, "positive time"),
    case(&["sim", "--loads", "0.02:0.01:0.01"], 2, "--loads"),
    case(&["sim", "--load", "0.01", "--sweep"], 2, "one of"),
    case(
        &["sim", "--topology", "/nonexistent.toml"],
        2,
        "nonexistent",
    ),
    case(
        &["sim", "--msg-bytes", "0", "--load", "0.01"],
        2,
        "--msg-bytes",
    ),
    case(&["sim", "--msg-bytes", "32:0"], 2, "--msg-bytes"),
    case(&["sim", "--msg-bytes", "big"], 2, "--msg-bytes"),
    case(&["sim", "--send-overhead", "soon"], 2, "unit"),
    case(
        &["experiment", "minimal-routing", "--switch-model", "fast"],
        2,
        "unknown switch model 'fast'",
    ),
    case(
        &["experiment", "minimal-routing", "--topologies", "0"],
        2,
        "--topologies",
    ),
];

/// `myrix sim --fail` and `--join` on the 6-switch network of seed 4.
const CHANGES: &[Case] = &[
    case(
        &[
            "sim",
            "--switches",
            "6",
            "--seed",
            "4",
            "--fail",
            "link:2-5@1ms",
        ],
        2,
        "--fail needs one --load",
    ),
    case(
        &[
            "sim",
            "--switches",
            "6",
            "--seed",
            "4",
            "--join",
            "host:2@1ms",
        ],
        2,
        "--join needs one --load",
    ),
    case(
        &[
            "sim",
            "--switches",
            "6",
            "--seed",
            "4",
            "--load",
            "0.02",
            "--join",
            "switch:2@1ms",
        ],
        2,
        "bad --join",
    ),
    case(
        &[
            "sim",
            "--switches",
            "6",
            "--seed",
            "4",
            "--load",
            "0.02",
            "--fail",
            "router:3@1ms",
        ],
        2,
        "bad --fail",
    ),
    case(
        &[
            "sim",
            "--switches",
            "6",
            "--seed",
            "4",
            "--load",
            "0.02",
            "--fail",
            "switch:x@1ms",
        ],
        2,
        "bad --fail",
    ),
    case(
        &[
            "sim",
            "--switches",
            "6",
            "--seed",
            "4",
            "--load",
            "0.02",
            "--fail",
            "switch:6@1ms",
        ],
        2,
        "switch 6 does not exist",
    ),
    case(
        &[
            "sim",
            "--switches",
            "6",
            "--seed",
            "4",
            "--load",
            "0.02",
            "--fail",
            "host:99@1ms",
        ],
        2,
        "host 99 does not exist",
    ),
    case(
        &[
            "sim",
            "--switches",
            "6",
            "--seed",
            "4",
            "--load",
            "0.02",
            "--fail",
            "link:0-0@1ms",
        ],
        2,
        "no link between",
    ),
    case(
        &[
            "sim",
            "--switches",
            "6",
            "--seed",
            "4",
            "--load",
            "0.02",
            "--fail",
            "link:2-5@1parsec",
        ],
        2,
        "",
    ),
];

/// `myrix bench`.
const BENCHMARKS: &[Case] = &[
    case(
        &["bench", "sim", "--channel-release", "never"],
        2,
        "unknown channel release 'never'",
    ),
    case(
        &["bench", "fabric", "--from", "3", "--to", "3"],
        2,
        "two different hosts",
    ),
    case(
        &["bench", "fabric", "--switches", "5000"],
        2,
        "--switches must be 1 to 4096",
    ),
    case(
        &["bench", "fabric", "--sizes", "8,x"],
        2,
        "expected byte counts",
    ),
    case(
        &["bench", "fabric", "--load=-1"],
        2,
        "load must be a positive",
    ),
    case(
        &["bench", "pingpong", "--start", "10", "--end", "5"],
        2,
        "--start 10 is above --end 5",
    ),
    case(
        &["bench", "pingpong", "--multiplier", "1"],
        2,
        "--multiplier must be at least 2",
    ),
    case(
        &["bench", "pingpong", "--client", "nonsense"],
        2,
        "bad endpoint address",
    ),
    case(&["bench", "stream", "--cpu", "x"], 2, "--cpu 'x'"),
    case(
        &[
            "bench",
            "pingpong",
            "--transport",
            "eth",
            "--interface",
            "nosuchif0",
        ],
        2,
        "no network interface 'nosuchif0'",
    ),
    case(
        &[
            "bench",
            "pingpong",
            "--transport",
            "eth",
            "--interface",
            "../etc",
        ],
        2,
        "no network interface '../etc'",
    ),
    case(
        &["bench", "pingpong", "--transport", "eth", "--interface", ""],
        2,
        "no network interface ''",
    ),
];

/// Hostile input from the hardening review: once a wrapped number, an overflow, a run
/// that exhausted memory, a silent fallback or an incomplete result with exit 0.
const HOSTILE: &[Case] = &[
    // STOP below GO and a hysteresis of 2^64 - 1 once; GO at 0 once.
    case(
        &["link", "slack", "--max-share", "1e-300"],
        2,
        "over the 1 TiB limit",
    ),
    case(
        &["link", "slack", "--margin", "1e17"],
        2,
        "over the 1 TiB limit",
    ),
    // 7766279631452241920 switches once; minutes once; OOM-killed at 24 GB once.
    case(
        &[
            "topo",
            "gen",
            "--kind",
            "mesh",
            "--dims",
            "100000x100000x100000x100000",
        ],
        2,
        "more than 4096 switches",
    ),
    case(
        &["topo", "gen", "--kind", "mesh", "--dims", "1000x1000"],
        2,
        "more than 4096 switches",
    ),
    case(&["topo", "gen", "--switches", "65536"], 2, "at most 4096"),
    // Switch 0 used without a word once.
    case(
        &["routes", "--root", "99"],
        2,
        "root switch 99 does not exist",
    ),
    case(&["sim", "--root", "16", "--sim-time", "1us"], 2, "0 to 15"),
    case(&["bench", "fabric", "--root", "99"], 2, "root switch 99"),
    case(
        &["topo", "show", "{dir}/net.toml", "--root", "10"],
        2,
        "--root: root switch 10 does not exist",
    ),
    // A latency from no iterations once; two errors and a raw OS error once.
    case(
        &["bench", "pingpong", "--iterations", "0"],
        2,
        "--iterations must be 1 to",
    ),
    // A plan the server refuses, and a client waiting 30 s for it, once.
    case(
        &["bench", "pingpong", "--iterations", "1000000000"],
        2,
        "--iterations must be 1 to 100000000",
    ),
    case(
        &["bench", "stream", "--warmup", "1000000000"],
        2,
        "--warmup must be at most",
    ),
    case(
        &["bench", "pingpong", "--cpu", "0,100000"],
        2,
        "--cpu 100000: this machine has CPUs 0 to",
    ),
    // "File exists (os error 17)" once; a whole simulation before the plot failed once.
    case(
        &["experiment", "minimal-routing", "--out", "{dir}/net.toml"],
        2,
        "exists and is not a directory",
    ),
    case(
        &["sim", "--plot", "{dir}/no/such/x.svg"],
        2,
        "no/such to write it in",
    ),
    // "a time needs a unit" for times that have one, once.
    case(
        &["sim", "--sim-time", "1e300ms"],
        2,
        "not a positive time below 10 000 s",
    ),
    case(
        &["sim", "--sim-time", "NaNms"],
        2,
        "not a positive time below 10 000 s",
    ),
    case(
        &["sim", "--loads", "0.01:0.02:0.000001"],
        2,
        "at most 1000 points",
    ),
    // 6 GB and a 300-digit load once; 2 GB allocated before failing once; a detection
    // at 2e9 us in a 5 ms run once.
    case(
        &["sim", "--load", "1e300", "--sim-time", "10ms"],
        2,
        "--load 1e300: load must be a positive number of flits/ns/switch, at most 10",
    ),
    case(&["bench", "fabric", "--load", "1e300"], 2, "--load 1e300"),
    // 139 s with no output, then "no connection within 1 s" once: a full source queue
    // now says at once that the load is past saturation.
    case(
        &["bench", "fabric", "--load", "1", "--sizes", "8"],
        2,
        "saturates the network",
    ),
    case(
        &["sim", "--loads", "0.01:1e300:1e299"],
        2,
        "--loads: end 1e300",
    ),
    case(
        &["bench", "fabric", "--sizes", "1000000000"],
        2,
        "over the 16777216 B limit",
    ),
    case(
        &[
            "sim",
            "--load",
            "0.01",
            "--sim-time",
            "5ms",
            "--fail",
            "link:0-1@2ms",
            "--monitor-interval",
            "1000s",
        ],
        2,
        "nothing would be detected",
    ),
    // Nothing delivered and nothing said once.
    case(
        &["bench", "sim", "--msg-bytes", "100000"],
        2,
        "--msg-bytes: 1 to 65536",
    ),
    case(
        &["bench", "sim", "--loads", "0.01,1e300"],
        2,
        "--loads: 1e300",
    ),
    // clap's own errors, in myrix's form: one line.
    case(
        &["sim", "--frobnicate"],
        2,
        "unexpected argument '--frobnicate'",
    ),
    case(&["frob"], 2, "unrecognized subcommand 'frob'"),
    // "probe limit reached" and "two different hosts below 0" once.
    case(
        &["sim", "--topology", "{dir}/nohost.toml"],
        2,
        "the network has 0 host(s)",
    ),
    case(
        &["map", "--topology", "{dir}/nohost.toml"],
        2,
        "the network has 0 host(s)",
    ),
    // An incomplete map with exit 0 once.
    case(
        &["map", "--topology", "{dir}/net.toml", "--max-ports", "4"],
        1,
        "the map is incomplete: 4 of 40 hosts",
    ),
];

/// A directory with the files the cases name: a valid 10-switch network (seed 4, 40
/// hosts) and three broken topology files.
fn files(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("myrix-errors-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let net = dir.join("net.toml");
    let o = myrix(
        &[
            "topo",
            "gen",
            "--switches",
            "10",
            "--seed",
            "4",
            "-o",
            net.to_str().unwrap(),
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (name, text) in [
        ("disconnected.toml", "[[switch]]\nports = 2\n[[switch]]\nports = 2\n"),
        ("one-port.toml", "[[switch]]\nports = 1\n[[switch]]\nports = 1\n[[link]]\na = { switch = 0, port = 0 }\nb = { switch = 1, port = 1 }\n"),
        ("syntax.toml", "[[switch]\n"),
        ("nohost.toml", "[[switch]]\nports = 2\n[[switch]]\nports = 2\n[[link]]\na = { switch = 0, port = 0 }\nb = { switch = 1, port = 0 }\n"),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir
}

fn run_cases(tag: &str, cases: &[Case]) {
    let dir = files(tag);
    let d = dir.to_str().unwrap();
    for c in cases {
        let args: Vec<String> = c.args.iter().map(|a| a.replace("{dir}", d)).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = myrix(&args, c.stdin);
        let shown = format!("myrix {}", args.join(" "));
        let r = std::panic::catch_unwind(|| assert_one_error(&o, c.code, c.says));
        assert!(
            r.is_ok(),
            "{shown}: expected exit {} and {:?}",
            c.code,
            c.says
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn link_and_packet_input() {
    run_cases("link", LINK_AND_PACKETS);
}

#[test]
fn network_input() {
    run_cases("networks", NETWORKS);
}

#[test]
fn simulation_input() {
    run_cases("sim", SIMULATION);
}

#[test]
fn failure_and_join_input() {
    run_cases("changes", CHANGES);
}

#[test]
fn benchmark_input() {
    run_cases("bench", BENCHMARKS);
}

#[test]
fn hostile_input() {
    run_cases("hostile", HOSTILE);
}
