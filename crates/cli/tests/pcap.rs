//! `--pcap FILE` on the benches: every frame the client's endpoint sent and received is
//! in the file, in order, and each one is an MX frame. (Raw Ethernet captures are
//! checked across the namespaces, in netns.rs.)

mod common;

use common::myrix;
use myrix_wire::pcap::{self, Direction, PseudoHeader, Transport};

/// The `key=value` counter of the `stats client:` line.
fn counter(err: &str, key: &str) -> u64 {
    let line = err
        .lines()
        .find(|l| l.starts_with("stats client: "))
        .unwrap_or_else(|| panic!("no client counters in {err:?}"));
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

#[test]
fn bench_pcap_holds_every_frame_of_the_client_as_mx() {
    let dir = std::env::temp_dir().join(format!("myrix-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (transport, want) in [("shm", Transport::Shm), ("udp", Transport::Udp)] {
        for mode in ["pingpong", "stream"] {
            let file = dir.join(format!("{transport}-{mode}.pcap"));
            let o = myrix(
                &[
                    "bench",
                    mode,
                    "--transport",
                    transport,
                    "--start",
                    "1",
                    "--end",
                    "70000",
                    "--multiplier",
                    "16",
                    "--iterations",
                    "5",
                    "--warmup",
                    "1",
                    "--window",
                    "4",
                    "--stats",
                    "--pcap",
                    file.to_str().unwrap(),
                ],
                b"",
            );
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "{transport} {mode}: {err}");
            let records = pcap::read_pcap(&std::fs::read(&file).unwrap()).unwrap();
            let (mut sent, mut received) = (0u64, 0u64);
            for r in &records {
                assert_eq!(r.link_type, pcap::LINKTYPE_USER0);
                let (h, frame) = PseudoHeader::parse(&r.data).unwrap();
                assert_eq!(h.transport, want);
                match h.direction {
                    Direction::Sent => sent += 1,
                    Direction::Received => received += 1,
                }
                if let Err(e) = myrix_wire::mx::Repr::parse_bytes(frame) {
                    panic!("{transport} {mode}: a record is not an MX frame: {e}");
                }
            }
            // The server started by the client captured nothing: only the client's
            // frames, both ways, and all of them.
            assert_eq!(sent, counter(&err, "frames_out"), "{transport} {mode}");
            assert_eq!(received, counter(&err, "frames_in"), "{transport} {mode}");
            assert!(sent > 10 && received > 10, "{sent} {received}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Open-MX's frames on the loopback interface (root: raw sockets): the capture is of
/// link type Ethernet and every record is an Open-MX frame.
#[test]
fn bench_pcap_of_open_mx_frames_on_loopback() {
    use myrix_wire::omx::{self, WireMode};
    let file = std::env::temp_dir().join(format!("myrix-omx-lo-{}.pcap", std::process::id()));
    let o = myrix(
        &[
            "bench",
            "pingpong",
            "--transport",
            "omx",
            "--interface",
            "lo",
            "--start",
            "1",
            "--end",
            "70000",
            "--multiplier",
            "16",
            "--iterations",
            "5",
            "--warmup",
            "1",
            "--verify",
            "--stats",
            "--pcap",
            file.to_str().unwrap(),
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    if err.contains("CAP_NET_RAW") {
        eprintln!("skipped: no raw sockets here ({err})");
        return;
    }
    assert!(o.status.success(), "{err}");
    let records = pcap::read_pcap(&std::fs::read(&file).unwrap()).unwrap();
    std::fs::remove_file(&file).unwrap();
    let mut types = std::collections::BTreeSet::new();
    let (mut sent, mut received) = (0u64, 0u64);
    for r in &records {
        assert_eq!(r.link_type, pcap::LINKTYPE_ETHERNET);
        let f = omx::Frame::new_checked(&r.data[..]).unwrap();
        // lo's MAC is all zeros: the direction is in the peer index and endpoints only,
        // so count by the engine's totals below.
        assert_eq!(f.ethertype(), omx::ETHERTYPE);
        let repr = omx::Repr::parse_bytes(&r.data, WireMode::Default).unwrap();
        types.insert(repr.body.packet_type() as u8);
        match repr.body {
            omx::Body::Msg(m) if m.header.src_endpoint == 1 => sent += 1,
            omx::Body::Msg(_) => received += 1,
            _ => {}
        }
    }
    assert_eq!(
        records.len() as u64,
        counter(&err, "frames_out") + counter(&err, "frames_in")
    );
    assert!(sent > 0 && received > 0, "{sent} {received}");
    for t in [37u8, 38, 39, 40, 41, 42, 43, 36] {
        assert!(types.contains(&t), "no packet type {t} in {types:?}");
    }
}
