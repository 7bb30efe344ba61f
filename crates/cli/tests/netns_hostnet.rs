//! A sender's one area per host of another node (issue 23, seed 004 §3.1; session
//! 31, `hostnet`): `crates/mpiapi/tests/c/hostnet.c` on 4 ranks over two network
//! namespaces with `.ci/netns.sh`'s loss, duplication and reordering on the link
//! (rank i in namespace i mod 2). Rank 0 sends to 1 and 3, both in the other
//! namespace (every byte checked); 1 and 3 must map one area in common (the one 1
//! made for 0 and 3 joined), of two queues and a pool; without it they share
//! nothing. Makes namespaces of its own (`hna<pid>`, `hnb<pid>`) and deletes them.

mod common;

use common::mpi::{c_source, mpicc, myrix, run, show};
use common::reorder_share;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::Duration;

/// Deletes the namespaces when dropped.
struct Namespaces([String; 2]);

impl Namespaces {
    fn up() -> Namespaces {
        let pid = std::process::id();
        let ns = [format!("hna{pid}"), format!("hnb{pid}")];
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/netns.sh");
        let o = Command::new("bash")
            .args([script, "up"])
            .env("MYRIX_NETNS_A", &ns[0])
            .env("MYRIX_NETNS_B", &ns[1])
            .env("MYRIX_NETNS_VA", format!("hva{pid}"))
            .env("MYRIX_NETNS_VB", format!("hvb{pid}"))
            .env("MYRIX_NETNS_NET", "10.86.0")
            .env("MYRIX_NETNS_LOSS", "2")
            .env("MYRIX_NETNS_DUP", "1")
            .env("MYRIX_NETNS_REORDER", reorder_share())
            .output()
            .unwrap();
        let n = Namespaces(ns);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        n
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces hna<pid> and hnb<pid>)"]
fn a_sender_writes_one_area_for_the_ranks_of_another_host() {
    if common::netns_skipped("mpi hostnet") {
        return;
    }
    let exe = mpicc(
        "mpi-netns",
        &["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"],
    )
    .build(&c_source("hostnet"));
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hostnet");
    let (reg, sync) = (tmp.join("rsm"), tmp.join("sync"));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&reg).expect("registry directory");
    std::fs::create_dir_all(&sync).expect("meeting directory");
    let ns = Namespaces::up();
    let mut c = myrix();
    c.env("MYRIX_RSM_DIR", &reg)
        .env("HOSTAREA_SYNC", &sync)
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .args(["mpiexec", "--netns", &ns.0.join(","), "-n", "4"])
        .arg(&exe);
    let o = run(c, Duration::from_secs(180));
    drop(ns);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", show(&o));
    for r in 0..4 {
        assert!(
            out.lines().any(|l| l.trim() == format!("hostnet ok {r}")),
            "rank {r} did not finish\n{}",
            show(&o)
        );
    }

    // rank -> {file -> bytes mapped}
    let mut files: BTreeMap<u32, BTreeMap<String, u64>> = BTreeMap::new();
    for l in out.lines() {
        let Some(rest) = l.strip_prefix("seg ") else {
            continue;
        };
        let (r, rest) = rest.split_once(' ').expect("rank");
        let (file, b) = rest.rsplit_once(' ').expect("bytes");
        let r: u32 = r.parse().expect("rank");
        files
            .entry(r)
            .or_default()
            .insert(file.to_string(), b.parse().expect("bytes"));
    }
    let of = |r: u32| files.get(&r).cloned().unwrap_or_default();
    let (s1, s3) = (of(1), of(3));
    let k1: BTreeSet<String> = s1.keys().cloned().collect();
    let k3: BTreeSet<String> = s3.keys().cloned().collect();
    // 1 and 3 talk to nobody of their host: what they both map is 0's area for their
    // host (data and control block), nothing else.
    let both: BTreeSet<String> = k1.intersection(&k3).cloned().collect();
    assert_eq!(both.len(), 2, "1 and 3 share {both:?}\n{}", show(&o));
    let area = both.iter().map(|f| s1[f]).max().unwrap();
    // Two queues of 64 postboxes and a 256 KiB pool (the defaults).
    assert!(
        area >= 2 * 64 * 64 + (256 << 10),
        "the shared area is {area} bytes\n{}",
        show(&o)
    );
    // 3 maps its inbox and the area: no area of its own for 0.
    assert_eq!(k3.len(), 4, "rank 3 maps {s3:?}\n{}", show(&o));
    eprintln!(
        "receivers 1 and 3 share one area of {area} bytes; 1 maps {} segments, 3 {}",
        k1.len() / 2,
        k3.len() / 2
    );
}
