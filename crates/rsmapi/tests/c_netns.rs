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
#[path = "../../rsm/tests/netns_support/mod.rs"]
mod netns_support;

use netns_support::{lines, mac, Child, Namespaces};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const NET: &str = "10.85.0";
/// Each side's limit: a hang fails the test rather than CI.
const LIMIT: Duration = Duration::from_secs(90);

fn names() -> [String; 4] {
    netns_support::names("mc")
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
    let _ns = Namespaces::up("mc", NET);
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
