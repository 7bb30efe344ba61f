//! Two processes over loopback UDP: one-sided puts and gets to an exporter that only
//! sleeps (its progress thread serves them), and what the thread costs: the idle
//! exporter's CPU time and the latency of a get served by the sleeping thread against
//! one served by an exporter that spins in the library.
//!
//! The child is this test binary run again with `MYRIX_RSM_ROLE` set (and the node
//! table in `MYRIX_RSM_NODES`, its node in `MYRIX_RSM_NODE`), through
//! `Controller::get("udp")` as an application would.

mod net_common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use myrix_rsm::net::node_table::NodeTable;
use myrix_rsm::{BarrierMode, BarrierType, Controller, ExportFlags, NodeId, Perm, SegmentId};

const LEN: usize = 256 * 1024;

#[allow(clippy::zombie_processes)] // every caller kills and waits for the child
fn spawn(role: &str, table: &std::path::Path, node: u32) -> (Child, SegmentId) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["child_roles", "--exact", "--nocapture", "--test-threads=1"])
        .env("MYRIX_RSM_ROLE", role)
        .env("MYRIX_RSM_NODES", table)
        .env("MYRIX_RSM_NODE", node.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "child said nothing");
        if let Some((_, hex)) = line.trim().split_once("ID ") {
            let id = SegmentId(u32::from_str_radix(hex, 16).unwrap());
            child.stdout = Some(out.into_inner());
            return (child, id);
        }
    }
}

/// The child: export a segment, say its id, then sleep in a read of stdin (role
/// `sleep`: no library call at all) or spin in `signal_wait` (role `spin`).
#[test]
fn child_roles() {
    let Ok(role) = std::env::var("MYRIX_RSM_ROLE") else {
        return;
    };
    let c = Controller::get("udp").unwrap();
    let e = c.export_create(LEN, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    println!("ID {:08x}", id.0);
    std::io::stdout().flush().unwrap();
    match role.as_str() {
        "sleep" => {
            let mut s = String::new();
            let _ = std::io::stdin().read_line(&mut s);
        }
        _ => loop {
            let _ = e.signal_wait(Some(Duration::from_secs(3600)));
        },
    }
}

fn cpu_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &s[s.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime: fields 14 and 15 of the line, 12 and 13 after the name.
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

fn setup(nodes: &[u32]) -> (std::path::PathBuf, NodeTable) {
    let text = net_common::table_text(nodes);
    let path = std::env::temp_dir().join(format!(
        "myrix-rsm-nodes-{}-{}",
        std::process::id(),
        nodes[0]
    ));
    std::fs::write(&path, &text).unwrap();
    (path, NodeTable::parse(&text).unwrap())
}

fn get_latency(c: &Controller, node: u32, id: SegmentId, n: u32) -> Duration {
    let i = c.import_connect(NodeId(node), id, Perm::RDWR).unwrap();
    let mut b = [0u8; 8];
    for _ in 0..n / 10 {
        i.get(0, &mut b).unwrap();
    }
    let t = Instant::now();
    for _ in 0..n {
        i.get(0, &mut b).unwrap();
    }
    t.elapsed() / n
}

#[test]
fn one_sided_to_a_sleeping_exporter() {
    if std::env::var("MYRIX_RSM_ROLE").is_ok() {
        return;
    }
    let (path, table) = setup(&[1, 2]);
    let (mut child, id) = spawn("sleep", &path, 1);
    let c = Controller::udp(NodeId(2), table).unwrap();
    let i = c.import_connect(NodeId(1), id, Perm::RDWR).unwrap();

    // Puts then gets, verified, small and large (pipelined, pulled in blocks).
    let data: Vec<u8> = (0..LEN).map(|k| (k * 13 + 5) as u8).collect();
    i.put(0, &data).unwrap();
    let mut back = vec![0u8; LEN];
    i.get(0, &mut back).unwrap();
    assert!(back == data, "large put/get differ");
    i.set_mode(BarrierMode::Explicit).unwrap();
    let mut b = i.init_barrier(BarrierType::Segment).unwrap();
    b.open().unwrap();
    for k in 0..500usize {
        i.put(k * 64, &(k as u64).to_le_bytes()).unwrap();
    }
    b.close().unwrap();
    for k in (0..500usize).step_by(7) {
        let mut v = [0u8; 8];
        i.get(k * 64, &mut v).unwrap();
        assert_eq!(u64::from_le_bytes(v), k as u64);
    }

    // The idle exporter's cost: CPU time over 2 s while nothing happens.
    let pid = child.id();
    std::thread::sleep(Duration::from_millis(200));
    let t0 = cpu_ticks(pid);
    let r0 = c.agent_rounds().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let idle_ticks = cpu_ticks(pid) - t0;
    let rounds = c.agent_rounds().unwrap() - r0;
    eprintln!("idle exporter: {idle_ticks} clock ticks (1/100 s) of CPU in 2 s");
    eprintln!("idle importer's agent: {rounds} wake-ups in 2 s");
    assert!(
        idle_ticks <= 4,
        "idle exporter used {idle_ticks} ticks in 2 s"
    );

    let sleeping = get_latency(&c, 1, id, 2000);
    let _ = child.kill();
    let _ = child.wait();
    std::fs::remove_file(&path).unwrap();

    // A second exporter, on other ports (an importer holding state with a killed
    // exporter's board does not resynchronise with its successor before the timeout).
    let (path, table) = setup(&[3, 4]);
    let (mut child, id2) = spawn("spin", &path, 3);
    let c = Controller::udp(NodeId(4), table).unwrap();
    let spinning = get_latency(&c, 3, id2, 2000);
    let _ = child.kill();
    let _ = child.wait();
    eprintln!(
        "8-byte get: {:.1} µs served by the sleeping exporter's thread, {:.1} µs by an exporter spinning in the library",
        sleeping.as_nanos() as f64 / 1000.0,
        spinning.as_nanos() as f64 / 1000.0
    );
    std::fs::remove_file(&path).unwrap();
}
