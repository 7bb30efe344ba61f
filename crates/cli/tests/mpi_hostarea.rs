//! A sender's one area for the ranks of its host (issue 23, seed 004 §3.1).
//! `crates/mpiapi/tests/c/hostarea.c` on 4 ranks of one host under `myrix mpiexec`,
//! with an RSM registry of its own (`MYRIX_RSM_DIR`): rank 0 sends to 1 and 2 (short,
//! pool blocks, rendezvous), 3 hears nothing; each rank lists the segments it has
//! mapped (each is two unnamed files: data and control block). 1 and 2 must map the
//! same area of 0's (a queue for each in it, one pool), 0 one area for both, and 3
//! nothing of 0's. Needs `cc`.

mod common;

use common::mpi::{assert_every_rank, build, myrix, run, show};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

#[test]
fn a_sender_writes_one_area_for_all_the_ranks_of_its_host() {
    let exe = build("hostarea");
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hostarea");
    let (reg, sync) = (tmp.join("rsm"), tmp.join("sync"));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&reg).expect("registry directory");
    std::fs::create_dir_all(&sync).expect("meeting directory");
    let mut c = myrix();
    c.env("MYRIX_RSM_DIR", &reg)
        .env("HOSTAREA_SYNC", &sync)
        .args(["mpiexec", "-n", "4"])
        .arg(&exe);
    let o = run(c, Duration::from_secs(60));
    assert_every_rank(&o, "hostarea", 4);

    // rank -> {file -> bytes mapped}
    let mut files: BTreeMap<u32, BTreeMap<String, u64>> = BTreeMap::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        let Some(rest) = l.strip_prefix("seg ") else {
            continue;
        };
        let (r, rest) = rest.split_once(' ').expect("rank");
        let (file, b) = rest.rsplit_once(' ').expect("bytes");
        let r: u32 = r.parse().expect("rank");
        let b: u64 = b.parse().expect("bytes");
        files.entry(r).or_default().insert(file.to_string(), b);
    }
    let of = |r: u32| files.get(&r).cloned().unwrap_or_default();
    let (s0, s1, s2, s3) = (of(0), of(1), of(2), of(3));
    let keys = |s: &BTreeMap<String, u64>| s.keys().cloned().collect::<BTreeSet<String>>();
    let (k0, k1, k2, k3) = (keys(&s0), keys(&s1), keys(&s2), keys(&s3));

    // 3: its own inbox only, nothing of 0's (0's area has a queue for it, unmapped).
    assert_eq!(k3.len(), 2, "rank 3 maps {s3:?}\n{}", show(&o));
    assert!(k3.is_disjoint(&k0), "3 maps a segment of 0's\n{}", show(&o));
    let inbox = *s3.values().max().unwrap();

    // 0: its inbox and area, 1's and 2's inboxes, an ack segment per receiver: six
    // segments (one area per pair would make seven).
    assert_eq!(k0.len(), 12, "rank 0 maps {s0:?}\n{}", show(&o));
    // 1 and 2: their inbox, 0's inbox, 0's area, their ack segment at 0.
    assert_eq!(k1.len(), 8, "rank 1 maps {s1:?}\n{}", show(&o));
    assert_eq!(k2.len(), 8, "rank 2 maps {s2:?}\n{}", show(&o));
    // What 1 and 2 both map is 0's inbox and 0's one area, both mapped by 0.
    let both: BTreeSet<String> = k1.intersection(&k2).cloned().collect();
    assert_eq!(both.len(), 4, "1 and 2 share {both:?}\n{}", show(&o));
    assert!(both.is_subset(&k0), "{both:?} not all 0's\n{}", show(&o));
    let area = both.iter().map(|f| s0[f]).max().unwrap();
    // Four queues of 64 postboxes and a 256 KiB pool (the defaults).
    assert!(
        area >= 4 * 64 * 64 + (256 << 10),
        "the shared area is {area} bytes\n{}",
        show(&o)
    );
    assert!(
        both.iter().any(|f| s0[f] == inbox),
        "0's inbox among {both:?}"
    );
    eprintln!(
        "rank 0: {} segments, {} bytes; shared area {area} bytes; a receiver: {} segments; \
         the silent rank: 1",
        k0.len() / 2,
        s0.values().sum::<u64>(),
        k1.len() / 2
    );
}
