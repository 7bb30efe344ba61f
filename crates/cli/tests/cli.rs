//! The `myrix` binary as a user runs it.

mod common;

use common::{assert_one_error, myrix, stdout};
use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn encode_prints_the_standard_code_groups_and_gap_framing() {
    // One byte: odd length, one GAP. D0.0 at RD- is 100111 0100, leaving RD-.
    let o = myrix(&["link", "encode", "--hex", "00"], b"");
    assert!(o.status.success());
    assert_eq!(stdout(&o), "100111 0100 D0.0 -\n101110 1000 K29.7 -\n");
    // Two bytes: even length, two GAPs.
    let o = myrix(&["link", "encode", "--hex", "0000", "--symbols"], b"");
    assert_eq!(
        stdout(&o),
        "100111 0100 D0.0 - data 00\n100111 0100 D0.0 - data 00\n\
         101110 1000 K29.7 - GAP\n101110 1000 K29.7 - GAP\n"
    );
    // Raw mode: K28.5's neighbour D28.5, no framing.
    let o = myrix(&["link", "encode", "--raw", "--hex", "bc"], b"");
    assert_eq!(stdout(&o), "001110 1010 D28.5 -\n");
}

#[test]
fn encode_reads_standard_input_and_decode_recovers_it() {
    for len in [1usize, 2, 3, 100, 1001] {
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let enc = myrix(&["link", "encode"], &data);
        assert!(enc.status.success());
        let dec = myrix(&["link", "decode"], &enc.stdout);
        assert!(
            dec.status.success(),
            "{}",
            String::from_utf8_lossy(&dec.stderr)
        );
        let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            stdout(&dec),
            format!("packet 1 at code-group 0: {hex} ({len} bytes)\n")
        );
        // Bare 10-bit groups work too.
        let bare: String = stdout(&enc)
            .lines()
            .map(|l| l.split_whitespace().take(2).collect::<String>() + "\n")
            .collect();
        assert_eq!(
            stdout(&myrix(&["link", "decode"], bare.as_bytes())),
            stdout(&dec)
        );
        let raw = myrix(&["link", "encode", "--raw"], &data);
        let back = myrix(&["link", "decode", "--raw"], &raw.stdout);
        assert_eq!(stdout(&back), format!("data {hex} ({len} bytes)\n"));
    }
}

#[test]
fn decode_reports_each_error_with_its_position() {
    let mut text = stdout(&myrix(&["link", "encode", "--hex", "a1a2a3a4"], b""));
    // Replace the second code-group with one in neither column.
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines[1] = "110000 0000".into();
    text = lines.join("\n");
    let o = myrix(&["link", "decode"], text.as_bytes());
    assert_one_error(&o, 1, "1 error(s)");
    assert!(stdout(&o).contains("error at code-group 1: invalid code-group (110000 0000)"));
}

#[test]
fn packet_build_then_parse_through_switches() {
    let o = myrix(
        &[
            "packet",
            "build",
            "--route",
            "3,0,7",
            "--payload-hex",
            "6d79726978",
        ],
        b"",
    );
    let hex = stdout(&o).trim().to_string();
    assert_eq!(hex, "838087046d7972697867");
    let o = myrix(&["packet", "parse", &hex, "--hops"], b"");
    assert!(o.status.success());
    let out = stdout(&o);
    assert_eq!(out.matches(" ok").count(), 4, "{out}");
    assert!(out.contains("link 4: 046d79726978fe"));
    // A corrupted packet parses but fails its CRC.
}

#[test]
fn no_command_runs_the_main_job_sweep_with_its_plot() {
    let dir = std::env::temp_dir().join(format!("myrix-main-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_myrix"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(
        out.starts_with(
            "# irregular-16-seed1 (16 switches, 64 hosts), routing osud, 32 B messages"
        ),
        "{out}"
    );
    // The sweep goes on until two points in a row saturate.
    let states: Vec<&str> = out
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().last().unwrap())
        .collect();
    assert!(states.len() >= 4 && states[0] == "steady", "{out}");
    assert_eq!(
        &states[states.len() - 2..],
        ["SATURATED", "SATURATED"],
        "{out}"
    );
    let svg = std::fs::read_to_string(dir.join("myrix-sweep.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("accepted traffic"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tour_runs() {
    let o = myrix(&["tour"], b"");
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("error detected"), "{out}");
    assert!(out.contains("LOST -> SYNC -> REGAIN -> IN_SYNC"), "{out}");
    assert!(out.contains("code errors 0"), "{out}");
    assert!(out.contains("overflows 0"), "{out}");
}

#[test]
fn topo_gen_show_export() {
    let dir = std::env::temp_dir().join(format!("myrix-topo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let net = dir.join("net.toml");
    let net_s = net.to_str().unwrap();
    let o = myrix(
        &[
            "topo",
            "gen",
            "--kind",
            "irregular",
            "--switches",
            "16",
            "--seed",
            "1",
            "-o",
            net_s,
        ],
        b"",
    );
    assert!(o.status.success());
    // Same seed, same file, also on standard output.
    let again = myrix(&["topo", "gen", "--switches", "16", "--seed", "1"], b"");
    assert_eq!(std::fs::read_to_string(&net).unwrap(), stdout(&again));
    let show = stdout(&myrix(&["topo", "show", net_s], b""));
    assert!(show.contains("switches    16\nhosts       64\n"), "{show}");
    assert!(show.contains("deadlock    none"), "{show}");
    let any = stdout(&myrix(
        &["topo", "export", net_s, "--format", "anynet"],
        b"",
    ));
    assert_eq!(any.lines().count(), 16);
    assert!(any.starts_with("router 0 node 0 node 1 node 2 node 3 router "));
    let dot = stdout(&myrix(&["topo", "export", net_s, "--format", "dot"], b""));
    assert!(dot.starts_with("graph \"irregular-16-seed1\""));
    let toml = stdout(&myrix(&["topo", "export", net_s, "--format", "toml"], b""));
    assert_eq!(toml, std::fs::read_to_string(&net).unwrap());
    for kind in ["mesh", "torus", "fattree"] {
        assert!(
            myrix(&["topo", "gen", "--kind", kind], b"")
                .status
                .success(),
            "{kind}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sim_reports_json_with_stable_names_and_is_deterministic() {
    let args = [
        "sim",
        "--switches",
        "8",
        "--seed",
        "3",
        "--loads",
        "0.01:0.02:0.01",
        "--sim-time",
        "200us",
        "--warmup",
        "20us",
        "--format",
        "json",
    ];
    let o = myrix(&args, b"");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    for key in [
        "\"routing\": \"osud\"",
        "\"switches\": 8",
        "\"hosts\": 32",
        "\"msg_bytes\": 32",
        "\"seed\": 3",
        "\"offered_flits_ns_switch\": 0.01",
        "\"accepted_flits_ns_switch\"",
        "\"mser_truncated\"",
        "\"avg_latency_ns\"",
        "\"p99_latency_ns\"",
        "\"latency_ci95_ns\"",
        "\"max_link_utilization\"",
        "\"messages_delivered\"",
        "\"saturated\": false",
    ] {
        assert!(out.contains(key), "{key} missing from {out}");
    }
    assert_eq!(out.matches("\"routing\"").count(), 2);
    assert_eq!(stdout(&myrix(&args, b"")), out, "same seed, same output");
    let csv = stdout(&myrix(
        &[
            "sim",
            "--switches",
            "8",
            "--load",
            "0.01",
            "--sim-time",
            "100us",
            "--format",
            "csv",
        ],
        b"",
    ));
    assert!(csv.starts_with("routing,switches,hosts,msg_bytes,seed,offered_flits_ns_switch,"));
    assert_eq!(csv.lines().count(), 2);
}

#[test]
fn a_reader_that_stops_early_does_not_make_myrix_panic() {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_myrix"))
        .args(["topo", "export", "/dev/stdin", "--format", "dot"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let net = stdout(&myrix(&["topo", "gen", "--switches", "512"], b""));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(net.as_bytes())
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap(); // then the pipe closes
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stderr.is_empty());
}

#[test]
fn routes_json_lists_every_alternative_of_every_host_pair() {
    let o = myrix(
        &[
            "routes",
            "--switches",
            "8",
            "--seed",
            "2",
            "--routing",
            "rmit",
            "--format",
            "json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let pairs = v.as_array().unwrap();
    assert_eq!(pairs.len(), 32 * 31);
    let net = stdout(&myrix(
        &["topo", "gen", "--switches", "8", "--seed", "2"],
        b"",
    ));
    let t = myrix_fabric::format::from_toml(&net).unwrap();
    let mut itbs = 0;
    for p in pairs {
        let (src, dst) = (
            p["src"].as_u64().unwrap() as usize,
            p["dst"].as_u64().unwrap() as usize,
        );
        for path in p["paths"].as_array().unwrap() {
            let sw: Vec<u32> = path["switches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as u32)
                .collect();
            let ports: Vec<u8> = path["ports"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as u8)
                .collect();
            let it: Vec<u32> = path["in_transit"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as u32)
                .collect();
            assert_eq!(sw.len(), ports.len());
            assert_eq!(sw[0], t.hosts()[src].switch);
            // Follow the ports: each leads to the next switch, to an in-transit host (and
            // back into the same switch), or finally to the destination host.
            let mut k = 0;
            for i in 0..sw.len() {
                match t.port(sw[i], ports[i]) {
                    myrix_fabric::PortUse::Link { peer, .. } => assert_eq!(peer.switch, sw[i + 1]),
                    myrix_fabric::PortUse::Host(h) if i + 1 == sw.len() => {
                        assert_eq!(h as usize, dst)
                    }
                    myrix_fabric::PortUse::Host(h) => {
                        assert_eq!(h, it[k]);
                        assert_eq!(sw[i + 1], sw[i]);
                        k += 1;
                    }
                    myrix_fabric::PortUse::Free => panic!("free port"),
                }
            }
            assert_eq!(k, it.len());
            itbs += k;
        }
    }
    assert!(itbs > 0, "some rmit routes use in-transit buffers");
}

#[test]
fn routes_summary_reports_the_deadlock_check() {
    let s = stdout(&myrix(&["routes", "--routing", "rrmit-min"], b""));
    assert!(
        s.contains("deadlock check: every sub-route legal, no channel dependency cycle"),
        "{s}"
    );
}

#[test]
fn sim_compares_routing_policies_in_one_run() {
    let o = myrix(
        &[
            "sim",
            "--switches",
            "8",
            "--routing",
            "osud,rmit,rrmit-min",
            "--load",
            "0.02",
            "--sim-time",
            "200us",
            "--format",
            "json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["routing"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["osud", "rmit", "rrmit-min"]);
    assert_eq!(v[0]["itbs_per_message"], 0.0);
    assert!(v[1]["itbs_per_message"].as_f64().unwrap() > 0.0);
    let table = stdout(&myrix(
        &[
            "sim",
            "--switches",
            "8",
            "--routing",
            "osud,pit",
            "--load",
            "0.02",
            "--sim-time",
            "100us",
        ],
        b"",
    ));
    assert!(
        table.contains("routing several") && table.contains("\npit "),
        "{table}"
    );
}

#[test]
fn the_minimal_routing_experiment_writes_its_table_and_figures() {
    let dir = std::env::temp_dir().join(format!("myrix-exp-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let o = myrix(
        &[
            "experiment",
            "minimal-routing",
            "--quick",
            "--topologies",
            "1",
            "--sim-time",
            "50us",
            "--out",
            d,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert_eq!(
        out.lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .count(),
        24,
        "{out}"
    );
    assert!(out.contains("rrmit-min") && out.contains("0.017"), "{out}");
    for f in ["fig1-16sw-32B.svg", "fig4-16sw-1024B.svg", "table.txt"] {
        assert!(dir.join(f).exists(), "{f}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sim_message_mix_and_interface_delay() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "sim",
            "--switches",
            "8",
            "--load",
            "0.01",
            "--sim-time",
            "300us",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let o = myrix(&args, b"");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()[0].clone()
    };
    let plain = run(&[]);
    let late = run(&["--send-overhead", "1us"]);
    let d = late["avg_latency_ns"].as_f64().unwrap() - plain["avg_latency_ns"].as_f64().unwrap();
    assert!((d - 1000.0).abs() < 30.0, "{d}");
    let mix = run(&["--msg-bytes", "32:0.8,1024:0.2"]);
    assert_eq!(mix["msg_bytes"], 230);
    assert!(mix["accepted_flits_ns_switch"].as_f64().unwrap() > 0.005);
}

#[test]
fn map_discovers_the_network_it_is_given() {
    let dir = std::env::temp_dir().join(format!("myrix-map-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let net = dir.join("net.toml");
    assert!(myrix(
        &[
            "topo",
            "gen",
            "--switches",
            "10",
            "--seed",
            "4",
            "-o",
            net.to_str().unwrap()
        ],
        b""
    )
    .status
    .success());
    let o = myrix(
        &["map", "--topology", net.to_str().unwrap(), "--mapper", "7"],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("10 switches, 40 hosts") && err.contains("probes"),
        "{err}"
    );
    // The map is a topology file: same hosts and the same number of links.
    let map = myrix_fabric::format::from_toml(&stdout(&o)).unwrap();
    let real = myrix_fabric::format::from_toml(&std::fs::read_to_string(&net).unwrap()).unwrap();
    assert_eq!(map.links().len(), real.links().len());
    let mut a: Vec<u64> = map.hosts().iter().map(|h| h.address).collect();
    let mut b: Vec<u64> = real.hosts().iter().map(|h| h.address).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // Without --mapper, every host starts mapping and the highest address is left.
    let o = myrix(
        &[
            "map",
            "--topology",
            net.to_str().unwrap(),
            "--format",
            "json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["mapper"], 39);
    assert_eq!(j["elected"], true);
    assert_eq!(j["candidates"], 40);
    assert!(j["all_probes"].as_u64().unwrap() > j["probes"].as_u64().unwrap());
    assert!(j["distributed_ns"].as_f64().unwrap() > j["sim_time_ns"].as_f64().unwrap());
    assert_eq!(j["switches"], 10);
    assert!(String::from_utf8_lossy(&o.stderr).contains("elected among 40 hosts"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `myrix bench pingpong|stream` with neither --server nor --client spawns the server.
#[test]
fn bench_pingpong_and_stream_spawn_their_server_and_verify() {
    for transport in ["shm", "udp"] {
        for mode in ["pingpong", "stream"] {
            let o = myrix(
                &[
                    "bench",
                    mode,
                    "--transport",
                    transport,
                    "--verify",
                    "--start",
                    "0",
                    "--end",
                    "300000",
                    "--increment",
                    "60000",
                    "--iterations",
                    "6",
                    "--warmup",
                    "1",
                    "--window",
                    "4",
                    "--format",
                    "json",
                    "--stats",
                ],
                b"",
            );
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "{transport} {mode}: {err}");
            // Both sides count their frames; nothing is lost or repeated on loopback.
            for side in ["server", "client"] {
                let line = err
                    .lines()
                    .find(|l| l.starts_with(&format!("stats {side}: ")))
                    .unwrap_or_else(|| panic!("no {side} counters in {err:?}"));
                let get = |k: &str| -> u64 {
                    line.split_whitespace()
                        .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
                        .and_then(|v| v.parse().ok())
                        .unwrap_or_else(|| panic!("no {k} in {line:?}"))
                };
                assert!(get("frames_in") > 6 && get("frames_out") > 6, "{line}");
                assert_eq!(get("bad_frames"), 0, "{line}");
            }
            let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let lens: Vec<u64> = rows
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["length"].as_u64().unwrap())
                .collect();
            assert_eq!(lens, [0, 60000, 120000, 180000, 240000, 300000]);
        }
    }
}

/// `myrix sim` on the 6-switch network of seed 4 under 0.02 flits/ns/switch for 15 ms
/// with `--fail` or `--join`: the first JSON row.
fn change_run(flag: &str, spec: &str) -> serde_json::Value {
    let o = myrix(
        &[
            "sim",
            "--switches",
            "6",
            "--seed",
            "4",
            "--load",
            "0.02",
            "--sim-time",
            "15ms",
            flag,
            spec,
            "--format",
            "json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    v[0].clone()
}

#[test]
fn sim_fail_reports_detection_losses_and_recovery() {
    let r = change_run("--fail", "link:2-5@1ms");
    assert_eq!(r["failed"], "link 2-5");
    assert_eq!(r["drained"], true);
    assert!(r["packets_lost"].as_u64().unwrap() > 0);
    let (det, rer) = (
        r["detected_at_ns"].as_f64().unwrap(),
        r["rerouted_at_ns"].as_f64().unwrap(),
    );
    assert!(1e6 < det && det < rer);
    let after = r["accepted_after"].as_f64().unwrap();
    assert!((after / 0.02 - 1.0).abs() < 0.15, "{r}");
    // A switch and a host: the map loses them, messages to them are refused.
    for (spec, switches, hosts) in [("switch:1@1ms", 5, 20), ("host:3@1ms", 6, 23)] {
        let r = change_run("--fail", spec);
        assert_eq!(r["map_switches"], switches, "{r}");
        assert_eq!(r["map_hosts"], hosts, "{r}");
        assert_eq!(r["drained"], true);
        assert!(r["refused"].as_u64().unwrap() > 0, "{r}");
        assert!(r["accepted_after"].as_f64().unwrap() > 0.01, "{r}");
    }
    // A host joining: mapped in, then it sends and receives.
    let r = change_run("--join", "host:3@1ms");
    assert_eq!(
        (r["joined"].clone(), r["map_hosts"].clone()),
        (true.into(), 24.into())
    );
    assert!(r["host_sent"].as_u64().unwrap() > 0 && r["host_received"].as_u64().unwrap() > 0);
}

/// A shared-memory peer whose process dies: a large send waiting on it completes with
/// Unreachable instead of hanging (the transport notices the dead process).
#[test]
fn shm_peer_death_fails_pending_requests() {
    use myrix_mx::{Code, Endpoint};
    use std::time::Duration;
    let (mut server, addr) = common::shm_server();
    let addr = addr.parse().unwrap();
    let mut ep = (100..=255u8)
        .find_map(|id| Endpoint::open("shm", id, 0x6d79_7278).ok())
        .unwrap();
    let peer = ep
        .connect(&addr, 0x6d79_7278, Duration::from_secs(20))
        .unwrap();
    // Large: completes only when the server pulls it, which it never will.
    let s = ep.isend(peer, &[&vec![7u8; 1 << 20]], 0x55, 0).unwrap();
    assert!(ep.wait(s, Duration::from_millis(200)).unwrap().is_none());
    server.kill().unwrap();
    server.wait().unwrap();
    let (st, _) = ep
        .wait(s, Duration::from_secs(20))
        .unwrap()
        .expect("the send ends once the peer is found dead");
    assert_eq!(st.code, Code::Unreachable);
    // And a new send to it ends at once.
    let s = ep.isend(peer, &[b"x"], 1, 0).unwrap();
    let (st, _) = ep.wait(s, Duration::from_secs(1)).unwrap().unwrap();
    assert_eq!(st.code, Code::Unreachable);
}

/// A `.png` plot is the SVG rasterized with a font: a 900×600 image whose axis label is
/// drawn. Without a usable font it is refused up front, before any simulation.
#[test]
fn png_plot_has_its_text_and_needs_a_font() {
    let dir = std::env::temp_dir().join(format!("myrix-png-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("p.png");
    let png_s = png.to_str().unwrap();

    // Not a font: one error line, nothing written.
    let o = Command::new(env!("CARGO_BIN_EXE_myrix"))
        .args(["sim", "--load", "0.01", "--plot", png_s])
        .env("MYRIX_FONT", env!("CARGO_MANIFEST_PATH"))
        .output()
        .unwrap();
    assert_one_error(&o, 2, "needs a TrueType or OpenType font");
    assert!(!png.exists());

    let font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
    if !std::path::Path::new(font).exists() {
        eprintln!("skipped the drawing half: no {font} (.ci/run installs fonts-dejavu-core)");
        std::fs::remove_dir_all(&dir).unwrap();
        return;
    }
    let o = Command::new(env!("CARGO_BIN_EXE_myrix"))
        .args([
            "sim",
            "--loads",
            "0.01:0.02:0.01",
            "--sim-time",
            "200us",
            "--plot",
            png_s,
        ])
        .env("MYRIX_FONT", font)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let img = resvg::tiny_skia::Pixmap::load_png(&png).unwrap();
    assert_eq!((img.width(), img.height()), (900, 600));
    // The x-axis label sits centred under the axis; with no font it would be blank.
    let dark = |x0: u32, x1: u32, y0: u32, y1: u32| {
        (y0..y1)
            .flat_map(|y| (x0..x1).map(move |x| (x, y)))
            .filter(|&(x, y)| img.pixel(x, y).unwrap().red() < 128)
            .count()
    };
    assert!(dark(350, 550, 565, 595) > 50, "no axis label drawn");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bench_fabric_runs_mx_over_the_simulated_network() {
    // Two round trips of 8 and 5000 bytes on the default 16-switch network: one frame for
    // the tiny message, under a microsecond and a half one way (the network alone), and
    // several frames for the medium one, below the link's 160 MB/s.
    let o = myrix(
        &["bench", "fabric", "--sizes", "8,5000", "--iters", "2"],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    let rows: Vec<Vec<f64>> = out
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim_start().starts_with("bytes"))
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert_eq!(rows[0][0], 8.0);
    assert!(rows[0][1] > 0.5 && rows[0][1] < 1.5, "{out}");
    assert_eq!(rows[0][3], 1.0, "{out}");
    assert!(rows[1][3] >= 2.0, "{out}");
    assert!(rows[1][2] > 50.0 && rows[1][2] < 160.0, "{out}");
}

#[test]
fn mx_info_lists_boards_and_peers_and_names_skipped_lines() {
    let dir = std::env::temp_dir().join(format!("myrix-mxinfo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let peers = dir.join("peers");
    std::fs::write(&peers, "# a comment\n02:00:00:00:00:09 far:0\nnot-a-line\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_myrix"))
        .args(["mx", "info"])
        .env("MYRIX_MX_PEERS", &peers)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}{err}");
    assert!(out.starts_with("MX boards of this host"), "{out}");
    assert!(out.contains("02:00:00:00:00:09  far:0"), "{out}");
    assert!(
        err.contains(":3: skipped: expected `MAC hostname:board`"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
