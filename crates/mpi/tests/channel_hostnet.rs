//! What a sender's area for another node's host (session 31, `hostnet`) relies on
//! when the receiver that made it (R1) goes first: a later receiver (R2) keeps a
//! mapping of the host's shm segment and no import of it, so R1's export going takes
//! neither R2's pages nor what was written in them, and R2 goes on reading what the
//! sender writes there (here through R2's mapping, as R2's network export does).
//! The traffic itself is `crates/cli/tests/netns_hostnet.rs` (two namespaces).

use myrix_rsm::{AccessEntry, Controller, ExportFlags, Perm};

fn byte(i: usize, round: usize) -> u8 {
    (i * 31 + round * 7 + 1) as u8
}

#[test]
fn a_joined_area_outlives_the_receiver_that_made_it() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("channel_hostnet");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::env::set_var("MYRIX_RSM_DIR", &dir);
    let ctl = Controller::get("shm").unwrap();
    let len = 2 * 4096 + (256 << 10);

    // R1 makes the area, open to the host; the sender's first writes land in it.
    let r1 = ctl.export_create(len, ExportFlags::default()).unwrap();
    let id = r1
        .publish(
            None,
            &[AccessEntry {
                node: ctl.local_node(),
                perm: Perm::RDWR,
            }],
        )
        .unwrap();
    for i in 0..len {
        // SAFETY: inside R1's export, which lives here.
        unsafe { *r1.as_ptr().add(i) = byte(i, 0) };
    }

    // R2 joins: maps it, keeps the mapping only (as `ChannelFabric::remote_area`).
    let map = {
        let imp = ctl
            .import_connect(ctl.local_node(), id, Perm::RDWR)
            .unwrap();
        imp.map().unwrap()
    };
    assert!(map.len() >= len);
    let view = |i: usize| {
        // SAFETY: inside R2's mapping, which lives until the end of the test.
        unsafe { *map.as_ptr().add(i) }
    };
    assert!(
        (0..len).all(|i| view(i) == byte(i, 0)),
        "R2 sees R1's memory"
    );

    // R1 leaves: its export is destroyed, its name goes; a third receiver can no
    // longer join (it makes a new area and says so).
    r1.destroy().unwrap();
    assert!(ctl
        .import_connect(ctl.local_node(), id, Perm::RDWR)
        .is_err());

    // R2's pages and their contents stay; later writes (the sender's, through R2's
    // network export over this mapping) are read back.
    assert!(
        (0..len).all(|i| view(i) == byte(i, 0)),
        "R2's pages went with R1"
    );
    for round in 1..4 {
        for i in 0..len {
            // SAFETY: inside R2's mapping.
            unsafe { *map.as_ptr().add(i) = byte(i, round) };
        }
        assert!((0..len).all(|i| view(i) == byte(i, round)));
    }
    drop(map);
    let _ = std::fs::remove_dir_all(&dir);
}
