//! Rails between two network namespaces joined by two veth pairs (created here, as
//! root, and removed after): an exporter process in one namespace that only sleeps, an
//! importer process in the other making striped, verified puts; one veth pair is taken
//! down in the middle of a barrier scope. Nothing is lost, that scope closes with
//! `BarrierFailure`, the next succeeds on the remaining rail.
//!
//! Runs where `.ci/run` sets `MYRIX_NETNS=1` (root, namespaces available); elsewhere it
//! says it is skipped.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use myrix_rsm::net::node_table::NodeTable;
use myrix_rsm::{
    BarrierMode, BarrierType, Controller, ExportFlags, NodeId, Perm, RsmError, SegmentId,
};

const LEN: usize = 1 << 20;

/// This process's namespaces and veth ends (`mra<pid>`, `mrb<pid>`; veths
/// `mra0<pid>`.. at most 15 bytes), so a run never meets CI's namespaces or another
/// run's.
struct Names {
    a: String,
    b: String,
    /// Rail r's veth end in namespace a, and in b.
    va: [String; 2],
    vb: [String; 2],
}

fn names() -> &'static Names {
    static N: std::sync::OnceLock<Names> = std::sync::OnceLock::new();
    N.get_or_init(|| {
        let pid = std::process::id();
        Names {
            a: format!("mra{pid}"),
            b: format!("mrb{pid}"),
            va: [format!("mra0{pid}"), format!("mra1{pid}")],
            vb: [format!("mrb0{pid}"), format!("mrb1{pid}")],
        }
    })
}

fn udp_table() -> String {
    "1 udp:10.79.0.1:7101 udp:10.79.1.1:7101\n\
     2 udp:10.79.0.2:7102 udp:10.79.1.2:7102\n"
        .to_string()
}

/// The same nodes over raw Ethernet (the veth ends get these addresses).
fn eth_table() -> String {
    let n = names();
    format!(
        "1 eth:{}@02:79:00:00:00:a0 eth:{}@02:79:00:00:00:a1\n\
         2 eth:{}@02:79:00:00:00:b0 eth:{}@02:79:00:00:00:b1\n",
        n.va[0], n.va[1], n.vb[0], n.vb[1]
    )
}

fn sh(args: &[&str]) {
    let st = Command::new("ip").args(args).status().unwrap();
    assert!(st.success(), "ip {args:?} failed");
}

/// Deletes the namespaces (and with them the veth pairs) when dropped.
struct Namespaces;

impl Namespaces {
    fn up() -> Namespaces {
        let (a, b) = (names().a.as_str(), names().b.as_str());
        Self::down();
        let n = Namespaces;
        sh(&["netns", "add", a]);
        sh(&["netns", "add", b]);
        for r in 0..2 {
            let (va, vb) = (&names().va[r], &names().vb[r]);
            let (ma, mb) = (
                format!("02:79:00:00:00:a{r}"),
                format!("02:79:00:00:00:b{r}"),
            );
            sh(&[
                "link", "add", va, "address", &ma, "type", "veth", "peer", "name", vb, "address",
                &mb,
            ]);
            sh(&["link", "set", va, "netns", a]);
            sh(&["link", "set", vb, "netns", b]);
            sh(&[
                "-n",
                a,
                "addr",
                "add",
                &format!("10.79.{r}.1/24"),
                "dev",
                va,
            ]);
            sh(&[
                "-n",
                b,
                "addr",
                "add",
                &format!("10.79.{r}.2/24"),
                "dev",
                vb,
            ]);
            sh(&["-n", a, "link", "set", va, "up"]);
            sh(&["-n", b, "link", "set", vb, "up"]);
        }
        sh(&["-n", a, "link", "set", "lo", "up"]);
        sh(&["-n", b, "link", "set", "lo", "up"]);
        // Loss, duplication and reordering on the surviving rail where the kernel has
        // netem (as .ci/netns.sh); without it the engine's own tests cover loss.
        for (ns, dev) in [(a, &names().va[0]), (b, &names().vb[0])] {
            let ok = Command::new("ip")
                .args([
                    "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root",
                ])
                .args(["netem", "delay", "100us", "50us", "loss", "2%"])
                .args(["duplicate", "1%", "reorder", "10%"])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            eprintln!(
                "netem on {dev}: {}",
                if ok { "yes" } else { "not available" }
            );
        }
        n
    }

    fn down() {
        for ns in [&names().a, &names().b] {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(Stdio::null())
                .status();
        }
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        Self::down();
    }
}

/// A child process, killed and reaped when dropped (also when the test panics).
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn pattern(seed: u32, n: usize) -> Vec<u8> {
    (0..n)
        .map(|k| (k as u32).wrapping_mul(2654435761).wrapping_add(seed) as u8)
        .collect()
}

fn controller() -> Controller {
    let (node, table) = NodeTable::from_env().unwrap();
    let mut cfg = myrix_rsm::net::default_config();
    cfg.timeout_ns = 500_000_000;
    let kind = std::env::var("KIND").unwrap();
    Controller::net(&kind, node, table, cfg).unwrap()
}

/// The children: `export` publishes and sleeps; `import` runs the scopes, asking the
/// parent to take rail 1 down in the middle of the second.
#[test]
fn child_roles() {
    let Ok(role) = std::env::var("MYRIX_RSM_ROLE") else {
        return;
    };
    let c = controller();
    let mut out = std::io::stdout();
    let mut input = BufReader::new(std::io::stdin());
    let mut line = String::new();
    if role == "export" {
        let e = c.export_create(LEN, ExportFlags::default()).unwrap();
        let id = e.publish(None, &[]).unwrap();
        writeln!(out, "ID {:08x}", id.0).unwrap();
        out.flush().unwrap();
        let _ = input.read_line(&mut line);
        return;
    }
    let id = SegmentId(u32::from_str_radix(&std::env::var("SEG").unwrap(), 16).unwrap());
    let i = c.import_connect(NodeId(1), id, Perm::RDWR).unwrap();
    i.set_mode(BarrierMode::Explicit).unwrap();
    let mut b = i.init_barrier(BarrierType::Segment).unwrap();
    let mut model = vec![0u8; LEN];
    b.open().unwrap();
    let d = pattern(1, LEN);
    i.put(0, &d).unwrap();
    model.copy_from_slice(&d);
    b.close().unwrap();
    b.open().unwrap();
    for k in 0..8u32 {
        let off = k as usize * (LEN / 8);
        let d = pattern(10 + k, LEN / 8);
        i.put(off, &d).unwrap();
        model[off..off + d.len()].copy_from_slice(&d);
        if k == 3 {
            writeln!(out, "DOWN").unwrap();
            out.flush().unwrap();
            input.read_line(&mut line).unwrap();
        }
    }
    assert_eq!(b.close().unwrap_err(), RsmError::BarrierFailure);
    let mut back = vec![0u8; LEN];
    i.get(0, &mut back).unwrap();
    assert!(back == model, "data lost in the fail-over");
    b.open().unwrap();
    let d = pattern(99, LEN);
    i.put(0, &d).unwrap();
    b.close().unwrap();
    i.get(0, &mut back).unwrap();
    assert!(back == d);
    writeln!(out, "STATS {:?}", c.rail_stats()).unwrap();
    writeln!(out, "PASS").unwrap();
    out.flush().unwrap();
}

/// Over UDP, then over raw Ethernet (one test: both use the same namespaces).
#[test]
fn rail_down_between_namespaces() {
    if std::env::var_os("MYRIX_RSM_ROLE").is_some() {
        return;
    }
    if std::env::var_os("MYRIX_NETNS").is_none() {
        eprintln!(
            "skipped: needs root and namespaces (MYRIX_NETNS=1, as .ci/run sets after `.ci/netns.sh up`)"
        );
        return;
    }
    run("udp", &udp_table());
    run("eth", &eth_table());
}

fn run(kind: &str, table_text: &str) {
    let _ns = Namespaces::up();
    let table = std::env::temp_dir().join(format!("myrix-rsm-netns-{}", std::process::id()));
    std::fs::write(&table, table_text).unwrap();
    let exe = std::env::current_exe().unwrap();
    let child = |ns: &str, role: &str, node: &str, seg: &str| {
        Command::new("ip")
            .args(["netns", "exec", ns])
            .arg(&exe)
            .args(["child_roles", "--exact", "--nocapture", "--test-threads=1"])
            .env("MYRIX_RSM_ROLE", role)
            .env("MYRIX_RSM_NODES", &table)
            .env("MYRIX_RSM_NODE", node)
            .env("SEG", seg)
            .env("KIND", kind)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut exp = Child(child(&names().a, "export", "1", ""));
    let mut exp_out = BufReader::new(exp.0.stdout.take().unwrap());
    let mut line = String::new();
    let seg = loop {
        line.clear();
        assert!(
            exp_out.read_line(&mut line).unwrap() > 0,
            "exporter said nothing"
        );
        if let Some((_, hex)) = line.trim().split_once("ID ") {
            break hex.to_string();
        }
    };
    let mut imp = Child(child(&names().b, "import", "2", &seg));
    let mut imp_in = imp.0.stdin.take().unwrap();
    let imp_out = BufReader::new(imp.0.stdout.take().unwrap());
    let mut passed = false;
    for l in imp_out.lines() {
        let l = l.unwrap();
        eprintln!("{kind} importer: {l}");
        if l.ends_with("DOWN") {
            sh(&["-n", &names().a, "link", "set", &names().va[1], "down"]);
            writeln!(imp_in, "go").unwrap();
        }
        if l.ends_with("PASS") {
            passed = true;
        }
    }
    let st = imp.0.wait().unwrap();
    drop(exp);
    let _ = std::fs::remove_file(&table);
    std::thread::sleep(Duration::from_millis(10));
    assert!(passed && st.success(), "the {kind} importer failed");
}
