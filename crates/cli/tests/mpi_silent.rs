//! A pair of ranks that never talks builds no state for each other (issue 23:
//! half-duplex connections made at the first send). `crates/mpiapi/tests/c/silent.c`
//! on 4 ranks under `myrix mpiexec`, with an RSM registry of its own
//! (`MYRIX_RSM_DIR`): only 0 and 1 exchange messages (short, pool blocks,
//! rendezvous); each rank lists the segments it has mapped (each is two unnamed
//! files: data and control block). Ranks 2 and 3 must hold their own inbox and
//! nothing else (no connection, no other segment, the inbox no larger than a talking
//! rank's); 0 and 1 must hold the same six (two inboxes, and an area and an ack
//! segment per direction) and nothing of 2's or 3's. Needs `cc`.

mod common;

use common::mpi::{assert_every_rank, build, myrix, run, show};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

#[test]
fn ranks_that_never_talk_build_no_channel_state() {
    let exe = build("silent");
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("silent");
    let (reg, sync) = (tmp.join("rsm"), tmp.join("sync"));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&reg).expect("registry directory");
    std::fs::create_dir_all(&sync).expect("meeting directory");
    let mut c = myrix();
    c.env("MYRIX_RSM_DIR", &reg)
        .env("SILENT_SYNC", &sync)
        .args(["mpiexec", "-n", "4"])
        .arg(&exe);
    let o = run(c, Duration::from_secs(60));
    assert_every_rank(&o, "silent", 4);

    // rank -> {file -> bytes mapped}. Since session 30 a segment's data and control
    // block are unnamed files (`/proc/self/maps` shows `#INODE (deleted)`), so a
    // segment is two files: its data and its control block.
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

    // The silent ranks: one segment each (two files), their own inbox, not the other's.
    assert_eq!(s2.len(), 2, "rank 2 maps {s2:?}\n{}", show(&o));
    assert_eq!(s3.len(), 2, "rank 3 maps {s3:?}\n{}", show(&o));
    assert!(
        s2.keys().all(|f| !s3.contains_key(f)),
        "2 and 3 map a file in common\n{}",
        show(&o)
    );
    let inbox = *s2.values().max().unwrap();
    assert_eq!(
        *s3.values().max().unwrap(),
        inbox,
        "the inboxes differ in size"
    );

    // The talking pair: the same six segments (twelve files), none of the silent ranks'.
    let k0: BTreeSet<&String> = s0.keys().collect();
    let k1: BTreeSet<&String> = s1.keys().collect();
    assert_eq!(k0, k1, "0 and 1 map different segments\n{}", show(&o));
    assert_eq!(k0.len(), 12, "rank 0 maps {s0:?}\n{}", show(&o));
    for silent in s2.keys().chain(s3.keys()) {
        assert!(
            !k0.contains(silent),
            "0 and 1 map {silent}, a silent rank's"
        );
    }
    // Two of them are the inboxes, as large as a silent rank's: talking does not grow
    // an inbox, and a silent rank's is no larger than any.
    assert_eq!(
        s0.values().filter(|&&b| b == inbox).count(),
        2,
        "{s0:?} (inbox {inbox} bytes)"
    );
    eprintln!(
        "silent ranks: 1 segment of {inbox} bytes each; talking pair: {} segments, {} bytes",
        s0.len(),
        s0.values().sum::<u64>()
    );
}
