//! The C example `examples/c/rsm_pair.c`, built with pkg-config against librsmapi, as
//! an exporter in one network namespace and an importer in another, over controller
//! `udp` and over `eth`, each side naming its node in a node table file
//! (`MYRIX_RSM_NODES`, `MYRIX_RSM_NODE`), with `.ci/netns.sh`'s loss, duplication and
//! reordering on the veth between them. The program checks every byte both ways; the
//! test checks both sides said so.
//!
//! The namespaces are this process's own (`mca<pid>`, `mcb<pid>`, 10.85.0.0/24), made
//! by `.ci/netns.sh up` and deleted by a guard, also on panic. Ignored unless run as
//! root with `--ignored` and `MYRIX_NETNS=1`, as `.ci/run` does. The same program over
//! `udp` on this host's loopback, without root: `c_programs.rs`.

mod cbuild;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const NET: &str = "10.85.0";
/// Each side's limit: a hang fails the test rather than CI.
const LIMIT: Duration = Duration::from_secs(90);

fn names() -> [String; 4] {
    let pid = std::process::id();
    [
        format!("mca{pid}"),
        format!("mcb{pid}"),
        format!("mcva{pid}"),
        format!("mcvb{pid}"),
    ]
}

/// `.ci/netns.sh`'s namespaces under this process's names; deleted when dropped.
struct Namespaces;

impl Namespaces {
    fn up() -> Namespaces {
        let [a, b, va, vb] = names();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/netns.sh");
        let guard = Namespaces;
        let o = Command::new("bash")
            .args([script, "up"])
            .env("MYRIX_NETNS_A", &a)
            .env("MYRIX_NETNS_B", &b)
            .env("MYRIX_NETNS_VA", &va)
            .env("MYRIX_NETNS_VB", &vb)
            .env("MYRIX_NETNS_NET", NET)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "netns.sh up: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        eprint!("{}", String::from_utf8_lossy(&o.stdout));
        guard
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        let [a, b, ..] = names();
        for ns in [a, b] {
            let _ = Command::new("ip")
                .args(["netns", "del", &ns])
                .stderr(Stdio::null())
                .status();
        }
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

fn mac(ns: &str, dev: &str) -> String {
    let o = Command::new("ip")
        .args(["netns", "exec", ns, "cat"])
        .arg(format!("/sys/class/net/{dev}/address"))
        .output()
        .unwrap();
    assert!(o.status.success(), "no address for {dev}");
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// Every line of `child`'s stdout, through a channel (so reading can time out).
fn lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let out = child.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

/// Collects `rx`'s lines until the child's stdout closes or `LIMIT` passes.
fn drain(rx: &mpsc::Receiver<String>, start: Instant, who: &str) -> String {
    let mut all = String::new();
    while let Some(left) = LIMIT.checked_sub(start.elapsed()) {
        match rx.recv_timeout(left) {
            Ok(l) => {
                eprintln!("{who}: {l}");
                all.push_str(&l);
                all.push('\n');
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return all,
            Err(mpsc::RecvTimeoutError::Timeout) => break,
        }
    }
    panic!("{who} still running after {LIMIT:?}:\n{all}");
}

#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces mca<pid>, mcb<pid>)"]
fn the_c_pair_runs_between_namespaces_over_udp_and_eth() {
    if std::env::var_os("MYRIX_NETNS").is_none() {
        eprintln!("skipped: set MYRIX_NETNS=1 and run as root (as .ci/run does)");
        return;
    }
    let exe = cbuild::build_c("examples/c/rsm_pair.c", &["-pedantic"]);
    let _ns = Namespaces::up();
    let [a, b, va, vb] = names();
    let udp = format!("1 udp:{NET}.1:7601\n2 udp:{NET}.2:7602\n");
    pair(&exe, "udp", &udp);
    let eth = format!("1 eth:{va}@{}\n2 eth:{vb}@{}\n", mac(&a, &va), mac(&b, &vb));
    pair(&exe, "eth", &eth);
}

/// The exporter (node 1) in A, the importer (node 2) in B.
fn pair(exe: &Path, ctlr: &str, table: &str) {
    let start = Instant::now();
    let [a, b, ..] = names();
    let path = std::env::temp_dir().join(format!("myrix-rsmpair-{}.nodes", std::process::id()));
    std::fs::write(&path, table).unwrap();
    let side = |ns: &str, node: &str, args: &[&str]| {
        let child = Command::new("ip")
            .args(["netns", "exec", ns])
            .arg(exe)
            .args(args)
            .env_remove("LD_LIBRARY_PATH")
            .env("MYRIX_RSM_NODES", &path)
            .env("MYRIX_RSM_NODE", node)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        Child(child)
    };
    let mut exp = side(&a, "1", &["export", ctlr, "2"]);
    let exp_rx = lines(&mut exp);
    let first = exp_rx
        .recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("{ctlr}: the exporter printed no segment id"));
    let seg = first
        .strip_prefix("segment ")
        .unwrap_or_else(|| panic!("{ctlr}: exporter said {first:?}"))
        .to_string();
    let mut imp = side(&b, "2", &["import", ctlr, "1", &seg]);
    let imp_rx = lines(&mut imp);
    let imp_out = drain(&imp_rx, start, &format!("{ctlr} importer"));
    let exp_out = drain(&exp_rx, start, &format!("{ctlr} exporter"));
    let (ist, est) = (imp.0.wait().unwrap(), exp.0.wait().unwrap());
    let _ = std::fs::remove_file(&path);
    assert!(ist.success() && est.success(), "{ctlr}: a side failed");
    for want in [
        "importer: put 196608 bytes, 64 words and 4 pieces, barrier closed",
        "importer: got the 8192-byte reply",
        "importer: done",
    ] {
        assert!(imp_out.contains(want), "{ctlr}: no {want:?} in:\n{imp_out}");
    }
    for want in [
        "exporter: 196608 bytes, 64 words and 4 pieces verified",
        "exporter: done",
    ] {
        assert!(exp_out.contains(want), "{ctlr}: no {want:?} in:\n{exp_out}");
    }
    eprintln!("{ctlr}: passed in {:.1} s", start.elapsed().as_secs_f64());
}
